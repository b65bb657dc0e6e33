//! Paths no tool may change, whatever its grants, and where a path really
//! lands on the host.
//!
//! What decides what runs next (toolhost's config and state, git's
//! directories and repositories, the files other agents and editors run on
//! open, the user's own additions) must not be reachable by a write grant of
//! `.`. A [`Protection`] holds them as names protected at any depth below the
//! workspace and as exact host paths; the file-system guard asks
//! [`Protection::covering`] (or [`Protection::touching`], for a move or a
//! removal) with where a change lands, which it resolves through held
//! handles. A directory holding a `HEAD` is protected inside
//! ([`Protection::repository_holding`] by path; the guard asks the same
//! through its handles). The user's own grant of a protected path lifts that
//! protection, and only that one, for one tool
//! ([`ToolPolicy::lifted`](crate::sandbox::ToolPolicy)). [`locate`] and
//! [`locate_loose`] resolve a path by name, for reports and symlink targets.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

/// One protected path, as the user and the model read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    /// Relative to the workspace (`toolhost.toml`, `.git`), or absolute
    /// (the `--config` file, toolhost's own directories); for a name
    /// protected at any depth, that name.
    pub relative: String,
    /// Why, in a phrase the model reads after "is protected:".
    pub why: String,
    /// Protect every path component with this name, not only the one at
    /// the workspace root (`.git` of a nested repository runs hooks too).
    pub at_any_depth: bool,
    /// toolhost's own configuration or state (`toolhost.toml`, `.toolhost`,
    /// the `--config` file, where it writes, its directories): a change
    /// there widens every tool, so a session never offers to lift it
    /// ([`Protection::lift_offered`]); only a flag the user types does.
    pub toolhosts_own: bool,
}

/// A place toolhost keeps what tools read, from wherever they were
/// granted: no tool reads it, whatever its grants (but `read_file` the
/// saved results).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordPath {
    /// As named: relative to the workspace, or absolute.
    pub path: PathBuf,
    pub kind: Record,
}

impl RecordPath {
    /// The records of every workspace: its session files (and an MCP
    /// server's audit) and the whole results saved when one was cut.
    pub fn of_workspace() -> Vec<RecordPath> {
        vec![
            RecordPath {
                path: PathBuf::from(crate::workspace::SESSIONS_DIR),
                kind: Record::Sessions,
            },
            RecordPath {
                path: PathBuf::from(crate::workspace::OUTPUTS_DIR),
                kind: Record::Outputs,
            },
        ]
    }
}

/// What the user's git configuration (`~/.gitconfig`, `/etc/gitconfig`,
/// the environment's) says of every repository, as read when toolhost
/// starts: the guard applies it to each nested repository it finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EveryRepository {
    /// Relative `core.hooksPath` values: relative to each repository's
    /// working tree.
    pub hooks: Vec<String>,
    /// `$HOME`, for `~/` in a nested repository's includes.
    pub home: Option<PathBuf>,
}

/// The protected paths of one workspace, resolved on the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    workspace: PathBuf,
    /// For nested repositories ([`EveryRepository`]).
    every_repository: EveryRepository,
    paths: Vec<Resolved>,
    /// The names protected at any depth, and which of `paths` each is: a
    /// change's path is walked once, component by component, instead of
    /// once per name (the guard asks on every change). Keys are in ASCII
    /// lower case ([`name_key`]), but for `HEAD`, which is matched exactly.
    names: HashMap<OsString, usize>,
    /// The longest of `names`, in bytes: a longer component is none of them.
    longest_name: usize,
    /// The paths of more than one component protected at any depth
    /// (`.github/hooks`, `.config/mise`), each as its components (in ASCII
    /// lower case) and which of `paths` it is: matched as consecutive
    /// components anywhere below the base.
    suffixes: Vec<(Vec<OsString>, usize)>,
    /// Host paths protected as they are (the exact paths, and where a
    /// link at a protected name at the root leads).
    exact: Vec<Exact>,
    /// toolhost's own records, which hold what tools read from wherever
    /// they were granted: the workspace's session files (and an MCP
    /// server's audit), which no tool may read, and the whole results it
    /// saved, which only the standard `read_file` may read.
    records: Vec<(PathBuf, Record)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Resolved {
    spec: ProtectedPath,
    /// Where it is on the host: the path as named, the path through each
    /// link on the way ([`route`]), and where it really is when that is a
    /// symlink (a repository can ship `toolhost.toml -> src/cfg.toml`).
    host: Vec<PathBuf>,
}

/// A host path protected as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Exact {
    host: PathBuf,
    /// Which of `paths` it is.
    index: usize,
    /// The path that names it, as the user would write it: the protected
    /// path as configured, or the link in a protected directory that leads
    /// to `host`, through the protected path's name (`.vscode/api` for
    /// `docs/api` when `.vscode -> docs`). A grant lifts it only by these words
    /// ([`Protection::lifted_by`]), never by naming `host` itself.
    named: PathBuf,
}

/// Which of toolhost's records a path lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Session files and an MCP server's audit: what every tool read and
    /// the model wrote. No tool reads them.
    Sessions,
    /// The whole results saved when one was cut for the model: what some
    /// tool read. Only the standard `read_file` reads them, for the model
    /// to page through what it was already shown in part.
    Outputs,
    /// Where the command line told toolhost to write (`--session-dir`,
    /// `--http-token-file`): sessions or the MCP server's token. No tool
    /// reads them.
    Named,
    /// toolhost's secrets in the user's config directory: the MCP server's
    /// token, the key that seals the grants given in a session. No tool
    /// reads them, whatever its grants (a grant of `~` included).
    Secret,
}

/// A path found in one of toolhost's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordHit {
    /// The record's directory, as the model names it.
    pub record: String,
    pub kind: Record,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The protected path, relative to the workspace (`.git`, `vendor/x/.git`).
    pub protected: String,
    pub why: String,
    /// What the user's write grants name to lift this protection for one
    /// tool, a flag each: first its own words (the protected path, or for a
    /// directory protected because it holds a `HEAD`, that `HEAD`), then
    /// those of every other protection on the same path, which a lift must
    /// name too ([`Protection::lifted_by`]).
    pub lift: Vec<String>,
    /// Whether this is a directory protected because it holds a `HEAD`.
    pub repository: bool,
}

impl Hit {
    /// A protected path no grant lifts (what a nested repository's
    /// configuration names, found as a change lands).
    pub fn fixed(protected: impl Into<String>, why: impl Into<String>) -> Hit {
        Hit {
            lift: Vec::new(),
            ..Hit::new(protected, why)
        }
    }

    /// A protected path a grant naming it lifts.
    pub fn new(protected: impl Into<String>, why: impl Into<String>) -> Hit {
        let protected = protected.into();
        Hit {
            lift: vec![protected.clone()],
            protected,
            why: why.into(),
            repository: false,
        }
    }
}

impl Protection {
    /// The protection of the canonical `workspace`: `paths` no tool
    /// changes, and `records` no tool reads.
    pub fn new(workspace: &Path, paths: Vec<ProtectedPath>, records: &[RecordPath]) -> Self {
        let paths: Vec<Resolved> = paths
            .into_iter()
            .map(|spec| {
                let host = host_paths(&workspace.join(&spec.relative));
                Resolved { spec, host }
            })
            .collect();
        let mut names = HashMap::new();
        let mut suffixes = Vec::new();
        let mut exact = Vec::new();
        let mut scan_budget = LINK_SCAN_ENTRIES;
        for (index, resolved) in paths.iter().enumerate() {
            let named = workspace.join(&resolved.spec.relative);
            let mut host = resolved.host.iter();
            if resolved.spec.at_any_depth {
                let parts: Vec<OsString> = Path::new(&resolved.spec.relative)
                    .components()
                    .map(|part| part.as_os_str().to_ascii_lowercase())
                    .collect();
                let name: &OsStr = resolved.spec.relative.as_ref();
                if parts.len() > 1 {
                    suffixes.push((parts, index));
                } else {
                    let key = if name == HEAD {
                        name.to_os_string()
                    } else {
                        name.to_ascii_lowercase()
                    };
                    names.entry(key).or_insert(index);
                }
                // The name at the root is found by the walk of names.
                host.next();
            }
            exact.extend(host.map(|path| Exact {
                host: path.clone(),
                index,
                named: named.clone(),
            }));
            // Where the links in it lead, for a protected directory in the
            // workspace (`.git/hooks/pre-commit -> ../../scripts/pre-commit`,
            // `.claude/settings.json -> ../ai/settings.json`): what runs is
            // there.
            if let Some(dir) = resolved.host.last().filter(|dir| scanned(workspace, dir)) {
                let mut links = Vec::new();
                links_in(dir, &mut scan_budget, &mut links);
                for link in links {
                    let named = named.join(link.strip_prefix(dir).unwrap_or(&link));
                    for way in route(&link).into_iter().skip(1) {
                        exact.push(Exact {
                            host: way,
                            index,
                            named: named.clone(),
                        });
                    }
                }
            }
        }
        let longest_name = names.keys().map(|name| name.len()).max().unwrap_or(0);
        // Each record wherever its links lead, as a protected path.
        let records = records
            .iter()
            .flat_map(|record| {
                host_paths(&workspace.join(&record.path))
                    .into_iter()
                    .map(|host| (host, record.kind))
            })
            .collect();
        Protection {
            workspace: workspace.to_path_buf(),
            every_repository: EveryRepository::default(),
            paths,
            names,
            longest_name,
            suffixes,
            exact,
            records,
        }
    }

    /// The record of toolhost's that the real host path `path` is or lies
    /// in, as the model names it, unless it is the saved results and the
    /// tool may read those (`reads_outputs`).
    pub(crate) fn record_holding(&self, path: &Path, reads_outputs: bool) -> Option<RecordHit> {
        self.records
            .iter()
            .filter(|(_, kind)| !(reads_outputs && *kind == Record::Outputs))
            .find(|(record, _)| path.starts_with(record))
            .map(|(record, kind)| RecordHit {
                record: self.shown(record),
                kind: *kind,
            })
    }

    /// This protection, with what the user's git configuration says of
    /// every repository.
    pub fn with_every_repository(mut self, every: EveryRepository) -> Self {
        self.every_repository = every;
        self
    }

    /// What the user's git configuration says of every repository.
    pub(crate) fn every_repository(&self) -> &EveryRepository {
        &self.every_repository
    }

    /// toolhost's records, where they are on the host, with which each is.
    pub(crate) fn records(&self) -> impl Iterator<Item = (&Path, Record)> {
        self.records
            .iter()
            .map(|(path, kind)| (path.as_path(), *kind))
    }

    /// The protected paths, as configured.
    pub fn paths(&self) -> impl Iterator<Item = &ProtectedPath> {
        self.paths.iter().map(|resolved| &resolved.spec)
    }

    /// The protected path that `target` (a resolved host path) is or lies
    /// in, unless the user lifted that protection for this tool. Names
    /// protected at any depth count only below `base` (the workspace, or
    /// the grant holding `target`): a workspace that itself lies in a
    /// `.claude` directory is not all protected.
    pub fn covering(&self, target: &Path, lifted: &[PathBuf], base: &Path) -> Option<Hit> {
        for exact in &self.exact {
            if target.starts_with(&exact.host) && !is_lifted(target, &exact.host, lifted) {
                return Some(self.completed(self.exact_hit(exact), &exact.host));
            }
        }
        let (start, below) = match target.strip_prefix(base) {
            Ok(below) => (base, below),
            Err(_) => (Path::new(""), target),
        };
        for (index, prefix) in self.names_along(start, below) {
            if !is_lifted(target, &prefix, lifted) {
                let hit = self.hit(&self.paths[index].spec, &self.shown(&prefix));
                return Some(self.completed(hit, &prefix));
            }
        }
        None
    }

    /// Each name (or path of names) protected at any depth that `below`
    /// passes through, in order: which of the protected paths it is, and
    /// where it is (`start` joined with `below` up to it).
    fn names_along(&self, start: &Path, below: &Path) -> Vec<(usize, PathBuf)> {
        let components: Vec<&OsStr> = below.components().map(|c| c.as_os_str()).collect();
        let mut found = Vec::new();
        for at in 0..components.len() {
            let name = self.name_index(components[at]).map(|index| (index, 1));
            let matched = name.into_iter().chain(
                self.suffixes
                    .iter()
                    .filter(|(parts, _)| starts_with_parts(&components[at..], parts))
                    .map(|(parts, index)| (*index, parts.len())),
            );
            for (index, len) in matched {
                let prefix = start.join(components[..at + len].iter().collect::<PathBuf>());
                found.push((index, prefix));
            }
        }
        found
    }

    /// The protected path of more than one component that `target` (below
    /// `base`) would hold if it is its first components: `.github` holds
    /// `.github/hooks`, wherever it is. Moving such a directory away, or
    /// putting another (or a link) in its place, would take the protected
    /// path along or make one.
    fn holding_a_suffix(&self, target: &Path, lifted: &[PathBuf], base: &Path) -> Option<Hit> {
        let below = target.strip_prefix(base).unwrap_or(target);
        let components: Vec<&OsStr> = below.components().map(|c| c.as_os_str()).collect();
        for (parts, index) in &self.suffixes {
            for first in 1..parts.len() {
                let Some(from) = components.len().checked_sub(first) else {
                    continue;
                };
                if !starts_with_parts(&components[from..], &parts[..first]) {
                    continue;
                }
                let held: PathBuf = parts[first..]
                    .iter()
                    .fold(target.to_path_buf(), |path, part| path.join(part));
                if !is_lifted(&held, &held, lifted) {
                    let hit = self.hit(&self.paths[*index].spec, &self.shown(&held));
                    return Some(self.completed(hit, &held));
                }
            }
        }
        None
    }

    /// Which of the names protected at any depth `name` is: as written, or
    /// in ASCII lower case (`.GIT`, `.VSCode`: the same entries on a
    /// case-insensitive file system, which git and editors there read), but
    /// `HEAD` only as written (`layouts/head/`, `components/Head/` are
    /// ordinary directories).
    fn name_index(&self, name: &OsStr) -> Option<usize> {
        if name.len() > self.longest_name {
            return None;
        }
        if let Some(index) = self.names.get(name) {
            return Some(*index);
        }
        if !name.as_encoded_bytes().iter().any(u8::is_ascii_uppercase) {
            return None;
        }
        self.names.get(&name.to_ascii_lowercase()).copied()
    }

    /// Like [`Protection::covering`], and also when `target` holds a
    /// protected path: renaming or removing `target` (or making it a link)
    /// would move, delete or redirect it.
    pub fn touching(&self, target: &Path, lifted: &[PathBuf], base: &Path) -> Option<Hit> {
        if let Some(hit) = self.covering(target, lifted, base) {
            return Some(hit);
        }
        // The names at the root lie in the workspace alone.
        let root_name = (target == self.workspace)
            .then(|| self.paths.iter().find(|r| r.spec.at_any_depth))
            .flatten();
        if let Some(resolved) = root_name {
            return Some(self.hit(&resolved.spec, &resolved.spec.relative));
        }
        if let Some(hit) = self.holding_a_suffix(target, lifted, base) {
            return Some(hit);
        }
        self.exact.iter().find_map(|exact| {
            let host = &exact.host;
            let held = host.starts_with(target) && !is_lifted(host, host, lifted);
            held.then(|| self.completed(self.exact_hit(exact), host))
        })
    }

    /// The directory from `base` down to `target`'s parent that holds a
    /// `HEAD`, by path (for reports and descriptor checks; the guard asks
    /// the same through held handles). git takes such a
    /// directory for a repository, with its objects and refs beside it or
    /// where its `commondir` says, and runs what its config and hooks say.
    /// Moving it as a whole is not a change inside it.
    pub fn repository_holding(
        &self,
        target: &Path,
        lifted: &[PathBuf],
        base: &Path,
    ) -> Option<Hit> {
        let mut dir = target.parent()?;
        while dir.starts_with(base) {
            if holds_head(dir) && !repository_lifted(target, dir, lifted) {
                return Some(self.repository_hit(dir));
            }
            dir = dir.parent()?;
        }
        None
    }

    /// The [`Hit`] of a change inside `dir`, which holds a `HEAD`.
    pub(crate) fn repository_hit(&self, dir: &Path) -> Hit {
        self.completed(self.own_repository_hit(dir), dir)
    }

    /// [`Protection::repository_hit`] with its own words alone.
    fn own_repository_hit(&self, dir: &Path) -> Hit {
        Hit {
            protected: self.shown(dir),
            why: REPOSITORY_WHY.into(),
            lift: vec![self.shown(&dir.join(HEAD))],
            repository: true,
        }
    }

    /// Whether the host path `path` is something protected: a protected
    /// path, a directory git takes for a repository or something in one,
    /// or an `objects`/`refs` beside a `HEAD` (the guard's refusals, as a
    /// path). A grant of it lifts that only when the user's words name it
    /// ([`Protection::lifted_by`]).
    pub fn names_protected(&self, path: &Path) -> bool {
        // The guard's base: outside the workspace, the grant itself, so a
        // grant of `~/.claude/skills/x` is a grant, not a lift.
        let base = if path.starts_with(&self.workspace) {
            self.workspace.as_path()
        } else {
            path
        };
        self.covering(path, &[], base).is_some()
            || holds_head(path)
            || self.repository_holding(path, &[], base).is_some()
    }

    /// Whether a user's write grant written as `written` (an absolute path,
    /// as typed: links not followed) and landing on `canonical` lifts a
    /// protection. Only the user's words lift, and only what they name:
    /// `canonical` is protected, and every protection on it is named by
    /// `written` (it lies in the words that lift that protection, [`Hit`]'s
    /// `lift`: `.vscode`, `src/.git`, `toolhost.toml`, the `HEAD` of a
    /// repository, the link in a protected directory). What the workspace
    /// holds never turns a grant into a lift, nor a lift of one protection
    /// into a lift of another: a directory that holds a shipped `HEAD`, or
    /// that a shipped `.vscode -> src` leads to, is granted as a directory
    /// and stays protected inside; a `node_modules -> .git` named lifts
    /// nothing.
    ///
    /// `also`: the paths (as written, absolute) of the tool's other write
    /// grants from the user, whose words count too: a path under two
    /// protections is lifted by a grant naming each.
    pub fn lifted_by(&self, written: &Path, canonical: &Path, also: &[PathBuf]) -> bool {
        let words: Vec<PathBuf> = std::iter::once(written)
            .chain(also.iter().map(PathBuf::as_path))
            .map(lexical_path)
            .collect();
        // Words naming the workspace or above (a `[sandbox] protect` of `.`
        // or `/`) name nothing: every grant would name them.
        let named = |hit: &Hit| {
            let lift = self.workspace.join(&hit.lift[0]);
            !self.workspace.starts_with(&lift) && words.iter().any(|word| word.starts_with(&lift))
        };
        let hits = self.hits_on(canonical);
        !hits.is_empty()
            && hits
                .iter()
                .all(|(hit, at)| named(hit) || a_git_named(hit, at, &hits, &named))
    }

    /// `hit` with the words of every other protection on `at`, the host
    /// path it starts at, after its own: what a refusal tells the user to
    /// name.
    fn completed(&self, mut hit: Hit, at: &Path) -> Hit {
        let hits = self.hits_on(at);
        let own: Vec<PathBuf> = hit
            .lift
            .iter()
            .map(|words| self.workspace.join(words))
            .collect();
        let named = |other: &Hit| own.contains(&self.workspace.join(&other.lift[0]));
        for (other, there) in &hits {
            if !named(other) && !a_git_named(other, there, &hits, &named) {
                hit.lift.push(other.lift[0].clone());
            }
        }
        // Words naming the workspace or above lift nothing
        // ([`Protection::lifted_by`]): then no flag lifts it.
        let nothing = |words: &String| self.workspace.starts_with(self.workspace.join(words));
        if hit.lift.iter().any(nothing) {
            hit.lift.clear();
        }
        hit
    }

    /// Every protection on the host path `path`, lifted or not, with the
    /// host path it starts at: the protected paths it is or lies in (as
    /// [`Protection::covering`] finds them), and each directory holding a
    /// `HEAD` from `path` up to the base.
    pub(crate) fn hits_on(&self, path: &Path) -> Vec<(Hit, PathBuf)> {
        let mut hits: Vec<(Hit, PathBuf)> = self
            .exact
            .iter()
            .filter(|exact| path.starts_with(&exact.host))
            .map(|exact| (self.exact_hit(exact), exact.host.clone()))
            .collect();
        // The guard's base: outside the workspace, the path itself.
        let base = if path.starts_with(&self.workspace) {
            self.workspace.as_path()
        } else {
            path
        };
        let below = path.strip_prefix(base).unwrap_or(Path::new(""));
        for (index, prefix) in self.names_along(base, below) {
            let hit = self.hit(&self.paths[index].spec, &self.shown(&prefix));
            hits.push((hit, prefix));
        }
        let mut dir = Some(path);
        while let Some(here) = dir.filter(|here| here.starts_with(base)) {
            if holds_head(here) {
                hits.push((self.own_repository_hit(here), here.to_path_buf()));
            }
            dir = here.parent();
        }
        hits
    }

    /// Whether a session may offer to lift the protection of `path` (a
    /// host path the guard refused a change in) for one tool: it lies in
    /// the workspace, a user's grant naming it would lift it, and none of
    /// toolhost's own files ([`ProtectedPath::toolhosts_own`]) is on it,
    /// in it or around it. Those stay for the flags the user types.
    pub fn lift_offered(&self, path: &Path) -> bool {
        let Ok(inside) = path.strip_prefix(&self.workspace) else {
            return false;
        };
        if inside.as_os_str().is_empty() || !self.names_protected(path) {
            return false;
        }
        let parts: Vec<OsString> = inside
            .components()
            .map(|part| part.as_os_str().to_ascii_lowercase())
            .collect();
        !self
            .paths
            .iter()
            .filter(|resolved| resolved.spec.toolhosts_own)
            .any(|resolved| {
                let named = resolved.spec.at_any_depth
                    && parts.iter().any(|part| {
                        *part == OsStr::new(&resolved.spec.relative).to_ascii_lowercase()
                    });
                named
                    || resolved
                        .host
                        .iter()
                        .any(|host| path.starts_with(host) || host.starts_with(path))
            })
    }

    /// The workspace the protected paths are relative to.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// `path` as the model knows it: relative to the workspace when inside.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(inside) if inside.as_os_str().is_empty() => ".".into(),
            Ok(inside) => inside.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    fn hit(&self, spec: &ProtectedPath, protected: &str) -> Hit {
        Hit::new(protected, spec.why.clone())
    }

    /// The [`Hit`] of a change of `exact.host`, named by the words that
    /// name it (`.git/hooks/pre-commit` for where that link leads).
    fn exact_hit(&self, exact: &Exact) -> Hit {
        self.hit(&self.paths[exact.index].spec, &self.shown(&exact.named))
    }
}

/// Whether `components` start with `parts` (in ASCII lower case), each
/// compared whatever its ASCII case, as names at any depth are.
fn starts_with_parts(components: &[&OsStr], parts: &[OsString]) -> bool {
    components.len() >= parts.len()
        && components
            .iter()
            .zip(parts)
            .all(|(component, part)| component.eq_ignore_ascii_case(part))
}

/// The name of git's `HEAD`, protected at any depth (no tool may make a
/// directory git takes for a repository) and the mark of a directory no
/// tool may change inside.
pub(crate) const HEAD: &str = "HEAD";

/// Why a directory holding a `HEAD` is protected.
pub(crate) const REPOSITORY_WHY: &str = "it holds a `HEAD`, so git may take it for a repository (with \
     its objects and refs beside it, or where a `commondir` file says) and run what its config and \
     hooks say, so a change could run code outside the sandbox";

/// Whether `dir` holds a `HEAD`. git takes a directory for a repository
/// when it holds a valid `HEAD` and finds `objects/` and `refs/` beside it
/// or through `commondir`; since no tool may make a `HEAD`, every directory
/// that already holds one is protected, whatever else is there.
pub(crate) fn holds_head(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(HEAD)).is_ok()
}

/// Whether the user lifted the protection of `protected` for changes of
/// `target`: a lift names that protected path, or a part of it
/// (`--allow-write t=.git/hooks`), and holds `target`. A lift lifts only
/// the protection it names: a `.git` made inside a lifted `.vscode` is
/// still protected.
pub(crate) fn is_lifted(target: &Path, protected: &Path, lifted: &[PathBuf]) -> bool {
    lifted
        .iter()
        .any(|lift| lift.starts_with(protected) && target.starts_with(lift))
}

/// Whether `hit` is the repository a `.git` directory is, at `at`, and
/// that `.git` is `named`: a lift of `.git` lifts the repository it is.
fn a_git_named(
    hit: &Hit,
    at: &Path,
    hits: &[(Hit, PathBuf)],
    named: &dyn Fn(&Hit) -> bool,
) -> bool {
    hit.repository
        && at
            .file_name()
            .is_some_and(|name| name.eq_ignore_ascii_case(".git"))
        && hits
            .iter()
            .any(|(other, there)| !other.repository && there == at && named(other))
}

/// Where a lift of the host path `path` (as written, absolute) lands: its
/// canonical path, or its parent's with its name when it is not there yet.
/// A `HEAD` is not followed: it names the repository beside it, wherever a
/// link there leads.
pub fn lift_target(path: &Path) -> Option<PathBuf> {
    lift_target_with(path, &|path| path.canonicalize())
}

/// [`lift_target`], with `canonicalize` for where a path is (the config
/// layer's counts the directories a command will make as there).
pub fn lift_target_with(
    path: &Path,
    canonicalize: &dyn Fn(&Path) -> io::Result<PathBuf>,
) -> Option<PathBuf> {
    let beside = || {
        let parent = canonicalize(path.parent()?).ok()?;
        Some(parent.join(path.file_name()?))
    };
    if path.file_name() == Some(OsStr::new(HEAD)) {
        return beside();
    }
    // A dangling link leads where its target would be made: that is what
    // is protected (`.vscode -> gone`).
    let dangling = || {
        let link = std::fs::symlink_metadata(path).ok()?;
        link.file_type().is_symlink().then(|| route(path).pop())?
    };
    canonicalize(path).ok().or_else(dangling).or_else(beside)
}

/// `path` (absolute) with `.` and `..` taken as written, links not
/// followed: a grant as the user's words name it.
pub fn lexical_path(path: &Path) -> PathBuf {
    lexical(Path::new("/"), &reversed(path))
}

/// What a lift of `lift` opens: itself, or for a `HEAD` the repository
/// it names.
pub(crate) fn lift_region(lift: &Path) -> &Path {
    match lift.parent() {
        Some(dir) if lift.file_name() == Some(OsStr::new(HEAD)) => dir,
        _ => lift,
    }
}

/// Whether the user lifted the protection of the repository `dir` (it
/// holds a `HEAD`) for changes of `target`: a lift of `dir` or of a part
/// of it holding `target` ([`is_lifted`]), or a lift of its `HEAD`, which
/// names the repository (a grant of `dir` alone is a grant: a `HEAD` the
/// workspace shipped must not turn it into a lift).
pub(crate) fn repository_lifted(target: &Path, dir: &Path, lifted: &[PathBuf]) -> bool {
    is_lifted(target, dir, lifted)
        || (target.starts_with(dir) && lifted.iter().any(|lift| *lift == dir.join(HEAD)))
}

/// Symlinks followed in a row before giving up, as the kernel's `ELOOP`.
pub(crate) const MAX_LINKS: usize = 40;

/// Where `relative`, taken from the directory `dir` (a real host path), lands:
/// symlinks in every component but the last are followed, and in the last
/// one too when `follow`. The last component need not exist (the operation
/// may create it); a symlink there that dangles is followed to where its
/// target would be created.
pub(crate) fn locate(dir: &Path, relative: &str, follow: bool) -> io::Result<PathBuf> {
    let mut path = dir.join(relative);
    for _ in 0..MAX_LINKS {
        let (parent, name) = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => (parent.to_path_buf(), name.to_os_string()),
            // `.`, `..` or the root: the whole path names a directory.
            _ => return path.canonicalize(),
        };
        let candidate = parent.canonicalize()?.join(name);
        if !follow {
            return Ok(candidate);
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&candidate)?;
                path = match candidate.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            _ => return Ok(candidate),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Where `path` (absolute) would be: each component that exists resolved
/// through its links (a dangling link is followed to where its target would
/// be), the rest taken as written (`..` removes a component). For symlink
/// targets and protected paths, which need not exist.
pub(crate) fn locate_loose(path: &Path) -> PathBuf {
    route(path).pop().unwrap_or_else(|| PathBuf::from("/"))
}

/// The most entries toolhost reads, in all, looking for links in the
/// protected directories of a workspace when it starts.
const LINK_SCAN_ENTRIES: usize = 10_000;

/// Directories in a protected directory that are not looked into for
/// links: git's object store and reflogs (large, and never run) and environments whose
/// own links point inside them (protected anyway).
const NOT_SCANNED: &[&str] = &["objects", "lfs", "logs", "node_modules", ".venv", "store"];

/// Whether the protected directory `dir` is looked into for links: in the
/// workspace, but not toolhost's own state (which refuses links) nor an
/// environment.
fn scanned(workspace: &Path, dir: &Path) -> bool {
    let Ok(inside) = dir.strip_prefix(workspace) else {
        return false;
    };
    inside
        .components()
        .next()
        .is_some_and(|first| first.as_os_str() != crate::workspace::STATE_DIR)
        && !dir
            .file_name()
            .is_some_and(|name| NOT_SCANNED.iter().any(|skip| name == *skip))
        && std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir())
}

/// The symbolic links in `dir` and below (not following any), reading at
/// most `budget` entries.
fn links_in(dir: &Path, budget: &mut usize, links: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_symlink() {
            links.push(path);
        } else if kind.is_dir()
            && !NOT_SCANNED
                .iter()
                .any(|skip| entry.file_name() == std::ffi::OsStr::new(skip))
        {
            links_in(&path, budget, links);
        }
    }
}

/// Every path `path` (absolute) names on its way to where it lands, that
/// last: at each link met, the path as it would be if that link were a
/// directory (the link's own path with the rest of the way below it), then
/// where the links lead. Protecting them all keeps a protected path
/// reached through a shipped link (`.mcp.json -> cfg/m.json`, `cfg ->
/// real`) where it was: replacing a link on the way by a directory of the
/// same name would be a change of one of them.
pub(crate) fn route(path: &Path) -> Vec<PathBuf> {
    route_from(Path::new("/"), path)
}

/// [`route`] of `relative` from `base`, a real directory (no link on its
/// way): the guard asks it of a change's path as the tool named it, from
/// the directory of the tool's descriptor.
pub(crate) fn route_from(base: &Path, relative: &Path) -> Vec<PathBuf> {
    let mut out = base.to_path_buf();
    let mut rest: Vec<OsString> = relative
        .components()
        .rev()
        .map(|c| c.as_os_str().to_os_string())
        .collect();
    let mut way = Vec::new();
    let mut links = 0;
    while let Some(component) = rest.pop() {
        match Path::new(&component).components().next() {
            Some(Component::RootDir | Component::Prefix(_)) => out = PathBuf::from(&component),
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(Component::Normal(name)) => {
                let next = out.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                        links += 1;
                        way.push(lexical(&next, &rest));
                        let Ok(target) = std::fs::read_link(&next) else {
                            out = next;
                            continue;
                        };
                        if target.is_absolute() {
                            out = PathBuf::from("/");
                        }
                        rest.extend(
                            target
                                .components()
                                .rev()
                                .map(|c| c.as_os_str().to_os_string()),
                        );
                    }
                    _ => out = next,
                }
            }
        }
    }
    way.push(out);
    way
}

/// The components of `path` in reverse order, as [`lexical`] takes them.
fn reversed(path: &Path) -> Vec<OsString> {
    path.components()
        .rev()
        .map(|c| c.as_os_str().to_os_string())
        .collect()
}

/// `dir` with `rest` (components in reverse order) below it, `..` and `.`
/// taken as written: where the path would lead if nothing on it were a link.
fn lexical(dir: &Path, rest: &[OsString]) -> PathBuf {
    let mut path = dir.to_path_buf();
    for component in rest.iter().rev() {
        match Path::new(component).components().next() {
            Some(Component::ParentDir) => {
                path.pop();
            }
            Some(Component::Normal(name)) => path.push(name),
            _ => {}
        }
    }
    path
}

/// Where the host path `lexical` is: itself, where a link there leads (even
/// a dangling one, `.mcp.json -> m.json`: writing that changes it too), and
/// the path through each link on the way, so that no link on it can be
/// swapped for a directory.
fn host_paths(lexical: &Path) -> Vec<PathBuf> {
    let mut host = vec![lexical.to_path_buf()];
    for path in route(lexical) {
        if !host.contains(&path) {
            host.push(path);
        }
    }
    host
}

/// The real path of an open file or directory, from the kernel: always where
/// the descriptor is now, whatever path opened it and whatever moved since.
///
/// Read relative to `/proc/self/fd`, opened once: resolving the whole
/// `/proc/self/fd/N` (and its `self` link) on every open was most of what
/// the check cost, 3-7 µs of a 40 µs `read_file` call.
#[cfg(target_os = "linux")]
pub(crate) fn real_path(file: &std::fs::File) -> io::Result<PathBuf> {
    use std::ffi::OsString;
    use std::os::fd::{AsRawFd as _, OwnedFd};
    use std::os::unix::ffi::OsStringExt as _;
    use std::sync::OnceLock;

    static PROC_SELF_FD: OnceLock<io::Result<OwnedFd>> = OnceLock::new();
    let dir = PROC_SELF_FD
        .get_or_init(|| {
            rustix::fs::open(
                "/proc/self/fd",
                rustix::fs::OFlags::PATH
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(io::Error::from)
        })
        .as_ref()
        .map_err(|e| io::Error::new(e.kind(), e.to_string()))?;
    let target = rustix::fs::readlinkat(dir, file.as_raw_fd().to_string(), Vec::new())?;
    Ok(PathBuf::from(OsString::from_vec(target.into_bytes())))
}

/// Elsewhere the guard cannot know where a descriptor is, so every change
/// through one is refused (fail closed).
#[cfg(not(target_os = "linux"))]
pub(crate) fn real_path(_file: &std::fs::File) -> io::Result<PathBuf> {
    Err(io::Error::other(
        "toolhost can check file-system changes only on Linux",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn builtins() -> Vec<ProtectedPath> {
        let spec = |relative: &str, at_any_depth| ProtectedPath {
            relative: relative.into(),
            why: format!("{relative} matters"),
            at_any_depth,
            toolhosts_own: false,
        };
        vec![
            spec("toolhost.toml", false),
            spec(".toolhost", false),
            spec(".git", true),
        ]
    }

    fn workspace() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        fs::create_dir_all(root.join("src")).expect("mkdir");
        fs::write(root.join("toolhost.toml"), "").expect("write");
        (dir, root)
    }

    #[test]
    fn only_the_users_words_lift_never_what_the_workspace_holds() {
        let (_dir, root) = workspace();
        fs::write(root.join("src/HEAD"), "ref: refs/heads/main\n").expect("write");
        fs::create_dir_all(root.join("docs")).expect("mkdir");
        let mut paths = builtins();
        paths.push(ProtectedPath {
            relative: HEAD.into(),
            why: "git".into(),
            at_any_depth: true,
            toolhosts_own: false,
        });
        paths.push(ProtectedPath {
            relative: ".vscode".into(),
            why: "tasks".into(),
            at_any_depth: true,
            toolhosts_own: false,
        });
        symlink("docs", root.join(".vscode")).expect("symlink");
        let protection = Protection::new(&root, paths, &[]);
        let lifts = |written: &str, lands: &str| {
            protection.lifted_by(&root.join(written), &root.join(lands), &[])
        };
        // What the workspace holds makes these protected, not the words.
        assert!(protection.names_protected(&root.join("src")));
        assert!(!lifts("src", "src"));
        assert!(protection.names_protected(&root.join("docs")));
        assert!(!lifts("docs", "docs"));
        // The words name them.
        assert!(lifts("src/HEAD", "src/HEAD"));
        assert!(lifts(".vscode", "docs"));
        assert!(lifts("./src/../.git", ".git"));
        assert!(lifts("toolhost.toml", "toolhost.toml"));
        // Words naming something that is not protected lift nothing.
        assert!(!lifts("src/.git/../main.rs", "src/main.rs"));
        // One protection named is not another lifted: `.vscode` leads to a
        // repository, and a `node_modules -> .git` is not `.git`.
        fs::write(root.join("docs/HEAD"), "ref: refs/heads/main\n").expect("write");
        assert!(!lifts(".vscode", "docs"));
        assert!(protection.lifted_by(
            &root.join(".vscode"),
            &root.join("docs"),
            &[root.join("docs/HEAD")]
        ));
        symlink(".git", root.join("node_modules")).expect("symlink");
        assert!(!lifts("node_modules", ".git"));
        assert!(lifts(".git", ".git"));
        // A refusal names every flag its path needs.
        let hit = protection
            .covering(&root.join("docs/tasks.json"), &[], &root)
            .expect("protected");
        assert_eq!(hit.lift, [".vscode", "docs/HEAD"]);
        let hit = protection
            .covering(&root.join(".git/config"), &[], &root)
            .expect("protected");
        assert_eq!(hit.lift, [".git"]);
        // A lift of a `HEAD` lifts the repository it marks, and no other.
        let lifted = [root.join("src/HEAD")];
        assert!(repository_lifted(
            &root.join("src/config"),
            &root.join("src"),
            &lifted
        ));
        assert!(!repository_lifted(
            &root.join("docs/config"),
            &root.join("docs"),
            &lifted
        ));
        assert!(!repository_lifted(
            &root.join("src/config"),
            &root.join("src"),
            &[]
        ));
    }

    #[test]
    fn every_route_to_a_protected_path_is_covered() {
        let (_dir, root) = workspace();
        symlink(".git", root.join("src/../shipped")).expect("symlink");
        let protection = Protection::new(&root, builtins(), &RecordPath::of_workspace());
        for (relative, follow) in [
            ("toolhost.toml", false),
            ("./toolhost.toml", false),
            (".git/hooks/pre-commit", false),
            ("src/../.git/config", false),
            ("shipped/hooks/pre-commit", false),
            ("shipped", true),
            (".toolhost/plugins/evil.wasm", false),
            ("vendor/.git/config", false),
            (".GIT/config", false),
            ("src/.Git/hooks/x", false),
        ] {
            if let Some(parent) = Path::new(relative).parent() {
                let _ = fs::create_dir_all(root.join(parent));
            }
            let target = locate(&root, relative, follow).expect(relative);
            assert!(
                protection.covering(&target, &[], &root).is_some(),
                "{relative} -> {}",
                target.display()
            );
        }
        let hit = protection
            .covering(&root.join("vendor/.git/hooks"), &[], &root)
            .expect("nested");
        assert_eq!(hit.protected, "vendor/.git");
    }

    #[test]
    fn a_path_of_two_components_is_protected_at_any_depth_with_what_holds_it() {
        let (_dir, root) = workspace();
        let mut paths = builtins();
        paths.push(ProtectedPath {
            relative: ".github/hooks".into(),
            why: "hooks".into(),
            at_any_depth: true,
            toolhosts_own: false,
        });
        let protection = Protection::new(&root, paths, &RecordPath::of_workspace());
        for (relative, hit) in [
            (".github/hooks", ".github/hooks"),
            (".github/hooks/a.json", ".github/hooks"),
            ("sub/.GitHub/Hooks/a.json", "sub/.GitHub/Hooks"),
        ] {
            let found = protection.covering(&root.join(relative), &[], &root);
            assert_eq!(found.map(|h| h.protected), Some(hit.into()), "{relative}");
        }
        for relative in [
            ".github",
            ".github/workflows/ci.yml",
            "hooks",
            "sub/github/hooks",
        ] {
            assert_eq!(
                protection.covering(&root.join(relative), &[], &root),
                None,
                "{relative}"
            );
        }
        // Moving `.github` away (or something onto it) moves its hooks.
        let held = protection.touching(&root.join("sub/.github"), &[], &root);
        assert_eq!(held.map(|h| h.protected), Some("sub/.github/hooks".into()));
        assert_eq!(
            protection.touching(&root.join("sub/github"), &[], &root),
            None
        );
        // A lift of the path lifts it.
        let lifted = [root.join(".github/hooks")];
        assert_eq!(
            protection.covering(&root.join(".github/hooks/a.json"), &lifted, &root),
            None
        );
        assert_eq!(
            protection.touching(&root.join(".github"), &lifted, &root),
            None
        );
    }

    #[test]
    fn the_rest_of_the_workspace_is_not_covered() {
        let (_dir, root) = workspace();
        let protection = Protection::new(&root, builtins(), &RecordPath::of_workspace());
        for relative in [
            "src/main.rs",
            "toolhost.toml.bak",
            ".gitignore",
            "src/git",
            ".",
        ] {
            let target = locate(&root, relative, false).expect(relative);
            assert_eq!(protection.covering(&target, &[], &root), None, "{relative}");
        }
    }

    #[test]
    fn holding_a_protected_path_is_touching_it_and_lifts_are_per_directory() {
        let (_dir, root) = workspace();
        let protection = Protection::new(&root, builtins(), &RecordPath::of_workspace());
        assert!(protection.touching(&root, &[], &root).is_some());
        assert_eq!(protection.covering(&root, &[], &root), None);
        let lifted = [root.join(".git/hooks")];
        assert_eq!(
            protection.covering(&root.join(".git/hooks/pre-commit"), &lifted, &root),
            None
        );
        assert!(
            protection
                .covering(&root.join(".git/config"), &lifted, &root)
                .is_some()
        );
    }

    #[test]
    fn names_at_any_depth_count_only_below_the_base() {
        let (_dir, root) = workspace();
        let inside_git = root.join(".git/work");
        fs::create_dir_all(&inside_git).expect("mkdir");
        let protection = Protection::new(&inside_git, builtins(), &RecordPath::of_workspace());
        // A workspace that lies in a `.git` directory is not all protected,
        assert_eq!(
            protection.covering(&inside_git.join("src/a.rs"), &[], &inside_git),
            None
        );
        // but a `.git` below it is, and anywhere when there is no base.
        assert!(
            protection
                .covering(&inside_git.join("sub/.git/config"), &[], &inside_git)
                .is_some()
        );
        assert!(
            protection
                .covering(&inside_git.join("src/a.rs"), &[], Path::new("/elsewhere"))
                .is_some()
        );
    }

    #[test]
    fn a_directory_holding_a_head_is_protected_inside() {
        let (_dir, root) = workspace();
        let protection = Protection::new(&root, builtins(), &RecordPath::of_workspace());
        let bare = root.join("src/fixture.git");
        fs::create_dir_all(&bare).expect("mkdir");
        let config = bare.join("config");
        assert_eq!(protection.repository_holding(&config, &[], &root), None);
        // `objects/` and `refs/` may be elsewhere (`commondir`): a `HEAD`
        // is enough.
        fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        let hit = protection
            .repository_holding(&config, &[], &root)
            .expect("a repository");
        assert_eq!(hit.protected, "src/fixture.git");
        assert_eq!(
            protection.repository_holding(&bare.join("hooks/pre-commit"), &[], &root),
            Some(hit.clone())
        );
        // Moving it whole is not a change inside it; a lift lifts it.
        assert_eq!(protection.repository_holding(&bare, &[], &root), None);
        assert_eq!(
            protection.repository_holding(&config, std::slice::from_ref(&bare), &root),
            None
        );
    }

    #[test]
    fn a_lift_lifts_only_the_protection_it_names() {
        let (_dir, root) = workspace();
        let protection = Protection::new(&root, builtins(), &RecordPath::of_workspace());
        let lifted = [root.join(".toolhost")];
        assert_eq!(
            protection.covering(&root.join(".toolhost/plugins/x.wasm"), &lifted, &root),
            None
        );
        // A `.git` made inside the lifted directory is still protected.
        let hit = protection
            .covering(&root.join(".toolhost/r/.git/config"), &lifted, &root)
            .expect("nested .git");
        assert_eq!(hit.protected, ".toolhost/r/.git");
        // A lift of a path that merely holds a protected one lifts nothing.
        assert!(
            protection
                .covering(&root.join("src/.git/config"), &[root.join("src")], &root)
                .is_some()
        );
    }

    #[test]
    fn a_shipped_link_at_a_protected_name_protects_where_it_leads() {
        let (_dir, root) = workspace();
        fs::remove_file(root.join("toolhost.toml")).expect("rm");
        symlink("cfg/real.toml", root.join("toolhost.toml")).expect("symlink");
        let protection = Protection::new(&root, builtins(), &RecordPath::of_workspace());
        // Dangling: `cfg` does not exist yet, and making it must not let a
        // tool write what the link shows.
        let hit = protection
            .covering(&root.join("cfg/real.toml"), &[], &root)
            .expect("the link's target");
        assert_eq!(hit.protected, "toolhost.toml");
        assert!(protection.touching(&root.join("cfg"), &[], &root).is_some());
    }

    #[test]
    fn a_dangling_symlink_is_followed_to_where_it_would_create() {
        let (_dir, root) = workspace();
        // Relative to the link's directory, where `.git/hooks` is missing:
        // the kernel could not create it either.
        symlink(".git/hooks/pre-commit", root.join("src/hook")).expect("symlink");
        let missing = locate(&root, "src/hook", true).expect_err("no src/.git/hooks");
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        symlink("../.git/hooks/pre-commit", root.join("src/hook2")).expect("symlink");
        let target = locate(&root, "src/hook2", true).expect("locate");
        assert_eq!(target, root.join(".git/hooks/pre-commit"));
        assert_eq!(
            locate(&root, "src/hook2", false).expect("locate"),
            root.join("src/hook2")
        );
    }

    #[test]
    fn loose_locations_resolve_what_exists_and_take_the_rest_as_written() {
        let (_dir, root) = workspace();
        // A dangling link is followed to where its target would be.
        symlink("../gone/deeper", root.join("src/dangling")).expect("symlink");
        assert_eq!(
            locate_loose(&root.join("src/dangling/x")),
            root.join("gone/deeper/x")
        );
        assert_eq!(
            locate_loose(&root.join("src/new/../../.git/x")),
            root.join(".git/x")
        );
        assert_eq!(
            locate_loose(&root.join("src/../..")),
            root.parent().expect("parent")
        );
    }

    #[test]
    fn a_route_names_the_path_through_every_link_on_the_way() {
        let (_dir, root) = workspace();
        fs::create_dir_all(root.join("real/deep")).expect("mkdir");
        symlink("real/deep", root.join("cfg")).expect("symlink");
        symlink("cfg/../m.json", root.join(".mcp.json")).expect("symlink");
        // `cfg/..` is `real` through the link, the workspace without it.
        assert_eq!(
            route(&root.join(".mcp.json")),
            [
                root.join(".mcp.json"),
                root.join("m.json"),
                root.join("real/m.json"),
            ]
        );
        assert_eq!(route(&root.join("src/x")), [root.join("src/x")]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_descriptor_knows_where_it_is_after_a_rename() {
        let (_dir, root) = workspace();
        fs::create_dir(root.join("a")).expect("mkdir");
        let file = fs::File::open(root.join("a")).expect("open dir");
        fs::rename(root.join("a"), root.join("b")).expect("rename");
        assert_eq!(real_path(&file).expect("real path"), root.join("b"));
    }
}
