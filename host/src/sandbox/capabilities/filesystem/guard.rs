//! What one call's guard holds: the tool's rules, the call's write budget,
//! the first refusal (which becomes the model's text), and the count of
//! what the call holds open.
//!
//! Holding more than [`MAX_DESCRIPTORS`] open files (fewer under a low
//! `ulimit -n`) or [`MAX_LISTINGS`] directory listings at once traps the
//! guest: each is a host descriptor, outside the guest's memory limit.

use std::sync::Arc;

use wasmtime_wasi::p2::bindings::filesystem::types::{self, ErrorCode};
use wasmtime_wasi::p2::{FsError, FsResult};

use super::budget::WriteBudget;
use super::denial::Denial;
use super::rules::FsRules;

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

/// The rules one call runs under, and what it ran into.
pub(crate) struct FsGuard {
    pub(super) rules: Arc<FsRules>,
    pub(super) budget: Arc<WriteBudget>,
    /// The first refusal, for the model.
    denial: Option<Denial>,
    /// The entry a directory stream just returned, for the
    /// `metadata-hash-at` wasi-libc's `readdir` asks next.
    pub(super) just_listed: Option<JustListed>,
    /// The table slots of the descriptors this call opened and holds.
    pub(super) opened: std::collections::HashSet<u32>,
    /// Directory listings the call holds.
    pub(super) listings: usize,
    /// What the call held more of than it may, when it was stopped.
    held_over: Option<Held>,
}

/// An entry of the directory `dir` just returned by a
/// [`Listing`](crate::sandbox::capabilities::listing::Listing), with
/// its metadata hash. Holding `dir` keeps its identity unique while this
/// lives (no other descriptor can reuse its address).
pub(super) struct JustListed {
    pub(super) dir: Arc<std::fs::File>,
    pub(super) name: String,
    pub(super) hash: types::MetadataHashValue,
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
    pub(super) fn may_hold(&mut self, what: Held) -> FsResult<()> {
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

    pub(super) fn refuse<T>(&mut self, denial: Denial) -> FsResult<T> {
        self.denial.get_or_insert(denial);
        Err(ErrorCode::NotPermitted.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::capabilities::protect::{Hit, Protection};

    fn guard() -> FsGuard {
        let rules = FsRules::new(Arc::new(Protection::default()), Vec::new(), &[]);
        FsGuard::new(Arc::new(rules), WriteBudget::new(0))
    }

    fn is_trap(result: FsResult<()>) -> bool {
        result.is_err_and(|error| error.downcast().is_err())
    }

    #[test]
    fn holding_more_descriptors_than_the_cap_traps() {
        let mut guard = guard();
        let limit = Held::Descriptors.limit();
        assert!(limit <= MAX_DESCRIPTORS);
        guard
            .opened
            .extend(0..u32::try_from(limit - 1).expect("small"));
        assert!(guard.may_hold(Held::Descriptors).is_ok(), "one more fits");
        assert_eq!(guard.held_over(), None);
        guard.opened.insert(u32::MAX);
        assert!(is_trap(guard.may_hold(Held::Descriptors)));
        assert_eq!(guard.held_over(), Some(Held::Descriptors));
    }

    #[test]
    fn holding_more_listings_than_the_cap_traps() {
        let mut guard = guard();
        guard.listings = MAX_LISTINGS - 1;
        assert!(guard.may_hold(Held::Listings).is_ok());
        assert!(guard.may_hold(Held::Descriptors).is_ok(), "counted apart");
        guard.listings = MAX_LISTINGS;
        assert!(is_trap(guard.may_hold(Held::Listings)));
        assert_eq!(guard.held_over(), Some(Held::Listings));
    }

    #[test]
    fn a_refusal_is_not_permitted_and_the_first_one_is_kept() {
        let mut guard = guard();
        assert_eq!(guard.denial(), None);
        let first = Denial::Protected {
            path: ".git/config".into(),
            hit: Hit::new(".git", "git runs it"),
        };
        let refused: FsResult<()> = guard.refuse(first.clone());
        let code = refused.err().and_then(|error| error.downcast().ok());
        assert_eq!(code, Some(ErrorCode::NotPermitted));
        let _: FsResult<()> = guard.refuse(Denial::HardLinkSource { source: "a".into() });
        assert_eq!(guard.denial(), Some(&first), "the model reads the first");
    }
}
