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
//!
//! A refused operation fails in the guest with `not-permitted` and is
//! recorded as a [`Denial`], which becomes the text the model reads. Going
//! over the write budget traps the guest, as going over the memory limit
//! does; so does holding more than [`guard::MAX_DESCRIPTORS`] open files
//! (fewer under a low `ulimit -n`) or [`guard::MAX_LISTINGS`] directory
//! listings at once (each is a host descriptor, outside the guest's memory
//! limit).
//!
//! Split by job, each rule with the tests that deny it beside it:
//! - [`rules`]: what one tool's rules decide from host paths ([`FsRules`]):
//!   protected paths, lifts, the repository around a change, grants,
//!   toolhost's records, a file's other names;
//! - [`change`]: a path resolved once for a change, and the refusal of the
//!   change;
//! - [`links`]: symbolic link targets and hard link sources;
//! - [`special`]: FIFOs, sockets and devices are not opened;
//! - [`budget`]: the bytes a call may write ([`WriteBudget`]);
//! - [`denial`]: why an operation was refused ([`Denial`]);
//! - [`guard`]: one call's state ([`FsGuard`]): the first refusal, what it
//!   holds open;
//! - [`host`]: the `wasi:filesystem/types` host, which acts through the
//!   guard;
//! - [`preopens`]: the granted directories, each opened once;
//! - [`capability`]: all of it as a [`Capability`](super::contract::Capability)
//!   ([`Filesystem`]), from the tool's [`FsPolicy`].
//! - `fixture` (tests only): the workspace on real files the rules' tests
//!   deny in.
//!
//! This file only wires them: the children import one another, never it.

mod budget;
mod capability;
mod change;
mod denial;
mod guard;
mod host;
mod links;
mod preopens;
mod rules;
mod special;

pub(crate) use capability::Filesystem;
pub use capability::FsPolicy;
pub use denial::Denial;
pub(crate) use denial::{failed_with_grants_hint, path_denied_text};
pub use guard::Held;

#[cfg(test)]
mod fixture;
