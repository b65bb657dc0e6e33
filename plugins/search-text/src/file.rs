//! Opening and reading the files to search, with as few host calls as a
//! file allows: each one crosses into wasmtime-wasi and costs about as much
//! as searching a few KiB.
//!
//! On WASI p2 a file is opened and read through `wasi:filesystem` itself
//! (open-at on the grant's preopen, `read` at an offset, drop): three calls
//! for a file of up to 64 KiB, where `std::fs::File` through wasi-libc makes
//! seven (a `stat`, an input stream opened and dropped, and a read that only
//! finds the end). A read that returns less than it asked for is the end:
//! a regular file's `pread` is short only there, and toolhost's `read` does
//! not fill the buffer it reads into first, so asking for the most one read
//! gives (64 KiB) costs a small file nothing. Anything the direct route
//! cannot open (no preopen matches the path, an error) is opened with
//! `std::fs::File` instead, so errors read as before. Elsewhere (the native
//! unit tests) it is always `std::fs::File`, read by its size: a short read
//! that reaches the size is the end, and a file found longer than its size
//! is read on to its real end.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens files for the search; holds the preopens on WASI.
pub(crate) struct Opener {
    #[cfg(all(target_os = "wasi", target_env = "p2"))]
    preopens: Vec<(wasi::Descriptor, String)>,
}

impl Opener {
    pub(crate) fn new() -> Opener {
        Opener {
            #[cfg(all(target_os = "wasi", target_env = "p2"))]
            preopens: wasi::preopens(),
        }
    }

    /// Opens `path` for reading, as `File::open` would.
    pub(crate) fn open(&self, path: &Path) -> io::Result<SearchFile> {
        #[cfg(all(target_os = "wasi", target_env = "p2"))]
        if let Some(file) = wasi::open(&self.preopens, path) {
            return Ok(file);
        }
        let file = File::open(path)?;
        let size = file.metadata().ok().map(|m| m.len());
        Ok(SearchFile::new(Inner::Std(file), size))
    }
}

/// The most one `wasi:filesystem` read returns (wasmtime-wasi's cap).
#[cfg(all(target_os = "wasi", target_env = "p2"))]
const MAX_READ: usize = 64 << 10;

/// An open file, read from the start.
pub(crate) struct SearchFile {
    inner: Inner,
    offset: u64,
    /// The size from the file's metadata, until a read finds more.
    size: Option<u64>,
    /// A read shorter than asked is the end (reads straight from the host).
    short_is_end: bool,
    at_end: bool,
}

enum Inner {
    Std(File),
    #[cfg(all(target_os = "wasi", target_env = "p2"))]
    Wasi(wasi::Descriptor),
}

impl SearchFile {
    fn new(inner: Inner, size: Option<u64>) -> SearchFile {
        SearchFile {
            inner,
            offset: 0,
            size,
            short_is_end: false,
            at_end: false,
        }
    }
}

impl crate::searcher::Source for SearchFile {
    /// A first read straight from the host returns its bytes in a buffer
    /// of their own; for a file of up to 64 KiB that is the whole file, which
    /// is then searched there instead of copied.
    fn first_bytes(&mut self, max: usize) -> Option<io::Result<(Vec<u8>, bool)>> {
        #[cfg(all(target_os = "wasi", target_env = "p2"))]
        if let Inner::Wasi(descriptor) = &self.inner
            && self.offset == 0
            && !self.at_end
        {
            let want = max.clamp(1, MAX_READ);
            return Some(wasi::read_owned(descriptor, want, 0).map(|first| {
                self.offset = first.len() as u64;
                // A short read is the end (see `short_is_end`).
                self.at_end = first.len() < want;
                let whole = self.at_end;
                (first, whole)
            }));
        }
        let _ = max;
        None
    }
}

impl Read for SearchFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at_end || buf.is_empty() {
            return Ok(0);
        }
        let want = match self.size {
            Some(size) => usize::try_from(size.saturating_sub(self.offset).saturating_add(1))
                .map_or(buf.len(), |w| w.min(buf.len())),
            None => buf.len(),
        };
        let (n, want) = match &mut self.inner {
            Inner::Std(file) => (file.read(&mut buf[..want])?, want),
            #[cfg(all(target_os = "wasi", target_env = "p2"))]
            Inner::Wasi(descriptor) => {
                let want = want.min(MAX_READ);
                (wasi::read(descriptor, &mut buf[..want], self.offset)?, want)
            }
        };
        self.offset += n as u64;
        if self.short_is_end && n < want {
            self.at_end = true;
        }
        match self.size {
            Some(size) if self.offset > size => self.size = None,
            Some(size) if self.offset == size && n < want => self.at_end = true,
            _ => {}
        }
        Ok(n)
    }
}

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod wasi {
    use std::io;
    use std::path::Path;

    pub(super) use wasip2::filesystem::types::Descriptor;
    use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

    use super::{Inner, SearchFile};

    pub(super) fn preopens() -> Vec<(Descriptor, String)> {
        wasip2::filesystem::preopens::get_directories()
    }

    /// Opens `path` through the preopen it lies in (the longest match, as
    /// wasi-libc picks), or `None` to leave it to `std`.
    pub(super) fn open(preopens: &[(Descriptor, String)], path: &Path) -> Option<SearchFile> {
        let path = path.to_str()?;
        let (dir, relative) = preopens
            .iter()
            .filter_map(|(dir, name)| Some((dir, name.len(), inside(name, path)?)))
            .max_by_key(|(_, len, _)| *len)
            .map(|(dir, _, relative)| (dir, relative))?;
        let file = dir
            .open_at(
                PathFlags::SYMLINK_FOLLOW,
                relative,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .ok()?;
        let mut file = SearchFile::new(Inner::Wasi(file), None);
        file.short_is_end = true;
        Some(file)
    }

    /// `path` relative to the preopen `name`, when it lies in it.
    fn inside<'a>(name: &str, path: &'a str) -> Option<&'a str> {
        let name = name.trim_start_matches("./").trim_end_matches('/');
        let mut path = path;
        while let Some(rest) = path.strip_prefix("./") {
            path = rest;
        }
        if name.is_empty() || name == "." {
            return (!path.starts_with('/')).then_some(path);
        }
        let rest = path.strip_prefix(name)?;
        match rest.strip_prefix('/') {
            Some(rest) if !rest.is_empty() => Some(rest),
            _ => None,
        }
    }

    pub(super) fn read(descriptor: &Descriptor, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let data = read_owned(descriptor, buf.len(), offset)?;
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }

    /// Up to `len` bytes at `offset`, in the buffer the host returned them in.
    pub(super) fn read_owned(
        descriptor: &Descriptor,
        len: usize,
        offset: u64,
    ) -> io::Result<Vec<u8>> {
        let (mut data, _end) = descriptor
            .read(len as u64, offset)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        data.truncate(len);
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(file: &mut SearchFile, chunk: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = vec![0; chunk];
        loop {
            let n = file.read(&mut buf).expect("read");
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn reads_the_whole_file_in_any_chunks() {
        let dir = tempfile::tempdir().expect("temp dir");
        let content: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let path = dir.path().join("f");
        std::fs::write(&path, &content).expect("write");
        for chunk in [1, 7, 4096, 65536, 200_000] {
            let mut file = Opener::new().open(&path).expect("open");
            assert_eq!(read_all(&mut file, chunk), content, "chunk {chunk}");
        }
        std::fs::write(&path, b"").expect("write");
        let mut file = Opener::new().open(&path).expect("open");
        assert_eq!(read_all(&mut file, 10), b"");
    }

    #[test]
    fn a_file_that_grew_since_it_was_opened_is_read_to_its_end() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("log");
        std::fs::write(&path, b"first\n").expect("write");
        let mut file = Opener::new().open(&path).expect("open");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(b"second\n"))
            .expect("append");
        assert_eq!(read_all(&mut file, 3), b"first\nsecond\n");
    }

    #[test]
    fn open_errors_are_std_errors() {
        let err = Opener::new()
            .open(Path::new("/no/such/file"))
            .err()
            .expect("missing");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
