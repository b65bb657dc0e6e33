//! Runs a command and measures it: wall time and the child's own peak
//! resident memory (`wait4`'s `ru_maxrss`, which counts that one process,
//! not the test's other children), with a deadline that kills it.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How a measured run ended.
#[derive(Debug)]
pub struct Measured {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The child's peak resident set, in bytes.
    pub peak_rss: u64,
    pub elapsed: Duration,
    /// The child's CPU time, user and system.
    pub cpu: Duration,
}

impl Measured {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Runs `cmd` (its program, arguments, environment and directory) with
/// piped output; the child is killed if it runs past `deadline`.
pub fn run_measured(cmd: &assert_cmd::Command, deadline: Duration) -> Measured {
    let mut std_cmd = std::process::Command::new(cmd.get_program());
    std_cmd.args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => std_cmd.env(key, value),
            None => std_cmd.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        std_cmd.current_dir(dir);
    }
    std_cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    // Reaped by `wait4` below, which also reports its memory.
    #[allow(clippy::zombie_processes)]
    let mut child = std_cmd.spawn().expect("spawn toolhost");
    let pid = i32::try_from(child.id()).expect("pid");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let (done, waited) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || {
        if waited.recv_timeout(deadline).is_err() {
            // Still running: our own child, by its id.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child and writes only into the two locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = start.elapsed();
    let _ = done.send(());
    let _ = watchdog.join();
    assert_eq!(reaped, pid, "wait4 failed");
    Measured {
        status: ExitStatus::from_raw(status),
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
        // Linux reports KiB.
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        elapsed,
        cpu: cpu_time(&usage.ru_utime) + cpu_time(&usage.ru_stime),
    }
}

fn cpu_time(time: &libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(time.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(time.tv_usec).unwrap_or(0))
}
