//! Starts the helper with a command's [`Plan`] and collects what the
//! command prints, up to the tool's output limit, sending its latest line
//! as progress, until it ends or the call's deadline kills it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

use super::helper;
use super::plan::Plan;
use crate::sandbox::capabilities::contract::ProgressSink;

/// How often a running command's latest line is sent as progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// How a command ended and what it printed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Finished {
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    /// The program's exit code; 128 and the signal that ended it; 124 at
    /// the deadline; 125 when the walls could not be built.
    pub(crate) exit_code: i32,
    /// Bytes printed past the output limit and dropped.
    pub(crate) dropped: u64,
}

/// The binary to start as the helper: this very one.
fn helper_binary() -> std::io::Result<std::path::PathBuf> {
    if cfg!(target_os = "linux") {
        // The running binary even when its file was replaced since.
        Ok("/proc/self/exe".into())
    } else {
        std::env::current_exe()
    }
}

/// Runs `plan` in its walls until it ends or `deadline`. The helper gets
/// no variable of the host's (a program inside can read its
/// environment: the walls' PID 1 is its child) and no descriptor but its
/// three pipes; dropping the returned future kills it, and with it every
/// process of the command.
pub(crate) async fn run(
    plan: &Plan,
    deadline: Instant,
    output_limit: usize,
    progress: Option<&ProgressSink>,
) -> std::io::Result<Finished> {
    let input = serde_json::to_vec(plan).map_err(std::io::Error::other)?;
    let mut child = tokio::process::Command::new(helper_binary()?)
        .arg(helper::ARGUMENT)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(std::io::Error::other("the helper's pipes are missing"));
    };
    let feed = async move {
        // A helper that died before reading all of it says why on stderr.
        let _ = stdin.write_all(&input).await;
        drop(stdin);
    };
    let mut live = Live {
        sink: progress,
        last_sent: None,
    };
    let collect = async {
        let (_, printed) = tokio::join!(feed, read_both(stdout, stderr, output_limit, &mut live));
        let status = child.wait().await?;
        std::io::Result::Ok((printed, status))
    };
    match tokio::time::timeout_at(deadline.into(), collect).await {
        Ok(Ok(((stdout, stderr, dropped), status))) => {
            use std::os::unix::process::ExitStatusExt as _;
            let exit_code = status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
            Ok(Finished {
                stdout,
                stderr,
                exit_code,
                dropped,
            })
        }
        Ok(Err(e)) => Err(e),
        Err(_) => {
            // The helper's death kills the walls' PID 1 (its parent-death
            // signal), and the kernel then every process inside.
            let _ = child.start_kill();
            let _ = child.wait().await;
            Ok(Finished {
                stderr: b"toolhost: the command was stopped at the call's deadline\n".to_vec(),
                exit_code: 124,
                ..Finished::default()
            })
        }
    }
}

/// The latest line printed, sent as progress at most every
/// [`PROGRESS_EVERY`].
struct Live<'a> {
    sink: Option<&'a ProgressSink>,
    last_sent: Option<Instant>,
}

impl Live<'_> {
    fn saw(&mut self, chunk: &[u8]) {
        let Some(sink) = self.sink else {
            return;
        };
        if self.last_sent.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
            return;
        }
        let text = String::from_utf8_lossy(chunk);
        if let Some(line) = text.lines().rev().find(|l| !l.trim().is_empty()) {
            self.last_sent = Some(Instant::now());
            sink(line.trim_end());
        }
    }
}

/// Reads both streams to their ends, keeping up to `limit` bytes of each;
/// the rest is read and counted (a command is never stopped by a full
/// pipe).
async fn read_both(
    mut stdout: impl AsyncRead + Unpin,
    mut stderr: impl AsyncRead + Unpin,
    limit: usize,
    live: &mut Live<'_>,
) -> (Vec<u8>, Vec<u8>, u64) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let (mut out_open, mut err_open) = (true, true);
    let mut dropped = 0u64;
    let mut buffer_out = vec![0u8; 16 * 1024];
    let mut buffer_err = vec![0u8; 16 * 1024];
    while out_open || err_open {
        let (read, is_out) = tokio::select! {
            read = stdout.read(&mut buffer_out), if out_open => (read, true),
            read = stderr.read(&mut buffer_err), if err_open => (read, false),
        };
        let n = match read {
            Ok(0) | Err(_) => {
                if is_out {
                    out_open = false;
                } else {
                    err_open = false;
                }
                continue;
            }
            Ok(n) => n,
        };
        let (kept, chunk) = if is_out {
            (&mut out, &buffer_out[..n])
        } else {
            (&mut err, &buffer_err[..n])
        };
        live.saw(chunk);
        let room = limit.saturating_sub(kept.len()).min(n);
        kept.extend_from_slice(&chunk[..room]);
        dropped += (n - room) as u64;
    }
    (out, err, dropped)
}
