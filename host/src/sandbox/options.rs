//! What the sandbox is told at start: each tool's policy (grants, limits,
//! lifts, network), the plugins to load, and how to compile them. Built by
//! the config layer; read by the registry and each call.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::capabilities::filesystem::FsPolicy;
use super::capabilities::protect::{EveryRepository, ProtectedPath, RecordPath};
use super::capabilities::{Access, Grant};
use super::limits::DEFAULT_PLUGIN_FILE_LIMIT;
use super::policy::{Policy, ToolPolicy};
use super::typed::TypedConfig;

/// Everything the sandbox needs to start.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// The workspace root, canonical. Tools see it as `.`.
    pub workspace: PathBuf,
    /// Directories whose `*.wasm` files are loaded, in order.
    pub plugin_dirs: Vec<PathBuf>,
    /// Single plugin files, loaded after the directories.
    pub plugin_files: Vec<PathBuf>,
    /// Load the standard tools embedded in the binary.
    pub standard_tools: bool,
    /// Compile cache directory; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
    /// Which plugins new to the cache run baseline code first.
    pub tiering: Tiering,
    pub policy: Policy,
    /// Paths no tool may change, relative to the workspace (the config
    /// layer lists toolhost's own, git's and the user's).
    pub protected: Vec<ProtectedPath>,
    /// Where toolhost keeps what tools read, which no tool reads (the
    /// workspace's sessions and saved results, [`RecordPath::of_workspace`],
    /// and what the command line names).
    pub records: Vec<RecordPath>,
    /// What the user's git configuration says of every repository, nested
    /// ones the guard finds too (a relative `core.hooksPath` in
    /// `~/.gitconfig` names a directory in each).
    pub every_repository: EveryRepository,
    /// Names, path parameters and read-only flags of tools derived from
    /// typed exports, which carry none of their own.
    pub typed: TypedConfig,
    /// Bytes a plugin file may have; a bigger one is refused unread.
    /// Default [`DEFAULT_PLUGIN_FILE_LIMIT`].
    pub plugin_file_limit: u64,
    /// PEM certificates tools' `https` requests trust besides the
    /// system's roots (`[network] ca_file`).
    pub ca_file: Option<PathBuf>,
    /// The plugins directory of a workspace the user does not trust, and
    /// what its plugins' tools get: they came with the repository, so
    /// nothing the user gives a tool by name that widens access (a
    /// `[tools.github]` grant of yours must not go to a `github.wasm` a
    /// clone ships).
    pub shipped_plugins: Option<ShippedPlugins>,
}

/// The plugins an untrusted workspace ships, and what their tools get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShippedPlugins {
    /// The workspace's plugins directory.
    pub dir: PathBuf,
    /// The sha256 (hex) of each plugin file the user put into a workspace
    /// with `toolhost plugin add` or `plugin install`: those are theirs.
    pub added: std::collections::BTreeSet<String>,
    /// What a shipped plugin's tool of each name the configuration
    /// mentions gets.
    pub per_tool: BTreeMap<String, ShippedTool>,
    /// What a shipped plugin's tool of any other name gets.
    pub defaults: ShippedTool,
    /// How many of its plugins one start loads at most
    /// ([`DEFAULT_SHIPPED_PLUGINS`], `[limits] shipped_plugins`); all of
    /// them get [`limits::SHIPPED_LOAD_TOTAL`] together.
    pub max_plugins: u64,
}

/// The policy of a tool a shipped plugin offers: what every tool gets,
/// and of what the user gives that name only what stays inside the
/// workspace and lowers limits; with what was held back, for the notice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShippedTool {
    pub policy: ToolPolicy,
    /// What the configuration gives the name that this tool does not get
    /// (`a grant outside the workspace`, `raised limits`, ...).
    pub withheld: Vec<&'static str>,
}

impl SandboxOptions {
    /// The smallest useful sandbox: the standard tools, each allowed to read
    /// `workspace` (as `.`) and nothing else, with the default limits and no
    /// compile cache. What an embedder, a bench or a test starts from.
    pub fn read_only(workspace: PathBuf) -> SandboxOptions {
        SandboxOptions {
            plugin_dirs: Vec::new(),
            plugin_files: Vec::new(),
            standard_tools: true,
            cache_dir: None,
            tiering: Tiering::default(),
            protected: Vec::new(),
            records: RecordPath::of_workspace(),
            every_repository: EveryRepository::default(),
            typed: TypedConfig::default(),
            plugin_file_limit: DEFAULT_PLUGIN_FILE_LIMIT,
            ca_file: None,
            shipped_plugins: None,
            policy: Policy {
                defaults: ToolPolicy {
                    fs: FsPolicy {
                        grants: vec![Grant {
                            host_path: workspace.clone(),
                            guest_path: ".".into(),
                            access: Access::Read,
                        }],
                        ..FsPolicy::default()
                    },
                    ..ToolPolicy::default()
                },
                ..Policy::default()
            },
            workspace,
        }
    }
}

/// When a plugin that is not in the compile cache runs baseline (Winch)
/// code first. The default never does: every plugin waits for Cranelift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tiering {
    /// A component at least this big is compiled with the baseline compiler
    /// first; `None`: always wait for the optimized compile.
    pub baseline_min_bytes: Option<u64>,
    /// Compile the optimized code on a background thread and swap it in.
    /// For a process that lives on (`run`, `mcp`); a one-shot command leaves
    /// the baseline code in the cache, and the next long-lived start
    /// optimizes it.
    pub optimize_in_background: bool,
    /// A command that exits with plugins still on baseline code leaves
    /// their optimized compile to a background process (the CLI's; see
    /// [`Sandbox::unfinished`]).
    pub compile_after_exit: bool,
    /// Make a tool's next instance before its next call, in the background,
    /// once instantiating it has taken at least this long (an interpreter's
    /// snapshot: `python`); `None`: never. Only start code that calls no
    /// import runs ahead ([`spare_instances`](super::spare_instances)). The CLI sets
    /// [`Tiering::SPARES_AFTER`].
    pub spares_after: Option<Duration>,
}

impl Tiering {
    /// Instantiation at least this long makes a tool keep a spare: below
    /// it, the background work costs more than the call saves.
    pub const SPARES_AFTER: Duration = Duration::from_millis(1);
}
