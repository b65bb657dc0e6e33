//! What git's own configuration says about the workspace that toolhost must
//! protect: the directory `core.hooksPath` names, whose scripts git runs at
//! every commit, checkout and merge (husky and other hook managers point it
//! into the working tree, `.husky/_`), and the config files git reads, which
//! can name programs to run (`core.fsmonitor` runs at every `git status`).
//!
//! The files git reads without being asked are read: the repository's
//! `config` and `config.worktree` (through a `.git` file's `gitdir:` and a
//! worktree's `commondir`), the user's `~/.gitconfig` and
//! `$XDG_CONFIG_HOME/git/config`, `/etc/gitconfig`, and what the
//! environment names (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, the
//! `GIT_CONFIG_COUNT` pairs). The default files are read even when the
//! environment replaces them (`GIT_CONFIG_NOSYSTEM` too): the user's next
//! `git commit` may run in a shell without those variables, and protecting
//! more is safe. Every `include.path` and `includeIf.*.path` is followed,
//! whatever its condition, up to [`MAX_INCLUDE_DEPTH`] deep and
//! [`MAX_CONFIG_FILES`] files. The guard reads a nested repository's the
//! same way when a change lands in one ([`read_repository`]).

use std::collections::HashSet;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::sandbox::EveryRepository;

/// Includes followed in a row (git's own limit is 10).
pub(crate) const MAX_INCLUDE_DEPTH: usize = 10;

/// Config files read for one repository or one user's configuration, with
/// their includes: a loop of includes, or a fan of them, stops there.
pub(crate) const MAX_CONFIG_FILES: usize = 64;

/// Reads one config file, named as the caller's reader understands it
/// (absolute, or relative to a directory it holds).
pub(crate) type Reader<'a> = dyn FnMut(&Path) -> io::Result<String> + 'a;

/// What a set of git config files says, with their includes followed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct GitRead {
    /// Every `core.hooksPath`, as written.
    pub(crate) hooks: Vec<String>,
    /// Every file an include names (there or not yet), as the reader names
    /// it, `..` taken lexically.
    pub(crate) included: Vec<PathBuf>,
    /// Every file asked for, as the reader names it: the guard's cache
    /// checks each is as it was.
    pub(crate) asked: Vec<PathBuf>,
    /// Files that are there but could not be read (not a regular file, too
    /// big, not UTF-8): git may read what toolhost could not.
    pub(crate) unreadable: Vec<PathBuf>,
}

impl GitRead {
    /// Reads `file` and what it includes (`~/` is `home`; a relative path
    /// is relative to the including file's directory).
    pub(crate) fn read_file(&mut self, file: &Path, home: Option<&Path>, read: &mut Reader<'_>) {
        let mut seen: HashSet<PathBuf> = self.asked.iter().cloned().collect();
        let mut stack = vec![(lexical(file), 0usize)];
        while let Some((file, depth)) = stack.pop() {
            if !seen.insert(file.clone()) || self.asked.len() >= MAX_CONFIG_FILES {
                continue;
            }
            self.asked.push(file.clone());
            let text = match read(&file) {
                Ok(text) => text,
                Err(error) if is_missing(&error) => continue,
                Err(_) => {
                    self.unreadable.push(file);
                    continue;
                }
            };
            let dir = file.parent().unwrap_or(Path::new(""));
            for entry in entries(&text) {
                match entry.kind() {
                    Some(Kind::Hooks) => self.hooks.push(entry.value),
                    Some(Kind::Include) => {
                        let Some(path) = include_path(&entry.value, Some(dir), home) else {
                            continue;
                        };
                        self.included.push(path.clone());
                        if depth < MAX_INCLUDE_DEPTH {
                            stack.push((path, depth + 1));
                        }
                    }
                    None => {}
                }
            }
        }
    }

    /// Takes `key = value` given outside any file (`GIT_CONFIG_KEY_n`):
    /// a hooks path, or an include (absolute or `~/` only, as git allows
    /// there).
    fn read_pair(&mut self, key: &str, value: &str, home: Option<&Path>, read: &mut Reader<'_>) {
        let entry = Entry::from_key(key, value);
        match entry.kind() {
            Some(Kind::Hooks) => self.hooks.push(entry.value),
            Some(Kind::Include) => {
                if let Some(path) = include_path(&entry.value, None, home) {
                    self.included.push(path.clone());
                    self.read_file(&path, home, read);
                }
            }
            None => {}
        }
    }
}

/// What git's configuration says for the workspace, read when toolhost
/// starts.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// Every `core.hooksPath` of the workspace's repository, as host
    /// paths (relative values are relative to the working tree, where git
    /// runs hooks).
    pub(super) hooks: Vec<PathBuf>,
    /// The config files git reads that are not in a `.git` directory:
    /// what an include names, and the user's own files.
    pub(super) config_files: Vec<PathBuf>,
    /// What every nested repository gets from the user's configuration.
    pub(super) every_repository: EveryRepository,
}

/// The user's environment as git reads it.
struct Environment {
    home: Option<PathBuf>,
    /// The files of the user's and the system's configuration.
    user_files: Vec<PathBuf>,
    /// `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`.
    pairs: Vec<(String, String)>,
}

impl Environment {
    fn from(var: &dyn Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| var(name).filter(|v| !v.is_empty());
        let home = set("HOME").map(PathBuf::from);
        let xdg = set("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")));
        let mut user_files = vec![PathBuf::from("/etc/gitconfig")];
        user_files.extend(set("GIT_CONFIG_SYSTEM").map(PathBuf::from));
        user_files.extend(xdg.map(|x| x.join("git/config")));
        user_files.extend(home.as_ref().map(|h| h.join(".gitconfig")));
        user_files.extend(set("GIT_CONFIG_GLOBAL").map(PathBuf::from));
        let count = set("GIT_CONFIG_COUNT")
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0)
            // git refuses more than INT_MAX; a few thousand is plenty.
            .min(4096);
        let pairs = (0..count)
            .filter_map(|n| {
                let key = var(&format!("GIT_CONFIG_KEY_{n}"))?;
                Some((
                    key,
                    var(&format!("GIT_CONFIG_VALUE_{n}")).unwrap_or_default(),
                ))
            })
            .collect();
        Environment {
            home,
            user_files,
            pairs,
        }
    }
}

/// What git's configuration says about `workspace`, with this process's
/// environment.
pub(super) fn seen(workspace: &Path) -> Seen {
    let var = |name: &str| std::env::var(name).ok();
    seen_with(workspace, &Environment::from(&var))
}

fn seen_with(workspace: &Path, env: &Environment) -> Seen {
    let home = env.home.as_deref();
    let mut read = |path: &Path| super::file::read_text(path);
    // The user's and the environment's: every repository's.
    let mut user = GitRead::default();
    for file in &env.user_files {
        user.read_file(file, home, &mut read);
    }
    for (key, value) in &env.pairs {
        user.read_pair(key, value, home, &mut read);
    }
    let repository = read_repository(workspace, home, &mut read);
    let mut seen = Seen::default();
    for value in user.hooks.iter().chain(&repository.hooks) {
        seen.hooks.push(hooks_dir(workspace, value, home));
    }
    let git_dir = workspace.join(".git");
    seen.config_files = env
        .user_files
        .iter()
        .chain(&user.included)
        .chain(&repository.included)
        .filter(|file| !file.starts_with(&git_dir))
        .cloned()
        .collect();
    seen.every_repository = EveryRepository {
        hooks: user
            .hooks
            .into_iter()
            .filter(|value| !value.starts_with("~/") && !Path::new(value).is_absolute())
            .collect(),
        home: env.home.clone(),
    };
    seen
}

/// Where git runs the hooks of hooks path `value` of the repository whose
/// working tree is `top`.
pub(crate) fn hooks_dir(top: &Path, value: &str, home: Option<&Path>) -> PathBuf {
    match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => lexical(&top.join(value)),
    }
}

/// The configuration of the repository whose working tree is `top`: its
/// `config` and `config.worktree` (through a `.git` file's `gitdir:`, and
/// a worktree's `commondir`), with their includes. `top` is as `read`
/// understands it (the guard's is relative to a directory it holds).
pub(crate) fn read_repository(top: &Path, home: Option<&Path>, read: &mut Reader<'_>) -> GitRead {
    let dot_git = top.join(".git");
    // A `.git` directory does not read as text; a `.git` file names the
    // git directory.
    let git_dir = match read(&dot_git) {
        Ok(text) => match text.trim().strip_prefix("gitdir:") {
            Some(target) => lexical(&top.join(target.trim())),
            None => dot_git,
        },
        Err(_) => dot_git,
    };
    let mut out = GitRead::default();
    // `config.worktree` is read when `extensions.worktreeConfig` is on;
    // reading it always protects a little more, never less.
    out.read_file(&git_dir.join("config"), home, read);
    out.read_file(&git_dir.join("config.worktree"), home, read);
    let commondir = git_dir.join("commondir");
    out.asked.push(commondir.clone());
    match read(&commondir) {
        Ok(common) => {
            let common = lexical(&git_dir.join(common.trim()));
            out.read_file(&common.join("config"), home, read);
        }
        Err(error) if !is_missing(&error) => out.unreadable.push(commondir),
        Err(_) => {}
    }
    out
}

/// Whether a read failed because nothing is there (`.git/config` where
/// `.git` is a file is not there either).
fn is_missing(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// An include's path: `~/` is the home directory, a relative path is
/// relative to `dir` (none outside a file: git refuses it there).
fn include_path(value: &str, dir: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = value.strip_prefix("~/") {
        return home.map(|home| lexical(&home.join(rest)));
    }
    let path = Path::new(value);
    if path.is_absolute() {
        return Some(lexical(path));
    }
    dir.map(|dir| lexical(&dir.join(path)))
}

/// `path` with `.` dropped and `..` taking off the component before it,
/// as git does with the paths it joins (a leading `..` stays).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    out.pop();
                } else if !matches!(last, Some(Component::RootDir)) {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A `key = value` of a config file, with its section.
struct Entry {
    /// The section's name, in lower case.
    section: String,
    /// Whether the section has a subsection (`[includeIf "..."]`).
    sub: bool,
    /// The key, in lower case.
    key: String,
    value: String,
}

enum Kind {
    Hooks,
    Include,
}

impl Entry {
    /// `section[.sub].key` as the environment gives it.
    fn from_key(key: &str, value: &str) -> Entry {
        let (section, rest) = key.split_once('.').unwrap_or((key, ""));
        let (sub, name) = match rest.rsplit_once('.') {
            Some((_, name)) => (true, name),
            None => (false, rest),
        };
        Entry {
            section: section.to_ascii_lowercase(),
            sub,
            key: name.to_ascii_lowercase(),
            value: value.to_string(),
        }
    }

    fn kind(&self) -> Option<Kind> {
        match (self.section.as_str(), self.sub, self.key.as_str()) {
            ("core", false, "hookspath") => Some(Kind::Hooks),
            ("include", false, "path") | ("includeif", true, "path") => Some(Kind::Include),
            _ => None,
        }
    }
}

/// The entries of a config text, in order; lines continued with `\` are
/// joined first, as git joins them.
fn entries(text: &str) -> Vec<Entry> {
    let mut logical = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trailing = line.len() - line.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            pending.push_str(&line[..line.len() - 1]);
            continue;
        }
        pending.push_str(line);
        logical.push(std::mem::take(&mut pending));
    }
    if !pending.is_empty() {
        logical.push(pending);
    }
    let mut section = String::new();
    let mut sub = false;
    let mut out = Vec::new();
    for line in &logical {
        let mut line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            // The header ends at the first `]` outside quotes; a key may
            // follow it on the same line.
            let mut quoted = false;
            let end = header
                .char_indices()
                .find(|&(_, c)| {
                    if c == '"' {
                        quoted = !quoted;
                    }
                    c == ']' && !quoted
                })
                .map_or(header.len(), |(at, _)| at);
            let inside = &header[..end];
            let name_end = inside
                .find(|c: char| c.is_whitespace() || c == '"' || c == '.')
                .unwrap_or(inside.len());
            section = inside[..name_end].to_ascii_lowercase();
            sub = !inside[name_end..].trim().is_empty();
            line = header.get(end + 1..).unwrap_or("").trim();
        }
        if let Some((key, value)) = key_value(line) {
            out.push(Entry {
                section: section.clone(),
                sub,
                key,
                value,
            });
        }
    }
    out
}

/// `key = value` on one line, the key in lower case and the value without
/// comments and quotes.
fn key_value(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once('=')?;
    let name = name.trim();
    if name.is_empty() || name.starts_with(['#', ';']) {
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
    (!out.is_empty()).then(|| (name.to_ascii_lowercase(), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(text: &str) -> Vec<String> {
        entries(text)
            .into_iter()
            .filter(|e| matches!(e.kind(), Some(Kind::Hooks)))
            .map(|e| e.value)
            .collect()
    }

    #[test]
    fn the_hooks_path_is_read_from_the_core_section_only() {
        let text = "[user]\n\thooksPath = no\n[core]\n\tbare = false\n\thooksPath = .husky/_ # husky\n\
                    [core \"x\"]\n\thookspath = no\n[CORE]\n\tHOOKSPATH = \"other dir\"\n\
                    [core]\n\thooksPath = con\\\ntinued\n";
        assert_eq!(hooks(text), [".husky/_", "other dir", "continued"]);
        assert_eq!(hooks("[core] hooksPath = h\n"), ["h"]);
    }

    #[test]
    fn every_include_is_followed_relative_to_its_file_and_loops_end() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("ws/.git")).expect("mkdir");
        std::fs::create_dir_all(root.join("home")).expect("mkdir");
        let write = |path: &str, text: &str| std::fs::write(root.join(path), text).expect("write");
        write(
            "ws/.git/config",
            "[include]\n\tpath = ../a.inc\n[includeIf \"onbranch:x]y\"] path = ~/h.inc\n",
        );
        write(
            "ws/a.inc",
            "[core]\n\thooksPath = a\n[include]\n\tpath = a.inc\n",
        );
        write("home/h.inc", "[core]\n\thooksPath = ~/hooks\n");
        let ws = root.join("ws");
        let home = root.join("home");
        let mut read = |path: &Path| crate::config::file::read_text(path);
        let got = read_repository(&ws, Some(&home), &mut read);
        let mut hooks = got.hooks.clone();
        hooks.sort();
        assert_eq!(hooks, ["a", "~/hooks"]);
        assert!(got.included.contains(&ws.join("a.inc")), "{got:?}");
        assert!(got.included.contains(&home.join("h.inc")), "{got:?}");
        assert_eq!(hooks_dir(&ws, "~/hooks", Some(&home)), home.join("hooks"));
        assert_eq!(hooks_dir(&ws, "../x/./h", Some(&home)), root.join("x/h"));
    }

    #[test]
    fn the_environment_adds_files_and_pairs() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("ws")).expect("mkdir");
        std::fs::write(root.join("g"), "[core]\n\thooksPath = rel\n").expect("write");
        std::fs::write(root.join("i"), "[core]\n\thooksPath = /abs\n").expect("write");
        let vars: std::collections::HashMap<&str, String> = [
            ("GIT_CONFIG_GLOBAL", root.join("g").display().to_string()),
            ("GIT_CONFIG_COUNT", "2".into()),
            ("GIT_CONFIG_KEY_0", "Core.HooksPath".into()),
            ("GIT_CONFIG_VALUE_0", "env".into()),
            ("GIT_CONFIG_KEY_1", "includeIf.gitdir:/x/.path".into()),
            ("GIT_CONFIG_VALUE_1", root.join("i").display().to_string()),
        ]
        .into_iter()
        .collect();
        let env = Environment::from(&|name| vars.get(name).cloned());
        let ws = root.join("ws");
        let seen = seen_with(&ws, &env);
        for hooks in [ws.join("rel"), ws.join("env"), PathBuf::from("/abs")] {
            assert!(seen.hooks.contains(&hooks), "{hooks:?} {seen:?}");
        }
        assert_eq!(seen.every_repository.hooks, ["rel", "env"]);
        assert!(seen.config_files.contains(&root.join("i")), "{seen:?}");
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
        let mut read = |path: &Path| crate::config::file::read_text(path);
        let got = read_repository(&worktree, None, &mut read);
        assert_eq!(got.hooks, ["githooks"]);
        let env = Environment::from(&|_| None);
        let seen = seen_with(&worktree, &env);
        assert!(seen.hooks.contains(&worktree.join("githooks")), "{seen:?}");
    }
}
