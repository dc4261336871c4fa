//! The answer count: every call a session sends is numbered, and settled once when its future
//! ends, as answered (a result or the server's JSON-RPC error) or not (timeout, connection lost,
//! HTTP error status). A number settled twice, or never sent, is a duplicate; a number never
//! settled, or settled without an answer, is lost. Matching wire ids to requests is the client
//! session's job; the responses it could match to no request are added by the report.

use std::collections::HashSet;

/// A call's number in its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CallNumber(u64);

/// One session's calls and their answers.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    next: u64,
    pending: HashSet<u64>,
    tally: AnswerTally,
}

/// What the ledgers counted (summed over sessions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AnswerTally {
    /// Calls sent (warmup included).
    pub(crate) sent: u64,
    /// Calls that got their answer.
    pub(crate) answered: u64,
    /// Calls that got no answer (or were never settled).
    pub(crate) lost: u64,
    /// Answers to a call already settled, or to no call sent.
    pub(crate) duplicated: u64,
}

impl AnswerTally {
    /// Adds another session's tally.
    pub(crate) fn add(&mut self, other: AnswerTally) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.lost += other.lost;
        self.duplicated += other.duplicated;
    }
}

impl Ledger {
    /// Numbers a call about to be sent.
    pub(crate) fn send(&mut self) -> CallNumber {
        let number = self.next;
        self.next += 1;
        self.pending.insert(number);
        self.tally.sent += 1;
        CallNumber(number)
    }

    /// Settles call `number`: it got its answer (`answered`) or ended without one.
    pub(crate) fn settle(&mut self, number: CallNumber, answered: bool) {
        if !self.pending.remove(&number.0) {
            self.tally.duplicated += 1;
        } else if answered {
            self.tally.answered += 1;
        } else {
            self.tally.lost += 1;
        }
    }

    /// The counts, calls still unsettled counted as lost.
    pub(crate) fn tally(&self) -> AnswerTally {
        AnswerTally {
            lost: self.tally.lost + self.pending.len() as u64,
            ..self.tally
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_answered_once_is_clean() {
        let mut ledger = Ledger::default();
        let calls: Vec<_> = (0..5).map(|_| ledger.send()).collect();
        for call in calls.into_iter().rev() {
            ledger.settle(call, true);
        }
        let tally = ledger.tally();
        assert_eq!(
            tally,
            AnswerTally {
                sent: 5,
                answered: 5,
                lost: 0,
                duplicated: 0
            }
        );
    }

    #[test]
    fn a_missing_answer_is_lost() {
        let mut ledger = Ledger::default();
        let (a, b, c) = (ledger.send(), ledger.send(), ledger.send());
        ledger.settle(a, true);
        ledger.settle(b, false); // timed out
        let _ = c; // never settled
        let tally = ledger.tally();
        assert_eq!((tally.answered, tally.lost, tally.duplicated), (1, 2, 0));
    }

    #[test]
    fn a_second_answer_or_an_answer_to_nothing_is_duplicated() {
        let mut ledger = Ledger::default();
        let a = ledger.send();
        ledger.settle(a, true);
        ledger.settle(a, true);
        ledger.settle(CallNumber(99), true);
        let tally = ledger.tally();
        assert_eq!((tally.sent, tally.answered, tally.lost), (1, 1, 0));
        assert_eq!(tally.duplicated, 2);
    }

    #[test]
    fn tallies_add_up_over_sessions() {
        let mut total = AnswerTally::default();
        let one = AnswerTally {
            sent: 3,
            answered: 2,
            lost: 1,
            duplicated: 4,
        };
        total.add(one);
        total.add(one);
        assert_eq!(
            total,
            AnswerTally {
                sent: 6,
                answered: 4,
                lost: 2,
                duplicated: 8
            }
        );
    }
}
