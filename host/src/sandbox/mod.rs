//! The sandbox: loads tool plugins as WebAssembly components and runs each
//! call in a fresh instance with only the tool's grants and under its limits.
//!
//! Knows nothing about models or the agent loop. Its public surface is
//! [`Sandbox`] (load, list, call), the policy types that say what each tool
//! may do ([`Policy`], [`Grant`], [`Limits`]) and the outcome of a call
//! ([`CallReport`], [`ToolOutcome`], [`ToolFault`]).

mod bindings;
mod cache;
mod call;
mod capabilities;
mod engine;
mod imports;
mod input_schema;
mod limits;
mod options;
mod outcome;
mod output;
mod permits;
mod plugin;
mod plugin_file;
mod policy;
mod precheck;
mod reach;
mod registry;
mod slots;
mod spare_instances;
mod standard;
mod tiers;
mod tool_name;
mod typed;

pub use cache::CacheStatus;
pub use call::{CAPTURE_LIMIT, CallStats, Captured, ProgressSink};
pub use capabilities::env::EnvPolicy;
pub use capabilities::exec::helper as exec_helper;
pub use capabilities::exec::{ExecPolicy, Lookup as ProgramLookup, Program, WallsRefusal};
pub use capabilities::filesystem::{Denial, FsPolicy, Held};
pub(crate) use capabilities::git_config;
pub use capabilities::network::NetPolicy;
pub use capabilities::network::account::{MAX_REQUEST_BYTES, NetDenial, NetRefusal, NetRequest};
pub use capabilities::network::credentials::Credential;
pub use capabilities::network::grant::{Destination, GrantError, NetGrant};
pub use capabilities::protect::{
    EveryRepository, Hit, ProtectedPath, Protection, Record, RecordPath, lexical_path, lift_target,
    lift_target_with,
};
pub(crate) use capabilities::shipped as shipped_policy;
pub use capabilities::{Access, Grant, simplify as simplify_grants};
pub use engine::{CONCURRENT_CALLS, Tier};
pub use input_schema::MAX_EXPANDED as MAX_SCHEMA_EXPANSION;
pub use limits::{
    CODE_TOOLS, DEFAULT_PLUGIN_FILE_LIMIT, DEFAULT_SHIPPED_PLUGINS, Limits, SHELL_TOOL,
};
pub use options::{SandboxOptions, ShippedPlugins, ShippedTool, Tiering};
pub use outcome::{SchemaError, ToolFault, ToolOutcome};
pub use permits::{Ask, Permit, PermitKind};
pub use plugin::{LoadError, LoadEvent, LoadNotice};
pub use plugin_file::PluginOrigin;
pub use policy::{Policy, ToolPolicy};
pub use reach::{Reach, protected_sentence};
pub use registry::{CallOptions, CallReport, Sandbox, SandboxError, Tool, plugin_files};
pub use standard::{STANDARD_PLUGINS, is_standard_tool};
pub use tiers::{DEFAULT_BASELINE_MIN_BYTES, Unfinished, compile_optimized};
pub use tool_name::is_tool_name;
pub use typed::{TypedConfig, TypedToolConfig};
