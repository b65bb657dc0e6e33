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
struct Repo {
    ws: Workspace,
    outside: tempfile::TempDir,
}

impl Repo {
    fn new() -> Self {
        let ws = Workspace::new();
        ws.write("toolhost.toml", "[limits]\ntimeout_ms = 30000\n");
        ws.write(".git/config", "[core]\n\tbare = false\n");
        ws.write(".git/HEAD", "ref: refs/heads/main\n");
        ws.mkdir(".git/hooks");
        ws.mkdir(".git/info");
        ws.write("vendor/lib/.git/config", "[core]\n");
        ws.write("src/main.rs", "fn main() {}\n");
        ws.install_plugin(test_plugins::ESCAPE, "escape.wasm");
        symlink(".git", ws.path().join("shipped")).expect("symlink");
        symlink(".git/hooks/pre-commit", ws.path().join("dangling")).expect("symlink");
        let outside = tempfile::tempdir().expect("outside dir");
        fs::write(outside.path().join("secret.txt"), "secret").expect("write secret");
        Repo { ws, outside }
    }

    /// `toolhost --allow-write . call raw INPUT`, plus extra flags first.
    fn raw(&self, input: &Value, flags: &[&str]) -> assert_cmd::Command {
        let mut all = vec!["--allow-write", "."];
        all.extend_from_slice(flags);
        self.ws.call("raw", &input.to_string(), &all)
    }

    /// Every file, directory and link of the protected trees and of the
    /// outside directory, with content (or link target) and times.
    fn snapshot(&self) -> BTreeMap<String, String> {
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
    fn assert_still_works(&self, n: usize) {
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
            link_outside("escape", "../outside"),
        ),
        (
            "a symlink that climbs out from a subdirectory",
            json!({"op": "symlink", "link": "src/up", "target": "../.."}),
            link_outside("src/up", "../.."),
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
    ] {
        assert!(
            fs::symlink_metadata(repo.ws.path().join(leftover)).is_err(),
            "{leftover} exists"
        );
    }
}
