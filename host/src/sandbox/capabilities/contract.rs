//! The contract every capability keeps: how a part of a tool's policy
//! becomes what one call may do, in the order a tool meets it.
//!
//! At start the sandbox sets up what a capability shares across tools
//! ([`Capability::start`]: opened directories, TLS roots); at load each
//! tool's part of the policy is turned into what the tool holds
//! ([`Capability::configure`]); each call gets its own state from that
//! ([`Capability::prepare`]), which the host functions the capability links
//! act through ([`Capability::link`]); when the call ends the capability
//! says what it refused, if anything ([`Capability::close`]); and it says in
//! words what it gives a tool ([`Capability::describe`]), for the system
//! prompt, the MCP instructions and `toolhost tools` alike.
//!
//! Capabilities never name one another, nor the store they live in: the
//! list in this module's parent builds the per-tool and per-call structs
//! with one slot per capability, and a store reaches a capability's slot
//! through [`HasCall`]. Adding one is its room, a field of
//! [`crate::sandbox::ToolPolicy`], a line in that list and its config
//! section.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::WasiCtx;

use super::grants::Grant;
use super::held::TableCharge;
use super::protect::Protection;
use crate::sandbox::limits::{Limits, MemoryAccount};
use crate::sandbox::reach::Reach;

/// What the sandbox knows at start that a capability may share across
/// tools.
pub(crate) struct Start<'a> {
    /// The workspace root, canonical: every tool's working directory.
    pub(crate) workspace: &'a Path,
    /// The paths no tool may change.
    pub(crate) protection: &'a Arc<Protection>,
    /// PEM certificates `https` requests trust besides the system's roots.
    pub(crate) ca_file: Option<&'a Path>,
}

/// Receives a call's progress messages (`host.progress`, a native
/// command's latest line) while it runs.
pub type ProgressSink = Arc<dyn Fn(&str) + Send + Sync>;

/// A tool's file grants as the file system capability holds them.
pub(crate) struct FileGrants<'a> {
    /// Its directories, each read-only or read-write.
    pub(crate) dirs: &'a [Grant],
    /// The protected paths the user lifted for it.
    pub(crate) lifted: &'a [PathBuf],
    /// It may read the saved results (`read_file` alone).
    pub(crate) reads_saved_outputs: bool,
}

/// What bounds one call: when it ends and what it may spend; where its
/// progress goes.
pub(crate) struct CallBounds<'a> {
    pub(crate) deadline: Instant,
    pub(crate) limits: &'a Limits,
    pub(crate) progress: Option<&'a ProgressSink>,
}

/// One capability a tool can be given.
pub(crate) trait Capability: Sized + 'static {
    /// Its part of a tool's policy, as the config layer resolved it.
    type Policy;
    /// What it keeps across every tool of a sandbox.
    type Shared: Send + Sync;
    /// What a loaded tool holds for it.
    type ForTool: Send + Sync;
    /// Its state in one call's store.
    type InCall: Send;
    /// What a call leaves behind for its report (the requests it made).
    type Record;
    /// Why it refused the guest something; the model reads its text.
    type Refusal: Clone;

    /// At start.
    fn start(start: &Start<'_>) -> Self::Shared;

    /// At load, once per tool. `files` are the tool's file grants, for a
    /// capability the file system's grants hold (a native command's walls
    /// are the tool's directories).
    fn configure(
        policy: &Self::Policy,
        files: &FileGrants<'_>,
        shared: &mut Self::Shared,
    ) -> Self::ForTool;

    /// For each call, before the guest runs: its fresh state, or why the
    /// call cannot run at all (a granted directory that is gone).
    fn prepare(tool: &Self::ForTool, bounds: &CallBounds<'_>) -> Result<Self::InCall, String>;

    /// The host functions it answers, acting through the call's state.
    fn link<T: HasCall<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()>;

    /// When the call is over: what it leaves, and the first thing it
    /// refused.
    fn close(call: &mut Self::InCall) -> (Self::Record, Option<Self::Refusal>);

    /// Its part of what `policy` lets a tool reach.
    fn describe<'a>(policy: &'a Self::Policy, reach: &mut Reach<'a>);

    /// What the tool of a plugin an untrusted workspace ships keeps of
    /// `full`, the policy the configuration gives the tool's name
    /// (`every_tool`: what every tool gets), and what it holds back, in
    /// words for the notice (`network access`). The configuration names
    /// tools, not plugins: a grant the user meant for their own plugin must
    /// not go to one a clone ships.
    fn shipped(
        full: &Self::Policy,
        every_tool: &Self::Policy,
        workspace: &Path,
    ) -> (Self::Policy, Vec<&'static str>);
}

/// A capability's call state with the parts of the store every capability
/// shares, for one host call.
pub(crate) struct CallView<'a, S> {
    pub(crate) own: &'a mut S,
    pub(crate) wasi: &'a mut WasiCtx,
    pub(crate) table: &'a mut ResourceTable,
    /// The call's memory, which host memory held for the guest is charged to.
    pub(crate) memory: &'a Arc<MemoryAccount>,
    pub(crate) table_charge: &'a mut TableCharge,
}

/// A store that holds capability `C`'s call state.
pub(crate) trait HasCall<C: Capability>: Send + 'static {
    fn call_view(&mut self) -> CallView<'_, C::InCall>;
}
