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

/// The argument that makes the `toolhost` binary this helper.
pub const ARGUMENT: &str = "__exec-helper";

/// The helper's whole life: the plan from stdin, the walls, the program.
/// Call it first in `main`, before any thread starts.
pub fn main() -> i32 {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut input) {
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
