//! One command in a fresh bashkit shell: its limits (toolhost's fuel,
//! deadline and memory bound the call; bashkit's own counters are set out
//! of their way), the programs that are not there, live output, and the
//! result.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bashkit::{
    Bash, Builtin, BuiltinContext, CommandResolver, ExecResult, ExecutionLimits, async_trait,
};

use crate::guest_fs::GuestFs;
use crate::paths::Layout;
use crate::result::{self, Ending, STDERR_KEPT, STDOUT_KEPT};
use crate::{exec, missing, progress};

/// How often a running command's latest line is sent as progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// bashkit's own deadline when the call names none: far past any tool
/// deadline, so toolhost's is the one that holds.
const NO_DEADLINE: Duration = Duration::from_secs(24 * 60 * 60);

/// Runs `command` in a fresh shell at the workspace and returns the
/// model's text.
pub async fn run(command: &str, timeout: Option<Duration>, workspace: Option<&str>) -> String {
    let layout = Layout::new(workspace);
    let home = layout.workspace().display().to_string();
    let mut bash = Bash::builder()
        .fs(Arc::new(GuestFs::new(layout.clone())))
        .rootfs(false)
        .cwd(layout.workspace())
        .env("HOME", &home)
        .env("PWD", &home)
        .env("USER", "toolhost")
        .env("TMPDIR", crate::paths::SCRATCH)
        .username("toolhost")
        .hostname("sandbox")
        .limits(limits(timeout))
        .builtin_filter(|name| !missing::SHADOWED.contains(&name))
        .command_resolver(Arc::new(Programs {
            granted: exec::programs(),
            deadline: timeout.map(|timeout| Instant::now() + timeout),
        }))
        .build();
    let seen = Arc::new(std::sync::Mutex::new(Seen::default()));
    let mut live = Live::default();
    let capture = Arc::clone(&seen);
    let streamed: bashkit::OutputCallback = Box::new(move |out, err| {
        live.saw(out);
        capture
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(&out.text_lossy(), &err.text_lossy());
    });
    match bash.exec_streaming(command, streamed).await {
        Ok(done) => {
            let stdout = done.stdout.text_lossy();
            let stderr = done.stderr.text_lossy();
            result::text(&Ending {
                stdout: &stdout,
                stderr: &stderr,
                exit_code: done.exit_code,
                stdout_cut: done.stdout_truncated,
                stderr_cut: done.stderr_truncated,
            })
        }
        // The script did not run to an ending of its own: its own deadline
        // (`timeout_ms`: exit code 124, as `timeout` gives), a syntax
        // error or one of bashkit's limits (bash's 2). What it printed
        // before stays.
        Err(error) => {
            let seen = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let (why, exit_code) = match (&error, timeout) {
                (
                    bashkit::Error::ResourceLimit(bashkit::LimitExceeded::Timeout(_)),
                    Some(limit),
                ) => (
                    format!(
                        "bash: stopped after {} ms (the call's timeout_ms)\n",
                        limit.as_millis()
                    ),
                    124,
                ),
                _ => (format!("bash: {error}\n"), 2),
            };
            let stderr = format!("{}{why}", seen.stderr);
            result::text(&Ending {
                stdout: &seen.stdout,
                stderr: &stderr,
                exit_code,
                stdout_cut: seen.stdout_cut,
                stderr_cut: seen.stderr_cut,
            })
        }
    }
}

/// What a command printed as it ran, kept to what a result holds: the
/// result when the script ends early.
#[derive(Default)]
struct Seen {
    stdout: String,
    stderr: String,
    stdout_cut: bool,
    stderr_cut: bool,
}

impl Seen {
    fn add(&mut self, out: &str, err: &str) {
        self.stdout_cut |= keep(&mut self.stdout, out, STDOUT_KEPT);
        self.stderr_cut |= keep(&mut self.stderr, err, STDERR_KEPT);
    }
}

/// Appends what of `more` fits in `cap` bytes of `text`; whether some did
/// not.
fn keep(text: &mut String, more: &str, cap: usize) -> bool {
    let room = cap.saturating_sub(text.len());
    if more.len() <= room {
        text.push_str(more);
        return false;
    }
    let mut end = room;
    while !more.is_char_boundary(end) {
        end -= 1;
    }
    text.push_str(&more[..end]);
    true
}

/// bashkit's limits for one call: its counters (commands, loop turns)
/// out of the way, so a long loop ends at toolhost's fuel or deadline as
/// any tool's work does; its output caps at what the result keeps.
fn limits(timeout: Option<Duration>) -> ExecutionLimits {
    ExecutionLimits::new()
        .max_work_units(u64::MAX)
        .max_aggregate_input_bytes(u64::MAX)
        .max_live_intermediate_bytes(u64::MAX)
        .max_commands(usize::MAX)
        .max_loop_iterations(usize::MAX)
        .max_total_loop_iterations(usize::MAX)
        .max_stdout_bytes(STDOUT_KEPT)
        .max_stderr_bytes(STDERR_KEPT)
        .timeout(timeout.unwrap_or(NO_DEADLINE))
}

/// The latest line a command printed, sent as progress at most every
/// [`PROGRESS_EVERY`].
#[derive(Default)]
struct Live {
    last_sent: Option<Instant>,
}

impl Live {
    fn saw(&mut self, out: &str) {
        let Some(line) = out.lines().rev().find(|line| !line.trim().is_empty()) else {
            return;
        };
        if self
            .last_sent
            .is_some_and(|sent| sent.elapsed() < PROGRESS_EVERY)
        {
            return;
        }
        self.last_sent = Some(Instant::now());
        progress(line);
    }
}

/// Programs of the machine: those the user granted this tool run
/// natively in the host's walls ([`Native`]); those a model reaches for
/// otherwise fail saying why ([`missing`]). A name the shell has a
/// built-in for never gets here: `grep` is the shell's own.
struct Programs {
    granted: Vec<String>,
    /// When the call's `timeout_ms` ends, which a native command is held
    /// to as well.
    deadline: Option<Instant>,
}

impl CommandResolver for Programs {
    fn resolve(&self, name: &str) -> Option<Arc<dyn Builtin>> {
        if self.granted.iter().any(|granted| granted == name) {
            return Some(Arc::new(Native(name.to_string(), self.deadline)));
        }
        let message = missing::message(name)?;
        if missing::grantable(name) {
            return Some(Arc::new(Ungranted(name.to_string(), message)));
        }
        Some(Arc::new(Missing(message)))
    }
}

/// Variables the shell sets for itself, which a native command gets from
/// its walls instead (its `HOME` is an empty one of its own).
const SHELL_OWN: &[&str] = &["HOME", "PWD", "OLDPWD", "USER", "TMPDIR", "PATH", "SHLVL"];

/// A granted program, run by the host, and when the call's `timeout_ms`
/// ends.
struct Native(String, Option<Instant>);

#[async_trait]
impl Builtin for Native {
    async fn execute(&self, ctx: BuiltinContext<'_>) -> bashkit::Result<ExecResult> {
        let mut env: Vec<(String, String)> = ctx
            .env
            .iter()
            .filter(|(name, _)| !SHELL_OWN.contains(&name.as_str()))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        env.sort();
        let command = exec::Command {
            program: self.0.clone(),
            args: ctx.args.to_vec(),
            cwd: ctx.cwd.display().to_string(),
            env,
            stdin: ctx.stdin.map(|s| s.as_bytes().to_vec()).unwrap_or_default(),
            timeout_ms: self.1.map(|deadline| {
                let left = deadline.saturating_duration_since(Instant::now());
                u64::try_from(left.as_millis()).unwrap_or(u64::MAX)
            }),
        };
        Ok(match exec::run(&command) {
            Ok(finished) => ran(finished),
            // Not started: bash's "cannot execute" (126).
            Err(why) => ExecResult::err(format!("bash: {}: {why}\n", self.0), 126),
        })
    }
}

/// What a native command the host ran did, as the shell's result.
fn ran(finished: exec::Finished) -> ExecResult {
    ExecResult {
        stdout: finished.stdout.into(),
        stderr: finished.stderr.into(),
        exit_code: finished.exit_code,
        ..ExecResult::default()
    }
}

/// A program the user could grant: the host is asked to run it, which it
/// refuses (noting it, so that a chat can ask the user for the grant),
/// and the shell says why as for a missing one.
struct Ungranted(String, String);

#[async_trait]
impl Builtin for Ungranted {
    async fn execute(&self, ctx: BuiltinContext<'_>) -> bashkit::Result<ExecResult> {
        let command = exec::Command {
            program: self.0.clone(),
            args: ctx.args.to_vec(),
            cwd: ctx.cwd.display().to_string(),
            env: Vec::new(),
            stdin: Vec::new(),
            timeout_ms: None,
        };
        Ok(match exec::run(&command) {
            // Granted after all (never, while the shell's list is the
            // host's): what it did.
            Ok(finished) => ran(finished),
            Err(_) => ExecResult::err(self.1.clone(), missing::NOT_FOUND),
        })
    }
}

struct Missing(String);

#[async_trait]
impl Builtin for Missing {
    async fn execute(&self, _: BuiltinContext<'_>) -> bashkit::Result<ExecResult> {
        Ok(ExecResult::err(self.0.clone(), missing::NOT_FOUND))
    }
}
