//! `read-directory` without a `stat` per entry.
//!
//! wasmtime-wasi 48 lists a directory by reading it and then `stat`ing
//! every entry by name for its type, which the kernel's directory entries
//! already carry (`d_type`). For a tool that walks a tree (`search_text`,
//! `list_files`) that `stat` was about a third of the host's work per
//! entry. This lists with the entry's own type and asks `stat` only where
//! the file system does not give it (`DT_UNKNOWN`).
//!
//! The listing is read whole when the stream is opened, as wasmtime-wasi
//! does, and gives the same entries: no `.` or `..`, the same types, a
//! name that is not UTF-8 as an `illegal-byte-sequence` error in its place.

use std::ffi::CStr;
use std::fs::File;
use std::vec;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use wasmtime_wasi::p2::FsError;
use wasmtime_wasi::p2::bindings::filesystem::types::{DescriptorType, DirectoryEntry, ErrorCode};

/// The entries of one directory, read when the guest opened the stream.
pub(crate) struct Listing {
    entries: vec::IntoIter<Result<DirectoryEntry, ErrorCode>>,
    /// A read error after the entries before it, given last.
    error: Option<FsError>,
}

impl Listing {
    /// Reads the directory `dir` (an open directory descriptor).
    pub(crate) fn read(dir: &File) -> Result<Listing, FsError> {
        let fd = rustix::fs::openat(
            dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(std::io::Error::from)?;
        let mut reader = Dir::new(fd).map_err(std::io::Error::from)?;
        let mut entries = Vec::new();
        let mut error = None;
        while let Some(entry) = reader.read() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    error = Some(std::io::Error::from(e).into());
                    break;
                }
            };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            entries.push(directory_entry(dir, name, entry.file_type()));
        }
        Ok(Listing {
            entries: entries.into_iter(),
            error,
        })
    }

    /// The next entry, `None` after the last.
    pub(crate) fn next(&mut self) -> Result<Option<DirectoryEntry>, FsError> {
        match self.entries.next() {
            Some(Ok(entry)) => Ok(Some(entry)),
            Some(Err(code)) => Err(code.into()),
            None => match self.error.take() {
                Some(error) => Err(error),
                None => Ok(None),
            },
        }
    }
}

/// One entry of `dir`: its name as UTF-8 and its type, from the directory
/// entry or, where that says nothing, from `stat` without following a link.
fn directory_entry(dir: &File, name: &CStr, kind: FileType) -> Result<DirectoryEntry, ErrorCode> {
    let kind = match kind {
        FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
            .unwrap_or(FileType::Unknown),
        known => known,
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
    Ok(DirectoryEntry { type_, name })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_types(dir: &std::path::Path) -> Vec<(String, DescriptorType)> {
        let mut listing = Listing::read(&File::open(dir).expect("open dir")).expect("listing");
        let mut found = Vec::new();
        while let Some(entry) = listing.next().expect("entry") {
            found.push((entry.name, entry.type_));
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
            Listing::read(&File::open(dir.path()).expect("open dir")).expect("listing");
        let error = listing.next().expect_err("the bad name");
        assert_eq!(
            error.downcast_ref(),
            Some(&ErrorCode::IllegalByteSequence),
            "{error:?}"
        );
        assert!(listing.next().expect("end").is_none());
    }

    #[test]
    fn an_empty_directory_ends_at_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(names_and_types(dir.path()).is_empty());
    }
}
