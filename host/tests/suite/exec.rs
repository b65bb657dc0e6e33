//! Native commands on a grant (`--allow-exec`) through the real binary:
//! the `bash` tool runs a granted program inside walls built from its
//! grants, and every escape the issue names is tried from inside with raw
//! calls (`tests/fixtures/exec/probe.py`, run as a granted `python3`),
//! each refused or bounded and followed by a command that works. Each
//! attack runs twice: as the user running the tests (root, here and in
//! CI) and as `nobody` through `setpriv`, so both the privileged and the
//! unprivileged way into the namespaces are tested.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::common::{Workspace, assert_text, mask_between, shared_cache};

/// The probe, in every workspace.
const PROBE: &str = include_str!("../fixtures/exec/probe.py");

/// The granted interpreter the probe runs in, by its absolute path.
const PYTHON: &str = "/usr/bin/python3";

/// Who runs toolhost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum User {
    /// The user running the tests.
    Me,
    /// `nobody`, through `setpriv`: no privilege of any kind.
    Nobody,
}

const USERS: [User; 2] = [User::Me, User::Nobody];

/// A workspace for the probe: a git repository with a hook and a config,
/// `toolhost.toml`, `.toolhost/`, a read-only `docs` and a writable `src`
/// (granted by the flags of [`walled`]), open to `nobody`.
fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.write("probe.py", PROBE);
    ws.write("docs/guide.md", "# guide\n");
    ws.write("src/ok.txt", "fine\n");
    ws.write("src/lib/.git/config", "[core]\n");
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write(".git/config", "[core]\n\tbare = false\n");
    ws.write(".git/hooks/README", "hooks live here\n");
    ws.write("toolhost.toml", "# the workspace's config\n");
    ws.write(".toolhost/state", "kept\n");
    open_to_everyone(ws.path());
    open_to_everyone(ws.user_config());
    ws
}

fn open_to_everyone(path: &Path) {
    let mode = if path.is_dir() { 0o777 } else { 0o666 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("read dir").flatten() {
            open_to_everyone(&entry.path());
        }
    }
}

/// What follows the answer of a call whose native command was refused a
/// write, with `src` writable: which grant, and the flag.
const WRITE_NOTE: &str = "--- toolhost ---\nnote: `python3` ran natively, inside walls built from \
    `bash`'s grants, and they refused it a write: it may write only in `src` (only the user can \
    grant more, with `--allow-write bash=DIR`), and never to a protected path (`.git`, \
    `toolhost.toml`, ...), whatever the grant.\n";

/// The flags every probe runs under: the workspace readable, `src`
/// writable, `python3` granted.
fn walled() -> Vec<String> {
    vec![
        "--allow-write".into(),
        "bash=src".into(),
        "--allow-exec".into(),
        format!("bash={PYTHON}"),
    ]
}

/// `toolhost` as `user`, in `ws`, with a home of its own that holds an
/// SSH key and a secret in its environment.
fn toolhost_as(user: User, ws: &Workspace) -> Command {
    let home = home();
    let mut command = match user {
        User::Me => Command::new(assert_cmd::cargo::cargo_bin("toolhost")),
        User::Nobody => {
            let mut setpriv = Command::new("setpriv");
            setpriv
                .args([
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    "--inh-caps=-all",
                    "--bounding-set=-all",
                ])
                .arg(assert_cmd::cargo::cargo_bin("toolhost"));
            setpriv
        }
    };
    let cache = match user {
        User::Me => shared_cache(),
        User::Nobody => nobody_cache(),
    };
    command
        .current_dir(ws.path())
        .env("HOME", &home)
        .env("TOOLHOST_CACHE_DIR", cache)
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .env("TOOLHOST_TEST_SECRET", SECRET)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("TOOLHOST_BASELINE_MIN_BYTES");
    command
}

/// A value no program in the walls may see.
const SECRET: &str = "sk-toolhost-exec-test-7f3a";

/// The home toolhost runs with: it holds `.ssh/id_ed25519`.
fn home() -> PathBuf {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-home");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY\n").expect("key");
    open_to_everyone(&home);
    home
}

/// `nobody`'s compile cache: the shared one is the test user's.
fn nobody_cache() -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-nobody-cache");
    std::fs::create_dir_all(&cache).expect("mkdir");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    cache
}

/// What `bash` answers `command` with, run by `user` under `flags`.
fn bash_as(user: User, ws: &Workspace, flags: &[String], command: &str) -> String {
    let input = json!({ "command": command }).to_string();
    let output = toolhost_as(user, ws)
        .args(flags)
        .args(["call", "bash", &input])
        .output()
        .expect("run toolhost");
    assert!(
        output.status.success(),
        "toolhost as {user:?} failed ({}):\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// The probe's attacks, one per line (`NAME ARG...`), run one after the
/// other in one call, then a command that works.
fn probe_as(user: User, ws: &Workspace, attacks: &[String]) -> String {
    let mut command: Vec<String> = attacks
        .iter()
        .map(|attack| format!("python3 probe.py {attack}"))
        .collect();
    command.push("python3 -c 'print(open(\"src/ok.txt\").read().strip())'".into());
    bash_as(user, ws, &walled(), &command.join("; "))
}

#[test]
fn a_granted_program_runs_in_its_grants_and_prints_as_bash_does() {
    for user in USERS {
        let ws = workspace();
        assert_text(
            &bash_as(
                user,
                &ws,
                &walled(),
                "python3 -c 'import os; print(os.getcwd()); open(\"src/new.txt\", \"w\").write(\"made\")' \
                 && cat src/new.txt && echo; echo in | python3 -c 'import sys; print(sys.stdin.read().upper(), end=\"\"); sys.exit(3)'",
            ),
            &ws.expand("{ws}\nmade\nIN\nexit code 3\n"),
        );
    }
}

#[test]
fn what_lies_outside_the_grants_is_not_there() {
    let home = home();
    for user in USERS {
        let ws = workspace();
        let attacks = [
            format!("read {}", home.join(".ssh/id_ed25519").display()),
            format!("list {}", ws.user_config().display()),
            "read /etc/shadow".into(),
            "read /proc/1/environ".into(),
            format!("list /proc/{}/root", std::process::id()),
            format!(
                "symlink-read {} src/key",
                home.join(".ssh/id_ed25519").display()
            ),
        ];
        assert_text(
            &probe_as(user, &ws, &attacks),
            "read: refused (ENOENT)\nlist: refused (ENOENT)\nread: refused (ENOENT)\nread: \
             refused (EACCES)\nlist: refused (ENOENT)\nsymlink-read: refused (ENOENT)\nfine\n",
        );
    }
}

#[test]
fn writes_outside_the_write_grants_and_to_protected_paths_are_refused() {
    for user in USERS {
        let ws = workspace();
        let attacks = [
            "append docs/guide.md",
            "create notes.txt",
            "create .git/hooks/pre-commit",
            "append .git/config",
            "append toolhost.toml",
            "create .toolhost/plugins.wasm",
            "rename .git src/git",
            "rename src/ok.txt docs/ok.txt",
            "rename .git .git-old",
            "append src/lib/.git/config",
            "rename src/lib/.git src/lib/git",
            "rename src/lib src/lib2",
            "remove-tree src/lib/.git",
            "remove-tree .git/hooks",
            "hardlink docs/guide.md src/guide.md",
            "umount .git",
        ]
        .map(String::from);
        assert_text(
            &probe_as(user, &ws, &attacks),
            &format!(
                "append: refused (EROFS)\ncreate: refused (EROFS)\ncreate: refused (EROFS)\nappend: \
             refused (EROFS)\nappend: refused (EROFS)\ncreate: refused (EROFS)\nrename: refused \
             (EXDEV)\nrename: refused (EXDEV)\nrename: refused (EROFS)\nappend: refused (EROFS)\n\
             rename: refused (EBUSY)\nrename: refused (EBUSY)\nremove-tree: refused (EBUSY)\n\
             remove-tree: refused (EROFS)\nhardlink: refused \
             (EXDEV)\numount: refused (EPERM)\nfine\n{WRITE_NOTE}"
            ),
        );
        assert_eq!(ws.read(".git/config"), "[core]\n\tbare = false\n");
        assert_eq!(ws.read("toolhost.toml"), "# the workspace's config\n");
    }
}

#[test]
fn a_protected_path_a_command_makes_is_removed_and_the_model_is_told() {
    for user in USERS {
        let ws = workspace();
        std::fs::remove_file(ws.path().join("toolhost.toml")).expect("rm");
        let flags = vec![
            "--allow-write".into(),
            "bash=.".into(),
            "--allow-exec".into(),
            format!("bash={PYTHON}"),
        ];
        assert_text(
            &bash_as(
                user,
                &ws,
                &flags,
                "python3 probe.py create toolhost.toml; mkdir -p sub && python3 probe.py create \
                 sub/HEAD; echo next",
            ),
            "create: done\ncreate: done\nnext\n--- stderr ---\ntoolhost: the command made \
             `toolhost.toml`, which is protected (it is toolhost's configuration of a workspace, \
             which decides what every tool may do); it was removed\ntoolhost: the command made \
             `sub/HEAD`, which is protected (git takes a directory holding a `HEAD` for a \
             repository and runs what its config says); it was removed\n",
        );
        assert!(!ws.path().join("toolhost.toml").exists());
        assert!(!ws.path().join("sub/HEAD").exists());
    }
}

/// Before the rule (the red team's findings on the first landing), a
/// protected path the command made survived when the survey after it
/// could not look everywhere: a link at a protected name made it fail, a
/// path past `PATH_MAX` and a directory its owner may not read were
/// skipped. Each is now found and removed, and the result says so.
#[test]
fn a_protected_path_made_where_the_survey_hardly_reaches_is_removed() {
    for user in USERS {
        let ws = workspace();
        let made = bash_as(
            user,
            &ws,
            &walled(),
            "python3 probe.py symlink nowhere src/.idea; python3 probe.py deep-protected \
             src/deep; python3 probe.py closed-protected src/hid; echo next",
        );
        // A path past 240 bytes is shown cut in its middle.
        let whole = format!("src/deep/{}/.git", vec!["d".repeat(250); 20].join("/"));
        let deep = format!("{}…{}", &whole[..100], &whole[whole.len() - 100..]);
        assert_text(
            &made,
            &format!(
                "symlink: done\ndeep-protected: done\nclosed-protected: done\nnext\n--- stderr \
                 ---\ntoolhost: the command made `src/.idea`, which is protected (JetBrains IDEs \
                 run the configurations and startup tasks there); it was removed\ntoolhost: the command made `{deep}`, which is protected (git \
                 runs hooks and reads its configuration from there, so a change could run code \
                 outside the sandbox); it was removed\ntoolhost: the command made \
                 `src/hid/.claude`, which is protected (Claude Code runs the hooks, commands and \
                 MCP servers its settings there name); it was removed\n"
            ),
        );
        assert!(!ws.path().join("src/.idea").exists());
        assert!(!ws.path().join("src/hid/.claude").exists());
        assert!(ws.path().join("src/hid").is_dir());
    }
}

/// The second red team's findings on the survey after a command, each
/// reproduced before its rule: a `HEAD` made the survey skip all below it
/// (a planted `.envrc`, `.vscode` and a repository running
/// `core.fsmonitor` survived); a directory wider than the descriptor
/// limit, or one left `r--` (as `nobody`), made it fail and remove
/// nothing.
#[test]
fn nothing_a_command_makes_hides_a_protected_path_from_the_survey() {
    for user in USERS {
        let ws = workspace();
        let made = bash_as(
            user,
            &ws,
            &walled(),
            "python3 probe.py plant src; python3 probe.py wide src/wide 1500; python3 probe.py \
             create src/wide/.envrc; echo next",
        );
        assert_text(
            &made,
            "plant: done\nwide: done\ncreate: done\nnext\n--- stderr ---\ntoolhost: the command \
             made `src/.envrc`, which is protected (direnv runs it when a shell enters the \
             directory); it was removed\ntoolhost: the command made `src/.vscode`, which is \
             protected (VS Code runs its tasks when the folder opens, and its settings name \
             programs to run); it was removed\ntoolhost: the command made `src/HEAD`, which is protected (git takes a \
             directory holding a `HEAD` for a repository and runs what its config says); it was \
             removed\ntoolhost: the command made `src/sub/.git`, which is protected (git runs \
             hooks and reads its configuration from there, so a change could run code outside \
             the sandbox); it was removed\ntoolhost: the command made `src/wide/.envrc`, which \
             is protected (direnv runs it when a shell enters the directory); it was removed\n",
        );
        for planted in [
            "src/HEAD",
            "src/.envrc",
            "src/.vscode",
            "src/sub/.git",
            "src/wide/.envrc",
        ] {
            assert!(
                !ws.path().join(planted).exists(),
                "{planted} is still there"
            );
        }
        assert!(ws.path().join("src/wide/closed/f").exists());
    }
}

/// Before the rule, a repository the command made could name a directory
/// of the user's as its `core.hooksPath`, and toolhost removed that
/// directory (a repository of the user's in it included) as a protected
/// path the command had made.
#[test]
fn what_a_made_repository_names_goes_with_it_and_nothing_of_the_users() {
    for user in USERS {
        let ws = workspace();
        ws.write("src/projects/foo/.git/HEAD", "ref: refs/heads/main\n");
        ws.write("src/projects/foo/README", "mine\n");
        open_to_everyone(ws.path());
        let made = bash_as(
            user,
            &ws,
            &walled(),
            "python3 probe.py write src/evil/.git/config '[core]\\n\\thooksPath = ../projects\\n'; \
             echo next",
        );
        assert_text(
            &made,
            "write: done\nnext\n--- stderr ---\ntoolhost: the command made `src/evil/.git`, which \
             is protected (git runs hooks and reads its configuration from there, so a change \
             could run code outside the sandbox); it was removed\n",
        );
        assert_eq!(ws.read("src/projects/foo/README"), "mine\n");
        assert!(ws.path().join("src/projects/foo/.git/HEAD").exists());
    }
}

/// Before the rule, two commands at once in the same directory (two MCP
/// calls, two processes): the second's survey took the first's planted
/// `.envrc` for the user's own, and it survived both. One command at a
/// time now holds the writable directories.
#[test]
fn a_second_command_at_once_waits_for_the_first() {
    let ws = workspace();
    let first = {
        let mut command = toolhost_as(User::Me, &ws);
        command.args(walled()).args([
            "call",
            "bash",
            &json!({"command": "python3 probe.py create-then-sleep src/.envrc 2"}).to_string(),
        ]);
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the first call")
    };
    // The second starts while the first runs, its `.envrc` made.
    let started = std::time::Instant::now();
    let mut first = first;
    while !ws.path().join("src/.envrc").exists() {
        if started.elapsed().as_secs() > 30 || first.try_wait().is_ok_and(|s| s.is_some()) {
            let _ = first.kill();
            panic!(
                "the first command never ran: {:?}",
                first.wait_with_output()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = bash_as(
        User::Me,
        &ws,
        &walled(),
        "python3 probe.py write src/.envrc 'echo planted'",
    );
    let first = first.wait_with_output().expect("the first call");
    assert!(first.status.success(), "{first:?}");
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("made `src/.envrc`"),
        "{first:?}"
    );
    assert_text(
        &second,
        "write: done\n--- stderr ---\ntoolhost: the command made `src/.envrc`, which is \
         protected (direnv runs it when a shell enters the directory); it was removed\n",
    );
    assert!(!ws.path().join("src/.envrc").exists());
}

/// The third red team's findings, each reproduced before its rule: a
/// held path replaced on the host while a command ran (an editor's save)
/// was no longer held by its mount, and the survey after skipped it by
/// name, so the command's write there stayed unseen.
#[test]
fn a_held_path_replaced_during_a_command_stops_native_commands() {
    let ws = workspace();
    ws.write("src/.envrc", "export A=0\n");
    let envrc = ws.path().join("src/.envrc");
    let replace = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let saved = envrc.with_file_name(".envrc.new");
        std::fs::write(&saved, "export A=1\n").expect("save");
        std::fs::rename(&saved, &envrc).expect("rename");
    });
    let out = bash_as(
        User::Me,
        &ws,
        &walled(),
        "python3 probe.py keep-writing src/.envrc 4; python3 probe.py create src/ok",
    );
    replace.join().expect("the editor");
    assert_text(
        &out,
        "keep-writing: done wrote\n--- stderr ---\ntoolhost: after the command, `src/.envrc` \
         could not be looked into (it was replaced while the command ran, and the walls no longer \
         held it), so what it left there is unknown: native commands are off in this session \
         until the user looks at it\nbash: python3: toolhost: after the command, `src/.envrc` \
         could not be looked into (it was replaced while the command ran, and the walls no \
         longer held it), so what it left there is unknown: native commands are off in this \
         session until the user looks at it\nexit code 126\n",
    );
}

/// Before the rule, two sessions whose writable grants overlapped (`.` in
/// one, `src` in the other) locked different directories and ran at
/// once.
#[test]
fn commands_in_overlapping_grants_wait_for_each_other() {
    let ws = workspace();
    let whole = vec![
        "--allow-write".to_string(),
        "bash=.".into(),
        "--allow-exec".into(),
        format!("bash={PYTHON}"),
    ];
    let first = toolhost_as(User::Me, &ws)
        .args(&whole)
        .args([
            "call",
            "bash",
            &json!({"command": "python3 probe.py create-then-sleep src/.envrc 2"}).to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the first call");
    let started = std::time::Instant::now();
    while !ws.path().join("src/.envrc").exists() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the first command never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = bash_as(
        User::Me,
        &ws,
        &walled(),
        "python3 probe.py write src/.envrc planted",
    );
    let first = first.wait_with_output().expect("the first call");
    assert!(first.status.success(), "{first:?}");
    assert_text(
        &second,
        "write: done\n--- stderr ---\ntoolhost: the command made `src/.envrc`, which is \
         protected (direnv runs it when a shell enters the directory); it was removed\n",
    );
    assert!(!ws.path().join("src/.envrc").exists());
}

/// Before the rule, the survey after every command made the user's
/// read-only directories writable (`u+rwx`), and as `nobody` failed on
/// one it did not own and stopped native commands; a repository shipping
/// a tree 202 directories deep made every native command refuse.
#[test]
fn what_the_command_did_not_touch_keeps_its_mode_and_a_deep_tree_is_held() {
    use std::os::unix::fs::PermissionsExt as _;
    for user in USERS {
        let ws = workspace();
        ws.write("src/gomod/pkg/f.go", "package x\n");
        open_to_everyone(ws.path());
        for dir in ["src/gomod/pkg", "src/gomod"] {
            std::fs::set_permissions(ws.path().join(dir), std::fs::Permissions::from_mode(0o555))
                .expect("chmod");
        }
        let deep: PathBuf = std::iter::repeat_n("a", 202).collect();
        std::fs::create_dir_all(ws.path().join("src").join(&deep)).expect("deep");
        open_to_everyone(&ws.path().join("src/a"));
        assert_text(
            &bash_as(
                user,
                &ws,
                &walled(),
                "python3 probe.py create src/new; python3 probe.py \
                create src/gomod/pkg/new.go; python3 probe.py create src/gomod/pkg/again.go",
            ),
            "create: done\ncreate: refused (EACCES)\ncreate: refused (EACCES)\n",
        );
        for dir in ["src/gomod/pkg", "src/gomod"] {
            let mode = std::fs::metadata(ws.path().join(dir))
                .expect("dir")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o555, "{dir}");
        }
    }
}

/// Before the rule, each protected path removed was a line of the report,
/// without bound (2,000 deep ones were 100 MB, past the shell's memory).
#[test]
fn many_protected_paths_made_are_said_in_a_bounded_report() {
    let ws = workspace();
    let out = bash_as(User::Me, &ws, &walled(), "python3 probe.py many src/m 25");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2 + 20 + 1, "{out}");
    assert_eq!(
        lines.last().copied(),
        Some("toolhost: and 5 more protected paths the command made were removed")
    );
    assert!(
        std::fs::read_dir(ws.path().join("src/m"))
            .expect("m")
            .flatten()
            .all(|dir| !dir.path().join(".envrc").exists())
    );
}

/// The fourth red team's findings. Before the rule, past the paths the
/// survey after a command keeps, what the command made was not removed
/// (1,500 `.envrc` files 190 directories deep left some behind).
#[test]
fn protected_paths_past_what_the_survey_keeps_are_removed_all_the_same() {
    let ws = workspace();
    let out = bash_as(
        User::Me,
        &ws,
        &walled(),
        "python3 probe.py deep-many src/d 190 1500",
    );
    assert!(out.len() < 64 << 10, "the report is {} bytes", out.len());
    assert!(
        out.contains("more protected paths the command made were removed"),
        "{out}"
    );
    let left = Command::new("find")
        .arg(ws.path().join("src/d"))
        .args(["-name", ".envrc"])
        .output()
        .expect("find");
    assert_eq!(String::from_utf8_lossy(&left.stdout), "");
}

/// Before the rule, a directory not the user's that the user may search
/// but not list (`0711`) was skipped by both surveys, and a repository
/// inside it was written (as `nobody`).
#[test]
fn a_directory_the_user_may_search_but_not_list_refuses_the_command() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = workspace();
    ws.write("src/box/sub/.git/config", "[core]\n");
    open_to_everyone(ws.path());
    std::fs::set_permissions(
        ws.path().join("src/box"),
        std::fs::Permissions::from_mode(0o711),
    )
    .expect("chmod");
    assert_text(
        &bash_as(
            User::Nobody,
            &ws,
            &walled(),
            "python3 probe.py append src/box/sub/.git/config",
        ),
        &ws.expand(
            "--- stderr ---\nbash: python3: cannot look into {ws}/src/box: Permission denied (os \
             error 13)\nexit code 126\n",
        ),
    );
    assert_eq!(ws.read("src/box/sub/.git/config"), "[core]\n");
}

/// Before the rule, a socket inside a path held read-only (git's
/// fsmonitor daemon's, in `.git`) was not looked for, and a command
/// reached the service listening on it.
#[test]
fn a_socket_inside_a_held_path_is_hidden_too() {
    let ws = workspace();
    let socket = ws.path().join(".git/fsmonitor--daemon.ipc");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("listen");
    let flags = vec![
        "--allow-write".into(),
        "bash=.".into(),
        "--allow-exec".into(),
        format!("bash={PYTHON}"),
    ];
    assert_text(
        &bash_as(
            User::Me,
            &ws,
            &flags,
            "python3 probe.py connect-unix .git/fsmonitor--daemon.ipc",
        ),
        "connect-unix: refused (ECONNREFUSED)\n",
    );
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "the host's service was reached");
}

/// Before the rule, what a nested repository's configuration names (its
/// `core.hooksPath`, an included file) could be written natively, though
/// the file system guard refuses it: git runs those hooks, and an included
/// file can name a program (`core.fsmonitor`).
#[test]
fn what_a_nested_repositorys_configuration_names_is_held() {
    for user in USERS {
        let ws = workspace();
        ws.write(
            "src/lib/.git/config",
            "[core]\n\thooksPath = githooks\n[include]\n\tpath = ../../extra.cfg\n",
        );
        ws.write("src/lib/githooks/README", "hooks\n");
        open_to_everyone(ws.path());
        let made = bash_as(
            user,
            &ws,
            &walled(),
            "python3 probe.py create src/lib/githooks/pre-commit; python3 probe.py create \
             src/extra.cfg; echo next",
        );
        assert_text(
            &made,
            &format!(
                "create: refused (EROFS)\ncreate: done\nnext\n--- stderr ---\ntoolhost: the \
                 command made `src/extra.cfg`, which is protected (a git repository's configuration \
                 includes it, and git configuration can name programs to run (`core.fsmonitor`, \
                 `core.hooksPath`)); it was removed\n{WRITE_NOTE}"
            ),
        );
        assert!(!ws.path().join("src/extra.cfg").exists());
        assert!(!ws.path().join("src/lib/githooks/pre-commit").exists());
    }
}

/// Before the rule, a file of a writable grant with another name (a hard
/// link the repository holds to `.git/config` or to a read-only grant's
/// file) could be written through that name: the file system guard
/// refuses a file with two names, the walls did not.
#[test]
fn a_file_with_a_name_outside_the_writable_grant_is_read_only() {
    for user in USERS {
        let ws = workspace();
        std::fs::hard_link(
            ws.path().join(".git/config"),
            ws.path().join("src/gitconfig"),
        )
        .expect("link");
        std::fs::hard_link(
            ws.path().join("docs/guide.md"),
            ws.path().join("src/guide.md"),
        )
        .expect("link");
        ws.write("src/both/a", "a\n");
        std::fs::hard_link(ws.path().join("src/both/a"), ws.path().join("src/both/b"))
            .expect("link");
        open_to_everyone(ws.path());
        let attacks = [
            "append src/gitconfig",
            "append src/guide.md",
            "append src/both/a",
        ]
        .map(String::from);
        assert_text(
            &probe_as(user, &ws, &attacks),
            &format!(
                "append: refused (EROFS)\nappend: refused (EROFS)\nappend: done\nfine\n{WRITE_NOTE}"
            ),
        );
        assert_eq!(ws.read(".git/config"), "[core]\n\tbare = false\n");
        assert_eq!(ws.read("docs/guide.md"), "# guide\n");
    }
}

/// Before the rule, a command reached a host service listening on a Unix
/// socket in a granted directory (a mount does not stop `connect`), space
/// reserved with `fallocate` escaped the file-size limit, and a Cargo
/// home's registry token was readable.
#[test]
fn sockets_reserved_space_and_registry_tokens_are_out_of_reach() {
    let ws = workspace();
    let socket = ws.path().join("src/service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("listen");
    ws.write("toolhost.toml", "[tools.bash.limits]\nwrite_mib = 1\n");
    let cargo_home = tempfile::tempdir().expect("a cargo home");
    std::fs::create_dir_all(cargo_home.path().join("bin")).expect("mkdir");
    std::fs::copy("/bin/dash", cargo_home.path().join("bin/toolchain-sh")).expect("copy");
    std::fs::write(
        cargo_home.path().join("credentials.toml"),
        "token = \"cio-secret\"\n",
    )
    .expect("token");
    let out = toolhost_as(User::Me, &ws)
        .env("CARGO_HOME", cargo_home.path())
        .args(walled())
        .args(["--allow-exec".to_string(), format!("bash={}/bin/toolchain-sh", cargo_home.path().display())])
        .args([
            "call",
            "bash",
            &json!({"command": "python3 probe.py connect-unix src/service.sock; python3 probe.py \
                fallocate src/reserved 2147483648; toolchain-sh -c 'cat \"$CARGO_HOME/credentials.toml\"; \
                echo end'"})
            .to_string(),
        ])
        .output()
        .expect("run");
    assert_text(
        &String::from_utf8_lossy(&out.stdout),
        "connect-unix: refused (ECONNREFUSED)\nfallocate: refused (EFBIG)\nend\n",
    );
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "the host's service was reached");
    let reserved = std::fs::metadata(ws.path().join("src/reserved")).expect("reserved");
    assert!(
        std::os::unix::fs::MetadataExt::blocks(&reserved) * 512 <= 1 << 20,
        "{reserved:?}"
    );
}

#[test]
fn the_kernel_refuses_what_a_build_never_needs() {
    for user in USERS {
        let ws = workspace();
        let attacks = [
            "ptrace 1".to_string(),
            format!("kill {}", std::process::id()),
            "kill 1".into(),
            "unshare-user".into(),
            "mount src".into(),
            "vsock".into(),
            "privileges".into(),
            "chmod src/suid 4755".into(),
            "chmod src/sgid 2755".into(),
            "create-mode src/made 4755".into(),
            "chmod src/plain 755".into(),
        ];
        assert_text(
            &probe_as(user, &ws, &attacks),
            "ptrace: refused (EPERM)\nkill: refused (ESRCH)\nkill: refused (EPERM)\n\
             unshare-user: refused (EPERM)\nmount: refused (EPERM)\nvsock: refused (EPERM)\n\
             privileges: done NoNewPrivs=1 CapEff=0000000000000000\nchmod: refused (EPERM)\n\
             chmod: refused (EPERM)\ncreate-mode: refused (EPERM)\nchmod: done\nfine\n",
        );
        // No file the command made runs as its owner for another user.
        for name in ["suid", "sgid", "made", "plain"] {
            let mode = std::fs::metadata(ws.path().join("src").join(name))
                .map(|m| m.permissions().mode())
                .unwrap_or_default();
            assert_eq!(mode & 0o6000, 0, "src/{name} has mode {mode:o}");
        }
    }
}

#[test]
fn no_network_reaches_out_of_the_walls() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let name = format!("toolhost-exec-test-{}", std::process::id());
    let abstract_socket = {
        use std::os::linux::net::SocketAddrExt as _;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
            .expect("an abstract name");
        std::os::unix::net::UnixListener::bind_addr(&address).expect("bind abstract")
    };
    for user in USERS {
        let ws = workspace();
        let attacks = [
            format!("connect-tcp 127.0.0.1 {port}"),
            format!("connect-abstract {name}"),
            "connect-tcp 192.0.2.1 80".into(),
        ];
        assert_text(
            &probe_as(user, &ws, &attacks),
            "connect-tcp: refused (ENETUNREACH)\nconnect-abstract: refused (ECONNREFUSED)\n\
             connect-tcp: refused (ENETUNREACH)\nfine\n--- toolhost ---\nnote: `python3` ran \
             natively, inside walls built from `bash`'s grants, and they refused it the network: a \
             native program has none, whatever the tool's network grants (build offline, or use \
             `fetch`).\n",
        );
    }
    drop((listener, abstract_socket));
}

#[test]
fn the_hosts_environment_does_not_reach_a_command() {
    for user in USERS {
        let ws = workspace();
        assert_text(
            &probe_as(user, &ws, &[format!("secret {SECRET}")]),
            "secret: done not found\nfine\n",
        );
    }
}

#[test]
fn processes_and_file_size_are_bounded() {
    for user in USERS {
        let ws = workspace();
        ws.write("toolhost.toml", "[tools.bash.limits]\nwrite_mib = 1\n");
        open_to_everyone(ws.path());
        let attacks = ["fork-bomb".to_string(), "big-file src/big".into()];
        assert_text(
            &probe_as(user, &ws, &attacks),
            "fork-bomb: done bounded (EAGAIN after <600 processes)\nbig-file: refused (EFBIG)\n\
             fine\n",
        );
        assert_eq!(
            std::fs::metadata(ws.path().join("src/big"))
                .expect("big")
                .len(),
            1 << 20
        );
    }
}

#[test]
fn no_process_outlives_the_calls_deadline() {
    for user in USERS {
        let ws = workspace();
        ws.write("toolhost.toml", "[tools.bash.limits]\ntimeout_ms = 3000\n");
        open_to_everyone(ws.path());
        let marker = 900_000 + u64::from(std::process::id() % 90_000) + user as u64;
        let started = std::time::Instant::now();
        let input = json!({"command": format!(
            "python3 probe.py sleep-detached {marker}; python3 probe.py create src/.envrc; \
             python3 -c 'import time; time.sleep(60)'"
        )})
        .to_string();
        let out = toolhost_as(user, &ws)
            .args(walled())
            .args(["call", "bash", &input])
            .output()
            .expect("run toolhost");
        assert_text(
            &String::from_utf8_lossy(&out.stderr),
            "error: `bash` did not finish within its time limit of 3 s and was stopped. Ask for \
             less work in one call, or do not call it again with the same arguments.\n",
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // The detached sleeper went with the command's namespace.
        assert_eq!(sleepers(marker), Vec::<String>::new());
        // What it made of protected paths is gone though the call was
        // stopped before its answer.
        assert!(!ws.path().join("src/.envrc").exists());
    }
}

/// The shell's `timeout_ms` holds a native command too (before the rule
/// it ran on to the tool's own deadline, the shell waiting for it).
#[test]
fn a_calls_timeout_ms_stops_a_native_command() {
    let ws = workspace();
    let started = std::time::Instant::now();
    let input = json!({
        "command": "python3 -c 'import time; time.sleep(30)'; echo after",
        "timeout_ms": 1000,
    })
    .to_string();
    let out = toolhost_as(User::Me, &ws)
        .args(walled())
        .args(["call", "bash", &input])
        .output()
        .expect("run");
    assert_text(
        &String::from_utf8_lossy(&out.stdout),
        "after\n--- stderr ---\ntoolhost: the command was stopped at its deadline\n",
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
}

/// The host's processes sleeping for `seconds`.
fn sleepers(seconds: u64) -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-a", "-f", &format!("^sleep {seconds}$")])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_program_not_granted_is_refused_whatever_the_route() {
    for user in USERS {
        let ws = workspace();
        ws.write("run.sh", "python3 -c 'print(1)'\n");
        ws.write("hello.py", "#!/usr/bin/python3\nprint('hello')\n");
        open_to_everyone(ws.path());
        let flags = ["--allow-exec".to_string(), "bash=/bin/dash".into()];
        let refusal = "bash: python3: not available in this sandbox: this shell runs only its \
                       built-in utilities, inside WebAssembly, not the machine's programs. For \
                       Python, use the `python` tool (`toolhost plugin install python` adds it).\n";
        assert_text(
            &bash_as(
                user,
                &ws,
                &flags,
                "env python3 -c 1; echo 1 | xargs python3; bash run.sh; chmod +x hello.py; \
                 ./hello.py; dash -c 'echo dash runs'",
            ),
            &format!("dash runs\n--- stderr ---\n{refusal}{refusal}{refusal}{refusal}"),
        );
    }
}

/// The tool's reach shows each granted program where it is.
#[test]
fn a_granted_program_is_shown_with_its_path() {
    let ws = workspace();
    let out = toolhost_as(User::Me, &ws)
        .args(["--allow-exec", "bash=dash", "tools"])
        .output()
        .expect("tools");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("native programs: dash (/usr/bin/dash)")
            || text.contains("native programs: dash (/bin/dash)"),
        "{text}"
    );
}

#[test]
fn an_untrusted_workspaces_exec_grant_is_refused_at_start() {
    let ws = Workspace::new();
    ws.write("toolhost.toml", "[tools.bash]\nexec = [\"dash\"]\n");
    let out = ws.toolhost().args(["tools"]).output().expect("tools");
    assert!(!out.status.success());
    assert_text(
        &String::from_utf8_lossy(&out.stderr),
        &ws.expand(
            "error: exec grant `dash` (from {ws}/toolhost.toml:2 [tools.bash] exec) is refused: \
             a workspace's own toolhost.toml may not let tools run your machine's programs (it \
             may have come with the repository). To allow it, pass the grant yourself \
             (`--allow-exec bash=dash`), or trust this workspace (`toolhost trust {ws}`)\n",
        ),
    );
}

/// The demo with a scripted model (`examples/adder`, as
/// docs/using/exec.md runs it): `cargo test` on a crate with a failing
/// test, the fix, `cargo test` green; cargo's own files read-only, the
/// crate's `target/` written.
#[test]
fn a_model_runs_the_tests_fixes_the_failing_one_and_runs_them_green() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let ws = Workspace::new();
    for file in ["Cargo.toml", "src/lib.rs"] {
        ws.write(
            file,
            std::fs::read(examples.join("adder").join(file)).expect("the example"),
        );
    }
    let script = examples.join("scripts/adder.json").display().to_string();
    let out = ws
        .toolhost()
        .args(["--allow-write", "bash=.", "--allow-write", "edit_file=src"])
        .args(["--allow-exec", "bash=cargo"])
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--script",
            &script,
            "go",
        ])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let results: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .map(|e| e["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(results.len(), 3, "{events:?}");
    let first = mask_between(results[0], "finished in ", "s\n", "_");
    assert_text(
        &mask_between(&first, "(", ")", "_"),
        "thread 'adds' (_) panicked at src/lib.rs:8:5:\nassertion `left == right` failed\n  left: 0\n \
         right: 4\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered \
         out; finished in _s\n",
    );
    assert_text(
        &mask_between(results[2], "finished in ", "s\n", "_"),
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in \
         _s\n",
    );
    assert!(ws.path().join("target/debug").is_dir());
    assert_eq!(
        ws.read("src/lib.rs"),
        std::fs::read_to_string(examples.join("adder/src/lib.rs"))
            .expect("the example")
            .replace("a - b", "a + b")
    );
}
