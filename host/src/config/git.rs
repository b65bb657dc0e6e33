//! What git's own configuration says about the workspace that toolhost must
//! protect: the directory `core.hooksPath` names, whose scripts git runs at
//! every commit, checkout and merge (husky and other hook managers point it
//! into the working tree, `.husky/_`).
//!
//! Only the files git reads without being asked are read: the repository's
//! `config` and `config.worktree` (through a `.git` file's `gitdir:` and a
//! worktree's `commondir`), the user's `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config`,
//! and `/etc/gitconfig`. `include` and `includeIf` are not followed; a
//! hooks directory named only there is not protected (SECURITY.md).

use std::path::{Path, PathBuf};

/// Every `core.hooksPath` the git configuration of `workspace` sets, as
/// host paths (relative values are relative to the working tree, where git
/// runs hooks).
pub(super) fn hooks_paths(workspace: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut files: Vec<PathBuf> = vec![PathBuf::from("/etc/gitconfig")];
    files.extend(xdg.map(|x| x.join("git/config")));
    files.extend(home.as_ref().map(|h| h.join(".gitconfig")));
    files.extend(repository_configs(workspace));
    let mut paths = Vec::new();
    for file in files {
        let Ok(text) = super::file::read_text(&file) else {
            continue;
        };
        for value in core_values(&text, "hookspath") {
            let path = match (value.strip_prefix("~/"), &home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => workspace.join(&value),
            };
            paths.push(path);
        }
    }
    paths
}

/// The repository's config files: `.git/config`, or where a `.git` file's
/// `gitdir:` points, and the common directory's config of a worktree.
fn repository_configs(workspace: &Path) -> Vec<PathBuf> {
    let dot_git = workspace.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let Ok(text) = super::file::read_text(&dot_git) else {
            return Vec::new();
        };
        let Some(target) = text.trim().strip_prefix("gitdir:") else {
            return Vec::new();
        };
        workspace.join(target.trim())
    };
    // `config.worktree` is read when `extensions.worktreeConfig` is on;
    // reading it always protects a little more, never less.
    let mut configs = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    if let Ok(common) = super::file::read_text(&git_dir.join("commondir")) {
        configs.push(git_dir.join(common.trim()).join("config"));
    }
    configs
}

/// The values of `key` (lowercase) in the `[core]` section of a git config
/// text, in order.
fn core_values(text: &str, key: &str) -> Vec<String> {
    let mut in_core = false;
    let mut values = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            // `[core]`, not `[core "sub"]` or `[core.sub]`; a key may follow
            // the header on the same line.
            let (section, rest) = header.split_once(']').unwrap_or((header, ""));
            in_core = section.trim().eq_ignore_ascii_case("core");
            if in_core {
                values.extend(value_of(rest.trim(), key));
            }
            continue;
        }
        if in_core {
            values.extend(value_of(line, key));
        }
    }
    values
}

/// The value of `key = value` on one line, without comments and quotes.
fn value_of(line: &str, key: &str) -> Option<String> {
    let (name, value) = line.split_once('=')?;
    if !name.trim().eq_ignore_ascii_case(key) {
        return None;
    }
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = value.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => out.extend(chars.next()),
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    let out = out.trim().to_string();
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hooks_path_is_read_from_the_core_section_only() {
        let text = "[user]\n\thooksPath = no\n[core]\n\tbare = false\n\thooksPath = .husky/_ # husky\n\
                    [core \"x\"]\n\thookspath = no\n[CORE]\n\tHOOKSPATH = \"other dir\"\n";
        assert_eq!(core_values(text, "hookspath"), [".husky/_", "other dir"]);
        assert_eq!(core_values("[core] hooksPath = h\n", "hookspath"), ["h"]);
    }

    #[test]
    fn a_worktree_s_gitdir_and_common_dir_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("main/.git/worktrees/w")).expect("mkdir");
        std::fs::create_dir_all(root.join("w")).expect("mkdir");
        std::fs::write(root.join("w/.git"), "gitdir: ../main/.git/worktrees/w\n").expect("write");
        std::fs::write(root.join("main/.git/worktrees/w/commondir"), "../..\n").expect("write");
        std::fs::write(
            root.join("main/.git/config"),
            "[core]\n\thooksPath = githooks\n",
        )
        .expect("write");
        let worktree = root.join("w");
        let configs = repository_configs(&worktree);
        assert_eq!(configs.len(), 3);
        let hooks = hooks_paths(&worktree);
        assert!(hooks.contains(&worktree.join("githooks")), "{hooks:?}");
    }
}
