//! Runs a command and measures it: wall time, CPU time and the child's own
//! peak resident memory, with a deadline that kills it.
//!
//! The peak is the child's `VmHWM`, read from `/proc` while it runs, not
//! `wait4`'s `ru_maxrss`: Linux keeps in `ru_maxrss` the peak of the memory
//! the child had before `exec`, which is the test process's own (shared
//! until `exec` by `posix_spawn`), hundreds of MiB while other tests run
//! beside it. Sampled every millisecond, it can miss only what the child
//! grows in its last one.

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
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = std::sync::Arc::clone(&sampling);
        thread::spawn(move || {
            let mut peak = 0;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(high_water_mark(pid).unwrap_or(0));
                thread::sleep(Duration::from_millis(1));
            }
            peak
        })
    };
    // Until the child has exited, unreaped, so its pid is not reused while
    // it is sampled.
    // SAFETY: a zeroed siginfo is a valid value for waitid to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child without reaping it.
    let exited = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    assert_eq!(exited, 0, "waitid failed");
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let peak_rss = sampler.join().expect("sampler");
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
        peak_rss,
        elapsed,
        cpu: cpu_time(&usage.ru_utime) + cpu_time(&usage.ru_stime),
    }
}

fn cpu_time(time: &libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(time.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(time.tv_usec).unwrap_or(0))
}

/// The peak resident set of the live process `pid`, in bytes.
fn high_water_mark(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib * 1024)
}
