//! What the walls of one native command are made of: the host works it
//! out from the tool's grants ([`super::walls`]) and hands it to the
//! helper process that builds them ([`super::helper`]) on its stdin.
//! Host paths throughout: inside the walls every granted directory is at
//! the path it has outside, so the paths a model reads stay true.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where a native command's home is inside its walls: an empty tmpfs of
/// its own.
pub(crate) const HOME: &str = "/home/sandbox";

/// One native command and its walls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// The granted program, absolute on the host.
    pub(crate) program: PathBuf,
    /// Its arguments, the program's name first (as the model wrote it).
    pub(crate) argv: Vec<String>,
    /// Where it starts: inside one of [`Plan::binds`].
    pub(crate) cwd: PathBuf,
    /// Its whole environment (the host's own is never passed on).
    pub(crate) env: Vec<(String, String)>,
    /// What it reads on its standard input.
    pub(crate) stdin: Vec<u8>,
    /// The host's directories and files it sees, each at its own path.
    pub(crate) binds: Vec<Bind>,
    /// Paths inside writable binds held read-only over that (protected
    /// paths that exist): each is a mount point, so it cannot be renamed
    /// or removed either, nor can the directories above it.
    pub(crate) read_only: Vec<PathBuf>,
    /// Paths inside binds it may not even read (toolhost's records): an
    /// empty directory or file is mounted over each.
    pub(crate) hidden: Vec<PathBuf>,
    pub(crate) limits: WallLimits,
    /// When the helper kills the command's namespace, if the host has not
    /// (the host kills the helper at the call's deadline; this holds when
    /// the host itself is gone).
    pub(crate) timeout_ms: u64,
}

/// A host path seen inside the walls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Bind {
    pub(crate) path: PathBuf,
    pub(crate) writable: bool,
    /// A toolchain's directory: read-only and its programs may run, but
    /// outside the tool's grants (`~/.rustup` for `cargo`).
    pub(crate) toolchain: bool,
}

/// What the kernel bounds, per process or per namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WallLimits {
    /// Processes and threads alive at once in the command's PID namespace.
    pub(crate) processes: u32,
    /// Bytes any one file may grow to (`RLIMIT_FSIZE`).
    pub(crate) file_size: u64,
    /// Bytes of private writable memory per process (`RLIMIT_DATA`).
    pub(crate) memory: u64,
    /// Descriptors open at once per process (`RLIMIT_NOFILE`).
    pub(crate) open_files: u64,
    /// Seconds of CPU per process (`RLIMIT_CPU`).
    pub(crate) cpu_seconds: u64,
    /// Bytes of the private `/tmp` and `HOME`, each (tmpfs `size=`).
    pub(crate) scratch: u64,
}
