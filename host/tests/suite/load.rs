//! Attacks on the host's own work while it loads plugins, through the real
//! binary: a plugin file too big to read, a component whose tables would
//! take gigabytes on its first (baseline) load, a plugin whose thousand
//! exports would each open the grants. Each is followed by a good call in
//! the same start.

use std::fs;
use std::io::Read as _;
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::common::components::typed_component;
use super::common::{Workspace, shared_cache, stdout_of, test_plugins};

/// A 100 GB sparse `.wasm` (no disk used) is refused from its size alone,
/// naming the file, its size, the limit and the setting; the other plugins
/// load and a call to one works.
#[test]
fn a_100_gb_plugin_file_is_refused_unread_and_the_others_load() {
    let ws = Workspace::new();
    ws.write("notes.txt", "still readable\n");
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let huge = ws.mkdir(".toolhost/plugins").join("huge.wasm");
    fs::File::create(&huge)
        .and_then(|f| f.set_len(100_000_000_000))
        .expect("sparse file");

    let started = Instant::now();
    let output = ws
        .call("echo", r#"{"text":"hi"}"#, &[])
        .output()
        .expect("run");
    let took = started.elapsed();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hi\n");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "warning: skipped plugin `{}`: it is 100000000000 bytes (95368 MiB), over the limit of 512 MiB \
             on a plugin file, so toolhost did not read it; if you trust it, set `plugin_file_mib = 95368` under [limits] in \
             your config.toml (or a trusted workspace's toolhost.toml)\n",
            huge.display()
        )
    );
    // The whole start, with the standard tools from the cache: reading the
    // file (or allocating for it) would take minutes or abort.
    assert!(took < Duration::from_secs(3), "took {took:?}");

    let out = stdout_of(&mut ws.call("read_file", r#"{"path":"notes.txt"}"#, &[]));
    assert!(out.contains("still readable"), "{out}");
}

/// `plugin check` says the limit a plugin file is held to, and the user's
/// own config may raise it (a workspace's file only lower it).
#[test]
fn plugin_check_says_the_file_limit_and_the_user_may_change_it() {
    let ws = Workspace::new();
    let echo = super::common::fixture(test_plugins::ECHO);
    let size = fs::metadata(&echo).expect("echo").len();
    let check = |ws: &Workspace| stdout_of(ws.toolhost().args(["plugin", "check"]).arg(&echo));
    let out = check(&ws);
    let line = |limit: &str| {
        format!(
            "  file: {} KiB, within the limit of {limit} on a plugin file (`plugin_file_mib` under [limits])\n",
            size.div_ceil(1024)
        )
    };
    assert!(out.ends_with(&line("512 MiB")), "{out}");

    fs::write(
        ws.user_config().join("config.toml"),
        "[limits]\nplugin_file_mib = 2048\n",
    )
    .expect("user config");
    assert!(check(&ws).ends_with(&line("2 GiB")));

    // A workspace's own file asking for more gets the user's value, with
    // a notice; asking for less is applied.
    ws.write("toolhost.toml", "[limits]\nplugin_file_mib = 4096\n");
    let output = ws
        .toolhost()
        .args(["plugin", "check"])
        .arg(&echo)
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&output.stdout).ends_with(&line("2 GiB")));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("limit `plugin_file_mib = 4096` (from ")
            && stderr.contains("so `plugin_file_mib = 2048` applies"),
        "{stderr}"
    );
    ws.write("toolhost.toml", "[limits]\nplugin_file_mib = 1\n");
    assert!(check(&ws).ends_with(&line("1 MiB")));
}

/// `toolhost` with the test's environment, as a plain command (for what
/// assert_cmd cannot do: wait4, a shell around it).
fn toolhost(ws: &Workspace, program: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(ws.path())
        .env("TOOLHOST_CACHE_DIR", shared_cache())
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("TOOLHOST_BASELINE_MIN_BYTES")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// What a finished child printed, how it ended and its peak resident
/// memory (from wait4, so no other test's child counts).
struct Finished {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    peak_rss: u64,
}

// Reaped by wait4 below, which std's `Child::wait` cannot stand in for:
// it gives no resource usage.
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: Command) -> Finished {
    let mut child = cmd.spawn().expect("spawn toolhost");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let pid = i32::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: plain libc call on our own child, with valid out-pointers.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let status = std::process::ExitStatus::from_raw(status);
    Finished {
        stdout: out.join().expect("thread").expect("stdout"),
        stderr: err.join().expect("thread").expect("stderr"),
        code: status.code(),
        // Linux reports KiB.
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
    }
}

/// 5 core instances of a module with 100 tables of 1M funcrefs each: 4 GB
/// of host memory if instantiated, outside the 16 MiB memory limit. On its
/// first load, on baseline code, it is refused as the optimized tier
/// refuses it; the host stays small and a good call works.
#[test]
fn huge_tables_on_a_first_baseline_load_are_refused_and_the_host_stays_small() {
    let ws = Workspace::new();
    ws.write("notes.txt", "still readable\n");
    ws.write("toolhost.toml", "[limits]\nmemory_mib = 16\n");
    let tables = ws.write(
        ".toolhost/plugins/tables.wasm",
        typed_component(5, 100, 1 << 20, 1),
    );
    let bin = env!("CARGO_BIN_EXE_toolhost");
    // The optimized code of this exact file is never in the shared cache
    // (it is refused), so this load is its first, on the baseline tier.
    let baseline = |args: &[&str]| {
        let mut cmd = toolhost(&ws, bin, args);
        cmd.env("TOOLHOST_BASELINE_MIN_BYTES", "0");
        cmd
    };
    let hostile = run_measured(baseline(&["call", "f0", "{}"]));
    eprintln!(
        "peak RSS of the hostile call: {} MiB",
        hostile.peak_rss >> 20
    );
    assert!(hostile.peak_rss < 512 << 20, "peak {} B", hostile.peak_rss);
    assert_eq!(hostile.code, Some(1), "{}", hostile.stderr);
    let refusal = format!("warning: skipped plugin `{}`: ", tables.display());
    assert!(
        hostile.stderr.starts_with(&refusal)
            && hostile
                .stderr
                .contains("more than toolhost allows one plugin")
            && hostile
                .stderr
                .contains("error: there is no tool named `f0`"),
        "{}",
        hostile.stderr
    );

    let good = run_measured(baseline(&["call", "read_file", r#"{"path":"notes.txt"}"#]));
    assert_eq!(good.code, Some(0), "{}", good.stderr);
    assert!(good.stdout.contains("still readable"), "{}", good.stdout);
    assert!(good.peak_rss < 512 << 20, "peak {} B", good.peak_rss);
}

/// A plugin with 1,100 exports (one tool each) under `ulimit -n 1024`:
/// the grant is opened once, not once per tool, so the standard
/// `read_file` still has descriptors to work with.
#[test]
fn a_plugin_with_1100_tools_loads_under_ulimit_1024_and_read_file_works() {
    let ws = Workspace::new();
    ws.write("notes.txt", "still readable\n");
    ws.write(
        ".toolhost/plugins/many.wasm",
        typed_component(1, 0, 0, 1100),
    );
    let bin = env!("CARGO_BIN_EXE_toolhost");
    let limited = |args: &[&str]| {
        let mut all = vec!["-c", "ulimit -n 1024 && exec \"$@\"", "sh", bin];
        all.extend_from_slice(args);
        toolhost(&ws, "sh", &all)
    };
    let read = run_measured(limited(&["call", "read_file", r#"{"path":"notes.txt"}"#]));
    assert_eq!(read.code, Some(0), "{}", read.stderr);
    assert_eq!(read.stdout, "     1\tstill readable\n");
    assert_eq!(read.stderr, "");
    // The last of the plugin's tools works too.
    let last = run_measured(limited(&["call", "f1099", "{}"]));
    assert_eq!(
        (last.code, last.stdout.as_str()),
        (Some(0), "7\n"),
        "{}",
        last.stderr
    );
}

/// Copies of a plugin that spins in `list-tools` (one blob to git, one
/// compile) each burned its whole default budget in turn: four held a
/// start for 85 s, a hundred would for half an hour, at every command. A
/// `list-tools` gets a small share of the fuel, and all of a start's
/// together get 5 s; the plugins after that are not loaded, each saying
/// why, and the ones before work.
#[test]
fn copies_of_a_plugin_that_spins_in_list_tools_hold_a_start_a_bounded_time() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::ECHO, "a-echo.wasm");
    for n in 1..=8 {
        ws.install_plugin(test_plugins::LIST_TOOLS_SPIN, &format!("spin-{n}.wasm"));
    }
    let started = Instant::now();
    let output = ws
        .call("echo", r#"{"text":"hi"}"#, &[])
        .output()
        .expect("run");
    let took = started.elapsed();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hi\n");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let skipped: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("warning: skipped plugin"))
        .collect();
    assert_eq!(skipped.len(), 8, "{stderr}");
    let budget_spent = skipped
        .iter()
        .filter(|line| line.ends_with("the plugins before it used up the 5 s a start gives all `list-tools` calls together (one of them spins there, or runs out of fuel); remove the plugin that did from its directory"))
        .count();
    assert_eq!(budget_spent, 7, "{stderr}");
    assert!(
        skipped[0].ends_with("spin-1.wasm`: `list-tools` timed out after 5 s"),
        "{stderr}"
    );
}
