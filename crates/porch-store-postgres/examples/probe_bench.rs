//! Times the read barrier's version probe against a throwaway PostgreSQL: sequential calls
//! (one round trip each) and 16 concurrent callers (rounds shared).
//!
//! `cargo run --release -p porch-store-postgres --example probe_bench -- [calls]`
//! (`PROBE_UNIX=1` for the unix socket).

use std::sync::Arc;
use std::time::{Duration, Instant};

use porch_store_postgres::{PgStore, PgStoreOptions};
use porch_testkit::PostgresServer;

fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

fn main() -> anyhow::Result<()> {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let server = PostgresServer::start()?;
    // PROBE_UNIX=1: over the unix socket (no TLS) instead of TCP with TLS.
    let url = match std::env::var("PROBE_UNIX") {
        Ok(_) => format!(
            "host={} port={} user=porch dbname=porch",
            server.socket_dir().display(),
            server.port()
        ),
        Err(_) => server.url(),
    };
    let store = Arc::new(PgStore::connect(&url, PgStoreOptions::default())?);
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let probe = Arc::new(store.rv_probe());
        for _ in 0..200 {
            probe.current().await?;
        }
        let c = cpu();
        let mut lat = Vec::with_capacity(calls);
        for _ in 0..calls {
            let s = Instant::now();
            probe.current().await?;
            lat.push(s.elapsed());
        }
        let used = cpu() - c;
        lat.sort();
        println!(
            "sequential: p50 {:.1} µs  p99 {:.1} µs  {:.1} µs CPU per call (this process)",
            lat[calls / 2].as_secs_f64() * 1e6,
            lat[calls * 99 / 100].as_secs_f64() * 1e6,
            used.as_secs_f64() * 1e6 / calls as f64,
        );
        let t = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let probe = probe.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..calls / 16 {
                    probe.current().await?;
                }
                Ok::<_, porch_core::store::StoreError>(())
            }));
        }
        for t in tasks {
            t.await??;
        }
        println!(
            "16 callers: {:.1} µs per call",
            t.elapsed().as_secs_f64() * 1e6 / calls as f64
        );
        Ok::<_, anyhow::Error>(())
    })
}
