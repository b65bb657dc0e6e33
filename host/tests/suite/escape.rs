//! The escape suite (SECURITY.md): with `--allow-write .`, the grant anyone
//! gives a coding agent, no tool may change what confines it. Each attack is
//! a raw `wasi:filesystem` call by the `escape` fixture through the real
//! binary, followed by a good call that must still work; the protected
//! files, and everything outside the workspace, must be exactly as before.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt as _, symlink};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::common::{Workspace, stderr_of_failure, stdout_of, test_plugins};

/// A workspace that looks like a cloned repository, with toolhost's own
/// files, a nested repository, links a repository could ship, and a
/// directory outside it.
pub(super) struct Repo {
    pub(super) ws: Workspace,
    outside: tempfile::TempDir,
}

impl Repo {
    pub(super) fn new() -> Self {
        let ws = Workspace::new();
        ws.write("toolhost.toml", "[limits]\ntimeout_ms = 30000\n");
        ws.write(".git/config", "[core]\n\tbare = false\n");
        ws.write(".git/HEAD", "ref: refs/heads/main\n");
        ws.mkdir(".git/hooks");
        ws.mkdir(".git/info");
        ws.write("vendor/lib/.git/config", "[core]\n");
        ws.write("src/main.rs", "fn main() {}\n");
        // Added by the user (`plugin add`): the flags and config naming
        // `raw` are meant for it.
        ws.add_plugin(test_plugins::ESCAPE, "escape.wasm");
        symlink(".git", ws.path().join("shipped")).expect("symlink");
        symlink(".git/hooks/pre-commit", ws.path().join("dangling")).expect("symlink");
        let outside = tempfile::tempdir().expect("outside dir");
        fs::write(outside.path().join("secret.txt"), "secret").expect("write secret");
        Repo { ws, outside }
    }

    /// `toolhost --allow-write . call raw INPUT`, plus extra flags first.
    pub(super) fn raw(&self, input: &Value, flags: &[&str]) -> assert_cmd::Command {
        let mut all = vec!["--allow-write", "."];
        all.extend_from_slice(flags);
        self.ws.call("raw", &input.to_string(), &all)
    }

    /// Every file, directory and link of the protected trees and of the
    /// outside directory, with content (or link target) and times.
    pub(super) fn snapshot(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for root in [
            self.ws.path().join("toolhost.toml"),
            self.ws.path().join(".git"),
            self.ws.path().join(".toolhost"),
            self.ws.path().join("vendor"),
            self.outside.path().to_path_buf(),
        ] {
            walk(&root, &mut out);
        }
        out
    }

    /// A good call after an attack: the same tool still writes in `src`.
    pub(super) fn assert_still_works(&self, n: usize) {
        let file = format!("src/ok-{n}.txt");
        let out =
            stdout_of(&mut self.raw(&json!({"op": "write", "path": file, "text": "fine"}), &[]));
        assert_eq!(out, "ok\n");
        assert_eq!(self.ws.read(&file), "fine");
    }
}

fn walk(path: &Path, out: &mut BTreeMap<String, String>) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        out.insert(path.display().to_string(), "absent".into());
        return;
    };
    let times = format!("{}.{}", meta.mtime(), meta.mtime_nsec());
    let entry = if meta.file_type().is_symlink() {
        format!("link {:?}", fs::read_link(path).expect("read link"))
    } else if meta.is_dir() {
        let mut children: Vec<PathBuf> = fs::read_dir(path)
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .collect();
        children.sort();
        for child in &children {
            walk(child, out);
        }
        format!("dir {times}")
    } else {
        format!("file {times} {:?}", fs::read(path).expect("read"))
    };
    out.insert(path.display().to_string(), entry);
}

/// The refusal of a change of `path`, which lies in `protected`.
fn protected(path: &str, protected: &str) -> String {
    format!("error: `raw` may not change `{path}`: `{protected}` is protected (")
}

#[test]
fn no_raw_wasi_call_changes_a_protected_path() {
    let repo = Repo::new();
    let link_outside = |link: &str, target: &str| {
        format!(
            "error: `raw` may not create the symbolic link `{link}` -> `{target}`: the target is outside"
        )
    };
    let link_climbs = |link: &str, target: &str| {
        format!(
            "error: `raw` may not create the symbolic link `{link}` -> `{target}`: the target climbs"
        )
    };
    // A link out that the repository shipped (reading through it fails in
    // the guest; a new link through it must not be made).
    symlink(repo.outside.path(), repo.ws.path().join("src/away")).expect("symlink");
    let attacks: Vec<(&str, Value, String)> = vec![
        (
            "rewrite toolhost.toml",
            json!({"op": "write", "path": "toolhost.toml", "text": "[defaults]\nwrite = [\"/\"]\n"}),
            protected("toolhost.toml", "toolhost.toml"),
        ),
        (
            "rewrite ./toolhost.toml",
            json!({"op": "write", "path": "./toolhost.toml", "text": "x"}),
            protected("toolhost.toml", "toolhost.toml"),
        ),
        (
            "create a git hook",
            json!({"op": "write", "path": ".git/hooks/pre-commit", "text": "#!/bin/sh\n"}),
            protected(".git/hooks/pre-commit", ".git"),
        ),
        (
            "reach .git through src/..",
            json!({"op": "write", "path": "src/../.git/config", "text": "x"}),
            protected(".git/config", ".git"),
        ),
        (
            "drop a plugin in",
            json!({"op": "write", "path": ".toolhost/plugins/evil.wasm", "text": "\0asm"}),
            protected(".toolhost/plugins/evil.wasm", ".toolhost"),
        ),
        (
            "write through a read-only descriptor of .git",
            json!({"op": "write", "dir": ".git", "path": "config", "text": "x"}),
            protected(".git/config", ".git"),
        ),
        (
            "write through a shipped symlink to .git",
            json!({"op": "write", "dir": "shipped", "path": "hooks/pre-commit", "text": "x"}),
            protected(".git/hooks/pre-commit", ".git"),
        ),
        (
            "create through a dangling shipped symlink",
            json!({"op": "write", "path": "dangling", "follow": true, "text": "x"}),
            protected(".git/hooks/pre-commit", ".git"),
        ),
        (
            "a nested repository's config",
            json!({"op": "write", "path": "vendor/lib/.git/config", "text": "x"}),
            protected("vendor/lib/.git/config", "vendor/lib/.git"),
        ),
        (
            "append to toolhost.toml",
            json!({"op": "append", "path": "toolhost.toml", "text": "x"}),
            protected("toolhost.toml", "toolhost.toml"),
        ),
        (
            "stream into .git/config",
            json!({"op": "stream_write", "path": ".git/config", "text": "x"}),
            protected(".git/config", ".git"),
        ),
        (
            "truncate with read access only",
            json!({"op": "truncate", "path": ".git/config"}),
            protected(".git/config", ".git"),
        ),
        (
            "set the size of toolhost.toml",
            json!({"op": "set_size", "path": "toolhost.toml", "size": 0}),
            protected("toolhost.toml", "toolhost.toml"),
        ),
        (
            "set times through a read-only descriptor",
            json!({"op": "set_times", "path": ".git/config"}),
            protected(".git/config", ".git"),
        ),
        (
            "set times by path",
            json!({"op": "set_times_at", "path": ".git/HEAD"}),
            protected(".git/HEAD", ".git"),
        ),
        (
            "mkdir in .git",
            json!({"op": "mkdir", "path": ".git/hooks2"}),
            protected(".git/hooks2", ".git"),
        ),
        (
            "mkdir through a descriptor of .git",
            json!({"op": "mkdir", "dir": ".git", "path": "refs2"}),
            protected(".git/refs2", ".git"),
        ),
        (
            "rmdir .git/hooks",
            json!({"op": "rmdir", "path": ".git/hooks"}),
            protected(".git/hooks", ".git"),
        ),
        (
            "delete toolhost.toml",
            json!({"op": "unlink", "path": "toolhost.toml"}),
            protected("toolhost.toml", "toolhost.toml"),
        ),
        (
            "delete a plugin",
            json!({"op": "unlink", "path": ".toolhost/plugins/escape.wasm"}),
            protected(".toolhost/plugins/escape.wasm", ".toolhost"),
        ),
        (
            "rename .git away",
            json!({"op": "rename", "from": ".git", "to": "git-old"}),
            protected(".git", ".git"),
        ),
        (
            "rename a file into .git/hooks",
            json!({"op": "rename", "from": "src/main.rs", "to": ".git/hooks/pre-commit"}),
            protected(".git/hooks/pre-commit", ".git"),
        ),
        (
            "rename toolhost.toml away",
            json!({"op": "rename", "from": "toolhost.toml", "to": "config.bak"}),
            protected("toolhost.toml", "toolhost.toml"),
        ),
        (
            "rename inside .git through its descriptor",
            json!({"op": "rename", "dir": ".git", "from": "config", "to": "config2"}),
            protected(".git/config", ".git"),
        ),
        (
            "a symlink in .toolhost pointing out",
            json!({"op": "symlink", "link": ".toolhost/sessions", "target": "../../elsewhere"}),
            protected(".toolhost/sessions", ".toolhost"),
        ),
        (
            "a symlink out of the workspace",
            json!({"op": "symlink", "link": "escape", "target": "../outside"}),
            link_climbs("escape", "../outside"),
        ),
        (
            "a symlink that climbs out from a subdirectory",
            json!({"op": "symlink", "link": "src/up", "target": "../.."}),
            link_climbs("src/up", "../.."),
        ),
        (
            "a symlink out through a link the repository shipped",
            json!({"op": "symlink", "link": "src/leak", "target": "away/secret.txt"}),
            link_outside("src/leak", "away/secret.txt"),
        ),
        (
            "a symlink into .git",
            json!({"op": "symlink", "link": "hooks", "target": ".git/hooks"}),
            "error: `raw` may not create the symbolic link `hooks` -> `.git/hooks`: the target is \
             inside `.git`, which is protected ("
                .into(),
        ),
        (
            "a symlink with an absolute target",
            json!({"op": "symlink", "link": "etc", "target": "/etc"}),
            "error: `raw` may not create the symbolic link `etc` -> `/etc`: links with an absolute \
             target are not allowed"
                .into(),
        ),
        (
            "a hard link to .git/config",
            json!({"op": "link", "from": ".git/config", "to": "src/config"}),
            "error: `raw` may not hard-link `.git/config`: it may not write that file".into(),
        ),
        (
            "a hard link to toolhost.toml",
            json!({"op": "link", "from": "toolhost.toml", "to": "cfg.toml"}),
            "error: `raw` may not hard-link `toolhost.toml`: it may not write that file".into(),
        ),
    ];
    assert!(attacks.len() >= 25, "{} attacks", attacks.len());
    let before = repo.snapshot();
    for (n, (name, input, expected)) in attacks.iter().enumerate() {
        let err = stderr_of_failure(&mut repo.raw(input, &[]), 1);
        assert!(err.starts_with(expected.as_str()), "{name}:\n{err}");
        assert_eq!(repo.snapshot(), before, "{name} changed something");
        repo.assert_still_works(n);
    }
    for leftover in [
        "git-old",
        "config.bak",
        "escape",
        "hooks",
        "etc",
        "cfg.toml",
        "src/up",
        "src/leak",
    ] {
        assert!(
            fs::symlink_metadata(repo.ws.path().join(leftover)).is_err(),
            "{leftover} exists"
        );
    }
}

#[test]
fn everything_else_in_the_workspace_stays_writable() {
    let repo = Repo::new();
    let ok = |input: Value| {
        let out = stdout_of(&mut repo.raw(&input, &[]));
        assert_eq!(out, "ok\n", "{input}");
    };
    ok(json!({"op": "write", "path": "src/a.txt", "text": "one"}));
    ok(json!({"op": "append", "path": "src/a.txt", "text": " two"}));
    ok(json!({"op": "stream_write", "path": "src/a.txt", "text": "ONE"}));
    assert_eq!(repo.ws.read("src/a.txt"), "ONE two");
    ok(json!({"op": "set_size", "path": "src/a.txt", "size": 3}));
    ok(json!({"op": "set_times", "path": "src/a.txt"}));
    ok(json!({"op": "set_times_at", "path": "src/a.txt"}));
    ok(json!({"op": "truncate", "path": "src/main.rs"}));
    assert_eq!(repo.ws.read("src/main.rs"), "");
    ok(json!({"op": "mkdir", "path": "src/new"}));
    ok(json!({"op": "rename", "from": "src/a.txt", "to": "src/new/b.txt"}));
    assert_eq!(repo.ws.read("src/new/b.txt"), "ONE");
    ok(json!({"op": "symlink", "link": "src/new/link", "target": "b.txt"}));
    ok(json!({"op": "symlink", "link": "top", "target": "src/new"}));
    ok(json!({"op": "write", "path": "top/link", "follow": true, "text": "via link"}));
    assert_eq!(repo.ws.read("src/new/b.txt"), "via link");
    ok(json!({"op": "link", "from": "src/new/b.txt", "to": "src/hard.txt"}));
    assert_eq!(repo.ws.read("src/hard.txt"), "via link");
    ok(json!({"op": "unlink", "path": "src/hard.txt"}));
    ok(json!({"op": "unlink", "path": "top"}));
    ok(json!({"op": "write", "path": ".gitignore", "text": "target/\n"}));
    ok(json!({"op": "write", "path": "toolhost.toml.bak", "text": "x"}));
    ok(json!({"op": "mkdir", "path": "vendor/lib/empty"}));
    // `HEAD` is matched as written: `head/` is an ordinary directory.
    ok(json!({"op": "mkdir", "path": "src/head"}));
    ok(json!({"op": "write", "path": "src/head/css.html", "text": "<style>"}));
    ok(json!({"op": "rmdir", "path": "vendor/lib/empty"}));
}

#[test]
fn the_standard_tools_are_refused_before_any_wasm_runs() {
    let repo = Repo::new();
    let before = repo.snapshot();
    let flags = ["--allow-write", "."];
    for (tool, input, path, protected_path) in [
        (
            "write_file",
            json!({"path": "toolhost.toml", "content": "[defaults]\nwrite = [\"/\"]\n"}),
            "toolhost.toml",
            "toolhost.toml",
        ),
        (
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
            ".git/hooks/pre-commit",
            ".git",
        ),
        (
            "write_file",
            json!({"path": "shipped/config", "content": "x"}),
            ".git/config",
            ".git",
        ),
        (
            "edit_file",
            json!({"path": ".git/config", "old_string": "bare", "new_string": "worktree"}),
            ".git/config",
            ".git",
        ),
    ] {
        let err = stderr_of_failure(&mut repo.ws.call(tool, &input.to_string(), &flags), 1);
        assert!(
            err.starts_with(&format!(
                "error: `{tool}` may not change `{path}`: `{protected_path}` is protected ("
            )),
            "{tool} {input}: {err}"
        );
        assert!(
            err.contains(&format!("`--allow-write {tool}={protected_path}`")),
            "{err}"
        );
    }
    assert_eq!(repo.snapshot(), before);
    let out = stdout_of(&mut repo.ws.call(
        "write_file",
        &json!({"path": "src/notes.md", "content": "fine\n"}).to_string(),
        &flags,
    ));
    assert!(out.starts_with("created `src/notes.md`"), "{out}");
}

#[test]
fn a_grant_the_user_names_lifts_the_protection_for_that_tool_alone() {
    let repo = Repo::new();
    let lift = ["--allow-write", "raw=.git"];
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "write", "path": ".git/info/exclude", "text": "*.log\n"}),
        &lift,
    ));
    assert_eq!(out, "ok\n");
    assert_eq!(repo.ws.read(".git/info/exclude"), "*.log\n");
    // Only `.git`, and only for `raw`.
    let err = stderr_of_failure(
        &mut repo.raw(&json!({"op": "unlink", "path": "toolhost.toml"}), &lift),
        1,
    );
    assert!(
        err.starts_with(&protected("toolhost.toml", "toolhost.toml")),
        "{err}"
    );
    let mut write_file = repo.ws.call(
        "write_file",
        &json!({"path": ".git/info/exclude", "content": "x"}).to_string(),
        &["--allow-write", ".", "--allow-write", "raw=.git"],
    );
    let err = stderr_of_failure(&mut write_file, 1);
    assert!(err.contains("`.git` is protected"), "{err}");
}

/// Red team (after issue 40): a user's write grant was a lift whenever
/// what it landed on was protected, so what the workspace shipped decided.
/// A shipped `src/HEAD` made `--allow-write raw=src` a lift of a repository
/// (the tool could then write `src/config`, `src/hooks`, `src/objects` and
/// `src/refs`, and git run in `src` runs what they say); a shipped `.vscode
/// -> src` made it a lift of `.vscode` (a model-written `tasks.json` runs
/// when the folder opens); a shipped `HEAD` at the root made `--allow-write
/// raw=.` one. Only the user's words lift now: `src/HEAD` names the
/// repository it marks, `.vscode` what it leads to.
#[test]
fn a_grant_lifts_only_what_its_words_name_whatever_the_workspace_ships() {
    let head = "ref: refs/heads/main\n";
    let shipped_head = Workspace::new();
    shipped_head.write("src/HEAD", head);
    shipped_head.write("src/main.rs", "fn main() {}\n");
    let shipped_link = Workspace::new();
    shipped_link.mkdir("src");
    symlink("src", shipped_link.path().join(".vscode")).expect("symlink");
    let head_at_root = Workspace::new();
    head_at_root.write("HEAD", head);
    // Red team, second round: a protection the workspace's own file adds
    // on a repository; a link of a protected name to `.git`; a link in a
    // protected directory reached through a link, to a repository; a
    // `HEAD` that is a link.
    let protects_a_repository = Workspace::new();
    protects_a_repository.write("src/HEAD", head);
    protects_a_repository.write("toolhost.toml", "[sandbox]\nprotect = [\"src\"]\n");
    let named_git = Workspace::new();
    named_git.write(".git/HEAD", head);
    named_git.write(".git/config", "[core]\n");
    symlink(".git", named_git.path().join("node_modules")).expect("symlink");
    let link_in_a_link = Workspace::new();
    link_in_a_link.write("site/public/HEAD", head);
    link_in_a_link.mkdir("docs");
    symlink("docs", link_in_a_link.path().join(".vscode")).expect("symlink");
    symlink("../site/public", link_in_a_link.path().join("docs/api")).expect("symlink");
    let linked_head = Workspace::new();
    linked_head.write("other/HEAD", head);
    linked_head.mkdir("src");
    symlink("../other/HEAD", linked_head.path().join("src/HEAD")).expect("symlink");
    let raw = |ws: &Workspace, op: Value, flags: &[&str]| {
        ws.add_plugin(test_plugins::ESCAPE, "escape.wasm");
        ws.call("raw", &op.to_string(), flags)
    };
    let config = |preopen: &str| json!({"op": "write", "preopen": preopen, "path": "config", "text": "[core]\n\tfsmonitor = x\n"});
    let cases: [(&Workspace, &str, Value, &[&str]); 9] = [
        (&shipped_head, "raw=src", config("src"), &["raw=src/HEAD"]),
        (
            &shipped_head,
            "raw=src",
            json!({"op": "mkdir", "preopen": "src", "path": "objects"}),
            &["raw=src/HEAD"],
        ),
        (
            &shipped_head,
            "raw=src",
            json!({"op": "mkdir", "preopen": "src", "path": "hooks"}),
            &["raw=src/HEAD"],
        ),
        (
            &shipped_link,
            "raw=src",
            json!({"op": "write", "preopen": "src", "path": "tasks.json", "text": "{}"}),
            &["raw=.vscode"],
        ),
        (
            &head_at_root,
            "raw=.",
            json!({"op": "write", "path": "config", "text": "[core]\n"}),
            &["raw=HEAD"],
        ),
        (
            &protects_a_repository,
            "raw=src",
            config("src"),
            &["raw=src", "raw=src/HEAD"],
        ),
        (
            &named_git,
            "raw=node_modules",
            config(".git"),
            &["raw=node_modules", "raw=.git"],
        ),
        (
            &link_in_a_link,
            "raw=docs/api",
            config("site/public"),
            &["raw=.vscode/api", "raw=site/public/HEAD"],
        ),
        (&linked_head, "raw=src", config("src"), &["raw=src/HEAD"]),
    ];
    for (ws, grant, op, lifts) in cases {
        let err = stderr_of_failure(&mut raw(ws, op.clone(), &["--allow-write", grant]), 1);
        let mut flags = vec!["--allow-write", grant];
        for lift in lifts {
            flags.extend(["--allow-write", lift]);
        }
        let advice = format!("`{}`.", flags[2..].join(" "));
        assert!(err.trim_end().ends_with(&advice), "{grant}, {op}: {err}");
        // The advice works when pasted.
        assert_eq!(
            stdout_of(&mut raw(ws, op, &flags)),
            "ok\n",
            "{grant}, {lifts:?}"
        );
    }

    // The whole refusal, as the model reads it.
    let mut write = shipped_head.call(
        "write_file",
        &json!({"path": "src/hooks/post-checkout", "content": "#!/bin/sh\n"}).to_string(),
        &["--allow-write", "write_file=src"],
    );
    assert_eq!(
        stderr_of_failure(&mut write, 1),
        "error: `write_file` may not change `src/hooks/post-checkout`: `src` is protected (it \
         holds a `HEAD`, so git may take it for a repository (with its objects and refs beside \
         it, or where a `commondir` file says) and run what its config and hooks say, so a \
         change could run code outside the sandbox). No tool may change it, even with write \
         access to the workspace. Leave it as it is and work elsewhere; if it must change, ask \
         the user, who can lift this for one tool with `--allow-write write_file=src/HEAD`.\n"
    );
    // A file a shipped link leads into is not a lift of what it is: it is
    // no directory to grant either.
    let mut file = shipped_link.call(
        "write_file",
        &json!({"path": "src/tasks.json", "content": "{}"}).to_string(),
        &["--allow-write", "write_file=src/tasks.json"],
    );
    assert_eq!(
        stderr_of_failure(&mut file, 1),
        format!(
            "error: grant `src/tasks.json` (from --allow-write write_file=src/tasks.json) is not \
             a directory (`{}`); grant the directory that holds it\n",
            shipped_link.path().join("src/tasks.json").display()
        )
    );
    // What `tools` says a tool may change names the repository.
    let tools = stdout_of(shipped_head.toolhost().args([
        "--allow-write",
        "write_file=src",
        "--allow-write",
        "write_file=src/HEAD",
        "tools",
    ]));
    assert!(
        tools.contains(
            "\n    may change protected: src, src/HEAD (the repository `src`) (granted by name)\n"
        ),
        "{tools}"
    );
    let tools =
        stdout_of(
            shipped_head
                .toolhost()
                .args(["--allow-write", "write_file=src", "tools"]),
        );
    assert!(!tools.contains("may change protected"), "{tools}");
}

/// Red team (third round): a lift was for whatever lay at its path when a
/// change came, and a repository may be moved as a whole: a tool lifted
/// for `.vscode` moved a bare repository there, wrote a hook into it and
/// moved it back (the hook then ran on a push), and one lifted for
/// `junk.git/HEAD` swapped `important.git` in. A directory is not moved
/// into a lift from outside it; what is there, and files, still are. A
/// `[sandbox] protect = ["/"]` in the workspace's file made every grant a
/// lift of it: words naming the workspace or above name nothing.
#[test]
fn a_lift_is_for_what_is_there_not_what_is_moved_in() {
    let head = "ref: refs/heads/main\n";
    let ws = Workspace::new();
    for repository in ["fixture.git", "junk.git", "important.git"] {
        ws.write(&format!("{repository}/HEAD"), head);
        ws.write(&format!("{repository}/config"), "[core]\n\tbare = true\n");
        ws.mkdir(&format!("{repository}/objects"));
        ws.mkdir(&format!("{repository}/refs"));
    }
    ws.write("notes.txt", "notes\n");
    ws.add_plugin(test_plugins::ESCAPE, "escape.wasm");
    let raw = |op: Value, lift: &str| {
        ws.call(
            "raw",
            &op.to_string(),
            &["--allow-write", "raw=.", "--allow-write", lift],
        )
    };
    let rename = |from: &str, to: &str| json!({"op": "rename", "from": from, "to": to});
    assert_eq!(
        stderr_of_failure(&mut raw(rename("fixture.git", ".vscode"), "raw=.vscode"), 1),
        "error: `raw` may not move the directory `fixture.git` into `.vscode`: the user lifted \
         the protection of `.vscode` for changes to what is there, not for what is moved in (a \
         repository moved there would have its config and hooks changed). Make the directory \
         there, or move files.\n"
    );
    assert!(ws.path().join("fixture.git/HEAD").exists());
    assert!(!ws.path().join(".vscode").exists());
    // What the lift is for still works: a directory made there, a file
    // moved in.
    let mut mkdir = raw(json!({"op": "mkdir", "path": ".vscode"}), "raw=.vscode");
    assert_eq!(stdout_of(&mut mkdir), "ok\n");
    let mut moved = raw(rename("notes.txt", ".vscode/notes.txt"), "raw=.vscode");
    assert_eq!(stdout_of(&mut moved), "ok\n");

    // A lift of a repository by its `HEAD`: another one is not moved in
    // (in one session, the lifted one moved away and this one put in its
    // place; here, into it).
    let lift = "raw=junk.git/HEAD";
    let err = stderr_of_failure(&mut raw(rename("important.git", "junk.git/inner"), lift), 1);
    assert!(
        err.starts_with(
            "error: `raw` may not move the directory `important.git` into `junk.git`: "
        ),
        "{err}"
    );
    let mut write = raw(
        json!({"op": "write", "path": "junk.git/description", "text": "junk\n"}),
        lift,
    );
    assert_eq!(stdout_of(&mut write), "ok\n");
    assert_eq!(ws.read("important.git/config"), "[core]\n\tbare = true\n");

    // Nor onto the lift's parent: `web` moved onto `app` would put its
    // `.vscode` where `app/.vscode` is lifted (a fourth red team's).
    ws.mkdir("app");
    ws.write("web/.vscode/tasks.json", "{}\n");
    let err = stderr_of_failure(&mut raw(rename("web", "app"), "raw=app/.vscode"), 1);
    assert!(
        err.starts_with("error: `raw` may not move the directory `web` into `app/.vscode`: "),
        "{err}"
    );
    assert_eq!(ws.read("web/.vscode/tasks.json"), "{}\n");

    // A fifth red team's: every tool's lifts count, not the moving tool's
    // alone (`bash`, lifted for nothing, swapped a repository in for
    // `edit_file`, lifted for `fixtures/repo/.git`, to write).
    ws.write("fixtures/repo/.git/HEAD", head);
    ws.write("vendor/lib/.git/HEAD", head);
    let mut swap = ws.call(
        "raw",
        &rename("vendor/lib", "fixtures/repo").to_string(),
        &[
            "--allow-write",
            "raw=.",
            "--allow-write",
            "edit_file=fixtures/repo/.git",
        ],
    );
    let err = stderr_of_failure(&mut swap, 1);
    assert!(
        err.starts_with(
            "error: `raw` may not move the directory `vendor/lib` into `fixtures/repo/.git`: "
        ),
        "{err}"
    );
    // And a lifted protected path is not made a link to what no rule
    // protects (`app/.vscode -> vsc`, whose `vsc/tasks.json` any tool
    // could write in a later run).
    ws.mkdir("site");
    let link = json!({"op": "symlink", "target": "vsc", "link": "site/.vscode"});
    assert_eq!(
        stderr_of_failure(&mut raw(link, "raw=site/.vscode"), 1),
        "error: `raw` may not make `site/.vscode` a symbolic link: `site/.vscode` is protected \
         (VS Code runs its tasks when the folder opens, and its settings name programs to run). \
         A lift lets a tool change what is there, but a link there would make what it leads to \
         what other programs read, and nothing protects that. Make a file or a directory \
         there.\n"
    );
    assert!(std::fs::symlink_metadata(ws.path().join("site/.vscode")).is_err());
    // Nor a second name of a link made elsewhere (a sixth red team's).
    let link = json!({"op": "symlink", "target": "vsc", "link": "site/tmp"});
    assert_eq!(stdout_of(&mut raw(link, "raw=site/.vscode")), "ok\n");
    let hard = json!({"op": "link", "from": "site/tmp", "to": "site/.vscode"});
    let err = stderr_of_failure(&mut raw(hard, "raw=site/.vscode"), 1);
    assert!(
        err.starts_with("error: `raw` may not make `site/.vscode` a symbolic link: "),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(ws.path().join("site/.vscode")).is_err());

    // Words that name the workspace lift nothing, whatever its file says.
    let protects_everything = Workspace::new();
    protects_everything.mkdir("src");
    protects_everything.write("toolhost.toml", "[sandbox]\nprotect = [\"/\", \".\"]\n");
    let tools = stdout_of(protects_everything.toolhost().args([
        "--allow-write",
        "bash=.",
        "--allow-write",
        "bash=src",
        "tools",
    ]));
    assert!(!tools.contains("may change protected"), "{tools}");

    // A lift named through a shipped link works through it: the name of
    // the link too (`mkdir -p .vscode` lands on the link itself).
    let linked = Workspace::new();
    linked.mkdir("docs");
    symlink("docs", linked.path().join(".vscode")).expect("symlink");
    let mut write = linked.call(
        "write_file",
        &json!({"path": ".vscode/tasks.json", "content": "{}"}).to_string(),
        &[
            "--allow-write",
            "write_file=.",
            "--allow-write",
            "write_file=.vscode",
        ],
    );
    assert_eq!(
        stdout_of(&mut write),
        "created `.vscode/tasks.json` (2 bytes)\n"
    );
    assert_eq!(linked.read("docs/tasks.json"), "{}");
}

/// Red team (fifth round): a tool lifted for `.git` wrote `.git/commondir`
/// naming `../shared`, where git then reads the config and runs the hooks,
/// and any tool of a later run wrote `shared/config` (its `core.fsmonitor`
/// ran on `git status`); the same through a nested repository. The
/// directory a `commondir` names is the repository's (a nested one's
/// outside its working tree is not found: SECURITY.md says so).
#[test]
fn what_a_commondir_names_is_protected_as_the_repository() {
    let head = "ref: refs/heads/main\n";
    let ws = Workspace::new();
    ws.write(".git/HEAD", head);
    ws.write(".git/commondir", "../shared\n");
    ws.write("shared/config", "[core]\n");
    ws.write("lib/.git/HEAD", head);
    ws.write("lib/.git/commondir", "../common\n");
    ws.write("lib/common/config", "[core]\n");
    let write = |path: &str| {
        ws.call(
            "write_file",
            &json!({"path": path, "content": "[core]\n\tfsmonitor = x\n"}).to_string(),
            &["--allow-write", "write_file=."],
        )
    };
    assert_eq!(
        stderr_of_failure(&mut write("shared/config"), 1),
        "error: `write_file` may not change `shared/config`: `shared` is protected (the \
         repository's `commondir` names it: git reads its config and runs its hooks from \
         there). No tool may change it, even with write access to the workspace. Leave it as \
         it is and work elsewhere; if it must change, ask the user, who can lift this for one \
         tool with `--allow-write write_file=shared`.\n"
    );
    // A nested repository's, found when a change lands in its working tree.
    let err = stderr_of_failure(&mut write("lib/common/hooks/pre-commit"), 1);
    assert!(
        err.starts_with(
            "error: `write_file` may not change `lib/common/hooks`: `lib/common` is protected \
             (a git repository's `commondir` names it"
        ),
        "{err}"
    );
    assert_eq!(ws.read("shared/config"), "[core]\n");
    assert_eq!(ws.read("lib/common/config"), "[core]\n");
    assert!(!ws.path().join("lib/common/hooks").exists());
}

/// Red team (sixth round): a workspace that is a package of a repository
/// (`--workspace app` in a monorepo) left the hooks directory and the
/// included config the repository names in it writable with
/// `--allow-write .`; `git commit` ran the hook, `git status` the
/// `core.fsmonitor`. The repository git finds from the workspace is read.
#[test]
fn the_repository_a_workspace_lies_in_protects_what_it_names_there() {
    let mono = Workspace::new();
    mono.write(".git/HEAD", "ref: refs/heads/main\n");
    mono.write(
        ".git/config",
        "[core]\n\thooksPath = app/hooks\n[include]\n\tpath = ../app/team.gitconfig\n",
    );
    mono.write("app/team.gitconfig", "[core]\n");
    mono.write("app/hooks/pre-commit", "#!/bin/sh\n");
    for (path, protected) in [
        ("hooks/pre-commit", "hooks"),
        ("team.gitconfig", "team.gitconfig"),
    ] {
        let mut write = mono.call(
            "write_file",
            &json!({"path": path, "content": "x"}).to_string(),
            &["--workspace", "app", "--allow-write", "write_file=."],
        );
        let err = stderr_of_failure(&mut write, 1);
        assert!(
            err.starts_with(&format!(
                "error: `write_file` may not change `{path}`: `{protected}` is protected ("
            )),
            "{err}"
        );
    }
    assert_eq!(mono.read("app/hooks/pre-commit"), "#!/bin/sh\n");
    assert_eq!(mono.read("app/team.gitconfig"), "[core]\n");

    // Where no flag can lift a protection (the workspace itself is git's
    // hooks directory; what a nested repository's configuration names),
    // the refusal says so instead of advising a flag that lifts nothing
    // (a seventh review's: the same advice came back, pasted or not).
    let hooks_here = Workspace::new();
    hooks_here.write(".git/HEAD", "ref: refs/heads/main\n");
    hooks_here.write(".git/config", "[core]\n\thooksPath = app\n");
    hooks_here.mkdir("app");
    let write = |ws: &Workspace, flags: &[&str], path: &str| {
        let mut call = ws.call(
            "write_file",
            &json!({"path": path, "content": "x"}).to_string(),
            flags,
        );
        stderr_of_failure(&mut call, 1)
    };
    let flags = ["--workspace", "app", "--allow-write", "write_file=."];
    assert_eq!(
        write(&hooks_here, &flags, "notes.txt"),
        "error: `write_file` may not change `notes.txt`: `.` is protected (git's \
         `core.hooksPath` names it, and git runs the hooks there). No tool may change it, even \
         with write access to the workspace, and no flag lifts it (it is the workspace itself \
         or above it, or a repository's configuration names it). Leave it as it is and work \
         elsewhere.\n"
    );
    let nested = Workspace::new();
    nested.write("sub/.git/config", "[core]\n\thooksPath = myhooks\n");
    let err = write(
        &nested,
        &[
            "--allow-write",
            "write_file=.",
            "--allow-write",
            "write_file=sub/myhooks",
        ],
        "sub/myhooks/pre-commit",
    );
    assert!(err.ends_with("and no flag lifts it (it is the workspace itself or above it, or a repository's configuration names it). Leave it as it is and work elsewhere.\n"), "{err}");

    // A lifted `.venv` holds a virtualenv's links: only a link where a
    // protection starts is refused.
    let venv = Workspace::new();
    venv.add_plugin(test_plugins::ESCAPE, "escape.wasm");
    let raw = |op: Value| {
        let flags = ["--allow-write", "raw=.", "--allow-write", "raw=.venv"];
        stdout_of(&mut venv.call("raw", &op.to_string(), &flags))
    };
    assert_eq!(raw(json!({"op": "mkdir", "path": ".venv"})), "ok\n");
    assert_eq!(raw(json!({"op": "mkdir", "path": ".venv/bin"})), "ok\n");
    let link = json!({"op": "symlink", "target": "python3", "link": ".venv/bin/python"});
    assert_eq!(raw(link), "ok\n");
}

#[test]
fn the_workspace_config_cannot_lift_a_protection_but_can_add_one() {
    let repo = Repo::new();
    repo.ws.write(
        "toolhost.toml",
        "[sandbox]\nprotect = [\"secrets\"]\n[tools.raw]\nwrite = [\".git\"]\n",
    );
    repo.ws.write("secrets/key.pem", "KEY");
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": ".git/hooks/pre-commit", "text": "x"}),
            &[],
        ),
        1,
    );
    assert!(
        err.starts_with(&protected(".git/hooks/pre-commit", ".git")),
        "{err}"
    );
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "secrets/key.pem", "text": "x"}),
            &[],
        ),
        1,
    );
    assert!(
        err.starts_with(&format!(
            "{}the user protected it in `{}` [sandbox] protect)",
            protected("secrets/key.pem", "secrets"),
            repo.ws
                .path()
                .canonicalize()
                .expect("canonical")
                .join("toolhost.toml")
                .display()
        )),
        "{err}"
    );
    assert_eq!(repo.ws.read("secrets/key.pem"), "KEY");
    repo.assert_still_works(0);
}

#[test]
fn a_call_that_writes_past_its_budget_is_stopped() {
    let repo = Repo::new();
    repo.ws.write("toolhost.toml", "[limits]\nwrite_mib = 2\n");
    let err = stderr_of_failure(
        &mut repo.raw(&json!({"op": "fill", "path": "src/big.bin", "mib": 4}), &[]),
        1,
    );
    assert_eq!(
        err,
        "error: `raw` tried to write more than its limit of 2 MiB to files in one call and was \
         stopped; what it wrote before that stays on disk. Write less in one call (smaller files, \
         fewer of them).\n"
    );
    let written = fs::metadata(repo.ws.path().join("src/big.bin"))
        .expect("partial file")
        .len();
    assert!(written <= 2 << 20, "{written} bytes written");
    // Growing a file with set-size counts too.
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "set_size", "path": "src/main.rs", "size": 8u64 << 30}),
            &[],
        ),
        1,
    );
    assert!(err.contains("more than its limit of 2 MiB"), "{err}");
    // The next call has a budget of its own (a new file costs 4 KiB more).
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "fill", "path": "src/small.bin", "mib": 1}),
        &[],
    ));
    assert_eq!(out, "ok\n");
}

/// A link at one of toolhost's own directories (which a cloned repository
/// can ship) stops every command before anything is written through it.
#[test]
fn toolhost_never_writes_through_a_link_in_its_own_directory() {
    for (link, what) in [
        (".toolhost/sessions", "session files"),
        (".toolhost/outputs", "saved tool results"),
        (".toolhost/plugins", "plugins"),
        (".toolhost", "state"),
    ] {
        let repo = Repo::new();
        let script = repo.ws.write(
            "script.json",
            json!({"turns": [{"text": "done"}]}).to_string(),
        );
        let path = repo.ws.path().join(link);
        if path.exists() {
            fs::remove_dir_all(&path).expect("remove dir");
        }
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        symlink(repo.outside.path(), &path).expect("symlink");
        let err = stderr_of_failure(
            repo.ws
                .toolhost()
                .args(["run", "--script"])
                .arg(&script)
                .arg("go"),
            1,
        );
        let shown = repo.ws.path().canonicalize().expect("canonical").join(link);
        assert!(
            err.starts_with(&format!(
                "error: `{}` is a symbolic link (to `{}`): toolhost keeps its {what} there",
                shown.display(),
                repo.outside.path().display()
            )),
            "{link}: {err}"
        );
        let outside: Vec<_> = fs::read_dir(repo.outside.path())
            .expect("outside")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(outside, vec!["secret.txt"], "{link}");
    }
}

#[test]
fn a_plugin_that_is_a_symbolic_link_is_not_loaded() {
    let repo = Repo::new();
    fs::copy(test_plugins::ECHO, repo.outside.path().join("echo.wasm")).expect("copy");
    let link = repo.ws.path().join(".toolhost/plugins/echo.wasm");
    symlink(repo.outside.path().join("echo.wasm"), &link).expect("symlink");
    let output = repo.ws.toolhost().arg("tools").output().expect("run");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stdout.contains("echo"), "{stdout}");
    assert!(
        stderr.contains(
            "echo.wasm`: it is a symbolic link, and toolhost loads plugins only from real files"
        ),
        "{stderr}"
    );
}

#[test]
fn tools_lists_the_protected_paths_and_what_a_tool_may_change_anyway() {
    let repo = Repo::new();
    let out = stdout_of(
        repo.ws
            .toolhost()
            .args(["--allow-write", "write_file=.git", "tools"]),
    );
    assert!(
        out.ends_with(&format!(
            "protected at any depth (no tool may change): toolhost.toml, .toolhost, .git, \
             HEAD, .claude, .mcp.json, .cursor, .gemini, .codex, .opencode, opencode.json, \
             opencode.jsonc, .pi, .windsurf, .kiro, .amazonq, .roo, .continue, \
             .aider.conf.yml, .github/hooks, .augment, .clinerules, .qwen, .kilocode, \
             kilo.json, kilo.jsonc, .kilo, crush.json, .crush.json, .openhands, .vscode, \
             .idea, .zed, .helix, .devcontainer, .devcontainer.json, .nvim.lua, .nvimrc, \
             .exrc, .envrc, mise.toml, .mise.toml, mise.local.toml, .mise.local.toml, .mise, \
             mise/config.toml, .config/mise, .config/mise.toml, .hg, .jj, .sl, .pijul, \
             _darcs, .bzr, .svn, .fslckout, _FOSSIL_, .husky, \
             .pre-commit-config.yaml, captainhook.json, .rusty-hook.toml, .overcommit.yml, \
             .venv, node_modules, lefthook.yml, lefthook.yaml, lefthook.toml, \
             lefthook.json, .lefthook.yml, .lefthook.yaml, .lefthook.toml, .lefthook.json, \
             lefthook-local.yml, lefthook-local.yaml, lefthook-local.toml, \
             lefthook-local.json, .lefthook-local.yml, .lefthook-local.yaml, \
             .lefthook-local.toml, .lefthook-local.json\n\
             protected (no tool may change): {}, {}\n",
            repo.ws
                .user_config()
                .canonicalize()
                .expect("canonical")
                .display(),
            super::common::shared_cache().display(),
        )),
        "{out}"
    );
    assert!(
        out.contains("    may change protected: .git (granted by name)\n"),
        "{out}"
    );
}

/// The guard answers wasi-libc's `metadata-hash-at` of an entry a directory
/// stream just returned from the listing (no `stat`): the answer must be the
/// one wasmtime-wasi gives, and a name changed in between must not get the
/// listed file's answer.
#[test]
fn a_listed_entry_gets_the_metadata_hash_a_stat_gives() {
    let repo = Repo::new();
    repo.ws.write("a.txt", "a");
    repo.ws.write("b.txt", "b");
    let out = stdout_of(&mut repo.raw(&json!({"op": "list"}), &[]));
    assert!(out.contains("a.txt same\n"), "{out}");
    assert!(
        out.lines().all(|line| line.ends_with(" same")),
        "every entry's listed hash is the stat's: {out}"
    );
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "list_then_rename", "path": "a.txt", "from": "b.txt"}),
        &[],
    ));
    assert_eq!(out, "after the rename: the new file\n");
    assert_eq!(repo.ws.read("a.txt"), "b");
}

/// Everything in the workspace but the good calls' `src/ok-N.txt`, with
/// content (or link target) and times.
fn whole(repo: &Repo) -> BTreeMap<String, String> {
    let mut all = BTreeMap::new();
    walk(repo.ws.path(), &mut all);
    // The good calls write there, which changes the directory's times.
    all.retain(|path, _| !path.contains("/src/ok-") && !path.ends_with("/src"));
    all
}

#[test]
fn what_other_programs_run_cannot_be_planted() {
    let repo = Repo::new();
    // git's hooks directory named by the repository's config (husky's way).
    repo.ws.write(
        ".git/config",
        "[core]\n\tbare = false\n\thooksPath = githooks\n",
    );
    repo.ws.mkdir("githooks");
    // A shipped file named HEAD, half a repository in `src`, a shipped
    // bare repository, and a fresh directory.
    repo.ws.write("docs/HEAD", "ref: refs/heads/main\n");
    repo.ws.mkdir("src/objects");
    repo.ws.mkdir("src/refs");
    repo.ws
        .write("fixtures/bare.git/HEAD", "ref: refs/heads/main\n");
    repo.ws.mkdir("fixtures/bare.git/objects");
    repo.ws.mkdir("fixtures/bare.git/refs");
    repo.ws
        .write("fixtures/bare.git/config", "[core]\n\tbare = true\n");
    repo.ws.mkdir("newrepo");
    let write =
        |path: &str| json!({"op": "write", "path": path, "text": "[core]\n\tfsmonitor = sh\n"});
    let mkdir = |path: &str| json!({"op": "mkdir", "path": path});
    let attacks: Vec<(&str, Value, String)> = vec![
        ("Claude Code's hooks", mkdir(".claude"), protected(".claude", ".claude")),
        ("git's directory in capitals", mkdir(".GIT"), protected(".GIT", ".GIT")),
        ("an MCP server list", write(".mcp.json"), protected(".mcp.json", ".mcp.json")),
        ("VS Code's tasks", mkdir(".vscode"), protected(".vscode", ".vscode")),
        ("VS Code's tasks in a subproject", mkdir("src/.vscode"), protected("src/.vscode", "src/.vscode")),
        ("direnv", write(".envrc"), protected(".envrc", ".envrc")),
        ("Cursor", mkdir(".cursor"), protected(".cursor", ".cursor")),
        ("Gemini CLI", mkdir(".gemini"), protected(".gemini", ".gemini")),
        ("Codex", mkdir(".codex"), protected(".codex", ".codex")),
        ("a dev container", write(".devcontainer.json"), protected(".devcontainer.json", ".devcontainer.json")),
        ("husky", mkdir(".husky"), protected(".husky", ".husky")),
        ("pre-commit", write(".pre-commit-config.yaml"), protected(".pre-commit-config.yaml", ".pre-commit-config.yaml")),
        ("core.hooksPath", write("githooks/pre-commit"), protected("githooks/pre-commit", "githooks")),
        ("a toolhost.toml below", write("src/toolhost.toml"), protected("src/toolhost.toml", "src/toolhost.toml")),
        ("a .toolhost below", mkdir("src/.toolhost"), protected("src/.toolhost", "src/.toolhost")),
        ("HEAD in a new directory", write("newrepo/HEAD"), protected("newrepo/HEAD", "newrepo/HEAD")),
        ("a .git file", write("newrepo/.git"), protected("newrepo/.git", "newrepo/.git")),
        ("HEAD beside objects and refs", write("src/HEAD"), protected("src/HEAD", "src/HEAD")),
        ("objects beside HEAD", mkdir("docs/objects"), protected("docs/objects", "docs")),
        (
            "refs moved beside HEAD",
            json!({"op": "rename", "from": "src/refs", "to": "docs/refs"}),
            protected("docs/refs", "docs"),
        ),
        ("a shipped repository's config", write("fixtures/bare.git/config"), protected("fixtures/bare.git/config", "fixtures/bare.git")),
        (
            "a link made at a protected name",
            json!({"op": "symlink", "link": ".envrc", "target": "src/main.rs"}),
            protected(".envrc", ".envrc"),
        ),
        (
            "a file moved onto a protected name",
            json!({"op": "rename", "from": "src/main.rs", "to": ".envrc"}),
            protected(".envrc", ".envrc"),
        ),
        (
            "a hard link at a protected name",
            json!({"op": "link", "from": "src/main.rs", "to": ".mcp.json"}),
            protected(".mcp.json", ".mcp.json"),
        ),
        (
            "a link that climbs, to be moved later",
            json!({"op": "symlink", "link": "vendor/lib/up", "target": "../.."}),
            "error: `raw` may not create the symbolic link `vendor/lib/up` -> `../..`: the target climbs \
             with `..`,"
                .into(),
        ),
        (
            "a link that climbs into a sibling",
            json!({"op": "symlink", "link": "src/cfg", "target": "../toolhost.toml.d"}),
            "error: `raw` may not create the symbolic link `src/cfg` -> `../toolhost.toml.d`: the \
             target climbs with `..`,"
                .into(),
        ),
    ];
    let before = whole(&repo);
    for (n, (name, input, expected)) in attacks.iter().enumerate() {
        let err = stderr_of_failure(&mut repo.raw(input, &[]), 1);
        assert!(err.starts_with(expected.as_str()), "{name}:\n{err}");
        assert_eq!(whole(&repo), before, "{name} changed something");
        repo.assert_still_works(n);
    }
}

#[test]
fn links_below_their_own_directory_still_work_where_they_are_moved() {
    let repo = Repo::new();
    let ok = |input: Value| {
        let out = stdout_of(&mut repo.raw(&input, &[]));
        assert_eq!(out, "ok\n", "{input}");
    };
    ok(json!({"op": "mkdir", "path": "src/a"}));
    ok(json!({"op": "mkdir", "path": "src/a/b"}));
    ok(json!({"op": "write", "path": "src/a/b/data.txt", "text": "data"}));
    ok(json!({"op": "symlink", "link": "src/a/L", "target": "b/data.txt"}));
    ok(json!({"op": "symlink", "link": "src/a/here", "target": "."}));
    // Moved with its directory, or alone, a link still points below where
    // it is: never out, never into a protected path.
    ok(json!({"op": "rename", "from": "src/a", "to": "moved"}));
    assert_eq!(repo.ws.read("moved/L"), "data");
    ok(json!({"op": "rename", "from": "moved/L", "to": "L"}));
    assert!(
        fs::metadata(repo.ws.path().join("L")).is_err(),
        "L now dangles"
    );
    ok(json!({"op": "write", "path": "moved/here/b/data.txt", "text": "new"}));
    assert_eq!(repo.ws.read("moved/b/data.txt"), "new");
}

#[test]
fn the_config_file_in_use_and_toolhost_s_own_directories_are_protected() {
    let repo = Repo::new();
    repo.ws
        .write("cfg/agent.toml", "[limits]\ntimeout_ms = 30000\n");
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "cfg/agent.toml", "text": "[defaults]\nwrite = [\"/\"]\n"}),
            &["--config", "cfg/agent.toml"],
        ),
        1,
    );
    assert!(
        err.starts_with(&format!(
            "{}it is the toolhost configuration in use (`--config`)",
            protected("cfg/agent.toml", "cfg/agent.toml")
        )),
        "{err}"
    );
    assert_eq!(
        repo.ws.read("cfg/agent.toml"),
        "[limits]\ntimeout_ms = 30000\n"
    );

    // A plugins directory the user names loads what is dropped there.
    repo.ws.mkdir("extra");
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "extra/evil.wasm", "text": "\0asm"}),
            &["--plugins", ".toolhost/plugins", "--plugins", "extra"],
        ),
        1,
    );
    assert!(
        err.starts_with(&format!(
            "{}it is toolhost's own",
            protected("extra/evil.wasm", "extra")
        )),
        "{err}"
    );

    // The user config directory inside a write grant (of the directory
    // holding it, as a grant of the home directory would): its trust list
    // and config stay the user's.
    let user = repo.ws.user_config().canonicalize().expect("canonical");
    let holder = user.parent().expect("parent").display().to_string();
    let name = user
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "preopen": holder, "path": format!("{name}/trusted.toml"), "text": "x"}),
            &["--allow-write", &format!("raw={holder}")],
        ),
        1,
    );
    let expected = format!(
        "error: `raw` may not change `{0}/trusted.toml`: `{0}` is protected (it is toolhost's own",
        user.display()
    );
    assert!(err.starts_with(&expected), "{err}");
    assert!(fs::metadata(user.join("trusted.toml")).is_err());
    repo.assert_still_works(0);
}

#[test]
fn the_advice_in_a_refusal_works_when_pasted() {
    let repo = Repo::new();
    repo.ws
        .write("fixtures/bare.git/HEAD", "ref: refs/heads/main\n");
    repo.ws.mkdir("fixtures/bare.git/objects");
    repo.ws.mkdir("fixtures/bare.git/refs");
    repo.ws.write("docs/HEAD", "ref: refs/heads/main\n");
    repo.ws.write("scripts/pre-push", "#!/bin/sh\n");
    symlink(
        "../../scripts/pre-push",
        repo.ws.path().join(".git/hooks/pre-push"),
    )
    .expect("symlink");
    for (tool, input, changed, expected) in [
        (
            "raw",
            json!({"op": "write", "path": "scripts/pre-push", "text": "#!/bin/sh\nid\n"}),
            "scripts/pre-push",
            "#!/bin/sh\nid\n",
        ),
        (
            "raw",
            json!({"op": "write", "path": "fixtures/bare.git/config", "text": "[core]\n"}),
            "fixtures/bare.git/config",
            "[core]\n",
        ),
        (
            "raw",
            json!({"op": "mkdir", "path": "docs/objects"}),
            "docs/objects",
            "(a directory)",
        ),
        (
            "edit_file",
            json!({"path": "toolhost.toml", "old_string": "30000", "new_string": "20000"}),
            "toolhost.toml",
            "[limits]\ntimeout_ms = 20000\n",
        ),
        (
            "write_file",
            json!({"path": ".vscode/settings.json", "content": "{}\n"}),
            ".vscode/settings.json",
            "{}\n",
        ),
        (
            "raw",
            json!({"op": "write", "path": ".git/hooks/pre-commit", "text": "#!/bin/sh\n"}),
            ".git/hooks/pre-commit",
            "#!/bin/sh\n",
        ),
    ] {
        let input = input.to_string();
        let err = stderr_of_failure(&mut repo.ws.call(tool, &input, &["--allow-write", "."]), 1);
        let (_, after) = err.split_once("`--allow-write ").expect("advice");
        let (lift, _) = after.split_once('`').expect("advice ends");
        assert!(lift.starts_with(&format!("{tool}=")), "{err}");
        stdout_of(
            &mut repo
                .ws
                .call(tool, &input, &["--allow-write", ".", "--allow-write", lift]),
        );
        let now = if repo.ws.path().join(changed).is_dir() {
            "(a directory)".to_string()
        } else {
            repo.ws.read(changed)
        };
        assert_eq!(now, expected, "{tool} with --allow-write {lift}");
    }
}

#[test]
fn shipped_links_moved_links_and_lifts_reach_nothing_that_runs() {
    let repo = Repo::new();
    let ws = &repo.ws;
    // git's hooks directory is named but not made yet.
    ws.write(".git/config", "[core]\n\thooksPath = ci/hooks\n");
    // A shipped HEAD whose objects and refs would come through `commondir`.
    ws.write("docs/HEAD", "ref: refs/heads/main\n");
    // Shipped links: at protected names, dangling; one that climbs out;
    // one that climbs out and dangles.
    symlink("m.json", ws.path().join(".mcp.json")).expect("symlink");
    symlink("vsc", ws.path().join(".vscode")).expect("symlink");
    symlink("../..", ws.path().join("src/up")).expect("symlink");
    symlink("../../gone-outside", ws.path().join("src/leak")).expect("symlink");
    ws.mkdir("d");
    let write = |path: &str| json!({"op": "write", "path": path, "text": "x"});
    let link_into = |link: &str, target: &str, hit: &str| {
        format!(
            "error: `raw` may not create the symbolic link `{link}` -> `{target}`: the target is \
             inside `{hit}`, which is protected ("
        )
    };
    let attacks: Vec<(&str, Value, String)> = vec![
        (
            "objects and refs through commondir",
            write("docs/commondir"),
            protected("docs/commondir", "docs"),
        ),
        (
            "a link where the hooks directory's parent will be",
            json!({"op": "symlink", "link": "ci", "target": "d"}),
            protected("ci", "ci/hooks"),
        ),
        (
            "the target of a shipped dangling .mcp.json",
            write("m.json"),
            protected("m.json", ".mcp.json"),
        ),
        (
            "the target of a shipped dangling .vscode",
            json!({"op": "mkdir", "path": "vsc"}),
            protected("vsc", ".vscode"),
        ),
        (
            "a shipped climbing link moved up",
            json!({"op": "rename", "from": "src/up", "to": "up"}),
            "error: `raw` may not create the symbolic link `up` -> `../..`: the target climbs".into(),
        ),
        (
            "a link through a shipped dangling link out",
            json!({"op": "symlink", "link": "src/l", "target": "leak/x"}),
            "error: `raw` may not create the symbolic link `src/l` -> `leak/x`: the target is outside"
                .into(),
        ),
    ];
    let before = whole(&repo);
    for (n, (name, input, expected)) in attacks.iter().enumerate() {
        let err = stderr_of_failure(&mut repo.raw(input, &[]), 1);
        assert!(err.starts_with(expected.as_str()), "{name}:\n{err}");
        assert_eq!(whole(&repo), before, "{name} changed something");
        repo.assert_still_works(n);
    }

    // A link made where it is harmless, then moved or hard-linked to where
    // it points into a protected path.
    ws.write(".git/config", "[core]\n\thooksPath = githooks\n");
    ws.mkdir("githooks");
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "symlink", "link": "d/l", "target": "githooks/pre-commit"}),
        &[],
    ));
    assert_eq!(out, "ok\n");
    for (input, link) in [
        (json!({"op": "rename", "from": "d/l", "to": "l"}), "l"),
        (json!({"op": "link", "from": "d/l", "to": "m"}), "m"),
    ] {
        let err = stderr_of_failure(&mut repo.raw(&input, &[]), 1);
        assert!(
            err.starts_with(&link_into(link, "githooks/pre-commit", "githooks")),
            "{input}: {err}"
        );
    }

    // A shipped climbing link may be renamed in its own directory (an
    // editor's backup), where it points where it did.
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "rename", "from": "src/up", "to": "src/up~"}),
        &[],
    ));
    assert_eq!(out, "ok\n");
    // `O_CREAT | O_EXCL` on a link answers `exist`, as the kernel does (lock
    // files rely on it), instead of creating the link's target.
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "symlink", "link": "d/lock", "target": "gone"}),
        &[],
    ));
    assert_eq!(out, "ok\n");
    let err = stderr_of_failure(
        &mut repo.raw(&json!({"op": "create_new", "path": "d/lock"}), &[]),
        1,
    );
    assert!(err.starts_with("error: `raw` failed: exist"), "{err}");
    assert!(fs::symlink_metadata(ws.path().join("d/gone")).is_err());

    // `touch .` and `touch src/..` still work.
    for path in [".", "src/.."] {
        let out = stdout_of(&mut repo.raw(&json!({"op": "set_times_at", "path": path}), &[]));
        assert_eq!(out, "ok\n", "{path}");
    }
}

#[test]
fn a_lift_lifts_only_the_protection_it_names() {
    let repo = Repo::new();
    repo.ws.mkdir(".vscode");
    let lift = ["--allow-write", "raw=.vscode"];
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "write", "path": ".vscode/tasks.json", "text": "{}"}),
        &lift,
    ));
    assert_eq!(out, "ok\n");
    stdout_of(&mut repo.raw(&json!({"op": "mkdir", "path": ".vscode/r"}), &lift));
    for (path, hit) in [
        (".vscode/r/HEAD", ".vscode/r/HEAD"),
        (".vscode/.git", ".vscode/.git"),
        (".vscode/toolhost.toml", ".vscode/toolhost.toml"),
    ] {
        let err = stderr_of_failure(
            &mut repo.raw(&json!({"op": "write", "path": path, "text": "x"}), &lift),
            1,
        );
        assert!(err.starts_with(&protected(path, hit)), "{path}: {err}");
    }

    // A grant outside the workspace under a protected-looking name is a
    // grant, not a lift: what it holds stays protected.
    let outside = tempfile::tempdir().expect("outside");
    let skill = outside
        .path()
        .canonicalize()
        .expect("canonical")
        .join(".claude/skills/x");
    fs::create_dir_all(skill.join(".git/hooks")).expect("mkdir");
    let shown = skill.display().to_string();
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "preopen": shown, "path": ".git/hooks/pre-commit", "text": "x"}),
            &["--allow-write", &format!("raw={shown}")],
        ),
        1,
    );
    assert!(
        err.starts_with(&format!(
            "error: `raw` may not change `{shown}/.git/hooks/pre-commit`: `{shown}/.git` is protected ("
        )),
        "{err}"
    );
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "write", "preopen": shown, "path": "SKILL.md", "text": "x"}),
        &["--allow-write", &format!("raw={shown}")],
    ));
    assert_eq!(out, "ok\n");
}

#[test]
fn a_protected_path_that_is_a_shipped_link_stays_protected_with_where_it_leads() {
    let repo = Repo::new();
    repo.ws
        .write(".git/config", "[core]\n\thooksPath = githooks\n");
    repo.ws.mkdir("tools/hooks");
    symlink("tools/hooks", repo.ws.path().join("githooks")).expect("symlink");
    let before = whole(&repo);
    for (input, expected) in [
        (
            json!({"op": "unlink", "path": "githooks"}),
            protected("githooks", "githooks"),
        ),
        (
            json!({"op": "write", "path": "tools/hooks/pre-commit", "text": "#!/bin/sh\n"}),
            protected("tools/hooks/pre-commit", "githooks"),
        ),
    ] {
        let err = stderr_of_failure(&mut repo.raw(&input, &[]), 1);
        assert!(err.starts_with(&expected), "{input}: {err}");
        assert_eq!(whole(&repo), before, "{input}");
    }
    repo.assert_still_works(0);
}

/// One MCP server's calls, in order: the model text of each result and
/// whether it was an error. One process, as an agent's session: what the
/// guard learned at its start must still hold after the calls before.
fn one_session(repo: &Repo, inputs: &[Value]) -> Vec<(bool, String)> {
    one_session_with(repo, &["--no-session"], inputs)
}

/// [`one_session`] with `flags` for `toolhost mcp`.
fn one_session_with(repo: &Repo, flags: &[&str], inputs: &[Value]) -> Vec<(bool, String)> {
    let mut all = vec!["--allow-write", "."];
    all.extend_from_slice(flags);
    let mut server = super::mcp::RawServer::start(&repo.ws, &all);
    let mut out = Vec::new();
    for (id, input) in (1..).zip(inputs) {
        server.send(super::mcp::call(id, "raw", input.clone()));
        let response = server.response();
        let result = &response["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        out.push((result["isError"] == true, text.to_string()));
    }
    server.close();
    out
}

/// A link the repository shipped on the way to a protected path (`tools ->
/// ci` where git's hooks are `tools/hooks`; `cfg -> real` where `.mcp.json
/// -> cfg/m.json`) cannot be swapped for a directory of its own during one
/// session: every path on the way is protected, not only where it led when
/// the server started. Before, five calls of one server planted a
/// `pre-commit` that git ran at the next commit.
#[test]
fn a_shipped_link_on_the_way_to_a_protected_path_cannot_be_swapped_in_one_session() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(".git/config", "[core]\n\thooksPath = tools/hooks\n");
    ws.mkdir("ci/hooks");
    symlink("ci", ws.path().join("tools")).expect("symlink");
    ws.write("real/m.json", "{}\n");
    symlink("real", ws.path().join("cfg")).expect("symlink");
    symlink("cfg/m.json", ws.path().join(".mcp.json")).expect("symlink");
    // The MCP tests' flags grant `out`, made at start if missing.
    ws.mkdir("out");
    let before = whole(&repo);
    let refused = |path: &str, protected: &str| {
        format!("error: `raw` may not change `{path}`: `{protected}` is protected (")
    };
    let attacks = [
        (
            json!({"op": "unlink", "path": "tools"}),
            refused("tools", "tools/hooks"),
        ),
        (
            json!({"op": "rename", "from": "tools", "to": "tools.old"}),
            refused("tools", "tools/hooks"),
        ),
        (
            json!({"op": "mkdir", "path": "tools/hooks"}),
            refused("ci/hooks", "tools/hooks"),
        ),
        (
            json!({"op": "unlink", "path": "cfg"}),
            refused("cfg", ".mcp.json"),
        ),
        (
            json!({"op": "rename", "from": "cfg", "to": "cfg.old"}),
            refused("cfg", ".mcp.json"),
        ),
        (
            json!({"op": "write", "path": "cfg/m.json", "text": "{\"mcpServers\":{}}"}),
            refused("real/m.json", ".mcp.json"),
        ),
        (
            json!({"op": "write", "path": "tools/hooks/pre-commit", "text": "#!/bin/sh\n"}),
            refused("ci/hooks/pre-commit", "tools/hooks"),
        ),
    ];
    let mut inputs: Vec<Value> = attacks.iter().map(|(input, _)| input.clone()).collect();
    inputs.push(json!({"op": "write", "path": "src/ok-0.txt", "text": "fine"}));
    let results = one_session(&repo, &inputs);
    for ((input, expected), (is_error, text)) in attacks.iter().zip(&results) {
        assert!(
            *is_error && text.starts_with(expected.as_str()),
            "{input}:\n{text}"
        );
    }
    assert_eq!(results.last(), Some(&(false, "ok".to_string())));
    assert_eq!(ws.read("src/ok-0.txt"), "fine");
    assert_eq!(changed(&before, &whole(&repo)), Vec::<String>::new());
}

/// The paths whose entry differs between two [`whole`] snapshots.
fn changed(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<String> {
    let mut paths: Vec<String> = before.keys().chain(after.keys()).cloned().collect();
    paths.sort();
    paths.dedup();
    paths.retain(|path| before.get(path) != after.get(path));
    paths
}

/// A directory the user named for toolhost to write in (`--session-dir`)
/// is toolhost's own while it runs: a tool may not move it, replace it by a
/// link out of the workspace (where the host would write the next session
/// file) or write in it. Before, a tool renamed `logs` and linked it
/// elsewhere, and the server's next session file went there.
#[test]
fn a_session_directory_named_on_the_command_line_is_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.mkdir("logs");
    ws.mkdir("out");
    let refused = |path: &str| {
        format!("error: `raw` may not change `{path}`: `logs` is protected (toolhost writes there")
    };
    let attacks = [
        (
            json!({"op": "rename", "from": "logs", "to": "logs.old"}),
            refused("logs"),
        ),
        (json!({"op": "rmdir", "path": "logs"}), refused("logs")),
        (
            json!({"op": "write", "path": "logs/x.jsonl", "text": "{}"}),
            refused("logs/x.jsonl"),
        ),
    ];
    let mut inputs: Vec<Value> = attacks.iter().map(|(input, _)| input.clone()).collect();
    inputs.push(json!({"op": "write", "path": "src/ok-0.txt", "text": "fine"}));
    let results = one_session_with(&repo, &["--session-dir", "logs"], &inputs);
    for ((input, expected), (is_error, text)) in attacks.iter().zip(&results) {
        assert!(
            *is_error && text.starts_with(expected.as_str()),
            "{input}:\n{text}"
        );
    }
    assert_eq!(results.last(), Some(&(false, "ok".to_string())));
    let logs: Vec<_> = std::fs::read_dir(ws.path().join("logs"))
        .expect("logs")
        .collect();
    assert_eq!(logs.len(), 1, "the server's one session file");
}

/// The refusal of a link whose target has a `..` component.
fn link_climbs(link: &str, target: &str) -> String {
    format!(
        "error: `raw` may not create the symbolic link `{link}` -> `{target}`: the target climbs \
         with `..`"
    )
}

/// A link's target read as text cannot tell where it will lead: `w1 ->
/// w0/..` lands inside while `w0` is missing, and `w0 -> .` made next
/// turns it into the workspace's parent. So no target may have a `..` at
/// all, made here, moved here or hard-linked here.
#[test]
fn a_link_with_dotdot_in_its_target_cannot_climb_later() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.mkdir("deep/a");
    ws.mkdir("docs");
    // Shipped links with `..`: one out, one to a sibling.
    symlink("../..", ws.path().join("src/up")).expect("symlink");
    symlink("../docs", ws.path().join("src/sib")).expect("symlink");
    let symlink_op =
        |link: &str, target: &str| json!({"op": "symlink", "link": link, "target": target});
    let attacks: Vec<(&str, Value, String)> = vec![
        (
            "a link through a missing name and up (w1 -> w0/..)",
            symlink_op("w1", "w0/.."),
            link_climbs("w1", "w0/.."),
        ),
        (
            "the head of a chain made in reverse (u4 -> u3/..)",
            symlink_op("u4", "u3/.."),
            link_climbs("u4", "u3/.."),
        ),
        (
            "the chain's next link",
            symlink_op("u1", "u0/.."),
            link_climbs("u1", "u0/.."),
        ),
        (
            "made deep, to be moved up later",
            symlink_op("deep/a/v", "b/../.."),
            link_climbs("deep/a/v", "b/../.."),
        ),
        (
            "down and up again",
            symlink_op("z", "src/../src"),
            link_climbs("z", "src/../src"),
        ),
        (
            "a shipped link with `..` renamed to another directory",
            json!({"op": "rename", "from": "src/sib", "to": "deep/sib"}),
            link_climbs("deep/sib", "../docs"),
        ),
        (
            "a shipped link out hard-linked beside itself",
            json!({"op": "link", "from": "src/up", "to": "src/up2"}),
            link_climbs("src/up2", "../.."),
        ),
        (
            "a shipped link out hard-linked to the root",
            json!({"op": "link", "from": "src/up", "to": "up"}),
            link_climbs("up", "../.."),
        ),
    ];
    let before = whole(&repo);
    for (n, (name, input, expected)) in attacks.iter().enumerate() {
        let err = stderr_of_failure(&mut repo.raw(input, &[]), 1);
        assert!(err.starts_with(expected.as_str()), "{name}:\n{err}");
        assert!(err.contains("Use a target without `..`"), "{name}:\n{err}");
        assert_eq!(whole(&repo), before, "{name} changed something");
        repo.assert_still_works(n);
    }
    // What the attacks needed next still works on its own, and leads
    // nowhere: `w0 -> .` and `u0 -> .` stay where they are.
    let ok = |input: Value| {
        let out = stdout_of(&mut repo.raw(&input, &[]));
        assert_eq!(out, "ok\n", "{input}");
    };
    ok(symlink_op("w0", "."));
    ok(symlink_op("u0", "."));
    ok(symlink_op("deep/a/c", "b/c"));
    ok(json!({"op": "mkdir", "path": "deep/a/b"}));
    ok(json!({"op": "write", "path": "deep/a/b/c", "text": "below"}));
    assert_eq!(ws.read("deep/a/c"), "below");
    ok(json!({"op": "rename", "from": "deep/a", "to": "moved"}));
    assert_eq!(ws.read("moved/c"), "below");
    // A shipped link with `..` may still be renamed in its own directory,
    // where it points where it did.
    ok(json!({"op": "rename", "from": "src/sib", "to": "src/sib~"}));
    for absent in ["w1", "u4", "u1", "z", "up", "src/up2", "deep/sib"] {
        assert!(
            fs::symlink_metadata(ws.path().join(absent)).is_err(),
            "{absent} exists"
        );
    }
}

/// A path ending in `/` makes the kernel follow a link in its last
/// component (and want a directory): `set-times-at l/` with `l -> k/hooks`
/// and `k -> ci` touched git's hooks directory while the guard checked `l`.
#[test]
fn a_trailing_slash_is_resolved_where_the_kernel_resolves_it() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(".git/config", "[core]\n\thooksPath = ci/hooks\n");
    ws.mkdir("ci/hooks");
    ws.write("notes.txt", "notes");
    let ok = |input: Value| {
        let out = stdout_of(&mut repo.raw(&input, &[]));
        assert_eq!(out, "ok\n", "{input}");
    };
    // Made while `k` is missing, `l` leads nowhere protected; `k -> ci`
    // holds no protected path itself.
    ok(json!({"op": "symlink", "link": "l", "target": "k/hooks"}));
    ok(json!({"op": "symlink", "link": "k", "target": "ci"}));
    let hooks = protected("ci/hooks", "ci/hooks");
    let attacks: Vec<(&str, Value, Option<String>)> = vec![
        (
            "touch l/",
            json!({"op": "set_times_at", "path": "l/"}),
            Some(hooks.clone()),
        ),
        (
            "touch l//",
            json!({"op": "set_times_at", "path": "l//"}),
            Some(hooks.clone()),
        ),
        (
            "touch l/ following",
            json!({"op": "set_times_at", "path": "l/", "follow": true}),
            Some(hooks.clone()),
        ),
        (
            "touch k/hooks/",
            json!({"op": "set_times_at", "path": "k/hooks/"}),
            Some(hooks.clone()),
        ),
        // `l` made while its target dangled now leads into the hooks
        // directory: every change through it is resolved when it is made.
        (
            "touch l following",
            json!({"op": "set_times_at", "path": "l", "follow": true}),
            Some(hooks),
        ),
        (
            "a hook through l",
            json!({"op": "write", "path": "l/pre-commit", "text": "#!/bin/sh\n"}),
            Some(protected("ci/hooks/pre-commit", "ci/hooks")),
        ),
        // The kernel follows none of these, or fails them: nothing changes.
        ("rmdir l/", json!({"op": "rmdir", "path": "l/"}), None),
        ("unlink l/", json!({"op": "unlink", "path": "l/"}), None),
        (
            "rename l/ away",
            json!({"op": "rename", "from": "l/", "to": "gone"}),
            None,
        ),
        (
            "rename onto l/",
            json!({"op": "rename", "from": "notes.txt", "to": "l/"}),
            None,
        ),
        ("mkdir l/", json!({"op": "mkdir", "path": "l/"}), None),
        (
            "create l/",
            json!({"op": "write", "path": "l/", "text": "x"}),
            None,
        ),
        ("truncate l/", json!({"op": "truncate", "path": "l/"}), None),
        (
            "exclusive l/",
            json!({"op": "create_new", "path": "l/"}),
            None,
        ),
        (
            "hard link of l/",
            json!({"op": "link", "from": "l/", "to": "h"}),
            None,
        ),
        (
            "link at l/",
            json!({"op": "symlink", "link": "l/", "target": "notes.txt"}),
            None,
        ),
    ];
    let before = whole(&repo);
    for (n, (name, input, expected)) in attacks.iter().enumerate() {
        let err = stderr_of_failure(&mut repo.raw(input, &[]), 1);
        if let Some(expected) = expected {
            assert!(err.starts_with(expected.as_str()), "{name}:\n{err}");
        }
        assert_eq!(whole(&repo), before, "{name} changed something");
        repo.assert_still_works(n);
    }
    // A trailing slash on an ordinary directory, or a link to one, works.
    ws.mkdir("d");
    ok(json!({"op": "symlink", "link": "dl", "target": "d"}));
    ok(json!({"op": "set_times_at", "path": "dl/"}));
    ok(json!({"op": "set_times_at", "path": "d/"}));
    ok(json!({"op": "mkdir", "path": "e/"}));
    ok(json!({"op": "rmdir", "path": "e"}));
}

/// Each name protected at any depth, as `toolhost tools --json` lists it
/// with its why, cannot be made at the root or in a subdirectory.
#[test]
fn every_run_on_open_name_cannot_be_made_anywhere() {
    let repo = Repo::new();
    let ws = &repo.ws;
    let out = stdout_of(ws.toolhost().args(["tools", "--json"]));
    let doc: Value = serde_json::from_str(&out).expect("json");
    let names: Vec<(String, String)> = doc["protected"]
        .as_array()
        .expect("protected")
        .iter()
        .filter(|p| p["at_any_depth"] == true)
        .map(|p| {
            let why = p["why"].as_str().expect("why");
            assert!(!why.is_empty(), "{p}");
            (
                p["path"].as_str().expect("path").to_string(),
                why.to_string(),
            )
        })
        .collect();
    for wanted in [
        ".github/hooks",
        ".augment",
        ".clinerules",
        ".qwen",
        ".kilocode",
        "kilo.json",
        "kilo.jsonc",
        ".kilo",
        "crush.json",
        ".crush.json",
        ".openhands",
        "mise/config.toml",
        ".config/mise",
        "captainhook.json",
        ".rusty-hook.toml",
        ".overcommit.yml",
        ".venv",
        "node_modules",
        ".sl",
        ".pijul",
        "_darcs",
        ".bzr",
        ".svn",
        ".fslckout",
        "_FOSSIL_",
    ] {
        assert!(
            names.iter().any(|(name, _)| name == wanted),
            "{wanted} not listed"
        );
    }
    ws.mkdir("sub");
    for (n, (name, why)) in names.iter().enumerate() {
        for path in [name.clone(), format!("sub/{name}")] {
            // The directories above a name of more than one component are
            // ordinary: the test makes them.
            if let Some(parent) = Path::new(&path).parent()
                && !parent.as_os_str().is_empty()
            {
                fs::create_dir_all(ws.path().join(parent)).expect("mkdir");
            }
            let before = whole(&repo);
            for input in [
                json!({"op": "write", "path": path, "text": "x"}),
                json!({"op": "mkdir", "path": path}),
            ] {
                let err = stderr_of_failure(&mut repo.raw(&input, &[]), 1);
                assert!(
                    err.starts_with(&format!("{}{why})", protected(&path, &path))),
                    "{input}:\n{err}"
                );
                assert_eq!(whole(&repo), before, "{input} changed something");
            }
        }
        repo.assert_still_works(n);
    }
    // A directory that would hold a protected name of two components may
    // not be moved away or replaced (the name would go with it, or come).
    ws.mkdir(".github/hooks");
    ws.mkdir("gh/hooks");
    let before = whole(&repo);
    for (input, path, hit) in [
        (
            json!({"op": "rename", "from": ".github", "to": "github-old"}),
            ".github",
            ".github/hooks",
        ),
        (
            json!({"op": "rename", "from": "gh", "to": "sub/.github"}),
            "sub/.github",
            "sub/.github/hooks",
        ),
        (
            json!({"op": "symlink", "link": "sub/.config", "target": "gh"}),
            "sub/.config",
            "sub/.config/mise",
        ),
    ] {
        let err = stderr_of_failure(&mut repo.raw(&input, &[]), 1);
        assert!(err.starts_with(&protected(path, hit)), "{input}:\n{err}");
        assert_eq!(whole(&repo), before, "{input} changed something");
    }
    // What stays writable: the rest of `.github`, and `.config`.
    for path in [".github/workflows.yml", ".config/app.toml", "sub/mise.md"] {
        let out = stdout_of(&mut repo.raw(&json!({"op": "write", "path": path, "text": "x"}), &[]));
        assert_eq!(out, "ok\n", "{path}");
    }
}

/// A link a repository ships inside a protected directory, or at a
/// protected name, leads to what other programs run: Claude Code reads
/// `.claude/settings.json -> ../ai/s.json` from `ai/s.json`, git runs
/// `.git/hooks/pre-commit -> ../../scripts/pre-commit` from `scripts/`
/// (a common setup). Before, a tool wrote a Claude Code hook through the
/// link (following it), or its target by name, and rewrote the hook git
/// runs; and wrote `sub/.claude/settings.json` through a shipped
/// `sub/.claude -> cc`. Where links in the protected directories at the
/// root lead is protected from the start; a change through a protected
/// name is refused wherever it lands.
#[test]
fn what_a_link_in_a_protected_directory_leads_to_is_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write("ai/s.json", "{}\n");
    ws.mkdir(".claude");
    symlink("../ai/s.json", ws.path().join(".claude/settings.json")).expect("symlink");
    ws.write("scripts/pre-commit", "#!/bin/sh\n");
    symlink(
        "../../scripts/pre-commit",
        ws.path().join(".git/hooks/pre-commit"),
    )
    .expect("symlink");
    ws.mkdir("sub/cc");
    symlink("cc", ws.path().join("sub/.claude")).expect("symlink");
    let before = whole(&repo);
    let hook = "{\"hooks\":{\"SessionStart\":[]}}";
    let attacks = [
        (
            json!({"op": "write", "path": ".claude/settings.json", "text": hook, "follow": true}),
            protected("ai/s.json", ".claude/settings.json"),
        ),
        (
            json!({"op": "write", "path": "ai/s.json", "text": hook}),
            protected("ai/s.json", ".claude/settings.json"),
        ),
        (
            json!({"op": "rename", "from": "ai", "to": "ai2"}),
            protected("ai", ".claude/settings.json"),
        ),
        (
            json!({"op": "write", "path": "scripts/pre-commit", "text": "#!/bin/sh\nid\n"}),
            protected("scripts/pre-commit", ".git/hooks/pre-commit"),
        ),
        (
            json!({"op": "write", "path": "sub/.claude/settings.json", "text": hook}),
            protected("sub/cc/settings.json", "sub/.claude"),
        ),
        (
            json!({"op": "mkdir", "path": "sub/.claude/hooks"}),
            protected("sub/cc/hooks", "sub/.claude"),
        ),
    ];
    for (n, (input, expected)) in attacks.iter().enumerate() {
        let err = stderr_of_failure(&mut repo.raw(input, &[]), 1);
        assert!(err.starts_with(expected.as_str()), "{input}:\n{err}");
        assert_eq!(
            changed(&before, &whole(&repo)),
            Vec::<String>::new(),
            "{input}"
        );
        repo.assert_still_works(n);
    }
}

/// Each attack of `attacks` refused with its message, nothing in the
/// workspace changed, and the good call still working after it.
fn all_refused(repo: &Repo, env: &[(&str, String)], attacks: &[(&str, Value, String)]) {
    let before = whole(repo);
    for (n, (name, input, expected)) in attacks.iter().enumerate() {
        let mut cmd = repo.raw(input, &[]);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let err = stderr_of_failure(&mut cmd, 1);
        assert!(err.starts_with(expected.as_str()), "{name}:\n{err}");
        assert_eq!(
            changed(&before, &whole(repo)),
            Vec::<String>::new(),
            "{name}"
        );
        repo.assert_still_works(n);
    }
}

#[test]
fn a_nested_repository_s_hooks_path_cannot_be_planted() {
    let repo = Repo::new();
    let ws = &repo.ws;
    // A nested repository that names its own hooks directory (the red
    // team's `git -C lib init; git -C lib config core.hooksPath .githooks`).
    ws.write("lib/.git/config", "[core]\n\thooksPath = .githooks\n");
    ws.write("lib/.git/HEAD", "ref: refs/heads/main\n");
    ws.write("lib/.githooks/pre-commit", "#!/bin/sh\ntrue\n");
    ws.write("lib/src/lib.rs", "\n");
    // A submodule: its `.git` is a file, its config in the superproject's
    // `.git/modules`, its hooks directory two levels down and not made yet.
    ws.write("sub/.git", "gitdir: ../.git/modules/sub\n");
    ws.write(".git/modules/sub/HEAD", "ref: refs/heads/main\n");
    ws.write(
        ".git/modules/sub/config",
        "[core]\n\thooksPath = ci/hooks\n",
    );
    ws.mkdir("sub/ci");
    ws.mkdir("d");
    let write = |path: &str| json!({"op": "write", "path": path, "text": "#!/bin/sh\nid\n"});
    let attacks: Vec<(&str, Value, String)> = vec![
        (
            "a nested repository's hook",
            write("lib/.githooks/pre-commit"),
            protected("lib/.githooks/pre-commit", "lib/.githooks"),
        ),
        (
            "a new hook in a nested repository",
            write("lib/.githooks/post-checkout"),
            protected("lib/.githooks/post-checkout", "lib/.githooks"),
        ),
        (
            "a nested repository's hooks directory moved away",
            json!({"op": "rename", "from": "lib/.githooks", "to": "lib/old-hooks"}),
            protected("lib/.githooks", "lib/.githooks"),
        ),
        (
            "a submodule's hooks directory made",
            json!({"op": "mkdir", "path": "sub/ci/hooks"}),
            protected("sub/ci/hooks", "sub/ci/hooks"),
        ),
        (
            "a link where a submodule's hooks directory's parent is",
            json!({"op": "rename", "from": "d", "to": "sub/ci"}),
            protected("sub/ci", "sub/ci/hooks"),
        ),
    ];
    all_refused(&repo, &[], &attacks);
    // The rest of a nested repository's working tree stays writable.
    for path in ["lib/src/lib.rs", "lib/githooks-notes.md", "sub/ci/run.sh"] {
        let out = stdout_of(&mut repo.raw(&write(path), &[]));
        assert_eq!(out, "ok\n", "{path}");
    }
}

#[test]
fn a_config_file_git_includes_and_the_hooks_it_names_are_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    // The workspace's repository includes a committed `.gitconfig`, which
    // includes another (and, in a loop, itself), and one only under a
    // condition; none is in `.git`.
    ws.write(
        ".git/config",
        "[core]\n\tbare = false\n[include]\n\tpath = ../.gitconfig\n\
         [includeIf \"gitdir:/nowhere/\"]\n\tpath = ../ci/git.inc\n",
    );
    ws.write(
        ".gitconfig",
        "[core]\n\thooksPath = .hooks-inc\n[include]\n\tpath = tools/more.inc\n",
    );
    ws.write(
        "tools/more.inc",
        "[core]\n\thooksPath = deeper/hooks\n[include]\n\tpath = ../.gitconfig\n",
    );
    // A nested repository's include, the same way.
    ws.write("lib/.git/HEAD", "ref: refs/heads/main\n");
    ws.write("lib/.git/config", "[include]\n\tpath = ../lib.gitconfig\n");
    ws.write("lib/lib.gitconfig", "[core]\n\thooksPath = h\n");
    ws.mkdir("lib/h");
    for dir in ["ci", ".hooks-inc", "deeper/hooks"] {
        ws.mkdir(dir);
    }
    let fsmonitor = |path: &str| json!({"op": "write", "path": path, "text": "[core]\n\tfsmonitor = \"sh -c id\"\n"});
    let attacks: Vec<(&str, Value, String)> = vec![
        (
            "the included .gitconfig",
            fsmonitor(".gitconfig"),
            protected(".gitconfig", ".gitconfig"),
        ),
        (
            "a file it includes",
            fsmonitor("tools/more.inc"),
            protected("tools/more.inc", "tools/more.inc"),
        ),
        (
            "a conditional include not made yet",
            fsmonitor("ci/git.inc"),
            protected("ci/git.inc", "ci/git.inc"),
        ),
        (
            "the hooks directory an include names",
            fsmonitor(".hooks-inc/pre-commit"),
            protected(".hooks-inc/pre-commit", ".hooks-inc"),
        ),
        (
            "the hooks directory an include's include names",
            fsmonitor("deeper/hooks/pre-commit"),
            protected("deeper/hooks/pre-commit", "deeper/hooks"),
        ),
        (
            "a nested repository's included config",
            fsmonitor("lib/lib.gitconfig"),
            protected("lib/lib.gitconfig", "lib/lib.gitconfig"),
        ),
        (
            "the hooks directory a nested repository's include names",
            fsmonitor("lib/h/pre-commit"),
            protected("lib/h/pre-commit", "lib/h"),
        ),
    ];
    all_refused(&repo, &[], &attacks);
}

#[test]
fn git_s_configuration_from_the_environment_is_protected_too() {
    let repo = Repo::new();
    let ws = &repo.ws;
    let root = ws.path().canonicalize().expect("canonical");
    let outside = repo.outside.path();
    // GIT_CONFIG_GLOBAL replaces `~/.gitconfig`; its relative hooks path
    // is relative to every repository's top, nested ones too.
    fs::write(outside.join("global"), "[core]\n\thooksPath = ghooks\n").expect("write");
    fs::write(
        outside.join("system"),
        format!("[core]\n\thooksPath = {}/shooks\n", root.display()),
    )
    .expect("write");
    ws.write("lib/.git/HEAD", "ref: refs/heads/main\n");
    ws.write("lib/.git/config", "[core]\n\tbare = false\n");
    for dir in [
        "lib/ghooks",
        "lib/envhooks",
        "ghooks",
        "shooks",
        "envhooks",
        "home",
    ] {
        ws.mkdir(dir);
    }
    let env = vec![
        (
            "GIT_CONFIG_GLOBAL",
            outside.join("global").display().to_string(),
        ),
        (
            "GIT_CONFIG_SYSTEM",
            outside.join("system").display().to_string(),
        ),
        ("GIT_CONFIG_NOSYSTEM", "1".to_string()),
        ("GIT_CONFIG_COUNT", "2".to_string()),
        ("GIT_CONFIG_KEY_0", "core.hooksPath".to_string()),
        ("GIT_CONFIG_VALUE_0", "envhooks".to_string()),
        ("GIT_CONFIG_KEY_1", "include.path".to_string()),
        ("GIT_CONFIG_VALUE_1", "~/env.inc".to_string()),
        ("HOME", root.join("home").display().to_string()),
    ];
    let write = |path: &str| json!({"op": "write", "path": path, "text": "#!/bin/sh\nid\n"});
    let attacks: Vec<(&str, Value, String)> = vec![
        (
            "GIT_CONFIG_GLOBAL's hooks directory",
            write("ghooks/pre-commit"),
            protected("ghooks/pre-commit", "ghooks"),
        ),
        (
            "GIT_CONFIG_GLOBAL's hooks directory in a nested repository",
            write("lib/ghooks/pre-commit"),
            protected("lib/ghooks/pre-commit", "lib/ghooks"),
        ),
        (
            "GIT_CONFIG_SYSTEM's hooks directory",
            write("shooks/pre-commit"),
            protected("shooks/pre-commit", "shooks"),
        ),
        (
            "GIT_CONFIG_KEY_0's hooks directory",
            write("envhooks/pre-commit"),
            protected("envhooks/pre-commit", "envhooks"),
        ),
        (
            "GIT_CONFIG_KEY_0's hooks directory in a nested repository",
            write("lib/envhooks/pre-commit"),
            protected("lib/envhooks/pre-commit", "lib/envhooks"),
        ),
        (
            "a file GIT_CONFIG_KEY_1 includes",
            write("home/env.inc"),
            protected("home/env.inc", "home/env.inc"),
        ),
        (
            "the user's ~/.gitconfig in the workspace",
            write("home/.gitconfig"),
            protected("home/.gitconfig", "home/.gitconfig"),
        ),
    ];
    all_refused(&repo, &env, &attacks);
}
