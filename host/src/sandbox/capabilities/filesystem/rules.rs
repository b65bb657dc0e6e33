//! What the guard enforces for one tool ([`FsRules`]), decided from host
//! paths and held directories: the protected path a change reaches (by
//! name, lifted or not, and by the git repository around it, nested
//! repositories' hooks and includes among it), the grants a path lies in,
//! toolhost's records a path lies in, and a file's other names
//! ([`other_names`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::denial::Denial;
use crate::sandbox::capabilities::git_config::{
    self as git, COMMON_WHY, GitRead, INCLUDED_WHY, NESTED_HOOKS_WHY, UNREADABLE_WHY,
};
use crate::sandbox::capabilities::protect::{self, Hit, Protection};
use crate::sandbox::capabilities::{Access, Grant, beneath};

/// Directories walked up from a change looking for a `HEAD`, more than any
/// path inside a grant has (`PATH_MAX` allows 2048 one-letter components).
const MAX_DEPTH: usize = 4096;

/// What the guard enforces for one tool, built once when the tool loads.
#[derive(Debug)]
pub(crate) struct FsRules {
    protection: Arc<Protection>,
    /// Protected directories the user granted this tool by name.
    lifted: Vec<PathBuf>,
    /// The tool's grants (their host paths for symlink targets and hard
    /// links, all of them for the refusal of a change where the tool may
    /// only read).
    grants: Vec<Grant>,
    /// The configuration of each nested repository a change landed in, by
    /// its working tree's host path: read again only when a file it read
    /// changed.
    nested: std::sync::Mutex<std::collections::HashMap<PathBuf, Nested>>,
    /// Whether this tool reads the whole results toolhost saved (only the
    /// standard `read_file` does).
    reads_outputs: bool,
    /// Whether the tool declares itself read-only.
    declared_read_only: bool,
    /// Every tool's lifts: a lift is for what is there, so no tool (lifted
    /// or not) moves a directory into one.
    every_lift: EveryLift,
}

/// The lifts of every tool of one sandbox so far, shared: one tool must not
/// swap a repository into the path another may change.
#[derive(Debug, Clone, Default)]
pub(crate) struct EveryLift(Arc<std::sync::RwLock<Vec<PathBuf>>>);

impl EveryLift {
    /// Adds `lifted` (a tool's lifts, as configured or widened).
    pub(crate) fn add(&self, lifted: &[PathBuf]) {
        let mut every = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for lift in lifted {
            if !every.contains(lift) {
                every.push(lift.clone());
            }
        }
    }

    fn all(&self) -> Vec<PathBuf> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Nested repositories whose configuration [`FsRules`] keeps at most;
/// one more empties the cache.
const MAX_NESTED_CACHED: usize = 256;

/// A nested repository's configuration as read, and how each file asked
/// for was just before (`None`: not there).
#[derive(Debug)]
struct Nested {
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    read: Arc<GitRead>,
}

/// What tells a file's version apart: device, inode, change time and size
/// (a write or a rename onto it changes one).
type Stamp = (u64, u64, i64, i64, i64);

/// The [`Stamp`] of `path` from the held `dir` (links followed, as git
/// follows them); `None` when nothing is there.
// The `stat` fields' types differ by platform.
#[allow(clippy::unnecessary_cast)]
fn stamp(dir: &std::fs::File, path: &Path) -> std::io::Result<Option<Stamp>> {
    match rustix::fs::statat(dir, path, rustix::fs::AtFlags::empty()) {
        Ok(stat) => Ok(Some((
            stat.st_dev as u64,
            stat.st_ino as u64,
            stat.st_ctime as i64,
            stat.st_ctime_nsec as i64,
            stat.st_size as i64,
        ))),
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// How many names (hard links) the regular file `stat` has, when it has
/// more than one. A change through one name is a change under all of them,
/// wherever they are (a protected path, a nested `.vscode`, a file outside
/// every grant), and nothing lists a file's other names: such a file is
/// changed through none, whatever the tool's grants or lifts. Removing or
/// renaming a name changes no other.
// The `stat` fields' types differ by platform.
#[allow(clippy::unnecessary_cast)]
pub(super) fn other_names(stat: &rustix::fs::Stat) -> Option<u64> {
    let file = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    let names = stat.st_nlink as u64;
    (file == rustix::fs::FileType::RegularFile && names > 1).then_some(names)
}

impl FsRules {
    pub(crate) fn new(protection: Arc<Protection>, lifted: Vec<PathBuf>, grants: &[Grant]) -> Self {
        FsRules {
            protection,
            lifted,
            grants: grants.to_vec(),
            nested: std::sync::Mutex::default(),
            reads_outputs: false,
            declared_read_only: false,
            every_lift: EveryLift::default(),
        }
    }

    /// These rules, knowing every tool's lifts (`every_lift`).
    pub(crate) fn with_every_lift(mut self, every_lift: EveryLift) -> Self {
        self.every_lift = every_lift;
        self
    }

    /// These rules, for a tool that declares itself read-only.
    pub(crate) fn declared_read_only(mut self) -> Self {
        self.declared_read_only = true;
        self
    }

    /// These rules, for the tool that may read the saved whole results
    /// (the standard `read_file`, which the model pages through them with).
    pub(crate) fn reading_saved_outputs(mut self) -> Self {
        self.reads_outputs = true;
        self
    }

    /// The refusal of opening or listing the real host path `at`, when it
    /// lies in a record of toolhost's that this tool may not read.
    pub(super) fn record_refusal(&self, at: &Path) -> Option<Denial> {
        let hit = self.protection.record_holding(at, self.reads_outputs)?;
        Some(Denial::Record {
            path: self.shown(at),
            record: hit.record,
            kind: hit.kind,
        })
    }

    /// The protected path a change of the host path `target` would reach:
    /// one of the protected paths, or a directory holding a `HEAD` around
    /// it, found by path. For early refusals and descriptors; the guard's
    /// changes of a path ask [`FsRules::covered`] and
    /// [`FsRules::repository_around`] instead.
    pub(crate) fn protected(&self, target: &Path) -> Option<Hit> {
        let base = self.base(target);
        self.protection
            .covering(target, &self.lifted, base)
            .or_else(|| {
                self.protection
                    .repository_holding(target, &self.lifted, base)
            })
    }

    /// The refusal of a change of the directory at host path `target`,
    /// found by path ([`FsRules::protected`]): for one held open by
    /// `set-times-at` of `.` or `..`.
    pub(super) fn protected_refusal(&self, target: &Path) -> Option<Denial> {
        let hit = self.protected(target)?;
        let path = self.shown(target);
        Some(Denial::Protected { path, hit })
    }

    /// The refusal of a change of the file at host path `target` (following
    /// a link in its last name, as an open for writing does) when that file
    /// has other names ([`other_names`]).
    pub(crate) fn hard_linked(&self, target: &Path) -> Option<Denial> {
        let names = other_names(&rustix::fs::stat(target).ok()?)?;
        let path = self.shown(target);
        Some(Denial::HardLinked { path, names })
    }

    /// The refusal of a change through an open descriptor (its contents or
    /// times) of the file at host path `target`, whose `stat` (of the open
    /// file itself: a name added since the open counts) is given for a
    /// file: it lies in a protected path, or it has other names.
    pub(super) fn descriptor_refusal(
        &self,
        target: &Path,
        stat: Option<&rustix::fs::Stat>,
    ) -> Option<Denial> {
        let hit = self.covered(target).or_else(|| {
            self.protection
                .repository_holding(target, &self.lifted, self.base(target))
        });
        if let Some(hit) = hit {
            let path = self.shown(target);
            return Some(Denial::Protected { path, hit });
        }
        let names = stat.and_then(other_names)?;
        let path = self.shown(target);
        Some(Denial::HardLinked { path, names })
    }

    /// The protection of the source of a hard link (host path `source`) as
    /// if nothing were lifted, when the new name (`new`) is not under that
    /// same protection.
    pub(super) fn protected_whatever_lifted(&self, source: &Path, new: &Path) -> Option<Hit> {
        let unlifted = |target: &Path| {
            self.protection
                .covering(target, &[], self.base(target))
                .or_else(|| {
                    self.protection
                        .repository_holding(target, &[], self.base(target))
                })
        };
        let hit = unlifted(source)?;
        let kept = unlifted(new).is_some_and(|there| there.protected == hit.protected);
        (!kept).then_some(hit)
    }

    /// The refusal of moving the directory at host path `from` to `to`
    /// when `to` lies in a protection the user lifted for this tool, or
    /// above it, and `from` does not lie in it: a lift is for what is
    /// there, and a repository moved in (or a directory holding one moved
    /// onto the lift's parent: `mv web app` under a lift of `app/.vscode`)
    /// would have its config and hooks changed under it.
    pub(super) fn moved_into_a_lift(&self, from: &Path, to: &Path) -> Option<Denial> {
        let every = self.every_lift.all();
        let region = self
            .lifted
            .iter()
            .chain(&every)
            .map(|lift| protect::lift_region(lift))
            .find(|region| {
                (to.starts_with(region) || region.starts_with(to)) && !from.starts_with(region)
            })?;
        Some(Denial::IntoLift {
            path: self.shown(from),
            lifted: self.shown(region),
        })
    }

    /// The refusal of a symbolic link at host path `link` when it is where
    /// a protected path starts, lifted or not: a lift lets a tool change
    /// what is there, but a link there (`app/.vscode -> vsc`) would make
    /// what it leads to what other programs read, and no rule protects
    /// that in a later run or for another tool. A link deeper in (a
    /// virtualenv's `.venv/bin/python`) leads nowhere else: no link climbs.
    pub(super) fn link_at_protected(&self, link: &Path) -> Option<Denial> {
        let (hit, _) = self
            .protection
            .hits_on(link)
            .into_iter()
            .find(|(_, at)| at == link)?;
        Some(Denial::LinkAtProtected {
            link: self.shown(link),
            hit,
        })
    }

    /// The protected path `target` is or lies in (names and paths only).
    pub(super) fn covered(&self, target: &Path) -> Option<Hit> {
        self.protection
            .covering(target, &self.lifted, self.base(target))
    }

    /// Like [`FsRules::covered`], and also when `target` holds a protected
    /// path (moving or removing it, or making it a link, would take that
    /// along).
    pub(super) fn touched(&self, target: &Path) -> Option<Hit> {
        self.protection
            .touching(target, &self.lifted, self.base(target))
    }

    /// The directory holding a `HEAD` that `parent` (a held handle, the
    /// directory a change of `target` happens in) is or lies in, up to the
    /// base, asked through handles: `parent` itself, then each `..` from
    /// it. Asking by path would race a rename of the repository as a whole
    /// (allowed) and a decoy put in its place; a held directory cannot move
    /// into or out of one, since that is a change inside it. On the way,
    /// each directory holding a `.git` below the workspace is a nested
    /// repository, whose hooks directory and included config files a
    /// change may not reach ([`FsRules::nested_repository`]); `holds`: the
    /// change moves, removes or replaces `target` with all below it.
    pub(super) fn repository_around(
        &self,
        parent: &std::fs::File,
        target: &Path,
        holds: bool,
    ) -> Option<Hit> {
        let base = self.base(target);
        // `target` is the parent's real path plus the name. The walk asks
        // `HEAD`, `../HEAD`, `../../HEAD`, ... from the held parent, as many
        // levels as that path lies below the base (the paths are for the
        // report only). A rename meanwhile cannot add a directory holding a
        // `HEAD` above `parent` (that is a change inside it), so a walk that
        // ends above the base, or short of it, misses none. It opens no
        // descriptor, and anything but "no such entry" counts as a `HEAD`
        // (fail closed: a guest that used up the descriptors must not make
        // the walk stop early).
        let here = target.parent()?;
        let levels = match here.strip_prefix(base) {
            Ok(below) => below.components().count(),
            Err(_) => 0,
        };
        if levels > MAX_DEPTH {
            return Some(self.protection.repository_hit(here));
        }
        let workspace = self.protection.workspace();
        let mut up = String::new();
        let mut probe = String::new();
        let mut dir = here;
        for level in 0..=levels {
            probe.clear();
            probe.push_str(&up);
            probe.push_str(protect::HEAD);
            let holds_head = !matches!(beneath::entry_exists(parent, &probe), Ok(false));
            if holds_head && !protect::repository_lifted(target, dir, &self.lifted) {
                return Some(self.protection.repository_hit(dir));
            }
            // The workspace's own repository was read at start.
            if dir != workspace {
                probe.truncate(up.len());
                probe.push_str(".git");
                if !matches!(beneath::entry_exists(parent, &probe), Ok(false))
                    && let Some(hit) = self.nested_repository(parent, &up, dir, target, holds)
                {
                    return Some(hit);
                }
            }
            if level < levels {
                up.push_str("../");
                dir = dir.parent().unwrap_or(dir);
            }
        }
        None
    }

    /// What a change of `target` reaches of the repository whose working
    /// tree is `top` (`up` from the held `parent`): the hooks directory its
    /// configuration names (or a relative one of the user's), or a file it
    /// includes; the whole of it when its configuration cannot be read.
    /// Only what lies in its working tree is found this way: a change
    /// elsewhere never walks up through it.
    fn nested_repository(
        &self,
        parent: &std::fs::File,
        up: &str,
        top: &Path,
        target: &Path,
        holds: bool,
    ) -> Option<Hit> {
        let read = self.nested_config(parent, up, top);
        if !read.unreadable.is_empty() {
            return Some(Hit::fixed(self.shown(top), UNREADABLE_WHY));
        }
        let reaches = |path: &Path| {
            (target.starts_with(path) || (holds && path.starts_with(target)))
                && !protect::is_lifted(target, path, &self.lifted)
        };
        let every = self.protection.every_repository();
        let home = every.home.as_deref();
        for value in read.hooks.iter().chain(&every.hooks) {
            let hooks = git::hooks_dir(top, value, home);
            if reaches(&hooks) {
                return Some(Hit::fixed(self.shown(&hooks), NESTED_HOOKS_WHY));
            }
        }
        if let Some(common) = &read.common {
            let common = git::lexical(&top.join(common));
            if reaches(&common) {
                return Some(Hit::fixed(self.shown(&common), COMMON_WHY));
            }
        }
        read.included.iter().find_map(|file| {
            let file = git::lexical(&top.join(file));
            reaches(&file).then(|| Hit::fixed(self.shown(&file), INCLUDED_WHY))
        })
    }

    /// The configuration of the repository at `top` (`up` from `parent`),
    /// from the cache while every file it read is as it was, else read
    /// through the held handle (bounded, never blocking) and kept.
    fn nested_config(&self, parent: &std::fs::File, up: &str, top: &Path) -> Arc<GitRead> {
        let at = |path: &Path| Path::new(up).join(path);
        let mut cache = self
            .nested
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(cached) = cache.get(top)
            && cached
                .stamps
                .iter()
                .all(|(path, was)| stamp(parent, &at(path)).is_ok_and(|now| now == *was))
        {
            return Arc::clone(&cached.read);
        }
        // Each file's stamp is taken before it is read: one changed after
        // it is read again next time.
        let mut stamps = Vec::new();
        let mut stamp_ok = true;
        let mut reader = |path: &Path| {
            match stamp(parent, &at(path)) {
                Ok(now) => stamps.push((path.to_path_buf(), now)),
                Err(_) => stamp_ok = false,
            }
            crate::text_file::read_text_at(parent, &at(path))
        };
        let home = self.protection.every_repository().home.as_deref();
        let read = Arc::new(git::read_repository(Path::new(""), home, &mut reader));
        if stamp_ok && read.unreadable.is_empty() {
            if cache.len() >= MAX_NESTED_CACHED {
                cache.clear();
            }
            cache.insert(
                top.to_path_buf(),
                Nested {
                    stamps,
                    read: Arc::clone(&read),
                },
            );
        }
        read
    }

    /// Where names protected at any depth start to count for `target`: the
    /// workspace, else the grant holding it, else the root (fail closed).
    fn base(&self, target: &Path) -> &Path {
        let workspace = self.protection.workspace();
        if target.starts_with(workspace) {
            return workspace;
        }
        self.grants
            .iter()
            .map(|grant| grant.host_path.as_path())
            .filter(|dir| target.starts_with(dir))
            .max_by_key(|dir| dir.as_os_str().len())
            .unwrap_or(Path::new("/"))
    }

    /// `path` as the model knows it.
    pub(crate) fn shown(&self, path: &Path) -> String {
        self.protection.shown(path)
    }

    /// The refusal of a change of `path` in a directory the tool may only
    /// read.
    pub(super) fn read_only(&self, path: &Path) -> Denial {
        Denial::ReadOnly {
            path: self.shown(path),
            grants: self.grants.clone(),
            declared: self.declared_read_only,
        }
    }

    /// Whether `path` lies in a writable grant (a hard link's source must).
    pub(super) fn may_write(&self, path: &Path) -> bool {
        self.grants
            .iter()
            .any(|grant| grant.access == Access::Write && path.starts_with(&grant.host_path))
    }

    /// Whether `path` lies in any grant (a link's target must).
    pub(super) fn may_use(&self, path: &Path) -> bool {
        self.grants
            .iter()
            .any(|grant| path.starts_with(&grant.host_path))
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::Workspace;
    use super::*;
    use crate::sandbox::capabilities::protect::Record;
    use std::fs;

    /// Where `relative` lands from the workspace, as the guard resolves it.
    fn landing(workspace: &Workspace, relative: &str) -> PathBuf {
        protect::locate(&workspace.root, relative, false).expect(relative)
    }

    #[test]
    fn a_write_into_git_hooks_is_protected_by_every_route() {
        let workspace = Workspace::new();
        workspace.symlink(".git", "shipped");
        let rules = workspace.rules();
        for route in [
            ".git/hooks/pre-commit",
            "./.git/hooks/pre-commit",
            "src/../.git/hooks/pre-commit",
            "shipped/hooks/pre-commit",
        ] {
            let target = landing(&workspace, route);
            let hit = rules.covered(&target).expect(route);
            assert!(
                hit.protected.eq_ignore_ascii_case(".git"),
                "{route}: {hit:?}"
            );
            assert!(rules.protected(&target).is_some(), "{route}");
        }
        workspace.mkdir("src/hooks");
        // Names are matched as a case-insensitive file system would.
        assert!(
            rules
                .covered(&workspace.path(".GIT/hooks/pre-commit"))
                .is_some()
        );
        // The good case: the same write elsewhere.
        assert_eq!(
            rules.covered(&landing(&workspace, "src/hooks/pre-commit")),
            None
        );
        assert_eq!(rules.protected(&workspace.path("src/main.rs")), None);
    }

    #[test]
    fn moving_what_holds_a_protected_path_touches_it() {
        let workspace = Workspace::new();
        workspace.mkdir("app/.github/hooks");
        workspace.mkdir("vendor/lib/.git");
        let rules = workspace.rules();
        let github = workspace.path("app/.github");
        assert_eq!(
            rules.covered(&github),
            None,
            "a change at it is not one in it"
        );
        let hit = rules.touched(&github).expect("moving it moves its hooks");
        assert_eq!(hit.protected, "app/.github/hooks");
        assert!(
            rules.touched(&workspace.root).is_some(),
            "the workspace holds them all"
        );
        // The good cases: a directory holding nothing protected, and a
        // nested repository moved as a whole (no change inside it).
        assert_eq!(rules.touched(&workspace.path("src")), None);
        assert_eq!(rules.touched(&workspace.path("vendor")), None);
    }

    #[test]
    fn a_lift_lifts_only_what_it_names() {
        let workspace = Workspace::new();
        let grants = [workspace.grant(".", Access::Write)];
        let rules = workspace.rules_with(vec![".git/hooks"], &grants);
        assert_eq!(
            rules.covered(&workspace.path(".git/hooks/pre-commit")),
            None
        );
        for still in [".git/config", "toolhost.toml", ".toolhost/plugins/p.wasm"] {
            assert!(rules.covered(&workspace.path(still)).is_some(), "{still}");
        }
        // A lift of one protection lifts none that lies around it.
        let rules = workspace.rules_with(vec![".claude"], &grants);
        assert!(
            rules
                .covered(&workspace.path(".claude/.git/config"))
                .is_some()
        );
        assert_eq!(
            rules.covered(&workspace.path(".claude/settings.json")),
            None
        );
    }

    #[test]
    fn a_change_in_a_directory_holding_a_head_is_in_a_repository() {
        let workspace = Workspace::new();
        workspace.write("vendor/bare/HEAD", "ref: refs/heads/main\n");
        workspace.mkdir("vendor/bare/objects/ab");
        workspace.mkdir("vendor/plain/objects");
        let rules = workspace.rules();
        let held = |relative: &str| fs::File::open(workspace.path(relative)).expect("held");
        let target = workspace.path("vendor/bare/objects/ab/cdef");
        let parent = held("vendor/bare/objects/ab");
        let hit = rules
            .repository_around(&parent, &target, false)
            .expect("the bare repository around it");
        assert_eq!(hit.protected, "vendor/bare");
        assert_eq!(
            rules.protected(&target).map(|hit| hit.protected),
            Some(hit.protected)
        );
        // The good case: the same change where no `HEAD` is.
        let target = workspace.path("vendor/plain/objects/x");
        let parent = held("vendor/plain/objects");
        assert_eq!(rules.repository_around(&parent, &target, false), None);
        assert_eq!(rules.protected(&target), None);
    }

    #[test]
    fn a_nested_repositorys_hooks_path_and_includes_are_protected() {
        let workspace = Workspace::new();
        workspace.write(
            "vendor/x/.git/config",
            "[core]\n\thooksPath = githooks\n[include]\n\tpath = ../shared.cfg\n",
        );
        workspace.write("vendor/x/shared.cfg", "");
        workspace.mkdir("vendor/x/githooks");
        workspace.mkdir("vendor/x/src");
        let rules = workspace.rules();
        let held = |relative: &str| fs::File::open(workspace.path(relative)).expect("held");
        let hooks = workspace.path("vendor/x/githooks/pre-commit");
        let hit = rules
            .repository_around(&held("vendor/x/githooks"), &hooks, false)
            .expect("its hooks");
        assert_eq!(hit.protected, "vendor/x/githooks");
        assert_eq!(hit.why, NESTED_HOOKS_WHY);
        let included = workspace.path("vendor/x/shared.cfg");
        let hit = rules
            .repository_around(&held("vendor/x"), &included, false)
            .expect("what its config includes");
        assert_eq!(hit.protected, "vendor/x/shared.cfg");
        assert_eq!(hit.why, INCLUDED_WHY);
        // Moving the directory that holds its hooks moves them too.
        let githooks = workspace.path("vendor/x/githooks");
        assert!(
            rules
                .repository_around(&held("vendor/x"), &githooks, true)
                .is_some()
        );
        // The good case: the rest of its working tree.
        let source = workspace.path("vendor/x/src/lib.rs");
        assert_eq!(
            rules.repository_around(&held("vendor/x/src"), &source, false),
            None
        );
    }

    #[test]
    fn a_nested_repository_whose_config_cannot_be_read_is_protected_whole() {
        let workspace = Workspace::new();
        workspace.mkdir("vendor/y/.git");
        workspace.mkdir("vendor/y/src");
        fs::write(
            workspace.path("vendor/y/.git/config"),
            b"[core]\n\xff\xfe\n",
        )
        .expect("write");
        let rules = workspace.rules();
        let parent = fs::File::open(workspace.path("vendor/y/src")).expect("held");
        let target = workspace.path("vendor/y/src/lib.rs");
        let hit = rules
            .repository_around(&parent, &target, false)
            .expect("fail closed");
        assert_eq!(hit.protected, "vendor/y");
        assert_eq!(hit.why, UNREADABLE_WHY);
        // The good case: the same change once git could read it.
        fs::write(workspace.path("vendor/y/.git/config"), "[core]\n").expect("write");
        assert_eq!(rules.repository_around(&parent, &target, false), None);
    }

    #[test]
    fn toolhosts_records_are_not_opened() {
        let workspace = Workspace::new();
        let rules = workspace.rules();
        let session = workspace.path(".toolhost/sessions/s.jsonl");
        match rules.record_refusal(&session) {
            Some(Denial::Record { path, record, kind }) => {
                assert_eq!(path, ".toolhost/sessions/s.jsonl");
                assert_eq!(record, ".toolhost/sessions");
                assert_eq!(kind, Record::Sessions);
            }
            other => panic!("not refused as a record: {other:?}"),
        }
        let output = workspace.path(".toolhost/outputs/o.txt");
        assert!(matches!(
            rules.record_refusal(&output),
            Some(Denial::Record {
                kind: Record::Outputs,
                ..
            })
        ));
        // Only the tool that pages through saved results reads them, and
        // still no session.
        let reader = workspace.rules().reading_saved_outputs();
        assert_eq!(reader.record_refusal(&output), None);
        assert!(reader.record_refusal(&session).is_some());
        assert_eq!(rules.record_refusal(&workspace.path("src/main.rs")), None);
    }

    #[test]
    fn a_file_with_two_names_is_changed_through_neither() {
        let workspace = Workspace::new();
        let rules = workspace.rules();
        let (one, two) = (workspace.path("src/one.rs"), workspace.path("src/two.rs"));
        fs::write(&one, "").expect("write");
        assert_eq!(rules.hard_linked(&one), None, "one name");
        fs::hard_link(&one, &two).expect("hard link");
        for name in [&one, &two] {
            assert_eq!(
                rules.hard_linked(name),
                Some(Denial::HardLinked {
                    path: rules.shown(name),
                    names: 2
                })
            );
        }
        // A directory's links are its subdirectories, not other names.
        let dir = rustix::fs::stat(workspace.path("src")).expect("stat");
        assert!(dir.st_nlink >= 2);
        assert_eq!(other_names(&dir), None);
    }

    #[test]
    fn a_descriptor_in_a_protected_path_or_with_other_names_changes_nothing() {
        let workspace = Workspace::new();
        let rules = workspace.rules();
        let config = workspace.path(".git/config");
        assert!(matches!(
            rules.descriptor_refusal(&config, None),
            Some(Denial::Protected { .. })
        ));
        let main = workspace.path("src/main.rs");
        let stat = rustix::fs::stat(&main).expect("stat");
        assert_eq!(rules.descriptor_refusal(&main, Some(&stat)), None);
        fs::hard_link(&main, workspace.path("elsewhere.rs")).expect("hard link");
        let stat = rustix::fs::stat(&main).expect("stat");
        assert!(matches!(
            rules.descriptor_refusal(&main, Some(&stat)),
            Some(Denial::HardLinked { names: 2, .. })
        ));
    }

    #[test]
    fn a_directory_held_for_its_times_is_refused_in_a_protected_path() {
        let workspace = Workspace::new();
        let rules = workspace.rules();
        let hooks = workspace.path(".git/hooks");
        assert!(matches!(
            rules.protected_refusal(&hooks),
            Some(Denial::Protected { path, .. }) if path == ".git/hooks"
        ));
        assert_eq!(rules.protected_refusal(&workspace.path("src")), None);
    }

    #[test]
    fn writes_need_a_writable_grant_and_uses_any_grant() {
        let workspace = Workspace::new();
        workspace.mkdir("docs");
        let grants = [
            workspace.grant("src", Access::Write),
            workspace.grant("docs", Access::Read),
        ];
        let rules = workspace.rules_with(Vec::new(), &grants);
        assert!(rules.may_write(&workspace.path("src/main.rs")));
        assert!(!rules.may_write(&workspace.path("docs/a.md")));
        assert!(rules.may_use(&workspace.path("docs/a.md")));
        assert!(!rules.may_use(&workspace.path("toolhost.toml")));
        assert!(!rules.may_use(Path::new("/etc/passwd")));
    }

    #[test]
    fn names_protected_at_any_depth_count_from_the_grant_outside_the_workspace() {
        let workspace = Workspace::new();
        let kept = tempfile::tempdir().expect("temp dir");
        let outside = kept.path().canonicalize().expect("canonical");
        fs::create_dir_all(outside.join("app/.git")).expect("mkdir");
        let grant = Grant {
            host_path: outside.join("app"),
            guest_path: "app".into(),
            access: Access::Write,
        };
        let rules = workspace.rules_with(Vec::new(), &[grant]);
        assert_eq!(rules.base(&outside.join("app/x")), outside.join("app"));
        assert!(rules.covered(&outside.join("app/.git/config")).is_some());
        assert_eq!(rules.covered(&outside.join("app/x")), None);
        // Outside every grant and the workspace, from the root (fail closed).
        assert_eq!(rules.base(Path::new("/nowhere/x")), Path::new("/"));
    }
}
