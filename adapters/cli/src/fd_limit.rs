//! The process's open-file limit: `serve` and `bench` raise the soft `RLIMIT_NOFILE` to the
//! hard limit at start (a server holding thousands of connections, a bench opening thousands of
//! sessions, needs one descriptor each), and size what they open to what the limit allows.

/// Descriptors kept free for everything that is not a connection (the listener, stdio,
/// signal pipes, the reactor's own, files a fixture opens).
pub(crate) const HEADROOM: u64 = 64;

/// Raises the soft open-file limit to the hard limit and returns the soft limit now in force.
/// If the limit cannot be read or raised, returns what is in force (or `None` when even that
/// cannot be read).
pub(crate) fn raise_to_hard() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` into the valid, exclusively borrowed `limit`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit only reads the valid `raised`.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = limit.rlim_max;
        }
    }
    Some(limit.rlim_cur)
}

/// The most connections that fit under `soft_limit` with [`HEADROOM`] to spare.
pub(crate) fn connections_that_fit(soft_limit: u64) -> usize {
    usize::try_from(soft_limit.saturating_sub(HEADROOM)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_ends_at_the_hard_limit() {
        let soft = raise_to_hard().expect("getrlimit works on Linux");
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as in raise_to_hard.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        assert_eq!(soft, limit.rlim_cur);
        assert_eq!(limit.rlim_cur, limit.rlim_max);
        // Raising again changes nothing.
        assert_eq!(raise_to_hard(), Some(soft));
    }

    #[test]
    fn headroom_is_kept_for_non_connections() {
        assert_eq!(connections_that_fit(20_000), 19_936);
        assert_eq!(connections_that_fit(10), 0);
    }
}
