//! The project's instructions for agents: `AGENTS.md` at the workspace root,
//! else `CLAUDE.md`, put into the system prompt under a heading that names
//! the file (docs/using/run.md#project-instructions).
//!
//! The file is workspace content, and may have come with a cloned
//! repository: it may instruct the model (as any file a tool reads may),
//! never widen a grant, and reading it must not read anything else. So it
//! is opened beneath the workspace (`openat2` with `RESOLVE_BENEATH`, via
//! cap-primitives): a link out of it (a shipped `AGENTS.md -> ~/.ssh/id_rsa`
//! would send the key to the model's server) is not followed, and one inside
//! it only to a Markdown file outside hidden directories (`AGENTS.md ->
//! CLAUDE.md`, common, is; `AGENTS.md -> .git/config`, a remote's
//! credentials, is not); only a regular file is read
//! (a FIFO would block the start), and at most [`MAX_BYTES`] of it. A
//! leaf: it imports nothing of ours.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use cap_primitives::fs::OpenOptionsExt as _;

use sha2::{Digest as _, Sha256};

/// The files looked for, in order; the first that exists is used.
pub const FILES: &[&str] = &["AGENTS.md", "CLAUDE.md"];

/// The most of the file that reaches the model.
pub const MAX_BYTES: usize = 32 * 1024;

/// The instructions as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instructions {
    /// The file's name (`AGENTS.md` or `CLAUDE.md`).
    pub file: &'static str,
    /// Its text, at most [`MAX_BYTES`] (cut at a character boundary).
    pub text: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The sha256 of the whole file, hex.
    pub sha256: String,
}

impl Instructions {
    /// Whether the file was longer than what reaches the model.
    pub fn cut(&self) -> bool {
        (self.text.len() as u64) < self.bytes
    }

    /// The part of the system prompt they make: a heading naming the file,
    /// the text, and a note when it was cut.
    pub fn prompt_section(&self) -> String {
        let mut section = format!(
            "# Project instructions (from {} in the workspace)\n\n{}",
            self.file,
            self.text.trim_end()
        );
        if self.cut() {
            section.push_str(&format!(
                "\n\n(cut: {} has {} bytes; only the first {} are shown)",
                self.file,
                self.bytes,
                self.text.len()
            ));
        }
        section
    }
}

/// Why the instructions file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{} was not read: {reason}", path.display())]
pub struct InstructionsError {
    pub path: PathBuf,
    pub reason: String,
}

/// The workspace's instructions file, if it has one. A file that exists but
/// may not be read (a link, not a regular file, unreadable) is an error
/// naming it, for the caller to show as a warning.
pub fn find(workspace: &Path) -> Result<Option<Instructions>, InstructionsError> {
    for &name in FILES {
        let path = workspace.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            _ => return read(workspace, name).map(Some),
        }
    }
    Ok(None)
}

/// Whether `file`, opened through a link, is where a link may lead: a
/// Markdown file (`*.md`) inside the workspace, no directory on the way
/// hidden. A link the repository shipped can point anywhere inside it
/// (`AGENTS.md -> .git/config` would put a remote's credentials into the
/// prompt, whatever reads the user allowed); what toolhost protects and
/// keeps private is under dot-names (`.git`, `.toolhost`, `.env`, the
/// agents' and editors' directories) or not Markdown (`toolhost.toml`,
/// git's files).
fn markdown_of_the_project(workspace: &Path, file: &std::fs::File) -> bool {
    let Ok(real) = real_path(file) else {
        return false;
    };
    let Ok(root) = workspace.canonicalize() else {
        return false;
    };
    let Ok(inside) = real.strip_prefix(&root) else {
        return false;
    };
    let markdown = inside
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"));
    let hidden = inside
        .components()
        .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."));
    markdown && !hidden
}

/// Where an open file is, from the kernel (not by resolving a name again).
#[cfg(target_os = "linux")]
fn real_path(file: &std::fs::File) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// Elsewhere no descriptor tells its path: a link is not followed.
#[cfg(not(target_os = "linux"))]
fn real_path(_file: &std::fs::File) -> std::io::Result<PathBuf> {
    Err(std::io::Error::other("no /proc"))
}

fn read(workspace: &Path, name: &'static str) -> Result<Instructions, InstructionsError> {
    let path = workspace.join(name);
    let error = |reason: String| InstructionsError {
        path: path.clone(),
        reason,
    };
    let dir = cap_primitives::fs::open_ambient_dir(workspace, cap_primitives::ambient_authority())
        .map_err(|e| error(format!("the workspace cannot be opened: {e}")))?;
    let mut options = cap_primitives::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK);
    let file = cap_primitives::fs::open(&dir, Path::new(name), &options).map_err(|e| {
        let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if link && e.kind() != std::io::ErrorKind::NotFound {
            error(
                "it is a symbolic link that leads out of the workspace, and toolhost reads \
                 instructions only from inside it; replace it with the file itself"
                    .into(),
            )
        } else {
            error(e.to_string())
        }
    })?;
    let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    if link && !markdown_of_the_project(workspace, &file) {
        return Err(error(
            "it is a symbolic link to a file that is not a Markdown file (`*.md`) inside the \
             workspace outside its hidden directories, and toolhost follows a link only to one; \
             replace it with the file itself"
                .into(),
        ));
    }
    let metadata = file.metadata().map_err(|e| error(e.to_string()))?;
    if !metadata.is_file() {
        return Err(error(
            "it is not a regular file; make it one, or pass --no-project-instructions".into(),
        ));
    }
    let mut hasher = Sha256::new();
    let mut kept = Vec::with_capacity(MAX_BYTES.min(metadata.len() as usize));
    let mut bytes = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    let mut reader = file;
    // Read with the file's flags as opened: a regular file never blocks.
    loop {
        let n = reader.read(&mut buffer).map_err(|e| error(e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        bytes += n as u64;
        let room = MAX_BYTES.saturating_sub(kept.len());
        kept.extend_from_slice(&buffer[..n.min(room)]);
        // Hashing the rest of a huge file is the only cost it can add.
        if bytes > 64 * 1024 * 1024 {
            return Err(error(
                "it has more than 64 MiB; an instructions file that size is not one. Make it \
                 smaller, or pass --no-project-instructions"
                    .into(),
            ));
        }
    }
    let text = match String::from_utf8(kept) {
        Ok(text) => text,
        Err(e) => {
            // Cut in the middle of a character, or not UTF-8 at all.
            let valid = e.utf8_error().valid_up_to();
            let mut kept = e.into_bytes();
            if bytes as usize > MAX_BYTES && valid + 4 > MAX_BYTES {
                kept.truncate(valid);
                String::from_utf8(kept).unwrap_or_default()
            } else {
                return Err(error(
                    "it is not UTF-8 text; save it as UTF-8, or pass --no-project-instructions"
                        .into(),
                ));
            }
        }
    };
    Ok(Instructions {
        file: name,
        text,
        bytes,
        sha256: hex::encode(hasher.finalize()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> tempfile::TempDir {
        tempfile::tempdir().expect("temp dir")
    }

    #[test]
    fn agents_md_comes_first_and_claude_md_is_the_fallback() {
        let dir = workspace();
        assert_eq!(find(dir.path()).expect("no file is fine"), None);
        std::fs::write(dir.path().join("CLAUDE.md"), "use tabs\n").expect("write");
        let found = find(dir.path()).expect("read").expect("found");
        assert_eq!(found.file, "CLAUDE.md");
        std::fs::write(dir.path().join("AGENTS.md"), "use spaces\n").expect("write");
        let found = find(dir.path()).expect("read").expect("found");
        assert_eq!(found.file, "AGENTS.md");
        assert_eq!(
            found.prompt_section(),
            "# Project instructions (from AGENTS.md in the workspace)\n\nuse spaces"
        );
        assert_eq!(
            found.sha256,
            "d94e9754c20e0ad7bf5f44f34b8a839bec5a2b307d0ef5600fb475bc79a55673"
        );
        assert!(!found.cut());
    }

    #[test]
    fn a_long_file_is_cut_at_a_character_with_a_note() {
        let dir = workspace();
        // "é" is two bytes: the cut lands inside one.
        let text = format!("a{}", "é".repeat(MAX_BYTES));
        std::fs::write(dir.path().join("AGENTS.md"), &text).expect("write");
        let found = find(dir.path()).expect("read").expect("found");
        assert_eq!(found.bytes, text.len() as u64);
        assert_eq!(found.text.len(), MAX_BYTES - 1);
        assert!(found.cut());
        assert!(found.prompt_section().ends_with(&format!(
            "\n\n(cut: AGENTS.md has {} bytes; only the first {} are shown)",
            text.len(),
            MAX_BYTES - 1
        )));
    }

    #[test]
    fn a_link_inside_the_workspace_is_followed() {
        let dir = workspace();
        std::fs::write(dir.path().join("CLAUDE.md"), "shared\n").expect("write");
        std::os::unix::fs::symlink("CLAUDE.md", dir.path().join("AGENTS.md")).expect("link");
        let found = find(dir.path()).expect("read").expect("found");
        assert_eq!((found.file, found.text.as_str()), ("AGENTS.md", "shared\n"));
    }

    #[test]
    fn a_link_out_a_fifo_and_binary_text_are_refused_by_name() {
        let outside = workspace();
        let secret = outside.path().join("id_rsa");
        std::fs::write(&secret, "key").expect("write");
        let dir = workspace();
        for target in [
            secret.clone(),
            PathBuf::from("../../../../../../..").join(secret.strip_prefix("/").expect("absolute")),
        ] {
            let _ = std::fs::remove_file(dir.path().join("AGENTS.md"));
            std::os::unix::fs::symlink(&target, dir.path().join("AGENTS.md")).expect("link");
            let err = find(dir.path()).expect_err("a link out").to_string();
            assert_eq!(
                err,
                format!(
                    "{}/AGENTS.md was not read: it is a symbolic link that leads out of the \
                     workspace, and toolhost reads instructions only from inside it; replace it \
                     with the file itself",
                    dir.path().display()
                ),
                "{target:?}"
            );
        }
        std::fs::remove_file(dir.path().join("AGENTS.md")).expect("remove");
        let fifo =
            std::ffi::CString::new(dir.path().join("AGENTS.md").as_os_str().as_encoded_bytes())
                .expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let err = find(dir.path()).expect_err("a fifo").to_string();
        assert!(
            err.ends_with(
                "it is not a regular file; make it one, or pass --no-project-instructions"
            ),
            "{err}"
        );
        std::fs::remove_file(dir.path().join("AGENTS.md")).expect("remove");
        std::fs::write(dir.path().join("AGENTS.md"), b"\xff\xfe").expect("write");
        let err = find(dir.path()).expect_err("binary").to_string();
        assert!(
            err.ends_with(
                "it is not UTF-8 text; save it as UTF-8, or pass --no-project-instructions"
            ),
            "{err}"
        );
    }
}
