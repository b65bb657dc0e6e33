//! `read-directory` without a `stat` per entry.
//!
//! wasmtime-wasi 48 lists a directory by reading it and then `stat`ing
//! every entry by name for its type, which the kernel's directory entries
//! already carry (`d_type`). For a tool that walks a tree (`search_text`,
//! `list_files`) that `stat` was about a third of the host's work per
//! entry. This lists with the entry's own type and asks `stat` only where
//! the file system does not give it (`DT_UNKNOWN`).
//!
//! The listing is read as the guest asks, a `getdents` buffer (at most
//! about 24 KiB) at a time, not whole when the stream is opened as
//! wasmtime-wasi does: a call that holds many listings of a large directory
//! holds a buffer and a descriptor each, not the directory. It gives the
//! same entries: no `.` or `..`, the same types, a name that is not UTF-8
//! as an `illegal-byte-sequence` error in its place.
//!
//! Each entry also carries its metadata hash, from the directory's device
//! and the entry's inode number (`d_ino`): wasi-libc's `readdir` asks
//! `metadata-hash-at` for every entry it returns (its `d_ino`), another
//! `stat` by name, and the guard answers that question from here. The hash
//! is wasmtime-wasi's formula, so it equals what a `stat` gives (the escape
//! suite checks); where `d_ino` is not the inode a `stat` finds (a mount
//! point), the answer differs as a native `readdir`'s `d_ino` does.

use std::ffi::CStr;
use std::fs::File;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::Arc;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use wasmtime_wasi::p2::FsError;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorType, DirectoryEntry, ErrorCode, MetadataHashValue,
};

/// The entries of one directory, read as the guest asks for them.
pub(crate) struct Listing {
    /// The directory, for the `stat` of an entry whose type it does not say.
    dir: Arc<File>,
    dev: u64,
    reader: Dir,
}

/// One entry and its metadata hash.
#[derive(Debug)]
pub(crate) struct Listed {
    pub(crate) entry: DirectoryEntry,
    pub(crate) hash: MetadataHashValue,
}

impl Listing {
    /// Opens a listing of the directory `dir` (an open directory
    /// descriptor): a descriptor of its own, read from the start.
    pub(crate) fn read(dir: Arc<File>) -> Result<Listing, FsError> {
        let fd = rustix::fs::openat(
            &*dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(std::io::Error::from)?;
        let dev = rustix::fs::fstat(&fd).map_err(std::io::Error::from)?.st_dev;
        let reader = Dir::new(fd).map_err(std::io::Error::from)?;
        Ok(Listing { dir, dev, reader })
    }

    /// The next entry, `None` after the last (and after a read error).
    pub(crate) fn next(&mut self) -> Result<Option<Listed>, FsError> {
        loop {
            let entry = match self.reader.read() {
                None => return Ok(None),
                Some(Err(e)) => return Err(std::io::Error::from(e).into()),
                Some(Ok(entry)) => entry,
            };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            return listed(&self.dir, self.dev, name, entry.file_type(), entry.ino())
                .map(Some)
                .map_err(FsError::from);
        }
    }
}

/// One entry of `dir` (on device `dev`): its name as UTF-8, its type from
/// the directory entry or, where that says nothing, from `stat` without
/// following a link, and its metadata hash.
fn listed(
    dir: &File,
    dev: u64,
    name: &CStr,
    kind: FileType,
    ino: u64,
) -> Result<Listed, ErrorCode> {
    let (kind, dev, ino) = match kind {
        FileType::Unknown => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => (
                FileType::from_raw_mode(stat.st_mode),
                stat.st_dev,
                stat.st_ino,
            ),
            Err(_) => (FileType::Unknown, dev, ino),
        },
        known => (known, dev, ino),
    };
    let name = name
        .to_str()
        .map_err(|_| ErrorCode::IllegalByteSequence)?
        .to_string();
    let type_ = match kind {
        FileType::RegularFile => DescriptorType::RegularFile,
        FileType::Directory => DescriptorType::Directory,
        FileType::Symlink => DescriptorType::SymbolicLink,
        FileType::Fifo => DescriptorType::Fifo,
        FileType::Socket => DescriptorType::Socket,
        FileType::CharacterDevice => DescriptorType::CharacterDevice,
        FileType::BlockDevice => DescriptorType::BlockDevice,
        FileType::Unknown => DescriptorType::Unknown,
    };
    Ok(Listed {
        entry: DirectoryEntry { type_, name },
        hash: identity_hash(dev, ino),
    })
}

/// The metadata hash of the file with this device and inode, by
/// wasmtime-wasi 48's own formula (`MetadataHashValue::new` of the pair), so
/// the guard's answer equals wasmtime-wasi's for the same file.
fn identity_hash(dev: u64, ino: u64) -> MetadataHashValue {
    let mut hasher = DefaultHasher::new();
    (dev, ino).hash(&mut hasher);
    let lower = hasher.finish();
    MetadataHashValue {
        lower,
        upper: lower ^ 4614256656552045848,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_types(dir: &std::path::Path) -> Vec<(String, DescriptorType)> {
        let mut listing =
            Listing::read(Arc::new(File::open(dir).expect("open dir"))).expect("listing");
        let mut found = Vec::new();
        while let Some(listed) = listing.next().expect("entry") {
            found.push((listed.entry.name, listed.entry.type_));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    #[test]
    fn lists_every_entry_with_its_type_and_no_dot_entries() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::write(root.join("file.txt"), "x").expect("write");
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::os::unix::fs::symlink("file.txt", root.join("link")).expect("symlink");
        std::os::unix::fs::symlink("missing", root.join("dangling")).expect("symlink");
        let fifo =
            std::ffi::CString::new(root.join("pipe").as_os_str().as_encoded_bytes()).expect("path");
        rustix::fs::mkfifoat(rustix::fs::CWD, fifo.as_c_str(), Mode::RUSR | Mode::WUSR)
            .expect("mkfifo");
        assert_eq!(
            names_and_types(root),
            vec![
                ("dangling".to_string(), DescriptorType::SymbolicLink),
                ("file.txt".to_string(), DescriptorType::RegularFile),
                ("link".to_string(), DescriptorType::SymbolicLink),
                ("pipe".to_string(), DescriptorType::Fifo),
                ("sub".to_string(), DescriptorType::Directory),
            ]
        );
    }

    #[test]
    fn a_name_that_is_not_utf8_is_an_error_in_its_place() {
        use std::os::unix::ffi::OsStrExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let bad = std::ffi::OsStr::from_bytes(b"latin1-\xe9.txt");
        std::fs::write(dir.path().join(bad), "x").expect("write");
        let mut listing =
            Listing::read(Arc::new(File::open(dir.path()).expect("open dir"))).expect("listing");
        let error = listing.next().expect_err("the bad name");
        assert_eq!(
            error.downcast_ref(),
            Some(&ErrorCode::IllegalByteSequence),
            "{error:?}"
        );
        assert!(listing.next().expect("end").is_none());
    }

    #[test]
    fn each_entry_hashes_its_device_and_inode() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a"), "x").expect("write");
        let mut listing =
            Listing::read(Arc::new(File::open(dir.path()).expect("open dir"))).expect("listing");
        let listed = listing.next().expect("entry").expect("one entry");
        let meta = std::fs::symlink_metadata(dir.path().join("a")).expect("stat");
        let expected = identity_hash(meta.dev(), meta.ino());
        assert_eq!(
            (listed.hash.lower, listed.hash.upper),
            (expected.lower, expected.upper)
        );
        assert_ne!(
            listed.hash.lower,
            identity_hash(meta.dev(), meta.ino() + 1).lower
        );
    }

    #[test]
    fn an_empty_directory_ends_at_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(names_and_types(dir.path()).is_empty());
    }
}
