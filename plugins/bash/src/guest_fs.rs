//! The shell's files: bashkit's `FileSystem` over the component's own
//! WASI file system, so every open, write and listing is one the host's
//! guard sees and holds to the tool's grants (read-only or read-write,
//! protected paths, links, the write budget). Nothing here decides what
//! is allowed; it only says where a path of the shell lands ([`Layout`]).

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use bashkit::{
    DirEntry, FileSystem, FileSystemExt, FileType, InMemoryFs, Metadata, Result, async_trait,
};

use wasip2::filesystem::types::Descriptor;

use crate::paths::{Layout, Place};

/// The workspace and the grants through WASI, `/tmp` in memory.
pub struct GuestFs {
    layout: Layout,
    scratch: InMemoryFs,
    /// Files this call made executable with `chmod`: WASI has no
    /// permission bits, so the mode a file shows is the usual `0644`, or
    /// `0755` once `chmod +x` named it in this call (`chmod +x s.sh &&
    /// ./s.sh` works; `./s.sh` in a later call needs `bash s.sh`).
    executable: std::sync::Mutex<std::collections::HashSet<PathBuf>>,
    /// The call's preopens, asked for once.
    preopens: std::sync::OnceLock<Vec<(Descriptor, String)>>,
}

impl GuestFs {
    pub fn new(layout: Layout) -> GuestFs {
        GuestFs {
            layout,
            scratch: InMemoryFs::new(),
            executable: std::sync::Mutex::default(),
            preopens: std::sync::OnceLock::new(),
        }
    }

    fn preopens(&self) -> &[(Descriptor, String)] {
        self.preopens
            .get_or_init(wasip2::filesystem::preopens::get_directories)
    }

    /// `meta` of the file at the guest path `guest`, with the mode this
    /// call gave it.
    fn with_mode(&self, guest: &Path, mut meta: Metadata) -> Metadata {
        let executable = self
            .executable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if meta.file_type == FileType::File && executable.contains(guest) {
            meta.mode = 0o755;
        }
        meta
    }

    /// [`GuestFs::with_mode`] of the entry `name` of the directory at the
    /// guest path `dir`, without making its path when no file was made
    /// executable (a listing's every entry comes here).
    fn with_mode_of_entry(&self, dir: &Path, name: &str, meta: Metadata) -> Metadata {
        let none = self
            .executable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty();
        if none {
            return meta;
        }
        // `chmod` keeps what `place` gives: `s.sh` at the workspace's root,
        // not `./s.sh`.
        let path = if dir == Path::new(".") {
            PathBuf::from(name)
        } else {
            dir.join(name)
        };
        self.with_mode(&path, meta)
    }

    /// The guest path std opens for `path`, or the scratch path.
    fn guest(&self, path: &Path) -> Target {
        match self.layout.place(path) {
            Place::Workspace(relative) => Target::Wasi(relative),
            Place::Elsewhere(absolute) => Target::Wasi(absolute),
            Place::Scratch(path) => Target::Scratch(path),
        }
    }
}

enum Target {
    Wasi(PathBuf),
    Scratch(PathBuf),
}

/// A directory the workspace is in: it exists as the way down to the
/// workspace and holds nothing else the shell can see ([`Layout`]).
fn way_down() -> Metadata {
    Metadata {
        file_type: FileType::Directory,
        mode: 0o755,
        ..Metadata::default()
    }
}

fn metadata(m: &std::fs::Metadata) -> Metadata {
    let kind = m.file_type();
    let file_type = if kind.is_symlink() {
        FileType::Symlink
    } else if kind.is_dir() {
        FileType::Directory
    } else {
        FileType::File
    };
    let modified = m.modified().unwrap_or(UNIX_EPOCH);
    Metadata {
        file_type,
        size: m.len(),
        // WASI has no permission bits: directories and files read as the
        // usual defaults.
        mode: if kind.is_dir() { 0o755 } else { 0o644 },
        modified,
        created: m.created().unwrap_or(modified),
    }
}

#[async_trait]
impl FileSystemExt for GuestFs {}

#[async_trait]
impl FileSystem for GuestFs {
    async fn read_file(&self, path: &Path) -> Result<Vec<u8>> {
        match self.guest(path) {
            Target::Wasi(p) => Ok(read_whole(self.preopens(), &p)?),
            Target::Scratch(p) => self.scratch.read_file(&p).await,
        }
    }

    async fn write_file(&self, path: &Path, content: &[u8]) -> Result<()> {
        match self.guest(path) {
            Target::Wasi(p) => Ok(std::fs::write(p, content)?),
            Target::Scratch(p) => self.scratch.write_file(&p, content).await,
        }
    }

    async fn append_file(&self, path: &Path, content: &[u8]) -> Result<()> {
        match self.guest(path) {
            Target::Wasi(p) => {
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(p)?;
                Ok(file.write_all(content)?)
            }
            Target::Scratch(p) => self.scratch.append_file(&p, content).await,
        }
    }

    async fn mkdir(&self, path: &Path, recursive: bool) -> Result<()> {
        match self.guest(path) {
            Target::Wasi(p) if recursive => Ok(std::fs::create_dir_all(p)?),
            Target::Wasi(p) => Ok(std::fs::create_dir(p)?),
            Target::Scratch(p) => self.scratch.mkdir(&p, recursive).await,
        }
    }

    async fn remove(&self, path: &Path, recursive: bool) -> Result<()> {
        match self.guest(path) {
            Target::Wasi(p) => {
                let meta = std::fs::symlink_metadata(&p)?;
                if !meta.is_dir() {
                    Ok(std::fs::remove_file(p)?)
                } else if recursive {
                    Ok(std::fs::remove_dir_all(p)?)
                } else {
                    Ok(std::fs::remove_dir(p)?)
                }
            }
            Target::Scratch(p) => self.scratch.remove(&p, recursive).await,
        }
    }

    /// Without following a link in the last name, as bashkit's contract
    /// for a layer under its own link-following one asks (`lstat` is
    /// the same).
    async fn stat(&self, path: &Path) -> Result<Metadata> {
        if self.layout.holds_workspace(path) {
            return Ok(way_down());
        }
        match self.guest(path) {
            Target::Wasi(p) => Ok(self.with_mode(&p, metadata(&std::fs::symlink_metadata(&p)?))),
            Target::Scratch(p) => self.scratch.stat(&p).await,
        }
    }

    async fn lstat(&self, path: &Path) -> Result<Metadata> {
        self.stat(path).await
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>> {
        if let Some(next) = self.layout.next_toward_workspace(path) {
            return Ok(vec![DirEntry {
                name: next,
                metadata: way_down(),
            }]);
        }
        match self.guest(path) {
            Target::Wasi(p) => {
                if let Some(entries) = list_dir(self.preopens(), &p) {
                    return Ok(entries
                        .into_iter()
                        .map(|(name, meta)| DirEntry {
                            metadata: self.with_mode_of_entry(&p, &name, meta),
                            name,
                        })
                        .collect());
                }
                let mut entries = Vec::new();
                for entry in std::fs::read_dir(p)? {
                    let entry = entry?;
                    entries.push(DirEntry {
                        name: entry.file_name().to_string_lossy().into_owned(),
                        metadata: metadata(&entry.metadata()?),
                    });
                }
                Ok(entries)
            }
            Target::Scratch(p) => self.scratch.read_dir(&p).await,
        }
    }

    /// A walk's listing (`grep -r`): names and kinds as the directory
    /// gives them, without a look at each entry.
    async fn read_dir_kinds(&self, path: &Path) -> Result<Vec<(String, FileType)>> {
        if let Some(next) = self.layout.next_toward_workspace(path) {
            return Ok(vec![(next, FileType::Directory)]);
        }
        match self.guest(path) {
            Target::Wasi(p) => match list_kinds(self.preopens(), &p) {
                Some(entries) => Ok(entries),
                None => Ok(self
                    .read_dir(path)
                    .await?
                    .into_iter()
                    .map(|entry| (entry.name, entry.metadata.file_type))
                    .collect()),
            },
            Target::Scratch(p) => self.scratch.read_dir_kinds(&p).await,
        }
    }

    async fn exists(&self, path: &Path) -> Result<bool> {
        if self.layout.holds_workspace(path) {
            return Ok(true);
        }
        match self.guest(path) {
            Target::Wasi(p) => Ok(std::fs::symlink_metadata(p).is_ok()),
            Target::Scratch(p) => self.scratch.exists(&p).await,
        }
    }

    async fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        match (self.guest(from), self.guest(to)) {
            (Target::Wasi(from), Target::Wasi(to)) => Ok(std::fs::rename(from, to)?),
            (Target::Scratch(from), Target::Scratch(to)) => self.scratch.rename(&from, &to).await,
            _ => Err(crossing("rename")),
        }
    }

    async fn copy(&self, from: &Path, to: &Path) -> Result<()> {
        match (self.guest(from), self.guest(to)) {
            (Target::Wasi(from), Target::Wasi(to)) => {
                std::fs::copy(from, to)?;
                Ok(())
            }
            (Target::Scratch(from), Target::Scratch(to)) => self.scratch.copy(&from, &to).await,
            (Target::Wasi(from), Target::Scratch(to)) => {
                let content = std::fs::read(from)?;
                self.scratch.write_file(&to, &content).await
            }
            (Target::Scratch(from), Target::Wasi(to)) => {
                let content = self.scratch.read_file(&from).await?;
                Ok(std::fs::write(to, content)?)
            }
        }
    }

    async fn symlink(&self, target: &Path, link: &Path) -> Result<()> {
        match self.guest(link) {
            // The target is kept as written: the host refuses one that
            // leads out of the grants or climbs with `..`.
            Target::Wasi(link) => symlink(self.preopens(), target, &link),
            Target::Scratch(link) => self.scratch.symlink(target, &link).await,
        }
    }

    async fn read_link(&self, path: &Path) -> Result<PathBuf> {
        match self.guest(path) {
            Target::Wasi(p) => Ok(std::fs::read_link(p)?),
            Target::Scratch(p) => self.scratch.read_link(&p).await,
        }
    }

    /// WASI has no permission bits: a mode with an execute bit is kept
    /// for the call ([`GuestFs::executable`]), any other changes nothing.
    async fn chmod(&self, path: &Path, mode: u32) -> Result<()> {
        match self.guest(path) {
            Target::Wasi(p) => {
                std::fs::symlink_metadata(&p)?;
                let mut executable = self
                    .executable
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if mode & 0o111 != 0 {
                    executable.insert(p);
                } else {
                    executable.remove(&p);
                }
                Ok(())
            }
            Target::Scratch(p) => self.scratch.chmod(&p, mode).await,
        }
    }

    async fn set_modified_time(&self, path: &Path, time: std::time::SystemTime) -> Result<()> {
        match self.guest(path) {
            Target::Wasi(p) => {
                // A directory opens for reading only; its times change
                // through that (the guard checks the change as any other).
                let file = match std::fs::OpenOptions::new().write(true).open(&p) {
                    Err(error) if error.kind() == io::ErrorKind::IsADirectory => {
                        std::fs::File::open(&p)?
                    }
                    opened => opened?,
                };
                Ok(file.set_modified(time)?)
            }
            Target::Scratch(p) => self.scratch.set_modified_time(&p, time).await,
        }
    }
}

/// The preopen that holds the guest path `path`, and the path relative to
/// it: the one with the longest name that contains it, as wasi-libc picks.
fn preopen_of<'a>(
    preopens: &'a [(Descriptor, String)],
    path: &Path,
) -> Option<(&'a Descriptor, String)> {
    let (dir, name) = preopens
        .iter()
        .filter(|(_, name)| {
            if name == "." {
                !path.is_absolute()
            } else {
                path.starts_with(name)
            }
        })
        .max_by_key(|(_, name)| if name == "." { 0 } else { name.len() })?;
    let relative = if name == "." {
        path.to_string_lossy().into_owned()
    } else {
        path.strip_prefix(name)
            .map(|rest| rest.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    Some((
        dir,
        if relative.is_empty() {
            ".".into()
        } else {
            relative
        },
    ))
}

/// `ln -s target link` through the preopen that holds `link` (std's
/// `symlink_path` is unstable on WASI).
fn symlink(preopens: &[(Descriptor, String)], target: &Path, link: &Path) -> Result<()> {
    let Some((dir, relative)) = preopen_of(preopens, link) else {
        return Err(io::Error::from(io::ErrorKind::NotFound).into());
    };
    dir.symlink_at(&target.to_string_lossy(), &relative)
        .map_err(|code| wasi_error(code).into())
}

/// The most one `wasi:filesystem` read returns (wasmtime-wasi's cap).
const MAX_READ: u64 = 64 << 10;

/// The file at the guest path `path`, whole, read through
/// `wasi:filesystem` itself as `search_text` reads (open-at, reads at an
/// offset until one comes back short, drop: three host calls for a file
/// of up to 64 KiB, where `std::fs::read` makes seven). A path the direct
/// route cannot open or read goes to `std::fs::read`, so its error reads
/// as before.
fn read_whole(preopens: &[(Descriptor, String)], path: &Path) -> io::Result<Vec<u8>> {
    use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
    let opened = preopen_of(preopens, path).and_then(|(dir, relative)| {
        dir.open_at(
            PathFlags::SYMLINK_FOLLOW,
            &relative,
            OpenFlags::empty(),
            DescriptorFlags::READ,
        )
        .ok()
    });
    let Some(file) = opened else {
        return std::fs::read(path);
    };
    let mut bytes = Vec::new();
    loop {
        // A read that fails (a directory opens, and then cannot be read)
        // is left to std, whose error names it as bash would.
        let Ok((chunk, end)) = file.read(MAX_READ, bytes.len() as u64) else {
            return std::fs::read(path);
        };
        // A regular file's read is short only at its end.
        let short = (chunk.len() as u64) < MAX_READ;
        if bytes.is_empty() && (end || short) {
            // The whole file in one read: that buffer is the file.
            return Ok(chunk);
        }
        bytes.extend_from_slice(&chunk);
        if end || short {
            return Ok(bytes);
        }
    }
}

/// The entries of the directory at the guest path `path` with their
/// metadata, through `wasi:filesystem` itself: the directory is opened
/// once and each entry is looked at relative to it, one name for the host
/// to resolve instead of the whole path from the preopen (std's
/// `DirEntry::metadata` on WASI stats the full path). `None` where this
/// route cannot open or list the directory: std's error then reads as
/// bash's.
fn list_dir(preopens: &[(Descriptor, String)], path: &Path) -> Option<Vec<(String, Metadata)>> {
    in_dir(preopens, path, |dir, entry| {
        use wasip2::filesystem::types::PathFlags;
        let stat = dir.stat_at(PathFlags::empty(), &entry.name).ok()?;
        Some((entry.name, wasi_metadata(&stat)))
    })
}

/// The names and kinds of the entries of the directory at the guest path
/// `path`, as the listing gives them: no entry is looked at.
fn list_kinds(preopens: &[(Descriptor, String)], path: &Path) -> Option<Vec<(String, FileType)>> {
    use wasip2::filesystem::types::DescriptorType;
    in_dir(preopens, path, |_, entry| {
        let kind = match entry.type_ {
            DescriptorType::Directory => FileType::Directory,
            DescriptorType::SymbolicLink => FileType::Symlink,
            // Not read by a walk (`grep -r` skips them, as GNU's does); the
            // host refuses to open one anyway.
            DescriptorType::Fifo => FileType::Fifo,
            _ => FileType::File,
        };
        Some((entry.name, kind))
    })
}

/// `each` of the entries of the directory at the guest path `path`, in
/// the order listed, with the directory they are in; `None` where the
/// directory cannot be opened or listed or `each` gives `None`.
fn in_dir<T>(
    preopens: &[(Descriptor, String)],
    path: &Path,
    mut each: impl FnMut(&Descriptor, wasip2::filesystem::types::DirectoryEntry) -> Option<T>,
) -> Option<Vec<T>> {
    use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
    let (root, relative) = preopen_of(preopens, path)?;
    let opened;
    let dir = if relative == "." {
        root
    } else {
        opened = root
            .open_at(
                PathFlags::SYMLINK_FOLLOW,
                &relative,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .ok()?;
        &opened
    };
    let stream = dir.read_directory().ok()?;
    let mut entries = Vec::new();
    while let Some(entry) = stream.read_directory_entry().ok()? {
        entries.push(each(dir, entry)?);
    }
    Some(entries)
}

/// bashkit's metadata of a `wasi:filesystem` stat, as [`metadata`] of std's.
fn wasi_metadata(stat: &wasip2::filesystem::types::DescriptorStat) -> Metadata {
    use wasip2::filesystem::types::DescriptorType;
    let file_type = match stat.type_ {
        DescriptorType::SymbolicLink => FileType::Symlink,
        DescriptorType::Directory => FileType::Directory,
        DescriptorType::Fifo => FileType::Fifo,
        _ => FileType::File,
    };
    let time = |t: Option<wasip2::clocks::wall_clock::Datetime>| {
        t.map_or(UNIX_EPOCH, |t| {
            UNIX_EPOCH + std::time::Duration::new(t.seconds, t.nanoseconds)
        })
    };
    let modified = time(stat.data_modification_timestamp);
    Metadata {
        file_type,
        size: stat.size,
        mode: if file_type == FileType::Directory {
            0o755
        } else {
            0o644
        },
        modified,
        // WASI has no creation time; std's falls back to the same.
        created: modified,
    }
}

/// A WASI error code as the `io::Error` bashkit renders in bash's words.
fn wasi_error(code: wasip2::filesystem::types::ErrorCode) -> io::Error {
    use wasip2::filesystem::types::ErrorCode;
    let kind = match code {
        ErrorCode::Access | ErrorCode::NotPermitted | ErrorCode::ReadOnly => {
            io::ErrorKind::PermissionDenied
        }
        ErrorCode::Exist => io::ErrorKind::AlreadyExists,
        ErrorCode::NoEntry => io::ErrorKind::NotFound,
        ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
        _ => return io::Error::other(code.message()),
    };
    io::Error::from(kind)
}

/// A rename between the workspace and the in-memory `/tmp`.
fn crossing(what: &str) -> bashkit::Error {
    io::Error::new(
        io::ErrorKind::CrossesDevices,
        format!("cannot {what} between /tmp (in memory) and the files on disk; copy instead"),
    )
    .into()
}
