//! The text of a small file toolhost reads for settings (its own config
//! files, git's): a repository may ship any of them as a FIFO, a device or
//! a huge file, so each is opened without blocking, read only when it is a
//! regular file, and bounded. A leaf.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The most bytes a config file may have: hundreds of times a real one,
/// little enough that a file a repository ships cannot make toolhost hold
/// much.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of the config file at `path` (`toolhost.toml`, `--config`,
/// `config.toml`, `trusted.toml`, git's config): opened without blocking,
/// read only when it is a regular file, and at most [`MAX_CONFIG_BYTES`].
/// A repository can ship any of the workspace's as a FIFO (which would
/// hang every command, `toolhost mcp` too) or a link to `/dev/zero`
/// (which would fill memory). A missing file is `NotFound`, as from
/// `std::fs`; the other refusals say why and what to do.
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    read_opened(file)
}

/// [`read_text`] of `path` taken from the held directory `dir` (`..` and
/// links followed as the kernel follows them; an absolute path as it is):
/// the file-system guard reads a nested repository's config this way.
pub(crate) fn read_text_at(dir: &std::fs::File, path: &Path) -> std::io::Result<String> {
    use rustix::fs::{Mode, OFlags};
    let file = rustix::fs::openat(
        dir,
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    read_opened(std::fs::File::from(file))
}

/// The bounded, regular-file-only reading of [`read_text`].
fn read_opened(file: std::fs::File) -> std::io::Result<String> {
    let metadata = file.metadata()?;
    // `--config /dev/null`: no settings, and it never blocks.
    if is_dev_null(&metadata) {
        return Ok(String::new());
    }
    if !metadata.is_file() {
        return Err(std::io::Error::other(
            "it is not a regular file (a FIFO, a device or a directory could block or never \
             end); make it a regular file, or remove it",
        ));
    }
    let too_big = |size: String| {
        std::io::Error::other(format!(
            "it has {size} bytes, and a config file may have at most {MAX_CONFIG_BYTES} (1 MiB); \
             make it smaller, or remove it"
        ))
    };
    if metadata.len() > MAX_CONFIG_BYTES {
        return Err(too_big(metadata.len().to_string()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // It may grow after the check.
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(format!("more than {MAX_CONFIG_BYTES}")));
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Whether `metadata` is that of `/dev/null` (character device 1:3 on
/// Linux), wherever it was reached from.
fn is_dev_null(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    metadata.file_type().is_char_device()
        && std::fs::metadata("/dev/null").is_ok_and(|null| null.rdev() == metadata.rdev())
}
