//! Commands from other threads and tasks on the loop's executor, over a real `cat` pipe; every
//! test runs on the smol driver and on the poll driver.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use common::{ms, AnyDriver, Kind, Recorder};
use mcp_sansio_stdio::{connect_child, DriveOptions, RemoteError, StderrMode};

fn commands_sent_from_another_thread_run_in_the_loop_and_their_output_is_written(kind: Kind) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).unwrap();
    let driver = AnyDriver::<Recorder>::new(kind, DriveOptions::default());
    let remote = driver.remote();
    let sender = std::thread::spawn(move || {
        for i in 0..100 {
            remote
                .send_blocking(move |m: &mut Recorder, _now| m.queue(format!("cmd {i}")))
                .unwrap();
        }
        // `call` returns what the closure computed inside the loop.
        let queued = smol::block_on(remote.call(|m: &mut Recorder, _now| m.outbox.len() + 1000));
        queued.unwrap()
    });
    let machine = Recorder {
        expect: Some(100),
        ..Recorder::default()
    };
    let finished = driver.drive(&mut child, machine);
    let got = finished.driven.received_text();
    assert_eq!(
        got,
        (0..100).map(|i| format!("cmd {i}")).collect::<Vec<_>>()
    );
    // The call was answered (its value depends on timing, but it ran in the loop).
    assert!(sender.join().unwrap() >= 1000);
    child.shutdown_blocking(Default::default()).unwrap();
}

fn a_remote_fails_once_the_loop_has_ended(kind: Kind) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).unwrap();
    let driver = AnyDriver::<Recorder>::new(kind, DriveOptions::default());
    let remote = driver.remote();
    let machine = Recorder {
        closed: true,
        ..Recorder::default()
    };
    driver.drive(&mut child, machine);
    assert_eq!(remote.try_send(|_, _| {}), Err(RemoteError::Closed));
    child.shutdown_blocking(Default::default()).unwrap();
}

fn a_slow_task_does_not_block_fast_ones_or_incoming_frames(kind: Kind) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).unwrap();
    let driver = AnyDriver::<Recorder>::new(kind, DriveOptions::default());
    let handle = driver.handle();
    let order = Order::default();

    handle
        .spawn_then(sleep_then(ms(300), "slow"), note_then_queue(&order))
        .detach();
    handle
        .spawn_then(sleep_then(ms(10), "fast"), note_then_queue(&order))
        .detach();
    let blocking = || {
        std::thread::sleep(ms(50));
        "blocking"
    };
    handle
        .spawn_blocking_then(blocking, note_then_queue(&order))
        .detach();
    // Dropping a task cancels it: its continuation must never run.
    drop(handle.spawn_then(
        async {
            smol::Timer::after(ms(20)).await;
        },
        |m: &mut Recorder, _now, ()| m.queue("cancelled task ran"),
    ));

    let mut machine = Recorder {
        expect: Some(4),
        ..Recorder::default()
    };
    machine.queue("frame");
    let started = Instant::now();
    let finished = driver.drive(&mut child, machine);
    let order: Vec<&str> = order.borrow().iter().map(|(what, _)| *what).collect();
    assert_eq!(order, ["fast", "blocking", "slow"]);
    let got: Vec<&[u8]> = finished.driven.received.iter().map(|b| &b[..]).collect();
    assert_eq!(got, [&b"frame"[..], b"fast", b"blocking", b"slow"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    child.shutdown_blocking(Default::default()).unwrap();
}

/// What the tasks finished with, in order, and how many frames had arrived by then.
type Order = Rc<RefCell<Vec<(&'static str, usize)>>>;

/// A task that sleeps `delay` on the executor, then yields `out`.
async fn sleep_then(delay: Duration, out: &'static str) -> &'static str {
    smol::Timer::after(delay).await;
    out
}

/// A task's continuation: notes its output in `order`, then writes the output.
fn note_then_queue(order: &Order) -> impl FnOnce(&mut Recorder, Instant, &'static str) {
    let log = Rc::clone(order);
    move |m: &mut Recorder, _now, out| {
        log.borrow_mut().push((out, m.received.len()));
        m.queue(out);
    }
}

fn the_command_queue_is_bounded(kind: Kind) {
    let driver = AnyDriver::<Recorder>::new(
        kind,
        DriveOptions {
            command_capacity: 2,
            ..DriveOptions::default()
        },
    );
    let remote = driver.remote();
    assert_eq!(remote.try_send(|_, _| {}), Ok(()));
    assert_eq!(remote.try_send(|_, _| {}), Ok(()));
    assert_eq!(remote.try_send(|_, _| {}), Err(RemoteError::Full));
    drop(driver);
    assert_eq!(remote.try_send(|_, _| {}), Err(RemoteError::Closed));
}

on_both_drivers!(
    commands_sent_from_another_thread_run_in_the_loop_and_their_output_is_written,
    a_remote_fails_once_the_loop_has_ended,
    a_slow_task_does_not_block_fast_ones_or_incoming_frames,
    the_command_queue_is_bounded,
);
