//! Request metrics in the Prometheus text exposition format (hand-written: no dependency).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

/// Counters and latency histograms per verb.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
}

impl Metrics {
    pub fn observe(&self, verb: &str, code: u16, elapsed: Duration) {
        if let Ok(mut r) = self.requests.lock() {
            *r.entry((verb.to_string(), code)).or_default() += 1;
        }
        let secs = elapsed.as_secs_f64();
        if let Ok(mut l) = self.latency.lock() {
            let h = l.entry(verb.to_string()).or_default();
            for (i, b) in BUCKETS.iter().enumerate() {
                if secs <= *b {
                    h.counts[i] += 1;
                }
            }
            h.sum += secs;
            h.count += 1;
        }
    }

    /// The exposition text; `gauges` are extra `(name, help, value)` lines.
    pub fn render(&self, gauges: &[(&str, &str, f64)]) -> String {
        let mut out = String::new();
        out.push_str("# HELP porch_apiserver_requests_total API requests by verb and HTTP code.\n");
        out.push_str("# TYPE porch_apiserver_requests_total counter\n");
        if let Ok(r) = self.requests.lock() {
            for ((verb, code), n) in r.iter() {
                let _ = writeln!(
                    out,
                    "porch_apiserver_requests_total{{verb=\"{verb}\",code=\"{code}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP porch_apiserver_request_duration_seconds API request latency by verb (watch excluded).\n");
        out.push_str("# TYPE porch_apiserver_request_duration_seconds histogram\n");
        if let Ok(l) = self.latency.lock() {
            for (verb, h) in l.iter() {
                for (i, b) in BUCKETS.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "porch_apiserver_request_duration_seconds_bucket{{verb=\"{verb}\",le=\"{b}\"}} {}",
                        h.counts[i]
                    );
                }
                let _ = writeln!(
                    out,
                    "porch_apiserver_request_duration_seconds_bucket{{verb=\"{verb}\",le=\"+Inf\"}} {}",
                    h.count
                );
                let _ = writeln!(
                    out,
                    "porch_apiserver_request_duration_seconds_sum{{verb=\"{verb}\"}} {}",
                    h.sum
                );
                let _ = writeln!(
                    out,
                    "porch_apiserver_request_duration_seconds_count{{verb=\"{verb}\"}} {}",
                    h.count
                );
            }
        }
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_histograms() {
        let m = Metrics::default();
        m.observe("GET", 200, Duration::from_millis(2));
        let text = m.render(&[("porch_up", "Up.", 1.0)]);
        assert!(text.contains("porch_apiserver_requests_total{verb=\"GET\",code=\"200\"} 1"));
        assert!(text.contains("le=\"0.0025\"} 1"));
        assert!(text.contains("porch_up 1"));
    }
}
