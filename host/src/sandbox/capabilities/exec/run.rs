//! Starts the helper with a command's [`Plan`] and collects what the
//! command prints, up to the tool's output limit, sending its latest line
//! as progress, until it ends, the call's deadline or a stop.
//!
//! Blocking, on a thread of its own (`spawn_blocking`): the host call that
//! waits for it may be dropped (a cancel, the call's own deadline), but
//! what follows a command (looking for the protected paths it made) must
//! still happen, and the runtime waits for blocking work when it shuts
//! down.

use std::io::Write as _;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::helper;
use super::plan::Plan;
use crate::sandbox::capabilities::contract::ProgressSink;

/// How often a running command's latest line is sent as progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// How often the deadline and the stop are looked at while the command
/// prints nothing.
const TICK: Duration = Duration::from_millis(10);

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

/// What bounds one run besides its walls.
pub(crate) struct Bounds {
    pub(crate) deadline: Instant,
    /// Bytes kept of stdout, and of stderr.
    pub(crate) output_limit: usize,
    pub(crate) progress: Option<ProgressSink>,
    /// Set when the call that waits for the command is gone.
    pub(crate) stop: Arc<AtomicBool>,
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

/// Runs `plan` in its walls until it ends, the deadline or a stop. The
/// helper gets no variable of the host's (a program inside can read its
/// environment: the walls' PID 1 is its child) and no descriptor but its
/// three pipes; killing it kills every process of the command.
pub(crate) fn run(plan: &Plan, bounds: &Bounds) -> std::io::Result<Finished> {
    let input = serde_json::to_vec(plan).map_err(std::io::Error::other)?;
    let mut child = std::process::Command::new(helper_binary()?)
        .arg(helper::ARGUMENT)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other("the helper's pipes are missing"));
    };
    // The plan's length and the plan; a helper that dies before reading
    // all of it says why on stderr. The pipe stays open while the command
    // may run: closing it stops the command.
    let length = u64::try_from(input.len()).unwrap_or(u64::MAX).to_le_bytes();
    let _ = stdin
        .write_all(&length)
        .and_then(|()| stdin.write_all(&input));
    let (sender, chunks) = mpsc::channel();
    for (stream, is_out) in [
        (Box::new(stdout) as Box<dyn std::io::Read + Send>, true),
        (Box::new(stderr), false),
    ] {
        let sender = sender.clone();
        std::thread::spawn(move || forward(stream, is_out, &sender));
    }
    drop(sender);
    let printed = collect(&chunks, &mut stdin, &mut child, bounds);
    let status = child.wait()?;
    let (stdout, stderr, dropped, stopped) = printed;
    if stopped {
        return Ok(Finished {
            stdout,
            stderr: [
                stderr,
                b"toolhost: the command was stopped at its deadline\n".to_vec(),
            ]
            .concat(),
            exit_code: 124,
            dropped,
        });
    }
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

/// Sends what `stream` gives, chunk by chunk, until its end.
fn forward(mut stream: impl std::io::Read, is_out: bool, sender: &mpsc::Sender<(bool, Vec<u8>)>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if sender.send((is_out, buffer[..n].to_vec())).is_err() {
                    return;
                }
            }
        }
    }
}

/// Keeps up to the limit of each stream until both end, sending the latest
/// line as progress; at the deadline or a stop kills the helper (and with
/// it the walls' PID 1 and every process inside, whose ends of the pipes
/// then close). Stdout, stderr, the bytes dropped, and whether it was
/// stopped.
fn collect(
    chunks: &mpsc::Receiver<(bool, Vec<u8>)>,
    control: &mut ChildStdin,
    child: &mut Child,
    bounds: &Bounds,
) -> (Vec<u8>, Vec<u8>, u64, bool) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut dropped = 0u64;
    let mut stopped = false;
    let mut last_sent: Option<Instant> = None;
    loop {
        if !stopped && (Instant::now() >= bounds.deadline || bounds.stop.load(Ordering::Relaxed)) {
            stopped = true;
            // The helper kills the walls' PID 1 and returns only when every
            // process of the command is gone; if it cannot be told, it is
            // killed, and PID 1 with it (its parent-death signal).
            if control
                .write_all(b"stop")
                .and_then(|()| control.flush())
                .is_err()
            {
                let _ = child.kill();
            }
        }
        let (is_out, chunk) = match chunks.recv_timeout(TICK) {
            Ok(chunk) => chunk,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if let Some(sink) = &bounds.progress
            && last_sent.is_none_or(|sent| sent.elapsed() >= PROGRESS_EVERY)
            && let Some(line) = latest_line(&chunk)
        {
            last_sent = Some(Instant::now());
            sink(&line);
        }
        let kept = if is_out { &mut out } else { &mut err };
        let room = bounds
            .output_limit
            .saturating_sub(kept.len())
            .min(chunk.len());
        kept.extend_from_slice(&chunk[..room]);
        dropped += (chunk.len() - room) as u64;
    }
    (out, err, dropped, stopped)
}

/// The last line of `chunk` that is not blank.
fn latest_line(chunk: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(chunk);
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(|line| line.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_line_is_the_last_one_not_blank() {
        assert_eq!(latest_line(b"one\ntwo  \n\n"), Some("two".into()));
        assert_eq!(latest_line(b"\n \n"), None);
    }
}
