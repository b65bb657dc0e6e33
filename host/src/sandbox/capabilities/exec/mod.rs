//! Native programs as a capability: a tool runs the programs the user
//! granted it (`--allow-exec [TOOL=]PROGRAM`, `exec = [...]` under
//! `[tools.NAME]`), and none by default, each inside walls built from the
//! tool's own grants ([`walls`]): the kernel holds a native command to
//! what the file system capability holds the tool's wasm to.
//!
//! The host answers `toolhost:plugin/exec` (only the standard `bash`
//! imports it): a granted program's run is a [`plan`] handed to the
//! helper process that builds the walls ([`helper`], `toolhost
//! __exec-helper`), whose output comes back through [`run`].

pub mod helper;
mod lock;
mod plan;
mod program;
mod refusal;
mod run;
mod survey;
mod walls;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use wasmtime::component::{HasData, Linker};

use super::contract::{CallBounds, CallView, Capability, FileGrants, HasCall, ProgressSink, Start};
use super::grants::Grant;
use super::protect::Protection;
use crate::sandbox::reach::Reach;
use plan::WallLimits;
pub use program::{ExecPolicy, Lookup, Program};
pub(crate) use refusal::ExecRefusal;
pub use refusal::WallsRefusal;
use survey::{Grants, Survey};
use walls::Command;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "toolhost:plugin/exec-import",
        imports: { default: async },
    });
}

use bindings::toolhost::plugin::exec as wit;

/// Processes and threads alive at once in one command.
const PROCESSES: u32 = 512;
/// Bytes of private writable memory per process: a build's compiler
/// needs far more than a tool's wasm (256 MiB).
const PROCESS_MEMORY: u64 = 4 << 30;
/// Descriptors per process.
const OPEN_FILES: u64 = 4096;
/// How long after the host's deadline the helper stops a command itself.
const HELPER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Bytes of the private `/tmp` and `HOME`, each.
const SCRATCH: u64 = 256 << 20;

/// The native-programs capability.
pub(crate) struct Exec;

/// What a loaded tool holds: its programs, and what its walls are built
/// from.
pub(crate) struct ExecTool {
    programs: Vec<Program>,
    dirs: Vec<Grant>,
    lifted: Vec<PathBuf>,
    reads_outputs: bool,
    protection: Arc<Protection>,
    /// Set when a command left a directory that could not be looked into:
    /// why no further command runs.
    unknown: Mutex<Option<String>>,
}

/// One call's programs and bounds, and the first refusal of its walls.
pub(crate) struct ExecCall {
    tool: Arc<ExecTool>,
    deadline: Instant,
    output: usize,
    write: u64,
    progress: Option<ProgressSink>,
    refused: Option<ExecRefusal>,
}

impl Capability for Exec {
    type Policy = ExecPolicy;
    type Shared = Arc<Protection>;
    type ForTool = Arc<ExecTool>;
    type InCall = ExecCall;
    type Record = ();
    /// What the walls refused a command, as its output shows; or a
    /// program of the user's `PATH` that is not granted (refused to the
    /// shell, which prints why; the user may be asked for it).
    type Refusal = ExecRefusal;

    fn start(start: &Start<'_>) -> Arc<Protection> {
        Arc::clone(start.protection)
    }

    /// The walls are the file system capability's grants, held by the
    /// kernel: the tool's directories, lifts and records as configured.
    fn configure(
        policy: &ExecPolicy,
        files: &FileGrants<'_>,
        protection: &mut Arc<Protection>,
    ) -> Arc<ExecTool> {
        Arc::new(ExecTool {
            programs: policy.programs.clone(),
            dirs: files.dirs.to_vec(),
            lifted: files.lifted.to_vec(),
            reads_outputs: files.reads_saved_outputs,
            protection: Arc::clone(protection),
            unknown: Mutex::new(None),
        })
    }

    fn prepare(tool: &Arc<ExecTool>, bounds: &CallBounds<'_>) -> Result<ExecCall, String> {
        Ok(ExecCall {
            tool: Arc::clone(tool),
            deadline: bounds.deadline,
            output: bounds.limits.output,
            write: bounds.limits.write,
            progress: bounds.progress.cloned(),
            refused: None,
        })
    }

    fn link<T: HasCall<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        wit::add_to_linker::<T, ExecHost>(linker, |t| {
            let CallView { own, .. } = t.call_view();
            Running(own)
        })
    }

    fn close(call: &mut ExecCall) -> ((), Option<ExecRefusal>) {
        ((), call.refused.take())
    }

    fn describe<'a>(policy: &'a ExecPolicy, reach: &mut Reach<'a>) {
        if !policy.programs.is_empty() {
            let programs: Vec<String> = policy
                .programs
                .iter()
                .map(|p| format!("{} ({})", p.name, p.path.display()))
                .collect();
            reach
                .more
                .push(format!("native programs: {}", programs.join(", ")));
        }
    }

    /// None: a repository's plugin runs no program of the machine until
    /// the user trusts it.
    fn shipped(full: &ExecPolicy, _: &ExecPolicy, _: &Path) -> (ExecPolicy, Vec<&'static str>) {
        let withheld = if full.programs.is_empty() {
            Vec::new()
        } else {
            vec!["native programs"]
        };
        (ExecPolicy::default(), withheld)
    }
}

/// `toolhost:plugin/exec` from a call's [`ExecCall`].
struct ExecHost;

impl HasData for ExecHost {
    type Data<'a> = Running<'a>;
}

struct Running<'a>(&'a mut ExecCall);

impl wit::Host for Running<'_> {
    async fn programs(&mut self) -> Vec<String> {
        self.0
            .tool
            .programs
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    async fn run(&mut self, command: wit::Command) -> Result<wit::Finished, String> {
        let program = command.program.clone();
        if granted(&self.0.tool, &program).is_none() && self.0.refused.is_none() {
            // A program the user could grant is one of their `PATH`, by
            // its name; a typo is not asked for.
            let on_path =
                !program.contains('/') && Program::find(&program, &Lookup::from_env()).is_ok();
            if on_path {
                self.0.refused = Some(ExecRefusal::NotGranted {
                    program: program.clone(),
                });
            }
        }
        let finished = run_granted(self.0, command).await?;
        if self.0.refused.is_none() {
            let tool = &self.0.tool;
            let writable = tool
                .dirs
                .iter()
                .filter(|grant| grant.access == super::grants::Access::Write)
                .map(|grant| tool.protection.shown(&grant.host_path))
                .collect();
            self.0.refused =
                WallsRefusal::seen_in(&program, writable, &[&finished.stdout, &finished.stderr])
                    .map(ExecRefusal::Walls);
        }
        Ok(finished)
    }
}

/// Runs `command` in its walls, when its program is granted. The run and
/// what follows it happen on a blocking thread that always finishes
/// ([`run`]): dropping this future (a cancel, the call's deadline) stops
/// the command, and the protected paths it made are still removed.
async fn run_granted(call: &ExecCall, command: wit::Command) -> Result<wit::Finished, String> {
    let Some(program) = granted(&call.tool, &command.program).cloned() else {
        return Err(format!(
            "`{}` is not a program this tool may run; only the user can grant one, with \
             `--allow-exec TOOL={}`",
            command.program, command.program
        ));
    };
    let cwd = PathBuf::from(&command.cwd);
    if !cwd.is_absolute() {
        return Err(format!(
            "the working directory `{}` is not absolute",
            command.cwd
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_when_dropped = StopWhenDropped(Arc::clone(&stop));
    let tool = Arc::clone(&call.tool);
    // The shell's own `timeout_ms`, when sooner than the call's deadline.
    let deadline = command
        .timeout_ms
        .and_then(|ms| Instant::now().checked_add(std::time::Duration::from_millis(ms)))
        .map_or(call.deadline, |sooner| sooner.min(call.deadline));
    let bounds = run::Bounds {
        deadline,
        output_limit: call.output,
        progress: call.progress.clone(),
        stop,
    };
    let write = call.write;
    tokio::task::spawn_blocking(move || run_blocking(&tool, &program, command, cwd, write, &bounds))
        .await
        .map_err(|e| format!("the command's thread failed: {e}"))?
}

/// The program `name` names among `tool`'s, by its name or its path.
fn granted<'a>(tool: &'a ExecTool, name: &str) -> Option<&'a Program> {
    tool.programs
        .iter()
        .find(|p| p.name == name || p.path.as_os_str() == name)
}

/// Sets its flag when dropped: the host call waiting for a command is
/// gone, so the command stops.
struct StopWhenDropped(Arc<AtomicBool>);

impl Drop for StopWhenDropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The survey, the walls' plan, the run, and what the command made of
/// protected paths removed and said.
fn run_blocking(
    tool: &ExecTool,
    program: &Program,
    command: wit::Command,
    cwd: PathBuf,
    write: u64,
    bounds: &run::Bounds,
) -> Result<wit::Finished, String> {
    if let Some(why) = tool
        .unknown
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
    {
        return Err(why.clone());
    }
    // One command at a time in the tool's writable directories, across
    // calls and processes: each command's survey before it must not take
    // what another is making for the user's own.
    let _lock = lock::Exclusive::of(&tool.dirs, tool.protection.workspace(), bounds)?;
    let grants = grants(tool);
    let before = Survey::of(&grants, None)?;
    let left = bounds.deadline.saturating_duration_since(Instant::now());
    let limits = WallLimits {
        processes: PROCESSES,
        file_size: write,
        memory: PROCESS_MEMORY,
        open_files: OPEN_FILES,
        cpu_seconds: left.as_secs() + 1,
        scratch: SCRATCH,
    };
    let plan = walls::plan(
        Command {
            program,
            args: &command.args,
            cwd: &cwd,
            env: &command.env,
            stdin: command.stdin,
        },
        &grants,
        tool.reads_outputs,
        &before,
        limits,
        // The helper's own deadline is a backstop (the host stops the
        // command at its deadline, and a host that dies closes the control
        // pipe): later, so the host's stop is the one a result tells of.
        (left + HELPER_GRACE)
            .as_millis()
            .try_into()
            .unwrap_or(u64::MAX),
    )?;
    let finished = run::run(&plan, bounds);
    // Whatever became of the command, what it made is looked for; what
    // was held read-only during it is not looked into again.
    let mut stderr = Vec::new();
    let after = Survey::of(&grants, Some(&before))?;
    let leftovers = after.leftovers(&before, &tool.protection);
    // What stops native commands comes first: the list after it may be
    // cut with the result.
    if let Some((path, why)) = leftovers.unknown.first() {
        let said = format!(
            "toolhost: after the command, `{}` could not be looked into ({why}), so what it left \
             there is unknown: native commands are off in this session until the user looks at \
             it",
            survey::short(&tool.protection.shown(path))
        );
        stderr.extend_from_slice(format!("{said}\n").as_bytes());
        *tool.unknown.lock().unwrap_or_else(PoisonError::into_inner) = Some(said);
    }
    stderr.extend_from_slice(survey::remove_made(&leftovers.remove, &tool.protection).as_bytes());
    if after.removed_beyond > 0 {
        stderr.extend_from_slice(
            format!(
                "toolhost: and {} more protected paths the command made were removed\n",
                after.removed_beyond
            )
            .as_bytes(),
        );
    }
    let finished = finished.map_err(|e| format!("the command could not be started: {e}"))?;
    if finished.dropped > 0 {
        stderr.extend_from_slice(
            format!(
                "toolhost: {} bytes of output past the tool's limit of {} were dropped\n",
                finished.dropped, bounds.output_limit
            )
            .as_bytes(),
        );
    }
    Ok(wit::Finished {
        stdout: finished.stdout,
        stderr: [finished.stderr, stderr].concat(),
        exit_code: finished.exit_code,
    })
}

fn grants(tool: &ExecTool) -> Grants<'_> {
    Grants {
        dirs: &tool.dirs,
        lifted: &tool.lifted,
        protection: &tool.protection,
    }
}
