//! `serve_stdio` on a real process: this test binary re-runs itself as an echo server (when
//! `ECHO_SERVER` is set) and the test side talks to it over its stdin/stdout. Every test runs
//! with the server on the smol driver, then on the poll driver (`ECHO_DRIVER=poll`).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ms, EchoServer};
use mcp_sansio_stdio::{serve_stdio, DriveOptions, Driver, EndReason, PollDriver};

/// The server side runs on the poll driver.
fn on_poll_driver() -> bool {
    std::env::var("ECHO_DRIVER").as_deref() == Ok("poll")
}

fn main() {
    match std::env::var("ECHO_SERVER").as_deref() {
        Ok("plain") => {
            let finished = if on_poll_driver() {
                PollDriver::new(DriveOptions::default())
                    .unwrap()
                    .serve_stdio(EchoServer::default())
            } else {
                serve_stdio(EchoServer::default())
            };
            eprintln!(
                "server stopped: {:?} after {}",
                finished.reason, finished.driven.count
            );
            std::process::exit(if finished.reason == EndReason::Closed {
                0
            } else {
                1
            });
        }
        Ok("delayed") => serve_delayed(),
        _ => run_tests(),
    }
}

/// Answers each frame after 200 ms, from a task: stdin EOF must not lose these answers.
fn serve_delayed() {
    struct Delayed(EchoServer, mcp_sansio_stdio::LoopHandle<Delayed>);
    impl mcp_sansio_stdio::Driven for Delayed {
        fn handle_frame(&mut self, _now: Instant, frame: bytes::Bytes) {
            self.0.pending_tasks += 1;
            self.1
                .spawn_then(smol::Timer::after(ms(200)), move |m: &mut Delayed, _, _| {
                    m.0.pending_tasks -= 1;
                    m.0.answer(&frame);
                })
                .detach();
        }
        fn handle_frame_error(&mut self, now: Instant, e: mcp_sansio_stdio::FrameError) {
            self.0.handle_frame_error(now, e)
        }
        fn handle_eof(&mut self, now: Instant) {
            self.0.handle_eof(now)
        }
        fn handle_timeout(&mut self, _now: Instant) {}
        fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
            self.0.poll_transmit(buf)
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
        fn is_closed(&self) -> bool {
            self.0.is_closed()
        }
    }
    let finished = if on_poll_driver() {
        let driver = PollDriver::<Delayed>::new(DriveOptions::default()).unwrap();
        let machine = Delayed(EchoServer::default(), driver.handle());
        driver.serve_stdio(machine)
    } else {
        let driver = Driver::<Delayed>::new(DriveOptions::default());
        let machine = Delayed(EchoServer::default(), driver.handle());
        driver.serve_stdio(machine)
    };
    std::process::exit(if finished.reason == EndReason::Closed {
        0
    } else {
        1
    });
}

fn spawn_server(mode: &str, driver: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .env("ECHO_SERVER", mode)
        .env("ECHO_DRIVER", driver)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn pipelined_lines_with_split_writes_each_get_one_answer_and_eof_exits_cleanly(driver: &str) {
    let mut server = spawn_server("plain", driver);
    let mut stdin = server.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for i in 0..1000 {
            let line = format!("{{\"id\":{i}}}\n");
            // Every 7th line goes out in two writes with a pause, to split it across reads.
            if i % 7 == 0 {
                let (a, b) = line.split_at(3);
                stdin.write_all(a.as_bytes()).unwrap();
                stdin.flush().unwrap();
                std::thread::sleep(ms(1));
                stdin.write_all(b.as_bytes()).unwrap();
            } else {
                stdin.write_all(line.as_bytes()).unwrap();
            }
        }
        // Dropping stdin is the EOF the server must exit on.
    });
    let stdout = BufReader::new(server.stdout.take().unwrap());
    let lines: Vec<String> = stdout.lines().map(Result::unwrap).collect();
    writer.join().unwrap();
    let status = server.wait().unwrap();
    let want: Vec<String> = (0..1000)
        .map(|i| format!("{{\"n\":{},\"echo\":{{\"id\":{i}}}}}", i + 1))
        .collect();
    assert_eq!(lines, want);
    assert!(status.success(), "server exit: {status:?}");
    let mut log = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut log).unwrap();
    assert!(
        log.contains("server stopped: Closed after 1000"),
        "log: {log}"
    );
}

fn answers_still_pending_at_eof_are_written_before_exit(driver: &str) {
    let mut server = spawn_server("delayed", driver);
    let started = Instant::now();
    {
        let mut stdin = server.stdin.take().unwrap();
        stdin.write_all(b"{\"a\":1}\n{\"b\":2}").unwrap(); // the last line has no newline
    }
    let stdout = BufReader::new(server.stdout.take().unwrap());
    let lines: Vec<String> = stdout.lines().map(Result::unwrap).collect();
    let status = server.wait().unwrap();
    assert_eq!(
        lines,
        [
            "{\"n\":1,\"echo\":{\"a\":1}}",
            "{\"n\":2,\"echo\":{\"b\":2}}"
        ]
    );
    assert!(status.success());
    let took = started.elapsed();
    assert!(
        took >= ms(200) && took < Duration::from_secs(5),
        "took {took:?}"
    );
}

/// Regular files cannot be polled: stdin and stdout then go through the blocking path.
fn regular_files_as_stdin_and_stdout_are_served(driver: &str) {
    let dir = std::env::temp_dir().join(format!("mcp-stdio-files-{}-{driver}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.jsonl");
    let output = dir.join("out.jsonl");
    std::fs::write(&input, "{\"a\":1}\n\n{\"b\":2}\r\n").unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .env("ECHO_SERVER", "plain")
        .env("ECHO_DRIVER", driver)
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let written = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(status.success());
    assert_eq!(
        written,
        "{\"n\":1,\"echo\":{\"a\":1}}\n{\"n\":2,\"echo\":{\"b\":2}}\n"
    );
}

/// One test, run with the server on the named driver.
type Case = fn(&str);

fn run_tests() {
    let tests: [(&str, Case); 3] = [
        (
            "regular_files_as_stdin_and_stdout_are_served",
            regular_files_as_stdin_and_stdout_are_served,
        ),
        (
            "pipelined_lines_with_split_writes_each_get_one_answer_and_eof_exits_cleanly",
            pipelined_lines_with_split_writes_each_get_one_answer_and_eof_exits_cleanly,
        ),
        (
            "answers_still_pending_at_eof_are_written_before_exit",
            answers_still_pending_at_eof_are_written_before_exit,
        ),
    ];
    let mut failed = 0;
    for driver in ["smol", "poll"] {
        for (name, test) in tests {
            match std::panic::catch_unwind(|| test(driver)) {
                Ok(()) => println!("test {driver}::{name} ... ok"),
                Err(_) => {
                    println!("test {driver}::{name} ... FAILED");
                    failed += 1;
                }
            }
        }
    }
    println!("{} passed, {failed} failed", 2 * tests.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
