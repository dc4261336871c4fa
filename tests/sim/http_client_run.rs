//! The script of the HTTP client world and its end-of-run properties: random calls,
//! cancellations and faults; then calm (every request ends, nothing hangs); then a partition
//! long enough for the session to expire (the next call gets 404, the transport sets up a new
//! session on its own and the call after it succeeds); then `close` (DELETE ends the server's
//! session and leaves no exchange behind).

use std::time::Duration;

use mcp_sansio::session::State;

use super::http_client::{HttpClientWorld, Report};
use super::world::{self, World};

impl HttpClientWorld {
    fn send_call(&mut self) -> Result<(), String> {
        world::send_random_call(self.client_side(), world::HTTP_CALL_TIMEOUTS)
    }

    /// Requests sent and ended so far, over every client of the run.
    fn counts(&self) -> (u64, u64) {
        (
            self.report.requests + self.ledger.sent,
            self.report.tally.ended() + self.ledger.tally.ended(),
        )
    }

    /// No request outstanding, nothing on the wire, a ready client with a session.
    fn quiet(w: &Self) -> bool {
        w.ledger.outstanding() == 0
            && w.net.is_empty()
            && w.session.state() == State::Ready
            && !w.awaiting_reinit
            && w.http.session_id().is_some()
    }

    /// The whole scripted run for this world's seed.
    pub fn run(mut self) -> Result<Report, String> {
        let ops = 20 + self.rng.below(60);
        for _ in 0..ops {
            match self.rng.below(12) {
                0..=4 => self.send_call()?,
                10 => self.server_notify(),
                5 => world::cancel_random(self.client_side()),
                6 | 7 => self.drop_stream(),
                8 => self.server_close_stream(),
                9 if self.rng.chance(10) => self.restart_server(),
                _ => {
                    let until = self.now + self.rng.millis(3000);
                    world::run_until(&mut self, until, world::never)?;
                }
            }
        }
        self.calm()?;
        self.expire()?;
        self.close()?;
        self.report.events = self.judge.events;
        Ok(self.report)
    }

    /// Calm: every request must end, and the client must end up with a working session.
    fn calm(&mut self) -> Result<(), String> {
        let until = self.now + Duration::from_secs(15 * 60);
        world::run_until(self, until, Self::quiet)?;
        if !Self::quiet(self) {
            return Err(format!(
                "not quiet after 15 minutes: {} requests hanging, client {:?}, session id {:?}, awaiting re-initialization {}",
                self.ledger.outstanding(),
                self.session.state(),
                self.http.session_id(),
                self.awaiting_reinit
            ));
        }
        Ok(())
    }

    /// A partition outlasts the idle timeout: the server expires the session; once it heals
    /// the next call gets 404 (and ends with an error), the transport sets up a new session
    /// by itself, and the call after that gets its result.
    fn expire(&mut self) -> Result<(), String> {
        let sid = self.http.session_id().map(str::to_string);
        let expired = self.report.expired;
        self.partition();
        let until = self.now + self.setup.idle_timeout + Duration::from_secs(60);
        world::run_until(self, until, world::never)?;
        if sid
            .as_deref()
            .is_some_and(|s| self.ep.machine_mut(s).is_some())
        {
            return Err("the session did not expire while the client was cut off".into());
        }
        self.partitioned = false;
        let (sent, ended) = self.counts();
        self.send_call()?;
        let until = self.now + Duration::from_secs(5 * 60);
        world::run_until(self, until, Self::quiet)?;
        if self.report.expired != expired + 1 || !Self::quiet(self) {
            return Err(format!(
                "after the expiry: {} 404s taken (expected 1), quiet {}",
                self.report.expired - expired,
                Self::quiet(self)
            ));
        }
        // Quiet: every request sent so far ended (also when the transport had used up its
        // re-initializations and the world started a new client).
        if self.counts().0 == sent || self.counts().0 != self.counts().1 {
            return Err(format!(
                "the call on the expired session was refused or did not end: (sent, ended) {:?} -> {:?}",
                (sent, ended),
                self.counts()
            ));
        }
        world::call_after_reinitializing(self, Self::quiet)
    }

    /// `close`: the DELETE ends the server's session, no exchange is left, and the client
    /// session closes with nothing pending.
    fn close(&mut self) -> Result<(), String> {
        let sid = self.http.session_id().map(str::to_string);
        self.http.close(self.now);
        let until = self.now + Duration::from_secs(60);
        world::run_until(self, until, |w| w.closed)?;
        if !self.closed || self.http.exchanges_in_flight() != 0 {
            return Err(format!(
                "close did not finish: closed {}, {} exchanges left",
                self.closed,
                self.http.exchanges_in_flight()
            ));
        }
        if sid.is_some_and(|s| self.ep.machine_mut(&s).is_some()) {
            return Err("the server still holds the session after DELETE".into());
        }
        self.session.close(self.now);
        self.pump()?;
        self.finish_incarnation()
    }
}
