//! A private redis-server for one test: a free loopback port, no persistence, killed by its
//! PID when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running redis-server, killed on drop.
pub struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    /// Starts one, or `None` (with a message) when redis-server is not installed. Under CI
    /// (`CI` set) a missing redis-server fails the test instead.
    pub fn start() -> Option<RedisServer> {
        let Some(binary) = find_on_path("redis-server") else {
            assert!(
                std::env::var_os("CI").is_none(),
                "redis-server is not on PATH and CI is set: .ci/run installs it"
            );
            eprintln!("skipped: redis-server is not on PATH (apt-get install redis-server)");
            return None;
        };
        // A port taken between our probe and the server's bind makes it exit: try again.
        for _ in 0..5 {
            if let Some(server) = Self::try_start(&binary) {
                return Some(server);
            }
        }
        panic!("redis-server did not start on a loopback port in 5 attempts");
    }

    /// Starts one on `port` (which must be free), or `None` as [`start`](Self::start) does.
    #[allow(dead_code)] // not every test that includes this file asks for a port
    pub fn start_at(port: u16) -> Option<RedisServer> {
        let binary = find_on_path("redis-server")?;
        let server = Self::try_start_at(&binary, port);
        Some(server.expect("redis-server started on the free port"))
    }

    fn try_start(binary: &PathBuf) -> Option<RedisServer> {
        Self::try_start_at(binary, free_port())
    }

    fn try_start_at(binary: &PathBuf, port: u16) -> Option<RedisServer> {
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let mut server = RedisServer { child, port };
        // Bounded: 1,000 probes 10 ms apart.
        for _ in 0..1000 {
            if server
                .child
                .try_wait()
                .expect("poll redis-server")
                .is_some()
            {
                return None;
            }
            if ping(port) {
                return Some(server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        server.stop();
        panic!("redis-server on port {port} did not answer PING");
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        // Child::kill signals this child's PID only.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A loopback port free when asked (the OS picks it).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// Whether a server on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}
