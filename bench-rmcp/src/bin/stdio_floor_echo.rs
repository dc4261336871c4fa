//! The floor of the stdio bench (`benches/stdio.rs`): echoes every stdin line to stdout,
//! flushing per line. No parsing, no protocol: two processes and a pipe each way.

use std::io::{BufRead, Write};

fn main() {
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
