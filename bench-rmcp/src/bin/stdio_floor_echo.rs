//! The floor of the stdio benches: echoes every stdin line to stdout. No parsing, no
//! protocol: two processes and a pipe each way.
//! - no argument (`benches/stdio.rs`): line by line, one write per line;
//! - `batch` (`stdio_server_only`): one read, then one write of every complete line it
//!   brought (what a server that answers everything ready at once can reach).

use std::io::{BufRead, Read, Write};

fn main() {
    if std::env::args().nth(1).as_deref() == Some("batch") {
        return batch();
    }
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if stdout
            .write_all(&line)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

/// One read, one write of the complete lines read so far; the unfinished tail waits.
fn batch() {
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    let mut held = 0;
    loop {
        if held == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match stdin.read(&mut buf[held..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let end = held + n;
        let Some(last) = buf[..end].iter().rposition(|&b| b == b'\n') else {
            held = end;
            continue;
        };
        if stdout
            .write_all(&buf[..=last])
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
        buf.copy_within(last + 1..end, 0);
        held = end - last - 1;
    }
}
