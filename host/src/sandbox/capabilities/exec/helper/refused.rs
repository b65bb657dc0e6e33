//! Why the helper did not run a program, and how it says so.

/// The helper's exit code when it refused to run the program.
pub(crate) const REFUSED: i32 = 125;

/// What stops the walls from being built, in words for the model.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

/// Says why the walls could not be built on the command's stderr, which
/// the host reads as the command's.
pub(super) fn fail(refused: &Refused) -> i32 {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "toolhost: the command did not run: {}",
        refused.0
    );
    REFUSED
}
