//! The per-address connection cap (`HttpServerOptions::max_connections_per_peer`): the open
//! connections are counted per client address, and one past the cap is answered
//! `429 Too Many Requests` with `Retry-After` and closed before any request is read, so one
//! address cannot hold every slot of `max_connections` (GET streams, say, which are never
//! idle and so never reclaimed).

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::poll_fn;
use std::net::{IpAddr, TcpStream};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use hyper::rt::Write;
use smol::Async;

use crate::tcp_io::TcpIo;

/// How long writing the refusal may stall before the connection is dropped.
const REFUSAL_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Open connections per client address (only while a cap is set).
#[derive(Clone, Default)]
pub(crate) struct PeerConnections(Rc<RefCell<HashMap<IpAddr, usize>>>);

/// One open connection's count under its address, given back when dropped.
pub(crate) struct PeerPlace {
    table: PeerConnections,
    addr: IpAddr,
}

impl PeerConnections {
    /// A place for one more connection from `addr`; `Err(open)` when `addr` already has
    /// `max` open.
    pub(crate) fn join(&self, addr: IpAddr, max: usize) -> Result<PeerPlace, usize> {
        let mut table = self.0.borrow_mut();
        let open = table.entry(addr).or_default();
        if *open >= max {
            return Err(*open);
        }
        *open += 1;
        Ok(PeerPlace {
            table: self.clone(),
            addr,
        })
    }

    /// Connections open from `addr`.
    #[cfg(test)]
    fn open(&self, addr: IpAddr) -> usize {
        self.0.borrow().get(&addr).copied().unwrap_or(0)
    }
}

impl Drop for PeerPlace {
    fn drop(&mut self) {
        let mut table = self.table.0.borrow_mut();
        if let Some(open) = table.get_mut(&self.addr) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                table.remove(&self.addr);
            }
        }
    }
}

/// The refusal of a connection past the cap, `open` being what its address holds.
fn refusal(open: usize) -> String {
    let text = format!("Too Many Requests: {open} connections from this address are open");
    format!(
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )
}

/// Answers a connection refused by the cap with 429, then closes it (lingering, so the
/// client reads the answer rather than a reset).
pub(crate) async fn refuse(stream: Async<TcpStream>, open: usize) {
    let answer = refusal(open);
    let mut io = TcpIo::accepted(stream, Some(REFUSAL_WRITE_TIMEOUT));
    let mut rest = answer.as_bytes();
    poll_fn(|cx| {
        while !rest.is_empty() {
            match Pin::new(&mut io).poll_write(cx, rest) {
                Poll::Ready(Ok(n)) if n > 0 => rest = &rest[n..],
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(())
    })
    .await;
    let _ = poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each address is counted on its own, up to the cap; a dropped place frees its count.
    #[test]
    fn addresses_are_counted_apart_and_places_given_back() {
        let table = PeerConnections::default();
        let a: IpAddr = [127, 0, 0, 1].into();
        let b: IpAddr = [127, 0, 0, 2].into();
        let first = table.join(a, 2).expect("first");
        let second = table.join(a, 2).expect("second");
        assert_eq!(table.join(a, 2).err(), Some(2), "the third from a");
        let other = table.join(b, 2).expect("another address");
        drop(first);
        assert_eq!(table.open(a), 1);
        let again = table.join(a, 2).expect("room again");
        drop((second, again, other));
        assert_eq!((table.open(a), table.open(b)), (0, 0));
        assert!(table.0.borrow().is_empty(), "no entry left behind");
    }

    #[test]
    fn the_refusal_is_a_whole_429_response() {
        let text = refusal(3);
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(head.contains("Retry-After: 1") && head.contains("Connection: close"));
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        assert!(body.contains("3 connections"));
    }
}
