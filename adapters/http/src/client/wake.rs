//! The client loops' wait (the stateful client's, the auto-detecting one's and the 2026-07-28
//! one's): one poll of every source per wake-up, in a fixed order, the application first.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use smol::Timer;

use super::doorbell::Doorbell;
use super::exchange::Input;
use super::inflight::InFlight;

/// What woke a client loop.
pub(super) enum Wake<T> {
    /// The application's future finished with this output.
    App(T),
    /// An exchange delivered input for the core.
    Input(Input),
    /// A handle rang the doorbell (a command is queued).
    Woken,
    /// The timer fired.
    Timer,
}

/// Waits for the next wake-up: `app` while it still runs (`None` once it finished), the
/// exchanges in flight, the doorbell, then the timer when one is armed.
pub(super) async fn next_wake<F: Future>(
    mut app: Option<Pin<&mut F>>,
    inflight: &mut InFlight,
    doorbell: &Doorbell,
    mut timer: Option<&mut Timer>,
) -> Wake<F::Output> {
    std::future::poll_fn(|cx| {
        if let Some(app) = app.as_mut() {
            if let Poll::Ready(out) = app.as_mut().poll(cx) {
                return Poll::Ready(Wake::App(out));
            }
        }
        if let Poll::Ready(input) = inflight.poll_input(cx) {
            return Poll::Ready(Wake::Input(input));
        }
        if doorbell.poll_rung(cx).is_ready() {
            return Poll::Ready(Wake::Woken);
        }
        if let Some(timer) = timer.as_mut() {
            if Pin::new(&mut **timer).poll(cx).is_ready() {
                return Poll::Ready(Wake::Timer);
            }
        }
        Poll::Pending
    })
    .await
}
