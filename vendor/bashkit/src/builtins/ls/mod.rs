//! Directory listing builtins - ls, rmdir, and shared glob matching.

pub(crate) mod glob;
mod list;
pub(crate) mod quoting;
mod rmdir;

pub(crate) use glob::{fnmatch, glob_match};
pub use list::Ls;
pub use rmdir::Rmdir;

#[cfg(test)]
mod tests;
