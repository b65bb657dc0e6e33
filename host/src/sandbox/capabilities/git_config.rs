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

use super::protect::EveryRepository;

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
    /// The directory a `commondir` names, as the reader names it: git
    /// reads the repository's config there and runs its hooks from there.
    pub(crate) common: Option<PathBuf>,
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
            let parsed = parse(&text);
            if parsed.bad {
                // git stops at a bad line; what a later git takes there is
                // not known.
                self.unreadable.push(file.clone());
            }
            // An older git reads a value with a tab or a CR inside as
            // spaces there: both are where a git may look.
            let legacy = parse_legacy(&text)
                .entries
                .into_iter()
                .filter(|entry| !parsed.entries.contains(entry));
            let entries: Vec<Entry> = parsed.entries.iter().cloned().chain(legacy).collect();
            for entry in entries {
                match entry.kind() {
                    Some(Kind::Hooks) => self.hooks.push(entry.value()),
                    Some(Kind::Include) => {
                        let Some(path) = include_path(&entry.value(), Some(dir), home) else {
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
            Some(Kind::Hooks) => self.hooks.push(entry.value()),
            Some(Kind::Include) => {
                if let Some(path) = include_path(&entry.value(), None, home) {
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
pub(crate) struct Seen {
    /// Every `core.hooksPath` of the workspace's repository, as host
    /// paths (relative values are relative to the working tree, where git
    /// runs hooks).
    pub(crate) hooks: Vec<PathBuf>,
    /// The config files git reads that are not in a `.git` directory:
    /// what an include names, and the user's own files.
    pub(crate) config_files: Vec<PathBuf>,
    /// The directory the workspace repository's `commondir` names, when it
    /// is not in its `.git` directory.
    pub(crate) common: Option<PathBuf>,
    /// What every nested repository gets from the user's configuration.
    pub(crate) every_repository: EveryRepository,
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

/// Why the hooks directory a nested repository's configuration names is
/// protected.
pub(crate) const NESTED_HOOKS_WHY: &str = "the `core.hooksPath` of the git repository it is in names it, and \
     git runs the hooks there";

/// Why a file a nested repository's configuration includes is protected.
pub(crate) const INCLUDED_WHY: &str = "a git repository's configuration includes it, and git configuration \
     can name programs to run (`core.fsmonitor`, `core.hooksPath`)";

/// Why the directory a nested repository's `commondir` names is protected.
pub(crate) const COMMON_WHY: &str = "a git repository's `commondir` names it: git reads its \
     config and runs its hooks from there";

/// Why a nested repository whose configuration could not be read is
/// protected inside.
pub(crate) const UNREADABLE_WHY: &str = "it is a git repository whose configuration toolhost could not read \
     (not a regular file, over 1 MiB or not UTF-8), and git may run what it names";

/// What git's configuration says about `workspace`, with this process's
/// environment.
pub(crate) fn seen(workspace: &Path) -> Seen {
    let var = |name: &str| std::env::var(name).ok();
    seen_with(workspace, &Environment::from(&var))
}

fn seen_with(workspace: &Path, env: &Environment) -> Seen {
    let home = env.home.as_deref();
    let mut read = |path: &Path| crate::text_file::read_text(path);
    // The user's and the environment's: every repository's.
    let mut user = GitRead::default();
    for file in &env.user_files {
        user.read_file(file, home, &mut read);
    }
    for (key, value) in &env.pairs {
        user.read_pair(key, value, home, &mut read);
    }
    // The repository git finds from the workspace: its own, or the one it
    // lies in (a package of a monorepo), whose hooks and includes may lie
    // in the workspace.
    let top = working_tree_of(workspace);
    let repository = read_repository(top, home, &mut read);
    let mut seen = Seen::default();
    for value in user.hooks.iter().chain(&repository.hooks) {
        seen.hooks.push(hooks_dir(top, value, home));
    }
    let git_dir = top.join(".git");
    seen.config_files = env
        .user_files
        .iter()
        .chain(&user.included)
        .chain(&repository.included)
        .filter(|file| !file.starts_with(&git_dir))
        .cloned()
        .collect();
    seen.common = repository
        .common
        .clone()
        .filter(|common| !common.starts_with(&git_dir));
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

/// The working tree git finds from `dir`: the nearest directory at or
/// above it holding a `.git` (a directory or a file naming one), else
/// `dir` itself. Ceilings (`GIT_CEILING_DIRECTORIES`) are not asked: a
/// repository git would not use there is read all the same, which only
/// protects more. Above `dir`, one another user owns is not: git refuses
/// it (`safe.directory`), and a `/tmp/.git` someone planted must not make
/// every workspace under it protected.
fn working_tree_of(dir: &Path) -> &Path {
    use std::os::unix::fs::MetadataExt as _;
    let me = rustix::process::geteuid().as_raw();
    working_tree_owned_by(dir, me, &|top| std::fs::metadata(top).ok().map(|m| m.uid()))
}

/// [`working_tree_of`], with `owner` telling who owns a directory.
fn working_tree_owned_by<'a>(
    dir: &'a Path,
    me: u32,
    owner: &dyn Fn(&Path) -> Option<u32>,
) -> &'a Path {
    let found = dir
        .ancestors()
        .find(|up| std::fs::symlink_metadata(up.join(".git")).is_ok());
    match found {
        Some(top) if top == dir || owner(top) == Some(me) => top,
        _ => dir,
    }
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
            out.common = Some(common);
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

/// One `section[.subsection].name` of a config file, as git names it
/// (section and name in lower case, the subsection as written), with its
/// value: none for a name with no `=` (git's "true").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) value: Option<String>,
}

enum Kind {
    Hooks,
    Include,
}

impl Entry {
    /// `section[.sub].key` as the environment gives it (git lowers the
    /// section and the key, not the subsection).
    fn from_key(key: &str, value: &str) -> Entry {
        let name = match (key.find('.'), key.rfind('.')) {
            (Some(first), Some(last)) => format!(
                "{}{}{}",
                key[..first].to_ascii_lowercase(),
                &key[first..last],
                key[last..].to_ascii_lowercase()
            ),
            _ => key.to_ascii_lowercase(),
        };
        Entry {
            name,
            value: Some(value.to_string()),
        }
    }

    /// What the guard needs of this entry: git reads `core.hookspath`
    /// exactly, `include.path`, and `includeif.COND.path` with any
    /// condition (an empty one too), and a name with no value is an error
    /// to git, as is (for the guard) an empty value.
    fn kind(&self) -> Option<Kind> {
        if self.value.as_deref().is_none_or(str::is_empty) {
            return None;
        }
        let name = self.name.as_str();
        if name == "core.hookspath" {
            return Some(Kind::Hooks);
        }
        let conditional = name
            .strip_prefix("includeif.")
            .is_some_and(|rest| rest.ends_with(".path"));
        (name == "include.path" || conditional).then_some(Kind::Include)
    }

    fn value(&self) -> String {
        self.value.clone().unwrap_or_default()
    }
}

/// A config text as git's `config.c` parses it (`git_parse_source`): the
/// entries in order, and whether it stopped at a bad line (git then stops
/// with "bad config line", after the entries before it).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub(crate) entries: Vec<Entry>,
    pub(crate) bad: bool,
}

/// The characters git's `isspace` takes (its own ctype, not the C
/// library's: no vertical tab, no form feed).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// git's `iskeychar`.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// The bytes of a config file as git's `get_next_char` gives them: `\r\n`
/// is `\n`, and the end of the file is one more `\n` with `eof` set.
struct Source<'a> {
    bytes: &'a [u8],
    at: usize,
    eof: bool,
    /// As git before 2.46 reads a value: each whitespace character outside
    /// quotes inside it is a space (`a<TAB>b` is `a b`).
    legacy: bool,
}

impl Source<'_> {
    fn next(&mut self) -> u8 {
        let Some(&c) = self.bytes.get(self.at) else {
            self.eof = true;
            return b'\n';
        };
        self.at += 1;
        if c == b'\r' && self.bytes.get(self.at) == Some(&b'\n') {
            self.at += 1;
            return b'\n';
        }
        c
    }

    /// git's `parse_value`: after the `=`, to the end of the line; a
    /// comment ends at the newline whatever precedes it, `\` before a
    /// newline continues the value. None where git fails (an unknown
    /// escape, an open quote at the newline).
    fn value(&mut self) -> Option<Vec<u8>> {
        let mut value = Vec::new();
        let (mut quote, mut comment) = (false, false);
        let mut trim_len = 0;
        loop {
            let mut c = self.next();
            if c == b'\n' {
                if quote {
                    return None;
                }
                if trim_len != 0 {
                    value.truncate(trim_len);
                }
                return Some(value);
            }
            if comment {
                continue;
            }
            if is_space(c) && !quote {
                if trim_len == 0 {
                    trim_len = value.len();
                }
                if !value.is_empty() {
                    value.push(if self.legacy { b' ' } else { c });
                }
                continue;
            }
            if !quote && (c == b';' || c == b'#') {
                comment = true;
                continue;
            }
            trim_len = 0;
            if c == b'\\' {
                c = match self.next() {
                    b'\n' => continue,
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    c @ (b'\\' | b'"') => c,
                    _ => return None,
                };
                value.push(c);
                continue;
            }
            if c == b'"' {
                quote = !quote;
                continue;
            }
            value.push(c);
        }
    }

    /// git's `get_base_var` and `get_extended_base_var`: after the `[`,
    /// the section in lower case (dots kept: the old `[section.sub]`
    /// lowers the subsection too), then `"subsection"` as written with
    /// `\` taking the next character.
    fn section(&mut self) -> Option<Vec<u8>> {
        let mut name = Vec::new();
        loop {
            let c = self.next();
            if self.eof {
                return None;
            }
            if c == b']' {
                return Some(name);
            }
            if is_space(c) {
                return self.subsection(name, c);
            }
            if !is_key_char(c) && c != b'.' {
                return None;
            }
            name.push(c.to_ascii_lowercase());
        }
    }

    fn subsection(&mut self, mut name: Vec<u8>, mut c: u8) -> Option<Vec<u8>> {
        loop {
            if c == b'\n' {
                return None;
            }
            c = self.next();
            if !is_space(c) {
                break;
            }
        }
        if c != b'"' {
            return None;
        }
        name.push(b'.');
        loop {
            let mut c = self.next();
            if c == b'\n' {
                return None;
            }
            if c == b'"' {
                break;
            }
            if c == b'\\' {
                c = self.next();
                if c == b'\n' {
                    return None;
                }
            }
            name.push(c);
        }
        (self.next() == b']').then_some(name)
    }
}

/// The entries of a config text, as git's `git_parse_source` reads them:
/// a UTF-8 byte order mark at the start is skipped, a comment ends at the
/// newline (a `\` before it continues nothing), and the first bad line
/// ends the reading.
pub(crate) fn parse(text: &str) -> Parsed {
    parse_as(text, false)
}

/// [`parse`] as git before 2.46 reads values, which turned each whitespace
/// character outside quotes inside a value into a space: the user's git
/// may be either, so the guard takes what both read.
pub(crate) fn parse_legacy(text: &str) -> Parsed {
    parse_as(text, true)
}

fn parse_as(text: &str, legacy: bool) -> Parsed {
    let bytes = text.as_bytes();
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut source = Source {
        bytes,
        at: 0,
        eof: false,
        legacy,
    };
    let mut out = Parsed::default();
    let mut section: Option<Vec<u8>> = None;
    let mut comment = false;
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    loop {
        let c = source.next();
        if c == b'\n' {
            if source.eof {
                return out;
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            match source.section() {
                Some(name) if !name.is_empty() => section = Some(name),
                _ => break,
            }
            continue;
        }
        if !c.is_ascii_alphabetic() {
            break;
        }
        // git's `get_value`: a name before any section has no section
        // (`git config --list` then refuses it).
        let mut name = section.clone().map_or_else(Vec::new, |mut s| {
            s.push(b'.');
            s
        });
        name.push(c.to_ascii_lowercase());
        let mut c;
        loop {
            c = source.next();
            if source.eof || !is_key_char(c) {
                break;
            }
            name.push(c.to_ascii_lowercase());
        }
        while c == b' ' || c == b'\t' {
            c = source.next();
        }
        let value = match c {
            b'\n' => None,
            b'=' => match source.value() {
                Some(value) => Some(text(&value)),
                None => break,
            },
            _ => break,
        };
        out.entries.push(Entry {
            name: text(&name),
            value,
        });
    }
    out.bad = true;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(text: &str) -> Vec<String> {
        parse(text)
            .entries
            .into_iter()
            .filter(|e| matches!(e.kind(), Some(Kind::Hooks)))
            .map(|e| e.value())
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
    fn a_comment_ends_at_its_newline_and_a_byte_order_mark_is_skipped() {
        let text = "\u{feff}# a comment \\\n[core]\n\thooksPath = hooks ; and \\\n\tx = 1\n";
        assert_eq!(hooks(text), ["hooks"]);
        assert_eq!(
            parse("[core]\n\tx = \\q\n\thooksPath = never\n"),
            Parsed {
                entries: vec![],
                bad: true
            }
        );
    }

    /// The corpus of odd config files the differential test reads.
    fn corpus() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/git-config")
    }

    /// The gits to compare with: every one of the usual places that is
    /// there, and the one on PATH.
    fn gits() -> Vec<PathBuf> {
        let mut gits: Vec<PathBuf> = ["/usr/bin/git", "/usr/local/bin/git"]
            .iter()
            .map(PathBuf::from)
            .filter(|git| git.is_file())
            .collect();
        let on_path = std::process::Command::new("git").arg("--version").output();
        if on_path.is_ok_and(|out| out.status.success()) {
            gits.push(PathBuf::from("git"));
        }
        assert!(!gits.is_empty(), "the differential test needs git on PATH");
        gits
    }

    /// What `git config --list --show-origin -z` says of `file`: each
    /// entry with the file it came from, and whether git failed.
    fn git_list(git: &Path, file: &Path, includes: bool) -> (Vec<(String, Entry)>, bool) {
        let home = tempfile::tempdir().expect("temp dir");
        let out = std::process::Command::new(git)
            .args(["config", "--list", "--show-origin", "-z"])
            .arg(if includes {
                "--includes"
            } else {
                "--no-includes"
            })
            .arg("-f")
            .arg(file)
            .env("HOME", home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_CONFIG_COUNT")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .output()
            .expect("run git");
        let text = String::from_utf8(out.stdout).expect("git's output is UTF-8");
        let fields: Vec<&str> = text.split('\0').collect();
        let mut entries = Vec::new();
        for pair in fields.chunks(2).filter(|pair| pair.len() == 2) {
            let origin = pair[0].strip_prefix("file:").expect("a file origin");
            let (name, value) = match pair[1].split_once('\n') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (pair[1], None),
            };
            let name = name.to_string();
            entries.push((origin.to_string(), Entry { name, value }));
        }
        (entries, !out.status.success())
    }

    fn corpus_files() -> Vec<PathBuf> {
        let mut files = Vec::new();
        let mut dirs = vec![corpus()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("read the corpus") {
                let path = entry.expect("corpus entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.file_name() != Some(".gitattributes".as_ref()) {
                    files.push(path);
                }
            }
        }
        files.sort();
        assert!(files.len() > 30, "{files:?}");
        files
    }

    /// Whether `git` reads values as git before 2.46 did (a tab inside a
    /// value is a space).
    fn is_legacy(git: &Path) -> bool {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("probe");
        std::fs::write(&file, "[core]\n\tx = a\tb\n").expect("write");
        let (listed, _) = git_list(git, &file, false);
        match listed.first().and_then(|(_, entry)| entry.value.as_deref()) {
            Some("a b") => true,
            Some("a\tb") => false,
            other => panic!("{} read {other:?}", git.display()),
        }
    }

    #[test]
    fn the_reader_yields_what_git_config_lists_for_every_odd_file() {
        for git in gits() {
            let legacy = is_legacy(&git);
            for file in corpus_files() {
                let text = std::fs::read_to_string(&file).expect("read a corpus file");
                let (listed, failed) = git_list(&git, &file, false);
                let theirs = Parsed {
                    entries: listed.into_iter().map(|(_, entry)| entry).collect(),
                    bad: failed,
                };
                pretty_assertions::assert_eq!(
                    parse_as(&text, legacy),
                    theirs,
                    "{} by {}",
                    file.display(),
                    git.display()
                );
            }
        }
    }

    #[test]
    fn includes_are_followed_to_the_files_and_hooks_git_reads() {
        let file = corpus().join("include.config");
        for git in gits() {
            let (listed, failed) = git_list(&git, &file, true);
            assert!(!failed, "{}", git.display());
            let mut read = |path: &Path| crate::text_file::read_text(path);
            let mut ours = GitRead::default();
            ours.read_file(&file, None, &mut read);
            let mut theirs: Vec<String> = listed
                .iter()
                .filter(|(_, entry)| entry.name == "core.hookspath")
                .filter_map(|(_, entry)| entry.value.clone())
                .collect();
            theirs.sort();
            let mut hooks = ours.hooks.clone();
            hooks.sort();
            assert_eq!(hooks, theirs, "{}", git.display());
            for (origin, _) in &listed {
                assert!(
                    ours.asked.contains(&lexical(Path::new(origin))),
                    "{origin} not read: {ours:?}"
                );
            }
        }
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
        let mut read = |path: &Path| crate::text_file::read_text(path);
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

    /// Red team (sixth round): a workspace that is a package of a
    /// repository (`monorepo/app`) left the repository's hooks directory
    /// and included config in it writable; `git commit` ran the hook.
    #[test]
    fn the_repository_a_workspace_lies_in_is_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("mono/.git")).expect("mkdir");
        std::fs::create_dir_all(root.join("mono/app")).expect("mkdir");
        std::fs::write(
            root.join("mono/.git/config"),
            "[core]\n\thooksPath = app/hooks\n[include]\n\tpath = ../app/team.gitconfig\n",
        )
        .expect("write");
        std::fs::write(root.join("mono/.git/commondir"), "../shared\n").expect("write");
        let env = Environment::from(&|_| None);
        let seen = seen_with(&root.join("mono/app"), &env);
        assert_eq!(seen.hooks, [root.join("mono/app/hooks")]);
        assert!(
            seen.config_files
                .contains(&root.join("mono/app/team.gitconfig")),
            "{seen:?}"
        );
        assert_eq!(seen.common, Some(root.join("mono/shared")));
    }

    /// A repository above the workspace that another user owns is not
    /// read (git refuses it): a planted `/tmp/.git` protects nothing.
    #[test]
    fn a_repository_above_owned_by_another_user_is_not_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("shared/.git")).expect("mkdir");
        std::fs::create_dir_all(root.join("shared/ws")).expect("mkdir");
        let ws = root.join("shared/ws");
        assert_eq!(working_tree_of(&ws), root.join("shared"));
        let owned_by = |uid: u32| move |_: &Path| Some(uid);
        assert_eq!(
            working_tree_owned_by(&ws, 1000, &owned_by(1000)),
            root.join("shared")
        );
        assert_eq!(working_tree_owned_by(&ws, 1000, &owned_by(0)), ws.as_path());
        // The workspace's own repository is its own, whoever owns it.
        let top = root.join("shared");
        assert_eq!(
            working_tree_owned_by(&top, 1000, &owned_by(0)),
            top.as_path()
        );
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
        let mut read = |path: &Path| crate::text_file::read_text(path);
        let got = read_repository(&worktree, None, &mut read);
        assert_eq!(got.hooks, ["githooks"]);
        let env = Environment::from(&|_| None);
        let seen = seen_with(&worktree, &env);
        assert!(seen.hooks.contains(&worktree.join("githooks")), "{seen:?}");
    }
}
