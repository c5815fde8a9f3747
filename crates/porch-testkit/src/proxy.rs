//! [`RoundRobinProxy`]: one loopback address in front of several servers (replicas), as a
//! load balancer puts them behind one Service address.
//!
//! A plain TCP proxy: each accepted connection goes to the next backend in turn (a backend
//! that refuses is skipped), and bytes are copied both ways untouched, so TLS ends at the
//! replica. Clients that open a connection per command (kubectl, porchctl) thus spread over
//! every replica; a pooled client keeps a connection, and its replica, while it stays open.
//! The backends can be replaced while running (replicas restarted on new ports).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::TestkitError;

/// A running proxy; stopped on drop (open connections end when either side closes).
pub struct RoundRobinProxy {
    addr: SocketAddr,
    backends: Arc<Mutex<Vec<SocketAddr>>>,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
}

impl RoundRobinProxy {
    /// Listens on `127.0.0.1:<port>` (0 picks a free one) in front of `backends`.
    pub fn start(port: u16, backends: Vec<SocketAddr>) -> Result<Self, TestkitError> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let backends = Arc::new(Mutex::new(backends));
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        {
            let (backends, stop, accepted) = (backends.clone(), stop.clone(), accepted.clone());
            std::thread::spawn(move || accept_loop(listener, backends, stop, accepted));
        }
        Ok(Self {
            addr,
            backends,
            stop,
            accepted,
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Replaces the backends (new connections only).
    pub fn set_backends(&self, backends: Vec<SocketAddr>) {
        *self
            .backends
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = backends;
    }

    /// How many connections were accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for RoundRobinProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn accept_loop(
    listener: TcpListener,
    backends: Arc<Mutex<Vec<SocketAddr>>>,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
) {
    let mut next = 0usize;
    for client in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        accepted.fetch_add(1, Ordering::SeqCst);
        let candidates = backends
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let start = next;
        next = next.wrapping_add(1);
        std::thread::spawn(move || {
            // The next backend in turn; one that refuses (a replica down) is skipped.
            let n = candidates.len();
            let upstream = (0..n).find_map(|i| {
                TcpStream::connect_timeout(&candidates[(start + i) % n], Duration::from_secs(2))
                    .ok()
            });
            match upstream {
                Some(upstream) => pipe(client, upstream),
                None => {
                    let _ = client.shutdown(Shutdown::Both);
                }
            }
        });
    }
}

/// Copies both ways until each side has closed its half.
fn pipe(client: TcpStream, upstream: TcpStream) {
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (Ok(client2), Ok(upstream2)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let back = std::thread::spawn(move || copy_half(upstream2, client2));
    copy_half(client, upstream);
    let _ = back.join();
}

fn copy_half(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server answering each connection with its own tag.
    fn tagged(tag: &'static str) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        std::thread::spawn(move || {
            for mut s in l.incoming().flatten() {
                let mut line = [0u8; 4];
                let _ = s.read_exact(&mut line);
                let _ = s.write_all(tag.as_bytes());
            }
        });
        addr
    }

    fn ask(addr: SocketAddr) -> String {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.write_all(b"ping").expect("write");
        s.shutdown(Shutdown::Write).expect("shutdown");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        out
    }

    #[test]
    fn connections_rotate_over_the_backends_and_skip_a_dead_one() {
        let (a, b) = (tagged("a"), tagged("b"));
        let dead = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr"); // dropped: refuses
        let proxy = RoundRobinProxy::start(0, vec![a, b]).expect("proxy");
        let seen: Vec<String> = (0..4).map(|_| ask(proxy.addr())).collect();
        assert_eq!(seen, ["a", "b", "a", "b"]);
        proxy.set_backends(vec![dead, b]);
        assert!((0..4).all(|_| ask(proxy.addr()) == "b"));
        assert_eq!(proxy.accepted(), 8);
    }
}
