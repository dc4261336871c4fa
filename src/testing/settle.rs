//! The bounded loop a rig settles with: step until nothing moves, or fail the test.

/// Calls `step` until it reports that nothing moved. Panics, naming `what`, when `passes`
/// steps in a row all moved something: a rig that never settles is a bug to see, not a hang.
pub fn settle(passes: usize, what: &str, mut step: impl FnMut() -> bool) {
    for _ in 0..passes {
        if !step() {
            return;
        }
    }
    panic!("{what} did not settle in {passes} passes");
}
