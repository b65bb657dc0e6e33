//! `wasi:filesystem/types` with toolhost's rules in front of wasmtime-wasi's
//! own implementation.
//!
//! The preopens already keep a guest inside its grants, read-only or
//! read-write. This layer adds what a grant cannot say: no change to a
//! protected path (whatever route the path takes), no symlink that points
//! outside the tool's grants or into a protected path, no hard link to a file
//! the tool may not write, and a budget of bytes written per call. Every
//! operation that changes the file system is checked here, where the effect
//! happens, so the rules hold for every plugin, not only the standard tools.
//! Reads pass straight through, or take a shorter way than wasmtime-wasi's
//! to the same answer: a directory listing without a `stat` per entry
//! ([`Listing`], which also answers `readdir`'s `metadata-hash-at`), a read
//! without zero-filling its buffer first.
//!
//! A refused operation fails in the guest with `not-permitted` and is
//! recorded as a [`Denial`], which becomes the text the model reads. Going
//! over the write budget traps the guest, as going over the memory limit
//! does; so does holding more than [`MAX_DESCRIPTORS`] open files (fewer
//! under a low `ulimit -n`) or
//! [`MAX_LISTINGS`] directory listings at once (each is a host descriptor,
//! outside the guest's memory limit).
//!
//! The budget charges what a change costs the disk, not only the bytes
//! asked for: every file, directory or link created costs at least
//! [`ENTRY_COST`] (an inode and a block), and a write past the end of a
//! file costs the size it makes (a sparse file's hole is not free to the
//! user who later copies it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::async_trait;
use wasmtime_wasi::filesystem::{Descriptor, Dir, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{
    DynOutputStream, FsError, FsResult, OutputStream, Pollable, StreamError, StreamResult,
};

use super::beneath::{self, Entry, Unsplit};
use super::git_config::{self as git, GitRead};
use super::listing::{Listed, Listing};
use super::protect::{self, Hit, Protection, Record, RecordHit};
use super::{Access, BLOCKING_CURRENT_THREAD, Grant};

/// The most one `read` returns, as in wasmtime-wasi (its
/// `MAX_READ_SIZE_ALLOC`).
const MAX_READ: usize = 64 * 1024;

/// Directories walked up from a change looking for a `HEAD`, more than any
/// path inside a grant has (`PATH_MAX` allows 2048 one-letter components).
const MAX_DEPTH: usize = 4096;

/// Files and directories a call may hold open at most (what it opened;
/// its granted directories are not counted), and less where the process
/// may open fewer than four times as many ([`descriptor_cap`]).
pub(crate) const MAX_DESCRIPTORS: usize = 4096;

/// The most descriptors one call may hold in this process: at most a
/// quarter of what it may open (`ulimit -n`), so one call cannot starve the
/// calls running beside it or the host itself.
fn descriptor_cap() -> usize {
    static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let quarter = soft.map_or(usize::MAX, |n| usize::try_from(n / 4).unwrap_or(usize::MAX));
        MAX_DESCRIPTORS.min(quarter.max(16))
    })
}

/// Directory listings a call may hold open at once: each holds a host
/// descriptor and a read buffer of up to about 24 KiB.
pub(crate) const MAX_LISTINGS: usize = 256;

/// What creating one file, directory or link costs the write budget: a
/// block and an inode, so a budget of 256 MiB creates at most 65,536.
pub(crate) const ENTRY_COST: u64 = 4096;

/// What a call held more of than it may, when it was stopped for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Open files and directories ([`MAX_DESCRIPTORS`]).
    Descriptors,
    /// Directory listings ([`MAX_LISTINGS`]).
    Listings,
}

impl Held {
    /// How many the call may hold.
    pub fn limit(self) -> usize {
        match self {
            Held::Descriptors => descriptor_cap(),
            Held::Listings => MAX_LISTINGS,
        }
    }
}

/// Why the guard refused an operation, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// The operation would change `path`, which lies in a protected path.
    Protected { path: String, hit: Hit },
    /// A symlink at `link` to `target`, which resolves outside the tool's
    /// grants.
    LinkOutside { link: String, target: String },
    /// A symlink at `link` to `target`, which lies in a protected path.
    LinkIntoProtected {
        link: String,
        target: String,
        hit: Hit,
    },
    /// A symlink with an absolute target.
    AbsoluteLink { link: String, target: String },
    /// A symlink whose target has a `..` component.
    LinkClimbs { link: String, target: String },
    /// A hard link to `source`, which the tool may not write.
    HardLinkSource { source: String },
    /// A hard link to `source`, which lies in a protected path the user
    /// lifted for this tool: the new name would outlive the lift.
    HardLinkToProtected { source: String, hit: Hit },
    /// A change of the file at `path`, which has `names` names: a change
    /// through one is a change under all ([`other_names`]).
    HardLinked { path: String, names: u64 },
    /// Opening `path`, which is `kind` (a FIFO, a socket, a device): no
    /// deadline could end a call blocked in opening or reading one.
    SpecialFile { path: String, kind: &'static str },
    /// Opening or listing `path`, in toolhost's own records (`record`, of
    /// `kind`).
    Record {
        path: String,
        record: String,
        kind: Record,
    },
}

/// Bytes a call may still write to files, shared with the streams it opens.
#[derive(Debug)]
pub(crate) struct WriteBudget {
    limit: u64,
    used: AtomicU64,
    hit: AtomicBool,
}

impl WriteBudget {
    pub(crate) fn new(limit: u64) -> Arc<Self> {
        Arc::new(WriteBudget {
            limit,
            used: AtomicU64::new(0),
            hit: AtomicBool::new(false),
        })
    }

    /// Takes `bytes` from the budget; false (and remembered) when that goes
    /// over the limit.
    fn take(&self, bytes: u64) -> bool {
        let used = self
            .used
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if used > self.limit {
            self.hit.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Returns what an operation that failed had taken.
    fn give_back(&self, bytes: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                Some(used.saturating_sub(bytes))
            });
    }

    /// Whether the call tried to write past the limit.
    pub(crate) fn hit(&self) -> bool {
        self.hit.load(Ordering::Relaxed)
    }

    fn exceeded(&self) -> wasmtime::Error {
        wasmtime::Error::msg(format!(
            "the tool tried to write more than {} bytes to files",
            self.limit
        ))
    }
}

/// What the guard enforces for one tool, built once when the tool loads.
#[derive(Debug)]
pub(crate) struct FsRules {
    protection: Arc<Protection>,
    /// Protected directories the user granted this tool by name.
    lifted: Vec<PathBuf>,
    /// The tool's grants on the host (for symlink targets and hard links).
    grants: Vec<(PathBuf, Access)>,
    /// The configuration of each nested repository a change landed in, by
    /// its working tree's host path: read again only when a file it read
    /// changed.
    nested: std::sync::Mutex<std::collections::HashMap<PathBuf, Nested>>,
    /// Whether this tool reads the whole results toolhost saved (only the
    /// standard `read_file` does).
    reads_outputs: bool,
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
fn other_names(stat: &rustix::fs::Stat) -> Option<u64> {
    let file = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    let names = stat.st_nlink as u64;
    (file == rustix::fs::FileType::RegularFile && names > 1).then_some(names)
}

/// Why the hooks directory a nested repository's configuration names is
/// protected.
const NESTED_HOOKS_WHY: &str = "the `core.hooksPath` of the git repository it is in names it, and \
     git runs the hooks there";

/// Why a file a nested repository's configuration includes is protected.
const INCLUDED_WHY: &str = "a git repository's configuration includes it, and git configuration \
     can name programs to run (`core.fsmonitor`, `core.hooksPath`)";

/// Why a nested repository whose configuration could not be read is
/// protected inside.
const UNREADABLE_WHY: &str = "it is a git repository whose configuration toolhost could not read \
     (not a regular file, over 1 MiB or not UTF-8), and git may run what it names";

impl FsRules {
    pub(crate) fn new(protection: Arc<Protection>, lifted: Vec<PathBuf>, grants: &[Grant]) -> Self {
        FsRules {
            protection,
            lifted,
            grants: grants
                .iter()
                .map(|g| (g.host_path.clone(), g.access))
                .collect(),
            nested: std::sync::Mutex::default(),
            reads_outputs: false,
        }
    }

    /// These rules, for the tool that may read the saved whole results
    /// (the standard `read_file`, which the model pages through them with).
    pub(crate) fn reading_saved_outputs(mut self) -> Self {
        self.reads_outputs = true;
        self
    }

    /// The record of toolhost's that the real host path `at` lies in, if
    /// this tool may not read it.
    fn record_holding(&self, at: &Path) -> Option<RecordHit> {
        self.protection.record_holding(at, self.reads_outputs)
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

    /// The refusal of a change of the file at host path `target` (following
    /// a link in its last name, as an open for writing does) when that file
    /// has other names ([`other_names`]).
    pub(crate) fn hard_linked(&self, target: &Path) -> Option<Denial> {
        let names = other_names(&rustix::fs::stat(target).ok()?)?;
        let path = self.shown(target);
        Some(Denial::HardLinked { path, names })
    }

    /// The protection of the source of a hard link (`source`) as if nothing
    /// were lifted, when the new name (`new`) is not under that same
    /// protection.
    fn protected_whatever_lifted(&self, source: &Located, new: &Located) -> Option<Hit> {
        let unlifted = |target: &Path| {
            self.protection
                .covering(target, &[], self.base(target))
                .or_else(|| {
                    self.protection
                        .repository_holding(target, &[], self.base(target))
                })
        };
        let hit = unlifted(&source.target)?;
        let kept = unlifted(&new.target).is_some_and(|there| there.protected == hit.protected);
        (!kept).then_some(hit)
    }

    /// The protected path `target` is or lies in (names and paths only).
    fn covered(&self, target: &Path) -> Option<Hit> {
        self.protection
            .covering(target, &self.lifted, self.base(target))
    }

    /// Like [`FsRules::covered`], and also when `target` holds a protected
    /// path (moving or removing it, or making it a link, would take that
    /// along).
    fn touched(&self, target: &Path) -> Option<Hit> {
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
    fn repository_around(&self, parent: &std::fs::File, target: &Path, holds: bool) -> Option<Hit> {
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
            if holds_head && !protect::is_lifted(target, dir, &self.lifted) {
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
            return Some(Hit {
                protected: self.shown(top),
                why: UNREADABLE_WHY.into(),
            });
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
                return Some(Hit {
                    protected: self.shown(&hooks),
                    why: NESTED_HOOKS_WHY.into(),
                });
            }
        }
        read.included.iter().find_map(|file| {
            let file = git::lexical(&top.join(file));
            reaches(&file).then(|| Hit {
                protected: self.shown(&file),
                why: INCLUDED_WHY.into(),
            })
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
            .map(|(dir, _)| dir.as_path())
            .filter(|dir| target.starts_with(dir))
            .max_by_key(|dir| dir.as_os_str().len())
            .unwrap_or(Path::new("/"))
    }

    /// `path` as the model knows it.
    pub(crate) fn shown(&self, path: &Path) -> String {
        self.protection.shown(path)
    }

    fn may_write(&self, path: &Path) -> bool {
        self.grants
            .iter()
            .any(|(dir, access)| *access == Access::Write && path.starts_with(dir))
    }

    fn may_use(&self, path: &Path) -> bool {
        self.grants.iter().any(|(dir, _)| path.starts_with(dir))
    }
}

/// The rules one call runs under, and what it ran into.
pub(crate) struct FsGuard {
    rules: Arc<FsRules>,
    budget: Arc<WriteBudget>,
    /// The first refusal, for the model.
    denial: Option<Denial>,
    /// The entry a directory stream just returned, for the
    /// `metadata-hash-at` wasi-libc's `readdir` asks next.
    just_listed: Option<JustListed>,
    /// The table slots of the descriptors this call opened and holds.
    opened: std::collections::HashSet<u32>,
    /// Directory listings the call holds.
    listings: usize,
    /// What the call held more of than it may, when it was stopped.
    held_over: Option<Held>,
}

/// An entry of the directory `dir` just returned by a [`Listing`], with
/// its metadata hash. Holding `dir` keeps its identity unique while this
/// lives (no other descriptor can reuse its address).
struct JustListed {
    dir: Arc<std::fs::File>,
    name: String,
    hash: types::MetadataHashValue,
}

impl FsGuard {
    pub(crate) fn new(rules: Arc<FsRules>, budget: Arc<WriteBudget>) -> Self {
        FsGuard {
            rules,
            budget,
            denial: None,
            just_listed: None,
            opened: std::collections::HashSet::new(),
            listings: 0,
            held_over: None,
        }
    }

    /// What the call tried to hold more of than it may, if anything.
    pub(crate) fn held_over(&self) -> Option<Held> {
        self.held_over
    }

    /// Traps when the call already holds as many of `what` as it may.
    fn may_hold(&mut self, what: Held) -> FsResult<()> {
        let held = match what {
            Held::Descriptors => self.opened.len(),
            Held::Listings => self.listings,
        };
        if held < what.limit() {
            return Ok(());
        }
        self.held_over = Some(what);
        Err(FsError::trap(wasmtime::Error::msg(format!(
            "the tool held more than {} {what:?} at once",
            what.limit()
        ))))
    }

    /// The first operation the guard refused, if any.
    pub(crate) fn denial(&self) -> Option<&Denial> {
        self.denial.as_ref()
    }

    pub(crate) fn budget(&self) -> &WriteBudget {
        &self.budget
    }

    fn refuse<T>(&mut self, denial: Denial) -> FsResult<T> {
        self.denial.get_or_insert(denial);
        Err(ErrorCode::NotPermitted.into())
    }
}

/// Whether `path` under the directory `dir` is something other than a
/// file, a directory or a symbolic link: one `fstatat`, as this runs before
/// every open.
fn is_special(dir: &std::fs::File, path: &str, follow: bool) -> bool {
    use rustix::fs::{AtFlags, FileType};
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    rustix::fs::statat(dir, path, flags).is_ok_and(|stat| {
        !matches!(
            FileType::from_raw_mode(stat.st_mode),
            FileType::RegularFile | FileType::Directory | FileType::Symlink
        )
    })
}

/// What kind of special file `path` is, for the model's text.
fn special_kind(path: &Path) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if let Ok(meta) = std::fs::metadata(path) {
            let kind = meta.file_type();
            if kind.is_fifo() {
                return "a FIFO (named pipe)";
            }
            if kind.is_socket() {
                return "a socket";
            }
            if kind.is_char_device() || kind.is_block_device() {
                return "a device";
            }
        }
    }
    let _ = path;
    "not a regular file"
}

/// The `HasData` of the guarded interface.
pub(crate) struct GuardedFilesystem;

impl HasData for GuardedFilesystem {
    type Data<'a> = Guarded<'a>;
}

/// wasmtime-wasi's file system view plus the guard, for one host call.
pub(crate) struct Guarded<'a> {
    pub(crate) fs: WasiFilesystemCtxView<'a>,
    pub(crate) guard: &'a mut FsGuard,
    /// The call's memory, which its read streams are charged to.
    pub(crate) memory: &'a Arc<crate::sandbox::limits::MemoryAccount>,
}

/// What an operation does to the entry a path names.
#[derive(Clone, Copy)]
enum Change {
    /// Creates or changes what is at the path.
    At,
    /// Removes or moves the path, and so whatever is below it.
    Away,
    /// Puts something new at the path that stands for all below it: a
    /// rename onto it (which replaces what is there), or a link (which
    /// redirects every path through it, even one to a protected path
    /// whose directories are not made yet).
    Onto,
}

/// A path under a directory descriptor, resolved once for one change: the
/// descriptor's directory, the entry's parent held open, and where the
/// entry is on the host. The check reads `target`; the operation acts
/// through the held parent on one name, so nothing can re-route it.
struct Located {
    dir: Dir,
    entry: Entry,
    target: PathBuf,
    /// The path as the tool gave it, and whether a link in its last
    /// component is followed: for [`Guarded::through_names`].
    path: String,
    follow: bool,
}

/// The descriptor an operation acts through on a [`Located`] name: the
/// guest's own when the parent is its directory, else a temporary one for
/// the held parent (with the guest descriptor's permissions, so
/// wasmtime-wasi's own checks are unchanged), removed by
/// [`Guarded::release`].
struct Acting {
    rep: u32,
    temporary: Option<Resource<Descriptor>>,
}

impl Acting {
    fn fd(&self) -> Resource<Descriptor> {
        Resource::new_borrow(self.rep)
    }
}

impl Guarded<'_> {
    /// The real host path of descriptor `fd` (an open directory or file).
    fn real_path(&self, fd: &Resource<Descriptor>) -> FsResult<PathBuf> {
        let file = match self.fs.table.get(fd)? {
            Descriptor::Dir(dir) => Arc::clone(&dir.dir),
            Descriptor::File(file) => Arc::clone(&file.file),
        };
        // Fail closed: a descriptor whose place is unknown changes nothing.
        protect::real_path(&file).map_err(|_| ErrorCode::NotPermitted.into())
    }

    /// Where `path` under directory `fd` lands for a check that only
    /// reports (which special file a read would open); `None` when it
    /// cannot be resolved.
    fn locate_by_name(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
    ) -> Option<PathBuf> {
        let dir = self.real_path(fd).ok()?;
        protect::locate(&dir, path, follow).ok()
    }

    /// Resolves `path` under the directory `fd` once, into its parent held
    /// open and its last name; with `follow`, a last component that is a
    /// link is followed to the entry it names. A directory on the way that
    /// is missing fails here, before anything is checked or changed.
    /// `no_name` is the error for a path whose last component is `.` or
    /// `..`, as the kernel gives it for the operation (`mkdir .` is
    /// `exist`, which `create_dir_all` of a grant's own root relies on).
    /// A last name with a trailing `/` is checked as the name itself, and
    /// passed on with it only to operations for which the kernel does not
    /// follow a link there (mkdir, rmdir, unlink, rename, symlink, the new
    /// name of a hard link); `set-times-at`, `open-at` and the source of a
    /// hard link deal with `l/` before they get here
    /// ([`beneath::ends_in_slash`]).
    fn locate(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
        no_name: ErrorCode,
    ) -> FsResult<Located> {
        let dir = match self.fs.table.get(fd)? {
            Descriptor::Dir(dir) => dir.clone(),
            Descriptor::File(_) => return Err(ErrorCode::NotDirectory.into()),
        };
        let resolved = if follow {
            beneath::entry_following(&dir.dir, path)
        } else {
            beneath::entry(&dir.dir, path)
        };
        let entry = match resolved {
            Ok(entry) => entry,
            Err(Unsplit::NoName) => return Err(no_name.into()),
            Err(Unsplit::Empty) => return Err(ErrorCode::NoEntry.into()),
            Err(Unsplit::Absolute) => return Err(ErrorCode::NotPermitted.into()),
            Err(Unsplit::Io(error)) => return Err(error.into()),
        };
        // Fail closed: a directory whose place is unknown changes nothing.
        let parent = protect::real_path(entry.dir(&dir.dir))
            .map_err(|_| FsError::from(ErrorCode::NotPermitted))?;
        let target = parent.join(entry.bare_name());
        Ok(Located {
            dir,
            entry,
            target,
            path: path.to_string(),
            follow,
        })
    }

    /// Refuses a change of `located` that reaches a protected path. The
    /// held parent cannot move into or out of a protected path meanwhile:
    /// that would be a rename of a protected path, which this same check
    /// refuses (in every process running toolhost).
    fn check(&mut self, located: &Located, change: Change) -> FsResult<()> {
        // A name about to change no longer names what was listed.
        self.guard.just_listed = None;
        // A read-only grant changes nothing: wasmtime-wasi refuses it, and
        // a refusal here would advise a lift that cannot help.
        if located.dir.perms.write_not_permitted() {
            return Ok(());
        }
        let rules = &self.guard.rules;
        let target = &located.target;
        let parent = located.entry.dir(&located.dir.dir);
        let holds = matches!(change, Change::Away | Change::Onto);
        let hit = if holds {
            rules.touched(target)
        } else {
            rules.covered(target)
        }
        .or_else(|| rules.repository_around(parent, target, holds))
        .or_else(|| self.through_names(located, change));
        if let Some(hit) = hit {
            let path = rules.shown(target);
            return self.guard.refuse(Denial::Protected { path, hit });
        }
        // A change of the file at the name (not of the name itself) is a
        // change under each of its other names.
        if !holds {
            let name = located.entry.bare_name();
            let stat = rustix::fs::statat(parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW);
            if let Some(names) = stat.ok().as_ref().and_then(other_names) {
                let path = rules.shown(target);
                return self.guard.refuse(Denial::HardLinked { path, names });
            }
        }
        Ok(())
    }

    /// The protected path the tool's path for `located` names on its way,
    /// through links, though the change lands elsewhere: a link a
    /// repository shipped at a protected name or in a protected directory
    /// (`.claude/settings.json -> ../ai/s.json`, `sub/.claude -> cc`) does
    /// not make a change through that name any less a change of it. Asked
    /// by name, after the change's own place was checked through handles:
    /// it only ever adds a refusal.
    fn through_names(&self, located: &Located, change: Change) -> Option<Hit> {
        let path = located.path.trim_end_matches('/');
        // No link on the way (nor `.` or `..`): the change lands where the
        // path names, which was just checked. Most changes end here, with
        // no system call.
        let plain = Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if plain && located.target.ends_with(path) {
            return None;
        }
        let base = protect::real_path(&located.dir.dir).ok()?;
        let ways = if located.follow {
            protect::route_from(&base, Path::new(path))
        } else {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            protect::route_from(&base, Path::new(dir))
                .into_iter()
                .map(|way| way.join(name))
                .collect()
        };
        let rules = &self.guard.rules;
        ways.iter()
            .filter(|way| **way != located.target)
            .find_map(|way| match change {
                Change::At => rules.covered(way),
                Change::Away | Change::Onto => rules.touched(way),
            })
    }

    /// The descriptor to act through on `located`'s name.
    fn acting(
        &mut self,
        fd: &Resource<Descriptor>,
        located: Located,
    ) -> FsResult<(Acting, String)> {
        let Located { dir, entry, .. } = located;
        let acting = match entry.parent {
            None => Acting {
                rep: fd.rep(),
                temporary: None,
            },
            Some(parent) => self.hold(parent, &dir)?,
        };
        Ok((acting, entry.name))
    }

    /// [`Guarded::acting`] for the two ends of a rename or a link; the
    /// first is released when the second fails.
    fn acting_both(
        &mut self,
        (from_fd, from): (&Resource<Descriptor>, Located),
        (to_fd, to): (&Resource<Descriptor>, Located),
    ) -> FsResult<((Acting, String), (Acting, String))> {
        let first = self.acting(from_fd, from)?;
        match self.acting(to_fd, to) {
            Ok(second) => Ok((first, second)),
            Err(error) => {
                self.release(first.0);
                Err(error)
            }
        }
    }

    /// A temporary descriptor for the held directory `file`, with the
    /// permissions of the guest's descriptor `like`.
    fn hold(&mut self, file: std::fs::File, like: &Dir) -> FsResult<Acting> {
        let held = Dir::new(file, like.perms, like.open_mode, BLOCKING_CURRENT_THREAD);
        let temporary = self.fs.table.push(Descriptor::Dir(held))?;
        Ok(Acting {
            rep: temporary.rep(),
            temporary: Some(temporary),
        })
    }

    /// `set-times-at` of a path that names a directory by `.` or `..`
    /// (`touch .`): the directory opened beneath `fd`, checked where it is,
    /// and its times set through the held handle.
    async fn set_times_of_directory(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let dir = match self.fs.table.get(fd)? {
            Descriptor::Dir(dir) => dir.clone(),
            Descriptor::File(_) => return Err(ErrorCode::NotDirectory.into()),
        };
        if dir.perms.write_not_permitted() {
            return Err(ErrorCode::NotPermitted.into());
        }
        let held = beneath::directory(&dir.dir, path)?;
        let target =
            protect::real_path(&held).map_err(|_| FsError::from(ErrorCode::NotPermitted))?;
        let rules = &self.guard.rules;
        if let Some(hit) = rules.protected(&target) {
            let path = rules.shown(&target);
            return self.guard.refuse(Denial::Protected { path, hit });
        }
        let acting = self.hold(held, &dir)?;
        let result = HostDescriptor::set_times(&mut self.fs, acting.fd(), atim, mtim).await;
        self.release(acting);
        result
    }

    /// Refuses a symbolic link at host path `link` to `target` that is
    /// absolute, has a `..` component, leads out of the grants
    /// (through a link already there) or into a protected path. For a new
    /// link, and for one moved or hard-linked to a new place, where it
    /// points somewhere else.
    fn check_link_target(&mut self, link: &Path, target: &str) -> FsResult<()> {
        let rules = Arc::clone(&self.guard.rules);
        let shown_link = rules.shown(link);
        if Path::new(target).is_absolute() {
            return self.guard.refuse(Denial::AbsoluteLink {
                link: shown_link,
                target: target.to_string(),
            });
        }
        if climbs(target) {
            return self.guard.refuse(Denial::LinkClimbs {
                link: shown_link,
                target: target.to_string(),
            });
        }
        // Without `..`, a target can still lead out through a link already
        // there (even a dangling one), or into a protected path.
        let parent = link.parent().unwrap_or(link);
        let lands = protect::locate_loose(&parent.join(target));
        if !rules.may_use(&lands) {
            return self.guard.refuse(Denial::LinkOutside {
                link: shown_link,
                target: target.to_string(),
            });
        }
        if let Some(hit) = rules.protected(&lands) {
            return self.guard.refuse(Denial::LinkIntoProtected {
                link: shown_link,
                target: target.to_string(),
                hit,
            });
        }
        Ok(())
    }

    /// The link target of `located`'s entry, when it is a symbolic link.
    /// A link whose target cannot be read or is not UTF-8 cannot be checked,
    /// so it is not moved (fail closed).
    fn link_target_of(&self, located: &Located) -> FsResult<Option<String>> {
        let parent = located.entry.dir(&located.dir.dir);
        match beneath::link_target(parent, located.entry.bare_name()) {
            Ok(target) => Ok(target),
            Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
                Err(ErrorCode::IllegalByteSequence.into())
            }
            Err(error) => Err(error.into()),
        }
    }

    fn release(&mut self, acting: Acting) {
        if let Some(temporary) = acting.temporary {
            // Only this guard knows the slot; nothing else can have taken it.
            let _ = self.fs.table.delete(temporary);
        }
    }

    /// Refuses to open anything but a file, a directory or a link to one:
    /// opening a FIFO blocks until a writer comes (and reading a device may
    /// never end), in the host thread running the call, where no deadline
    /// can stop it. Calls run file operations on their own thread
    /// (`allow_blocking_current_thread`), so this check is what keeps the
    /// deadline. Where the path does not resolve, the open fails by itself.
    fn check_ordinary(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
    ) -> FsResult<()> {
        let Descriptor::Dir(dir) = self.fs.table.get(fd)? else {
            return Ok(());
        };
        if !is_special(&dir.dir, path, follow) {
            return Ok(());
        }
        // Only inside the grants: a path that leaves them fails in the open
        // itself, and the refusal would tell the tool what lies outside.
        let Some(target) = self.locate_by_name(fd, path, follow) else {
            return Ok(());
        };
        self.refuse_special(&target)
    }

    /// The same refusal for the entry a change would open, from its held
    /// parent.
    fn check_ordinary_located(&mut self, located: &Located) -> FsResult<()> {
        let parent = located.entry.dir(&located.dir.dir);
        if is_special(parent, located.entry.bare_name(), false) {
            return self.refuse_special(&located.target.clone());
        }
        Ok(())
    }

    fn refuse_special(&mut self, target: &Path) -> FsResult<()> {
        if !self.guard.rules.may_use(target) {
            return Ok(());
        }
        let shown = self.guard.rules.shown(target);
        self.guard.refuse(Denial::SpecialFile {
            path: shown,
            kind: special_kind(target),
        })
    }

    /// Refuses a change through descriptor `fd` itself (its contents or
    /// times) when it lies in a protected path. An open descriptor stays on
    /// its file; the file cannot move into a protected path meanwhile.
    fn check_descriptor(&mut self, fd: &Resource<Descriptor>) -> FsResult<()> {
        let target = self.real_path(fd)?;
        let rules = &self.guard.rules;
        let hit = rules.covered(&target).or_else(|| {
            rules
                .protection
                .repository_holding(&target, &rules.lifted, rules.base(&target))
        });
        if let Some(hit) = hit {
            let path = rules.shown(&target);
            return self.guard.refuse(Denial::Protected { path, hit });
        }
        // Asked of the open file itself: a name added since the open counts.
        let stat = match self.fs.table.get(fd)? {
            Descriptor::File(file) => rustix::fs::fstat(&*file.file).ok(),
            Descriptor::Dir(_) => None,
        };
        if let Some(names) = stat.as_ref().and_then(other_names) {
            let path = rules.shown(&target);
            return self.guard.refuse(Denial::HardLinked { path, names });
        }
        Ok(())
    }

    fn take_budget(&self, bytes: u64) -> FsResult<()> {
        if self.guard.budget.take(bytes) {
            Ok(())
        } else {
            Err(FsError::trap(self.guard.budget.exceeded()))
        }
    }

    /// Charges `result`'s operation [`ENTRY_COST`] when `creates`, taken
    /// before it ran (`charged`): given back when it failed.
    fn settle_entry<T>(&self, charged: bool, result: FsResult<T>) -> FsResult<T> {
        if charged && result.is_err() {
            self.guard.budget.give_back(ENTRY_COST);
        }
        result
    }

    /// Refuses, and closes, a descriptor `open-at` made in toolhost's own
    /// records: where it really is decides, whatever links the path took.
    fn not_a_record(
        &mut self,
        opened: FsResult<Resource<Descriptor>>,
    ) -> FsResult<Resource<Descriptor>> {
        let Ok(fd) = &opened else {
            return opened;
        };
        // Fail closed: a descriptor whose place is unknown is not read.
        let place = self.real_path(fd);
        let record = place
            .as_ref()
            .ok()
            .and_then(|at| self.guard.rules.record_holding(at));
        if place.is_ok() && record.is_none() {
            return opened;
        }
        let fd = opened?;
        let rep = fd.rep();
        let _ = self.fs.table.delete(Resource::<Descriptor>::new_own(rep));
        match (place, record) {
            (Ok(at), Some(RecordHit { record, kind })) => {
                let path = self.guard.rules.shown(&at);
                self.guard.refuse(Denial::Record { path, record, kind })
            }
            _ => Err(ErrorCode::NotPermitted.into()),
        }
    }

    /// Counts a descriptor `open-at` made as held until the guest drops it.
    fn count_opened(
        &mut self,
        opened: FsResult<Resource<Descriptor>>,
    ) -> FsResult<Resource<Descriptor>> {
        if let Ok(fd) = &opened {
            self.guard.opened.insert(fd.rep());
        }
        opened
    }

    /// What writing `len` bytes at `offset` of the file `fd` costs: the
    /// bytes, and the hole before them when `offset` is past the end.
    fn write_cost(&self, fd: &Resource<Descriptor>, offset: u64, len: u64) -> FsResult<u64> {
        let Descriptor::File(file) = self.fs.table.get(fd)? else {
            return Ok(len);
        };
        if offset == 0 {
            return Ok(len);
        }
        let size = file.file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(len.saturating_add(offset.saturating_sub(size)))
    }

    /// Replaces the stream `stream` in the table with one that counts its
    /// bytes against the write budget.
    fn budgeted(
        &mut self,
        stream: Resource<DynOutputStream>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let inner: DynOutputStream = self.fs.table.delete(stream)?;
        let counted: DynOutputStream = Box::new(BudgetedStream {
            inner,
            budget: Arc::clone(&self.guard.budget),
        });
        Ok(self.fs.table.push(counted)?)
    }
}

/// Whether a link target has a `..` component (or is absolute). Where such
/// a target leads depends on links and directories that can change after
/// it is checked: `w1 -> w0/..` lands inside while `w0` is missing, and
/// `w0 -> .` made next sends it to the workspace's parent; moved to another
/// directory it points elsewhere too. A set of links without `..` can only
/// lead down or stay where they are, whatever is made or moved later.
fn climbs(target: &str) -> bool {
    Path::new(target).components().any(|component| {
        matches!(
            component,
            std::path::Component::ParentDir
                | std::path::Component::RootDir
                | std::path::Component::Prefix(_)
        )
    })
}

fn follows(flags: types::PathFlags) -> bool {
    flags.contains(types::PathFlags::SYMLINK_FOLLOW)
}

impl types::Host for Guarded<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.fs, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.fs, err)
    }
}

impl HostDescriptor for Guarded<'_> {
    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<wasmtime_wasi::p2::DynInputStream>> {
        use wasmtime_wasi::p2::DynInputStream;
        // Each stream may hold a read-ahead in the host: charged to the
        // call's memory until the guest drops it (super::held).
        let stream = HostDescriptor::read_via_stream(&mut self.fs, fd, offset)?;
        let inner: DynInputStream = self.fs.table.delete(stream)?;
        let charged = super::held::ChargedInput::new(inner, self.memory).map_err(FsError::trap)?;
        let charged: DynInputStream = Box::new(charged);
        Ok(self.fs.table.push(charged)?)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.check_descriptor(&fd)?;
        // A stream that starts past the end makes the hole at its first byte.
        let hole = self.write_cost(&fd, offset, 0)?;
        self.take_budget(hole)?;
        let stream = HostDescriptor::write_via_stream(&mut self.fs, fd, offset)?;
        self.budgeted(stream)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.check_descriptor(&fd)?;
        let stream = HostDescriptor::append_via_stream(&mut self.fs, fd)?;
        self.budgeted(stream)
    }

    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        HostDescriptor::advise(&mut self.fs, fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        HostDescriptor::sync_data(&mut self.fs, fd).await
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        HostDescriptor::get_flags(&mut self.fs, fd).await
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorType> {
        HostDescriptor::get_type(&mut self.fs, fd).await
    }

    async fn set_size(&mut self, fd: Resource<Descriptor>, size: types::Filesize) -> FsResult<()> {
        self.check_descriptor(&fd)?;
        // Growing a file counts against the budget like writing the bytes.
        if let Descriptor::File(file) = self.fs.table.get(&fd)? {
            let current = file.file.metadata().map(|m| m.len()).unwrap_or(0);
            self.take_budget(size.saturating_sub(current))?;
        }
        HostDescriptor::set_size(&mut self.fs, fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.check_descriptor(&fd)?;
        HostDescriptor::set_times(&mut self.fs, fd, atim, mtim).await
    }

    /// wasmtime-wasi's read zero-fills a buffer of the size asked for
    /// (up to 64 KiB) before reading into it; this reads into the
    /// allocation as it is, so asking for more than a file holds costs
    /// nothing. The same cap, the same answer: the bytes read, and
    /// end-of-stream only when nothing was left.
    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        let Descriptor::File(file) = self.fs.table.get(&fd)? else {
            return HostDescriptor::read(&mut self.fs, fd, len, offset).await;
        };
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(MAX_READ);
        let mut buffer = Vec::with_capacity(len);
        if len > 0 {
            rustix::io::pread(
                &*file.file,
                rustix::buffer::spare_capacity(&mut buffer),
                offset,
            )
            .map_err(std::io::Error::from)?;
        }
        let end = buffer.is_empty();
        Ok((buffer, end))
    }

    async fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        self.check_descriptor(&fd)?;
        let cost = self.write_cost(&fd, offset, buf.len() as u64)?;
        self.take_budget(cost)?;
        HostDescriptor::write(&mut self.fs, fd, buf, offset).await
    }

    /// Lists with the types the directory entries carry ([`Listing`])
    /// instead of wasmtime-wasi's `stat` of every entry. The stream's
    /// handle is the table slot of the guard's [`Stream`]: wasmtime-wasi's
    /// `ReaddirIterator` cannot be built outside it, and only this guard's
    /// `read_directory_entry` and `drop` ever see the handle.
    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        self.guard.may_hold(Held::Listings)?;
        let listed = self.real_path(&fd)?;
        if let Some(RecordHit { record, kind }) = self.guard.rules.record_holding(&listed) {
            let path = self.guard.rules.shown(&listed);
            return self.guard.refuse(Denial::Record { path, record, kind });
        }
        let Descriptor::Dir(dir) = self.fs.table.get(&fd)? else {
            return Err(ErrorCode::NotDirectory.into());
        };
        let listing = Stream {
            dir: Arc::clone(&dir.dir),
            listing: Listing::read(Arc::clone(&dir.dir))?,
        };
        let slot = self.fs.table.push(listing)?;
        self.guard.listings += 1;
        Ok(Resource::new_own(slot.rep()))
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        HostDescriptor::sync(&mut self.fs, fd).await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let located = self.locate(&fd, &path, false, ErrorCode::Exist)?;
        self.check(&located, Change::At)?;
        self.take_budget(ENTRY_COST)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::create_directory_at(&mut self.fs, acting.fd(), name).await;
        self.release(acting);
        self.settle_entry(true, result)
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat(&mut self.fs, fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat_at(&mut self.fs, fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        // `.`, `a/..`, and `l/` (the kernel follows a link there, even with
        // `AT_SYMLINK_NOFOLLOW`): the directory is opened, checked where it
        // is, and its times set through the held handle.
        if beneath::names_a_directory(&path) || beneath::ends_in_slash(&path) {
            return self.set_times_of_directory(&fd, &path, atim, mtim).await;
        }
        // Followed here, so the operation takes the last name as it is.
        let located = self.locate(&fd, &path, follows(path_flags), ErrorCode::Invalid)?;
        self.check(&located, Change::At)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::set_times_at(
            &mut self.fs,
            acting.fd(),
            types::PathFlags::empty(),
            name,
            atim,
            mtim,
        )
        .await;
        self.release(acting);
        result
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        if follows(old_path_flags) {
            // wasmtime-wasi's answer too: WASI cannot hard-link a link's
            // target.
            return Err(ErrorCode::Invalid.into());
        }
        // `l/` makes the kernel follow `l` where the guard would check the
        // link itself; it names a directory, which no hard link may have
        // (the kernel's `EPERM`), or something that is not one (`ENOTDIR`).
        if beneath::ends_in_slash(&old_path) {
            return Err(ErrorCode::NotPermitted.into());
        }
        let new = self.locate(&new_descriptor, &new_path, false, ErrorCode::Exist)?;
        self.check(&new, Change::Onto)?;
        let source = self.locate(&fd, &old_path, false, ErrorCode::Invalid)?;
        // On a read-only grant wasmtime-wasi refuses it; a refusal here would
        // advise a lift that cannot help.
        if !new.dir.perms.write_not_permitted() {
            // A second name for a link is a link in another place.
            if let Some(target) = self.link_target_of(&source)? {
                self.check_link_target(&new.target, &target)?;
            }
            // A second name for a file is a second way to write it: the
            // source is checked as a change of it would be, through its held
            // parent.
            let rules = &self.guard.rules;
            let parent = source.entry.dir(&source.dir.dir);
            let protected = rules
                .covered(&source.target)
                .or_else(|| rules.repository_around(parent, &source.target, false));
            let name = source.entry.bare_name();
            let stat = rustix::fs::statat(parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW);
            let shared = stat.ok().as_ref().and_then(other_names).is_some();
            if protected.is_some() || shared || !rules.may_write(&source.target) {
                let source = rules.shown(&source.target);
                return self.guard.refuse(Denial::HardLinkSource { source });
            }
            // A lift is for this tool, this run: a second name made now
            // would let any tool change the file in later runs. Only a name
            // that the same protection covers keeps it protected.
            if let Some(hit) = rules.protected_whatever_lifted(&source, &new) {
                let source = rules.shown(&source.target);
                return self
                    .guard
                    .refuse(Denial::HardLinkToProtected { source, hit });
            }
        }
        self.take_budget(ENTRY_COST)?;
        let ((from, old_name), (to, new_name)) =
            self.acting_both((&fd, source), (&new_descriptor, new))?;
        let result = HostDescriptor::link_at(
            &mut self.fs,
            from.fd(),
            types::PathFlags::empty(),
            old_name,
            to.fd(),
            new_name,
        )
        .await;
        self.release(from);
        self.release(to);
        self.settle_entry(true, result)
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        // Opening a directory, or creating a new file, cannot block.
        let may_block =
            !oflags.intersects(types::OpenFlags::DIRECTORY | types::OpenFlags::EXCLUSIVE);
        // A directory opened with `mutate-directory` changes nothing by
        // itself: every change through it comes back here.
        let changes = oflags.intersects(
            types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE | types::OpenFlags::EXCLUSIVE,
        ) || flags.contains(types::DescriptorFlags::WRITE);
        self.guard.may_hold(Held::Descriptors)?;
        if !changes {
            if may_block {
                self.check_ordinary(&fd, &path, follows(path_flags))?;
            }
            let opened =
                HostDescriptor::open_at(&mut self.fs, fd, path_flags, path, oflags, flags).await;
            let opened = self.not_a_record(opened);
            return self.count_opened(opened);
        }
        // `l/` makes the kernel follow `l`, even with `O_NOFOLLOW`, and name
        // a directory: one cannot be created, written or truncated by an
        // open (the kernel's `EISDIR`), so it is refused before anything is
        // resolved by name.
        if beneath::ends_in_slash(&path) {
            return Err(ErrorCode::IsDirectory.into());
        }
        // Links followed here, so the open takes the last name as it is
        // (and fails if it became a link since). `exclusive` never follows:
        // the kernel answers `exist` for any link there, which lock files
        // rely on.
        let follow = follows(path_flags) && !oflags.contains(types::OpenFlags::EXCLUSIVE);
        let located = self.locate(&fd, &path, follow, ErrorCode::IsDirectory)?;
        self.check(&located, Change::At)?;
        if may_block {
            self.check_ordinary_located(&located)?;
        }
        // A new entry costs the budget; an open of one already there (the
        // parent is held, so the answer is about the same directory) not.
        let creates = oflags.contains(types::OpenFlags::CREATE)
            && (oflags.contains(types::OpenFlags::EXCLUSIVE)
                || matches!(
                    beneath::entry_exists(
                        located.entry.dir(&located.dir.dir),
                        located.entry.bare_name()
                    ),
                    Ok(false)
                ));
        if creates {
            self.take_budget(ENTRY_COST)?;
        }
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::open_at(
            &mut self.fs,
            acting.fd(),
            types::PathFlags::empty(),
            name,
            oflags,
            flags,
        )
        .await;
        self.release(acting);
        let result = self.settle_entry(creates, result);
        let result = self.not_a_record(result);
        self.count_opened(result)
    }

    // `stat-at`, `readlink-at` and `metadata-hash-at` change nothing: they
    // go to wasmtime-wasi as they are (a trailing `/` follows a link there,
    // beneath the preopen, as any read does).
    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        HostDescriptor::readlink_at(&mut self.fs, fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let located = self.locate(&fd, &path, false, ErrorCode::Invalid)?;
        self.check(&located, Change::Away)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::remove_directory_at(&mut self.fs, acting.fd(), name).await;
        self.release(acting);
        result
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let old = self.locate(&fd, &old_path, false, ErrorCode::Invalid)?;
        self.check(&old, Change::Away)?;
        let new = self.locate(&new_fd, &new_path, false, ErrorCode::Invalid)?;
        self.check(&new, Change::Onto)?;
        // A link moved to another directory points somewhere else (renamed
        // in its own, it points where it did: `mv link link~`).
        if !new.dir.perms.write_not_permitted()
            && old.target.parent() != new.target.parent()
            && let Some(target) = self.link_target_of(&old)?
        {
            self.check_link_target(&new.target, &target)?;
        }
        let ((from, old_name), (to, new_name)) = self.acting_both((&fd, old), (&new_fd, new))?;
        let result =
            HostDescriptor::rename_at(&mut self.fs, from.fd(), old_name, to.fd(), new_name).await;
        self.release(from);
        self.release(to);
        result
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let located = self.locate(&fd, &dest_path, false, ErrorCode::Exist)?;
        self.check(&located, Change::Onto)?;
        if !located.dir.perms.write_not_permitted() {
            self.check_link_target(&located.target, &src_path)?;
        }
        self.take_budget(ENTRY_COST)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::symlink_at(&mut self.fs, acting.fd(), src_path, name).await;
        self.release(acting);
        self.settle_entry(true, result)
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let located = self.locate(&fd, &path, false, ErrorCode::IsDirectory)?;
        self.check(&located, Change::Away)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::unlink_file_at(&mut self.fs, acting.fd(), name).await;
        self.release(acting);
        result
    }

    async fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        HostDescriptor::is_same_object(&mut self.fs, a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash(&mut self.fs, fd).await
    }

    /// Right after a directory stream returned `path` (wasi-libc's
    /// `readdir` asks this of every entry), the answer comes from the
    /// listing instead of a `stat` by name; any other question goes on.
    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        if let Some(listed) = self.guard.just_listed.take()
            && !follows(path_flags)
            && listed.name == path
            && let Descriptor::Dir(dir) = self.fs.table.get(&fd)?
            && Arc::ptr_eq(&dir.dir, &listed.dir)
        {
            return Ok(listed.hash);
        }
        HostDescriptor::metadata_hash_at(&mut self.fs, fd, path_flags, path).await
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.guard.opened.remove(&fd.rep());
        HostDescriptor::drop(&mut self.fs, fd)
    }
}

/// A directory stream of the guard's: the listing and the directory it
/// lists.
struct Stream {
    dir: Arc<std::fs::File>,
    listing: Listing,
}

/// A stream from [`HostDescriptor::read_directory`] above is a [`Stream`]
/// in the table; any other (none is made today) is wasmtime-wasi's.
impl HostDirectoryEntryStream for Guarded<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        self.guard.just_listed = None;
        let ours = Resource::<Stream>::new_borrow(stream.rep());
        let Ok(Stream { dir, listing }) = self.fs.table.get_mut(&ours) else {
            return HostDirectoryEntryStream::read_directory_entry(&mut self.fs, stream).await;
        };
        let Some(Listed { entry, hash }) = listing.next()? else {
            return Ok(None);
        };
        self.guard.just_listed = Some(JustListed {
            dir: Arc::clone(dir),
            name: entry.name.clone(),
            hash,
        });
        Ok(Some(entry))
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        let listing = Resource::<Stream>::new_own(stream.rep());
        if self.fs.table.get(&listing).is_ok() {
            self.fs.table.delete(listing)?;
            self.guard.listings = self.guard.listings.saturating_sub(1);
            return Ok(());
        }
        HostDirectoryEntryStream::drop(&mut self.fs, stream)
    }
}

/// A file's output stream that counts what goes through it against the
/// call's write budget.
struct BudgetedStream {
    inner: DynOutputStream,
    budget: Arc<WriteBudget>,
}

impl BudgetedStream {
    fn take(&self, bytes: usize) -> StreamResult<()> {
        if self.budget.take(bytes as u64) {
            Ok(())
        } else {
            Err(StreamError::Trap(self.budget.exceeded()))
        }
    }
}

#[async_trait]
impl OutputStream for BudgetedStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.take(bytes.len())?;
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        self.take(nelem)?;
        self.inner.write_zeroes(nelem)
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

#[async_trait]
impl Pollable for BudgetedStream {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}
