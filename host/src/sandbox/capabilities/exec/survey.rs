//! What the walls must hold that only a look at the grants finds, before
//! a command and after it: the protected paths in writable grants (held
//! read-only; one the command made is removed after it), files of a
//! writable grant with a name elsewhere (a hard link to `.git/config`, to
//! a read-only grant's file: held read-only, as the file system guard
//! refuses writing a file with two names), and Unix sockets (hidden: a
//! host service listening in a granted directory is not for a command to
//! reach).
//!
//! The look is by descriptor, name by name, no link followed, so no path
//! is too long for it, and it fails closed: a directory the command made
//! unreadable is opened up for its owner (it is the user's), and what
//! still cannot be looked into is an error, never skipped.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::sandbox::capabilities::git_config as git;
use crate::sandbox::capabilities::grants::{Access, Grant};
use crate::sandbox::capabilities::protect::{self, Hit, Protection};

/// Entries the survey before a command looks at before it gives up: a
/// grant bigger than this is refused native commands rather than left
/// unwatched. The survey after one has no cap: what the command made must
/// be found, however much it made.
const SURVEY_ENTRIES: usize = 2_000_000;

/// When a survey is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// Before the command: capped, and a protected path that is a link
    /// refuses the command (a mount cannot hold a link itself).
    Before,
    /// After it: everything looked at, a link at a protected name found
    /// like any entry (to be removed).
    After,
}

/// What a survey looks over, for one tool.
pub(crate) struct Grants<'a> {
    pub(crate) dirs: &'a [Grant],
    pub(crate) lifted: &'a [PathBuf],
    pub(crate) protection: &'a Protection,
}

/// What a survey found, by host path.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Survey {
    /// Protected by name or path in a writable grant: held read-only whole.
    named: BTreeSet<PathBuf>,
    /// Directories of a writable grant holding a `HEAD`: read-only whole,
    /// and made one by the `HEAD` in them.
    repositories: BTreeSet<PathBuf>,
    /// Files of a writable grant with a name outside what the survey saw
    /// of the writable grants (a protected path, a read-only grant, outside
    /// every grant).
    shared: BTreeSet<PathBuf>,
    /// Unix sockets in any grant, held paths included.
    sockets: BTreeSet<PathBuf>,
    /// What the configuration of a repository in a writable grant names
    /// (its `core.hooksPath`, its included files) and is there: held
    /// read-only, and removed when a command made it. With why, and the
    /// working tree of the repository that names it.
    configured: BTreeMap<PathBuf, (&'static str, PathBuf)>,
    /// Every directory looked into, by device and inode.
    dirs: HashSet<Identity>,
    /// After a command: what could not be looked into, with its identity
    /// when known and why.
    unlooked: Vec<(PathBuf, Option<Identity>, String)>,
    /// Trees deeper than [`DEPTH`] below a grant: held read-only whole.
    deep: BTreeSet<PathBuf>,
    /// Before a command: each path held read-only, with its identity then.
    held: BTreeMap<PathBuf, Identity>,
    /// After a command: protected paths it made past what the survey
    /// keeps, removed as they were found.
    pub(crate) removed_beyond: usize,
}

/// A directory's device and inode.
type Identity = (u64, u64);

/// What to do with a command's leftovers, from the surveys before and
/// after it.
pub(crate) struct Leftovers {
    /// What to remove, with the hit to report.
    pub(crate) remove: Vec<(PathBuf, Hit)>,
    /// Directories that were there before and could not be looked into
    /// after: what the command left in them is unknown.
    pub(crate) unknown: Vec<(PathBuf, String)>,
}

/// A regular file with more than one name, as seen so far.
struct Names {
    links: u64,
    seen: Vec<PathBuf>,
}

impl Survey {
    /// Looks over every grant: before a command (`before` is `None`),
    /// everything, a failure refusing the command; after it, everything
    /// but what was held read-only during it and is still what was held,
    /// noting what cannot be looked into.
    pub(crate) fn of(grants: &Grants<'_>, before: Option<&Survey>) -> Result<Survey, String> {
        let when = if before.is_some() {
            When::After
        } else {
            When::Before
        };
        let mut look = Look {
            grants,
            when,
            held: BTreeSet::new(),
            seen: 0,
            kept: 0,
            survey: Survey::default(),
            names: BTreeMap::new(),
        };
        if let Some(before) = before {
            // A held path replaced on the host during the command (an
            // editor's save, another command's removal) was no longer held
            // by its mount: what is there now is unknown.
            for (path, identity) in &before.held {
                let now = rustix::fs::lstat(path.as_path())
                    .ok()
                    .map(|s| (s.st_dev, s.st_ino));
                if now == Some(*identity) {
                    look.held.insert(path.clone());
                } else if now.is_some() {
                    look.survey.unlooked.push((
                        path.clone(),
                        None,
                        "it was replaced while the command ran, and the walls no longer held it"
                            .into(),
                    ));
                }
            }
        }
        for grant in grants.dirs {
            look.grant(grant)?;
        }
        let Look {
            mut survey,
            names,
            held,
            ..
        } = look;
        survey.shared = names
            .into_values()
            .filter(|names| (names.seen.len() as u64) < names.links)
            .flat_map(|names| names.seen)
            .collect();
        // After a command, the repositories held during it name what they
        // named before; what they name may have been made since.
        let trees: Vec<PathBuf> = survey.named.iter().chain(&held).cloned().collect();
        survey.configured = configured(&trees, &survey, grants);
        if when == When::Before {
            survey.held = survey
                .read_only()
                .into_iter()
                .filter_map(|path| {
                    let stat = rustix::fs::lstat(path.as_path()).ok()?;
                    Some((path, (stat.st_dev, stat.st_ino)))
                })
                .collect();
        }
        Ok(survey)
    }

    /// Every path held read-only.
    pub(crate) fn read_only(&self) -> Vec<PathBuf> {
        self.named
            .iter()
            .chain(&self.repositories)
            .chain(&self.shared)
            .chain(self.configured.keys())
            .chain(&self.deep)
            .cloned()
            .collect()
    }

    /// Every socket, to hide.
    pub(crate) fn sockets(&self) -> impl Iterator<Item = &PathBuf> {
        self.sockets.iter()
    }

    /// What a command left, given the survey from before it ran: each
    /// protected path it made (or the `HEAD` that made a directory a
    /// repository) and each new directory that could not be looked into,
    /// to remove; never what was held read-only during it, nor what holds
    /// such a path; and the old directories that could not be looked into.
    pub(crate) fn leftovers(&self, before: &Survey, protection: &Protection) -> Leftovers {
        let held = before.read_only();
        let touches_held = |path: &Path| {
            held.iter()
                .any(|h| h.starts_with(path) || path.starts_with(h))
        };
        let mut remove: Vec<(PathBuf, Hit)> = self
            .named
            .difference(&before.named)
            .map(|path| {
                let hit = protection
                    .covering(path, &[], protection.workspace())
                    .unwrap_or_else(|| protection.repository_hit(path));
                (path.clone(), hit)
            })
            .collect();
        // A `HEAD` that makes a directory a repository is a protected name
        // of its own, found inside the directory (which was looked into:
        // it was not held).
        let made_git: BTreeSet<PathBuf> = remove.iter().map(|(path, _)| path.clone()).collect();
        // What a repository the command made names goes with that
        // repository, not in its own right (it may be the user's).
        remove.extend(
            self.configured
                .iter()
                .filter(|(path, (_, top))| {
                    !before.configured.contains_key(*path) && !made_git.contains(&top.join(".git"))
                })
                .map(|(path, (why, _))| {
                    let hit = Hit::new(protection.shown(path), (*why).to_string());
                    (path.clone(), hit)
                }),
        );
        let mut unknown = Vec::new();
        for (path, identity, why) in &self.unlooked {
            let new = identity.is_some_and(|id| !before.dirs.contains(&id));
            if new {
                let hit = Hit::new(
                    protection.shown(path),
                    format!("the command made it, and it could not be looked into ({why})"),
                );
                remove.push((path.clone(), hit));
            } else {
                unknown.push((path.clone(), why.clone()));
            }
        }
        remove.retain(|(path, _)| !touches_held(path));
        Leftovers { remove, unknown }
    }
}

/// Bytes of paths a survey keeps (what it found, each a whole path): past
/// them, before a command the command is refused, after one what is left
/// is unknown and native commands stop.
const PATHS_KEPT: usize = 64 << 20;

/// Directories deeper than this below a grant are not looked into (the
/// survey holds one descriptor per level): before a command that refuses
/// it, after one what is deeper is removed when the command made it.
const DEPTH: usize = 200;

/// One survey under way.
struct Look<'a, 'g> {
    grants: &'a Grants<'g>,
    when: When,
    /// After a command: what was held read-only during it, not looked into.
    held: BTreeSet<PathBuf>,
    seen: usize,
    /// Bytes of the paths kept so far ([`PATHS_KEPT`]).
    kept: usize,
    survey: Survey,
    /// Regular files of writable grants with more than one name, by inode.
    names: BTreeMap<(u64, u64), Names>,
}

/// How far a directory is looked into.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Everything the survey looks for.
    Full,
    /// Sockets alone: a path held read-only whole, whose sockets a mount
    /// does not stop.
    Sockets,
}

impl Look<'_, '_> {
    fn grant(&mut self, grant: &Grant) -> Result<(), String> {
        let writable = grant.access == Access::Write;
        if self.when == When::After && self.held.contains(&grant.host_path) {
            return Ok(());
        }
        let root = match open_path(&grant.host_path) {
            Ok(root) => root,
            Err(e) => return self.failed(&grant.host_path, None, e),
        };
        let depth = if writable && holds_head(&root) && !self.lifted(&grant.host_path) {
            self.survey.repositories.insert(grant.host_path.clone());
            if self.when == When::Before {
                Depth::Sockets
            } else {
                Depth::Full
            }
        } else {
            Depth::Full
        };
        self.dir(&root, &grant.host_path, writable, depth, 0)
    }

    /// Counts `path` against [`PATHS_KEPT`]; false when past it (after a
    /// command: noted, once, as not looked into).
    fn keep(&mut self, path: &Path) -> Result<bool, String> {
        self.kept += path.as_os_str().len();
        if self.kept <= PATHS_KEPT {
            return Ok(true);
        }
        match self.when {
            When::Before => Err(format!(
                "the tool's directories hold more than {} of paths to hold, too many to look \
                 over; grant a smaller directory",
                crate::units::bytes(PATHS_KEPT as u64)
            )),
            When::After => {
                if self.kept - path.as_os_str().len() <= PATHS_KEPT {
                    self.survey.unlooked.push((
                        path.to_path_buf(),
                        None,
                        "the command made more than the survey after it keeps".into(),
                    ));
                }
                Ok(false)
            }
        }
    }

    /// A failure to look at `path`: before a command, the command is
    /// refused; after it, `path` is noted as not looked into.
    fn failed(
        &mut self,
        path: &Path,
        identity: Option<Identity>,
        error: impl std::fmt::Display,
    ) -> Result<(), String> {
        match self.when {
            When::Before => Err(format!("cannot look into {}: {error}", path.display())),
            When::After => {
                self.survey
                    .unlooked
                    .push((path.to_path_buf(), identity, error.to_string()));
                Ok(())
            }
        }
    }

    /// Looks into the open directory `dir` at `path`, `level` below its
    /// grant.
    fn dir(
        &mut self,
        dir: &OwnedFd,
        path: &Path,
        writable: bool,
        depth: Depth,
        level: usize,
    ) -> Result<(), String> {
        let identity = rustix::fs::fstat(dir).ok().map(|s| (s.st_dev, s.st_ino));
        if let Some(identity) = identity {
            self.survey.dirs.insert(identity);
        }
        if level > DEPTH {
            // Before a command a tree this deep is held read-only whole
            // (a repository may ship one); after it, what is this deep and
            // was not held is not looked into.
            if self.when == When::Before {
                self.keep(path)?;
                self.survey.deep.insert(path.to_path_buf());
                return Ok(());
            }
            return self.failed(
                path,
                identity,
                format!("more than {DEPTH} directories deep"),
            );
        }
        let mut subdirs: Vec<(OsString, Depth)> = Vec::new();
        let entries = match Dir::read_from(dir) {
            Ok(entries) => entries,
            Err(e) => return self.failed(path, identity, e),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => return self.failed(path, identity, e),
            };
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            self.seen += 1;
            if self.when == When::Before && self.seen > SURVEY_ENTRIES {
                return Err(format!(
                    "the tool's directories hold more than {SURVEY_ENTRIES} entries, too many \
                     to look over for protected paths; grant a smaller directory"
                ));
            }
            let kind = match entry.file_type() {
                FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|stat| FileType::from_raw_mode(stat.st_mode))
                    .unwrap_or(FileType::Unknown),
                kind => kind,
            };
            let child = path.join(name);
            if kind == FileType::Socket {
                if self.keep(&child)? {
                    self.survey.sockets.insert(child);
                }
                continue;
            }
            if depth == Depth::Sockets {
                if kind == FileType::Directory {
                    subdirs.push((name.to_os_string(), Depth::Sockets));
                }
                continue;
            }
            if self.when == When::After && self.held.contains(&child) {
                continue;
            }
            if writable && let Some(hit) = self.protected(&child) {
                if kind == FileType::Symlink && self.when == When::Before {
                    return Err(link_refusal(self.grants.protection, &child, &hit));
                }
                if !self.keep(&child)? {
                    // Past what the survey keeps: made by the command (what
                    // was there before is held), so removed now, counted.
                    if remove_at(dir, name).is_ok() {
                        self.survey.removed_beyond += 1;
                    }
                    continue;
                }
                self.survey.named.insert(child);
                // Held whole before a command; removed whole after it.
                if self.when == When::Before && kind == FileType::Directory {
                    subdirs.push((name.to_os_string(), Depth::Sockets));
                }
                continue;
            }
            match kind {
                FileType::Directory => subdirs.push((name.to_os_string(), Depth::Full)),
                // Only what is held during a command needs them.
                FileType::RegularFile if writable && self.when == When::Before => {
                    self.names_of(dir, name, child)?;
                }
                _ => {}
            }
        }
        self.subdirs(dir, path, subdirs, writable, level)
    }

    /// Looks into each of `subdirs` of `dir`, one at a time (one
    /// descriptor per level).
    fn subdirs(
        &mut self,
        dir: &OwnedFd,
        path: &Path,
        subdirs: Vec<(OsString, Depth)>,
        writable: bool,
        level: usize,
    ) -> Result<(), String> {
        for (name, depth) in subdirs {
            let child = path.join(&name);
            let (opened, closed) = match open_dir(dir, &name) {
                Ok(Some(opened)) => opened,
                Ok(None) => continue,
                Err(e) => {
                    let identity = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW)
                        .ok()
                        .map(|s| (s.st_dev, s.st_ino));
                    self.failed(&child, identity, e)?;
                    continue;
                }
            };
            let depth = if depth == Depth::Full
                && writable
                && holds_head(&opened)
                && !self.lifted(&child)
            {
                self.survey.repositories.insert(child.clone());
                // A repository is held whole before a command; after it,
                // one the command made is looked into like any directory.
                if self.when == When::Before {
                    Depth::Sockets
                } else {
                    Depth::Full
                }
            } else {
                depth
            };
            let looked = self.dir(&opened, &child, writable, depth, level + 1);
            if let Some(mode) = closed {
                // As the command left it.
                let _ = rustix::fs::fchmod(&opened, Mode::from_raw_mode(mode));
            }
            looked?;
        }
        Ok(())
    }

    /// The protected path `path` is, in a writable grant.
    fn protected(&self, path: &Path) -> Option<Hit> {
        let protection = self.grants.protection;
        let base = self
            .grants
            .dirs
            .iter()
            .filter(|g| path.starts_with(&g.host_path))
            .map(|g| {
                if g.host_path.starts_with(protection.workspace()) {
                    protection.workspace()
                } else {
                    g.host_path.as_path()
                }
            })
            .next()
            .unwrap_or(protection.workspace());
        protection.covering(path, self.grants.lifted, base)
    }

    fn lifted(&self, dir: &Path) -> bool {
        protect::repository_lifted(dir, dir, self.grants.lifted)
    }

    /// Counts a name of a regular file that has more than one.
    fn names_of(&mut self, dir: &OwnedFd, name: &OsStr, path: PathBuf) -> Result<(), String> {
        let stat = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(e) => return self.failed(&path, None, e),
        };
        if stat.st_nlink > 1 && self.keep(&path)? {
            self.names
                .entry((stat.st_dev, stat.st_ino))
                .or_insert_with(|| Names {
                    links: stat.st_nlink,
                    seen: Vec::new(),
                })
                .seen
                .push(path);
        }
        Ok(())
    }
}

/// What the repositories of the writable grants name in their
/// configuration, found as the file system guard finds it
/// ([`git::read_repository`]): each hooks directory and included file in a
/// writable grant that is there, unless lifted, with the working tree that
/// names it. A repository whose configuration cannot be read is held
/// read-only whole (git may run what toolhost could not read).
fn configured(
    named: &[PathBuf],
    survey: &Survey,
    grants: &Grants<'_>,
) -> BTreeMap<PathBuf, (&'static str, PathBuf)> {
    let every = grants.protection.every_repository();
    let home = every.home.as_deref();
    let mut read = |path: &Path| crate::text_file::read_text(path);
    let writable = |path: &Path| {
        grants
            .dirs
            .iter()
            .any(|g| g.access == Access::Write && path.starts_with(&g.host_path))
            && !protect::is_lifted(path, path, grants.lifted)
    };
    let mut found = BTreeMap::new();
    let working_trees = named
        .iter()
        .filter(|path| path.file_name() == Some(OsStr::new(".git")))
        .filter_map(|dot_git| dot_git.parent());
    for top in working_trees {
        let config = git::read_repository(top, home, &mut read);
        if !config.unreadable.is_empty() && writable(top) {
            found.insert(top.to_path_buf(), (git::UNREADABLE_WHY, top.to_path_buf()));
            continue;
        }
        let hooks = config
            .hooks
            .iter()
            .chain(&every.hooks)
            .map(|value| (git::hooks_dir(top, value, home), git::NESTED_HOOKS_WHY));
        let included = config
            .included
            .iter()
            .map(|file| (git::lexical(&top.join(file)), git::INCLUDED_WHY));
        let common = config
            .common
            .iter()
            .map(|dir| (git::lexical(&top.join(dir)), git::COMMON_WHY));
        for (path, why) in hooks.chain(included).chain(common) {
            let held = survey
                .named
                .iter()
                .chain(&survey.repositories)
                .any(|n| path.starts_with(n));
            if !held && writable(&path) && path.symlink_metadata().is_ok() {
                found.insert(path, (why, top.to_path_buf()));
            }
        }
    }
    found
}

fn open_path(path: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// `name` in `dir`, opened to be looked into, and the mode it had when
/// it had to be opened up; `None` when the user cannot get into it, and so
/// neither can a command (it runs as the user, with no privilege). A
/// directory of the user's that the user may not read or search (a
/// command may have closed it) is first made so, through a descriptor of
/// it (no link is followed), for the caller to put back.
fn open_dir(dir: &OwnedFd, name: &OsStr) -> rustix::io::Result<Option<(OwnedFd, Option<u32>)>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if let Ok(opened) = rustix::fs::openat(dir, name, flags, Mode::empty())
        && rustix::fs::accessat(&opened, ".", rustix::fs::Access::EXEC_OK, AtFlags::EACCESS).is_ok()
    {
        return Ok(Some((opened, None)));
    }
    let held = rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let stat = rustix::fs::fstat(&held)?;
    if stat.st_uid != rustix::process::geteuid().as_raw() {
        // Not the user's: one the user may not search, a command cannot
        // enter either; one the user may search but not list, a command
        // can write in, and it cannot be looked into.
        return match rustix::fs::accessat(&held, ".", rustix::fs::Access::EXEC_OK, AtFlags::EACCESS)
        {
            Ok(()) => Err(Errno::ACCESS),
            Err(_) => Ok(None),
        };
    }
    let mode = stat.st_mode & 0o7777;
    let through = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&held));
    rustix::fs::chmod(through.as_str(), Mode::from_raw_mode(mode | 0o500))?;
    let opened = rustix::fs::openat(&held, ".", flags, Mode::empty())?;
    Ok(Some((opened, Some(mode))))
}

/// [`open_dir`] for what must be got into (a removal): an error when it
/// cannot be.
fn enter_dir(dir: &OwnedFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    open_dir(dir, name)?
        .map(|(opened, _)| opened)
        .ok_or(Errno::ACCESS)
}

fn holds_head(dir: &OwnedFd) -> bool {
    rustix::fs::statat(dir, protect::HEAD, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

fn link_refusal(protection: &Protection, path: &Path, hit: &Hit) -> String {
    format!(
        "`{}` is protected ({}) and is a symbolic link, which the walls cannot hold read-only; \
         native commands do not run while one is in a writable directory (ask the user to \
         replace it, or to grant a directory without it)",
        protection.shown(path),
        hit.why
    )
}

/// The removals said one by one; past them, one line says how many more.
const SAID: usize = 20;

/// Removes what a command made of protected paths (`made`), and says so
/// for the model. The command's processes are gone by now; the path is
/// opened name by name and nothing is followed through a link, and what
/// the command made unreadable or unwritable is opened up for its owner
/// first.
pub(crate) fn remove_made(made: &[(PathBuf, Hit)], protection: &Protection) -> String {
    let mut said = String::new();
    for (at, (path, hit)) in made.iter().enumerate() {
        if at == SAID {
            // Removed all the same; said once.
            let failed = made[at..]
                .iter()
                .filter(|(path, _)| remove(path).is_err())
                .count();
            said.push_str(&format!(
                "toolhost: and {} more protected paths the command made were removed{}\n",
                made.len() - at,
                if failed == 0 {
                    String::new()
                } else {
                    format!(" ({failed} could not be)")
                }
            ));
            break;
        }
        let how = match remove(path) {
            Ok(()) => "it was removed".to_string(),
            Err(e) => {
                format!("removing it failed ({e}): remove it before you run git or an editor there")
            }
        };
        said.push_str(&format!(
            "toolhost: the command made `{}`, which is protected ({}); {how}\n",
            short(&protection.shown(path)),
            hit.why
        ));
    }
    said
}

/// `path` as a report shows it: a path past 240 bytes is cut in its middle.
pub(crate) fn short(path: &str) -> String {
    const KEPT: usize = 100;
    if path.len() <= 240 {
        return path.to_string();
    }
    let mut head = KEPT;
    while !path.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = path.len() - KEPT;
    while !path.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}…{}", &path[..head], &path[tail..])
}

/// Removes `path` (absolute, no link on the way) and all it holds.
fn remove(path: &Path) -> rustix::io::Result<()> {
    let mut names: Vec<OsString> = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) => names.push(name.to_os_string()),
            _ => return Err(Errno::INVAL),
        }
    }
    let Some(last) = names.pop() else {
        return Err(Errno::INVAL);
    };
    // The way down is only searched (no directory's mode is changed on
    // it); what is removed is opened up as it is removed.
    let mut dir = open_path(Path::new("/"))?;
    for name in &names {
        dir = rustix::fs::openat(
            &dir,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
    }
    remove_at(&dir, &last)
}

/// Removes `name` in `dir`: a file or link, or a directory and all it
/// holds.
fn remove_at(dir: &OwnedFd, name: &OsStr) -> rustix::io::Result<()> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return rustix::fs::unlinkat(dir, name, AtFlags::empty());
    }
    let inside = enter_dir(dir, name)?;
    rustix::fs::fchmod(&inside, Mode::RWXU)?;
    let mut children = Vec::new();
    for entry in Dir::read_from(&inside)? {
        let entry = entry?;
        let child = OsStr::from_bytes(entry.file_name().to_bytes());
        if child != "." && child != ".." {
            children.push(child.to_os_string());
        }
    }
    for child in children {
        remove_at(&inside, &child)?;
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree deeper than `PATH_MAX` and a directory with no permissions
    /// are both removed: nothing the command made is out of reach.
    #[test]
    fn what_a_command_made_is_removed_however_deep_or_closed() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("a dir");
        let top = dir.path().join("deep");
        let mut at = open_path(dir.path()).expect("open");
        rustix::fs::mkdirat(&at, "deep", Mode::RWXU).expect("mkdir");
        at = enter_dir(&at, OsStr::new("deep")).expect("open");
        let long = "d".repeat(250);
        for _ in 0..20 {
            rustix::fs::mkdirat(&at, long.as_str(), Mode::RWXU).expect("mkdir");
            at = enter_dir(&at, OsStr::new(&long)).expect("open");
        }
        rustix::fs::openat(&at, "config", OFlags::CREATE | OFlags::WRONLY, Mode::RUSR)
            .expect("a file at the bottom");
        let closed = dir.path().join("closed");
        std::fs::create_dir_all(closed.join("inner")).expect("mkdir");
        std::fs::set_permissions(closed.join("inner"), std::fs::Permissions::from_mode(0o0))
            .expect("chmod");
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o500)).expect("chmod");
        remove(&top).expect("the deep tree is removed");
        remove(&closed).expect("the closed one is removed");
        assert!(!top.exists() && !closed.exists());
    }
}
