//! The helper process that builds a native command's walls and runs it:
//! `toolhost __exec-helper`, started by the host ([`super::run`]) with an
//! empty environment and the [`Plan`] on its standard input. It runs
//! before `main` starts any thread (a process enters a new user namespace
//! only while it has one thread), and exits with the program's exit code,
//! or 125 with the reason on stderr when the walls cannot be built: it
//! never runs a program without them.
//!
//! The platform part is one module: Linux ([`linux`]). Elsewhere the
//! helper refuses (macOS's Seatbelt would build the same walls from the
//! same plan; it cannot be tested here).

#[cfg(target_os = "linux")]
mod linux;
mod refused;

use std::io::Read as _;

use super::plan::Plan;
use refused::{Refused, fail};

/// The longest plan read (a command's standard input is in it).
const MAX_PLAN: usize = 256 << 20;

/// The argument that makes the `toolhost` binary this helper.
pub const ARGUMENT: &str = "__exec-helper";

/// The helper's whole life: the plan from stdin, the walls, the program.
/// Call it first in `main`, before any thread starts.
pub fn main() -> i32 {
    // The plan's length, then the plan; the host then keeps the pipe open
    // while the command may run, and closes it to stop the command (or
    // dies, which closes it too).
    let mut stdin = std::io::stdin().lock();
    let mut length = [0u8; 8];
    let mut input = Vec::new();
    let read = stdin.read_exact(&mut length).and_then(|()| {
        let length = usize::try_from(u64::from_le_bytes(length)).unwrap_or(usize::MAX);
        input = vec![0u8; length.min(MAX_PLAN)];
        stdin.read_exact(&mut input)
    });
    if let Err(e) = read {
        return fail(&Refused(format!("cannot read the plan: {e}")));
    }
    let plan: Plan = match serde_json::from_slice(&input) {
        Ok(plan) => plan,
        Err(e) => return fail(&Refused(format!("the plan is not valid: {e}"))),
    };
    run(&plan).unwrap_or_else(|refused| fail(&refused))
}

#[cfg(target_os = "linux")]
fn run(plan: &Plan) -> Result<i32, Refused> {
    linux::run(plan)
}

#[cfg(not(target_os = "linux"))]
fn run(_: &Plan) -> Result<i32, Refused> {
    Err(Refused(
        "native commands run on Linux only (its namespaces, Landlock and seccomp are the walls)"
            .into(),
    ))
}
