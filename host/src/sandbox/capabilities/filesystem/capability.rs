//! The file system as a [`Capability`]: a tool's directory grants and
//! lifts become its rules and preopens at load, and each call a guard
//! with its own write budget, which `wasi:filesystem` acts through.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::component::Linker;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};

use super::budget::WriteBudget;
use super::denial::Denial;
use super::guard::{FsGuard, Held};
use super::host::{Guarded, GuardedFilesystem};
use super::preopens::{GrantDirs, GrantedDirs, OpenDirs, Preopens, PreopensView};
use super::rules::{EveryLift, FsRules};
use crate::sandbox::capabilities::contract::{
    CallBounds, CallView, Capability, FileGrants, HasCall, Start,
};
use crate::sandbox::capabilities::grants::{Access, Grant, simplify};
use crate::sandbox::capabilities::protect::Protection;
use crate::sandbox::reach::{self, Reach};

/// What a tool may do with files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FsPolicy {
    /// Its directories, each read-only or read-write.
    pub grants: Vec<Grant>,
    /// Protected directories this tool may change anyway: the user granted
    /// them to it by name (`--allow-write git_tool=.git`). Canonical host
    /// paths.
    pub lifted: Vec<PathBuf>,
    /// It may read the whole texts saved of cut results
    /// (`.toolhost/outputs`): only the standard `read_file`, which the
    /// model pages through them with.
    pub reads_saved_outputs: bool,
    /// The tool declares itself read-only ([`FsPolicy::read_only`]): no
    /// grant makes it writable, and a refusal does not advise one.
    pub declared_read_only: bool,
}

impl FsPolicy {
    /// Its grants, for the capabilities they hold ([`FileGrants`]).
    pub(crate) fn file_grants(&self) -> FileGrants<'_> {
        FileGrants {
            dirs: &self.grants,
            lifted: &self.lifted,
            reads_saved_outputs: self.reads_saved_outputs,
        }
    }

    /// This policy for a tool that declares itself read-only: every grant
    /// read-only, nothing lifted.
    pub fn read_only(mut self) -> FsPolicy {
        for grant in &mut self.grants {
            grant.access = Access::Read;
        }
        self.grants = simplify(self.grants);
        self.lifted.clear();
        self.declared_read_only = true;
        self
    }
}

/// The file system capability.
pub(crate) struct Filesystem;

/// What every tool shares: the protected paths, and each granted
/// directory opened once.
pub(crate) struct FsShared {
    protection: Arc<Protection>,
    dirs: GrantDirs,
    /// Every lift of every tool so far (the flags', and those given in a
    /// session as they come): no tool moves a directory into one.
    every_lift: EveryLift,
}

/// What a loaded tool holds: its rules and its opened directories.
pub(crate) struct FsTool {
    pub(crate) rules: Arc<FsRules>,
    preopens: Preopens,
}

/// One call's directories and guard.
pub(crate) struct FsCall {
    dirs: OpenDirs,
    guard: FsGuard,
}

impl FsCall {
    /// Whether the guest ran into its write budget.
    pub(crate) fn write_hit(&self) -> bool {
        self.guard.budget().hit()
    }

    /// What the guest held open past the host's bound, when it did.
    pub(crate) fn held_over(&self) -> Option<Held> {
        self.guard.held_over()
    }
}

impl Capability for Filesystem {
    type Policy = FsPolicy;
    type Shared = FsShared;
    type ForTool = FsTool;
    type InCall = FsCall;
    type Record = ();
    type Refusal = Denial;

    fn start(start: &Start<'_>) -> FsShared {
        FsShared {
            protection: Arc::clone(start.protection),
            dirs: GrantDirs::default(),
            every_lift: EveryLift::default(),
        }
    }

    fn configure(policy: &FsPolicy, _: &FileGrants<'_>, shared: &mut FsShared) -> FsTool {
        shared.every_lift.add(&policy.lifted);
        let mut rules = FsRules::new(
            Arc::clone(&shared.protection),
            policy.lifted.clone(),
            &policy.grants,
        )
        .with_every_lift(shared.every_lift.clone());
        if policy.reads_saved_outputs {
            rules = rules.reading_saved_outputs();
        }
        if policy.declared_read_only {
            rules = rules.declared_read_only();
        }
        FsTool {
            rules: Arc::new(rules),
            preopens: shared.dirs.preopens(&policy.grants),
        }
    }

    fn prepare(tool: &FsTool, bounds: &CallBounds<'_>) -> Result<FsCall, String> {
        Ok(FsCall {
            dirs: tool.preopens.dirs()?,
            guard: FsGuard::new(
                Arc::clone(&tool.rules),
                WriteBudget::new(bounds.limits.write),
            ),
        })
    }

    fn link<T: HasCall<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        preopens::add_to_linker::<T, GrantedDirs>(linker, |t| {
            let CallView { own, table, .. } = t.call_view();
            PreopensView {
                dirs: &own.dirs,
                table,
            }
        })?;
        types::add_to_linker::<T, GuardedFilesystem>(linker, |t| {
            let CallView {
                own,
                wasi,
                table,
                memory,
                ..
            } = t.call_view();
            Guarded {
                fs: WasiFilesystemCtxView {
                    ctx: wasi.filesystem(),
                    table,
                },
                guard: &mut own.guard,
                memory,
            }
        })
    }

    fn close(call: &mut FsCall) -> ((), Option<Denial>) {
        ((), call.guard.denial().cloned())
    }

    fn describe<'a>(policy: &'a FsPolicy, reach: &mut Reach<'a>) {
        reach.dirs = reach::dirs_of(&policy.grants);
    }

    /// The grants inside the workspace or of every tool, and the lifts
    /// every tool has.
    fn shipped(
        full: &FsPolicy,
        every_tool: &FsPolicy,
        workspace: &Path,
    ) -> (FsPolicy, Vec<&'static str>) {
        let mut withheld = Vec::new();
        let grants: Vec<Grant> = full
            .grants
            .iter()
            .filter(|g| g.host_path.starts_with(workspace) || every_tool.grants.contains(g))
            .cloned()
            .collect();
        if grants.len() != full.grants.len() {
            withheld.push("a grant outside the workspace");
        }
        let lifted: Vec<PathBuf> = full
            .lifted
            .iter()
            .filter(|p| every_tool.lifted.contains(p))
            .cloned()
            .collect();
        if lifted.len() != full.lifted.len() {
            withheld.push("a lifted protection");
        }
        let policy = FsPolicy {
            grants,
            lifted,
            reads_saved_outputs: false,
            declared_read_only: full.declared_read_only,
        };
        (policy, withheld)
    }
}
