//! The loaded tools: [`Sandbox`] loads the plugins (the standard ones, the
//! user's, a workspace's within their budget), keeps each tool with its
//! policy, grant directories and checker, and runs a call from its input to
//! its report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::json_budget::TOOL_ARGUMENTS;

use super::cache::CacheStatus;
use super::call::{CallStats, Captured, ProgressSink};
use super::capabilities::Access;
use super::capabilities::contract::Start;
use super::capabilities::exec::{Lookup as ProgramLookup, Program};
use super::capabilities::filesystem::Denial;
use super::capabilities::network::account::NetRequest;
use super::capabilities::network::grant::{Destination, NetGrant};
use super::capabilities::protect::{ProtectedPath, Protection};
use super::capabilities::{PathCheck, SharedCapabilities, ToolCapabilities};
use super::engine::Tier;
use super::limits::Limits;
use super::options::{SandboxOptions, ShippedPlugins};
use super::outcome::{ToolFault, ToolOutcome};
use super::permits::{self, Ask, Permit, PermitKind};
use super::plugin::{self, LoadError, LoadEvent, LoadNotice};
use super::plugin_file::PluginOrigin;
use super::policy::{Policy, ToolPolicy};
use super::reach::{self, Reach};
use super::standard::Builtin;
use super::tiers::Unfinished;
use super::tool_name::is_tool_name;
use super::typed::TypedConfig;
use super::{cache, call, capabilities, input_schema, limits, slots, spare_instances, typed};

use super::call::RunPolicy;
use super::plugin::{CallTool, CheckedSpec, LoadedPlugin};
use super::tiers::Exports;
use super::tiers::{Code, Compilers, Optimizer};

/// The `*.wasm` files a plugins directory holds, in load order (symbolic
/// links left out: they are not loaded).
pub fn plugin_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    plugin::wasm_files(dir).map(|(files, _links)| files)
}

/// A problem that stops the sandbox from starting at all (as opposed to a
/// plugin that fails to load, which is skipped).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot set up the WebAssembly engine: {0:#}")]
    Engine(wasmtime::Error),
    #[error("cannot read the plugins directory `{}`: {source}; create it or pass another --plugins DIR", .dir.display())]
    PluginDir {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// One tool as the sandbox knows it.
pub struct Tool {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its input, as the plugin declared it (or as
    /// derived from a typed export's parameters).
    pub input_schema: serde_json::Value,
    /// For a typed export: the schema of its structured result,
    /// `{"result": ...}`, which MCP clients receive as `structuredContent`.
    pub output_schema: Option<serde_json::Value>,
    pub read_only: bool,
    /// Its plugin imports `wasi:http`: it can reach hosts it is granted.
    pub uses_network: bool,
    pub plugin: PluginOrigin,
    /// sha256 of the plugin's `.wasm`.
    pub plugin_sha256: String,
    /// Whether the plugin came from the compile cache this time.
    pub cache: CacheStatus,
    pub policy: ToolPolicy,
    /// What it holds of each capability, made from `policy` at load.
    capabilities: ToolCapabilities,
    /// Its next instance, made ahead when instantiating it is slow.
    spares: Arc<spare_instances::Spares>,
    checker: input_schema::InputSchema,
    path_args: Vec<plugin::PathArg>,
    plugin_index: usize,
    /// For a typed export: its index in the plugin's functions.
    function: Option<usize>,
}

impl Tool {
    /// What this tool may reach.
    pub fn reach(&self) -> Reach<'_> {
        let mut reach = Reach {
            tool: &self.name,
            read_only: self.read_only,
            dirs: Vec::new(),
            hosts: Vec::new(),
            more: Vec::new(),
        };
        capabilities::describe(&self.policy, &mut reach);
        reach
    }

    /// Whether the tool may reach anything outside this machine's files:
    /// MCP's `openWorldHint`.
    pub fn open_world(&self) -> bool {
        !self.policy.net.grants.is_empty()
    }
}

/// The end of one call with everything measured about it.
#[derive(Debug, Clone)]
pub struct CallReport {
    pub outcome: ToolOutcome,
    /// A typed export's successful result as JSON, `{"result": ...}`,
    /// matching the tool's `output_schema`.
    pub structured: Option<serde_json::Value>,
    pub stats: CallStats,
    pub captured: Captured,
    /// Every network request the call made, refused ones too.
    pub requests: Vec<NetRequest>,
    /// The grant that would have let it past its refusal, when a session
    /// may ask the user for it ([`permits::wanted`]).
    pub ask: Option<Ask>,
    /// Lines toolhost adds after what the model reads (a grant given for
    /// the tool's next call).
    pub notes: Vec<String>,
}

impl CallReport {
    /// The text a model (or an MCP client) reads for this call of `tool`.
    pub fn model_text(&self, tool: &str) -> String {
        let mut text = self.outcome.model_text(tool);
        for note in &self.notes {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(note);
        }
        text
    }

    /// True when the result is an `isError` result.
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }
}

/// Per-call options from the caller.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Cancels the call: a running guest stops within one epoch tick.
    pub cancel: CancellationToken,
    /// Receives the plugin's `host.progress` messages as they come.
    pub progress: Option<ProgressSink>,
    /// What the user granted in this session ([`Permit`]); a call of a
    /// tool runs with its own, and with no other tool's.
    pub permits: Arc<[Permit]>,
}

/// Loaded plugins and their tools, ready to call from any task.
pub struct Sandbox {
    workspace: PathBuf,
    protection: Arc<Protection>,
    plugins: Vec<LoadedPlugin>,
    tools: Vec<Tool>,
    load_errors: Vec<LoadError>,
    load_notices: Vec<LoadNotice>,
    optimizer: Optimizer,
    cache_dir: Option<PathBuf>,
    compile_after_exit: bool,
    /// [`Tiering::spares_after`].
    spares_after: Option<Duration>,
    plugin_file_limit: u64,
    /// What each capability shares across the tools (every granted
    /// directory opened once, TLS for every tool's requests); a call with
    /// permits configures its tool again through it.
    shared: std::sync::Mutex<SharedCapabilities>,
    /// What a tool holds when it is given nothing: `list-tools` at load
    /// and instances made ahead of a call run with it.
    nothing: Arc<ToolCapabilities>,
    /// See [`SandboxOptions::shipped_plugins`].
    shipped_plugins: Option<Arc<ShippedPlugins>>,
}

/// What the plugins an untrusted workspace ships cost one start so far,
/// and which were not loaded for it.
#[derive(Debug, Default)]
struct ShippedCost {
    count: u64,
    spent: Duration,
    /// Bytes of the files hashed after the budget was spent.
    hashed_after_spent: u64,
    skipped: Vec<PluginOrigin>,
}

impl ShippedCost {
    fn is_spent(&self, max_plugins: u64) -> bool {
        self.count >= max_plugins || self.spent >= limits::SHIPPED_LOAD_TOTAL
    }

    /// Whether the file at `path` may still be hashed, once the budget is
    /// spent, to find whether the user added it: never when the user
    /// added no plugin, else while the files hashed so have taken at most
    /// [`limits::SHIPPED_HASH_AFTER_SPENT`] bytes. Counts it when so.
    fn may_hash_after_spent(&mut self, shipped: &ShippedPlugins, path: &Path) -> bool {
        if shipped.added.is_empty() {
            return false;
        }
        let len = std::fs::metadata(path).map_or(u64::MAX, |meta| meta.len());
        let hashed = self.hashed_after_spent.saturating_add(len);
        if hashed > limits::SHIPPED_HASH_AFTER_SPENT {
            return false;
        }
        self.hashed_after_spent = hashed;
        true
    }

    /// One error for every plugin skipped, naming the limit reached and
    /// what lets them load: the setting, pasted, when the count was
    /// reached; else (the time) trusting the workspace or adding the
    /// plugins wanted, which makes them the user's.
    fn report(&self, shipped: &ShippedPlugins, workspace: &Path) -> Option<LoadError> {
        if self.skipped.is_empty() {
            return None;
        }
        let names: Vec<String> = self
            .skipped
            .iter()
            .take(3)
            .map(|origin| format!("`{}`", origin.stem()))
            .collect();
        let more = match self.skipped.len().saturating_sub(names.len()) {
            0 => String::new(),
            more => format!(" and {more} more"),
        };
        let all = self.count + self.skipped.len() as u64;
        let trust = format!("`toolhost trust {}`", workspace.display());
        let (limit, fix) = if self.count >= shipped.max_plugins {
            (
                format!("a start loads at most {} of them", shipped.max_plugins),
                format!(
                    "to load more, set `shipped_plugins = {all}` under [limits] in your \
                     config.toml, or trust the workspace ({trust})"
                ),
            )
        } else {
            (
                format!(
                    "their loading used up the {} s a start gives it",
                    limits::SHIPPED_LOAD_TOTAL.as_secs()
                ),
                format!(
                    "to load them all, trust the workspace ({trust}), or `toolhost plugin add` \
                     the ones you want"
                ),
            )
        };
        Some(LoadError {
            origin: PluginOrigin::File(shipped.dir.clone()),
            reason: format!(
                "{} of the {all} plugins this workspace ships were not loaded ({}{more}): {limit}, \
                 since each costs a compile and its memory before the first prompt, and you have \
                 not trusted this workspace; {fix}",
                self.skipped.len(),
                names.join(", "),
            ),
        })
    }
}

/// The fuel one `list-tools` may burn: naming tools takes a few million
/// units (a Python plugin's, on baseline code, under 100 million).
const LIST_TOOLS_FUEL: u64 = 1_000_000_000;

/// How long all `list-tools` calls of one start may take together.
const LIST_TOOLS_TOTAL: Duration = Duration::from_secs(5);

/// A plugin to load: where it is, and its bytes when it is a standard one.
type Source = (PluginOrigin, Option<Builtin>);

/// The plugins a start loads, in order: the standard ones, each plugin
/// directory's `*.wasm` files, then the single files; and the links found
/// in the directories, which are not loaded.
fn plugin_sources(options: &SandboxOptions) -> Result<(Vec<Source>, Vec<LoadError>), SandboxError> {
    let mut sources: Vec<Source> = Vec::new();
    if options.standard_tools {
        for (name, builtin) in Builtin::all() {
            sources.push((PluginOrigin::Builtin(name.to_string()), Some(builtin)));
        }
    }
    let mut load_errors = Vec::new();
    let mut files = Vec::new();
    for dir in &options.plugin_dirs {
        let (found, links) = plugin::wasm_files(dir).map_err(|source| SandboxError::PluginDir {
            dir: dir.clone(),
            source,
        })?;
        files.extend(found);
        load_errors.extend(links.into_iter().map(|link| {
            LoadError {
                origin: PluginOrigin::File(link),
                reason: "it is a symbolic link, and toolhost loads plugins only from real files \
                     (a link can be pointed at other code later); copy the file in instead"
                    .into(),
            }
        }));
    }
    files.extend(options.plugin_files.iter().cloned());
    sources.extend(
        files
            .into_iter()
            .map(|path| (PluginOrigin::File(path), None)),
    );
    Ok((sources, load_errors))
}

/// Why `origin` was not loaded once the start's `list-tools` budget was
/// spent.
fn listing_spent(origin: PluginOrigin) -> LoadError {
    LoadError {
        origin,
        reason: format!(
            "not loaded: the plugins before it used up the {} s a start gives all `list-tools` \
             calls together (one of them spins there, or runs out of fuel); remove the plugin \
             that did from its directory",
            LIST_TOOLS_TOTAL.as_secs()
        ),
    }
}

impl Sandbox {
    /// A sandbox with no plugin yet, set up from `options`.
    fn empty(
        options: &SandboxOptions,
        compilers: &Compilers,
        protection: Arc<Protection>,
        load_errors: Vec<LoadError>,
    ) -> Sandbox {
        let mut shared = SharedCapabilities::start(&Start {
            workspace: &options.workspace,
            protection: &protection,
            ca_file: options.ca_file.as_deref(),
        });
        let nothing = Arc::new(ToolCapabilities::configure(
            &ToolPolicy::default(),
            &mut shared,
        ));
        Sandbox {
            optimizer: Optimizer::new(compilers),
            cache_dir: options.cache_dir.clone(),
            compile_after_exit: options.tiering.compile_after_exit,
            spares_after: options.tiering.spares_after,
            plugin_file_limit: options.plugin_file_limit,
            shared: std::sync::Mutex::new(shared),
            nothing,
            shipped_plugins: options.shipped_plugins.clone().map(Arc::new),
            workspace: options.workspace.clone(),
            protection,
            plugins: Vec::new(),
            tools: Vec::new(),
            load_errors,
            load_notices: Vec::new(),
        }
    }

    /// Loads the standard tools and every `*.wasm` in the plugin
    /// directories. A plugin that fails to load is recorded in
    /// [`Sandbox::load_errors`] and skipped; the others still load.
    pub async fn load(options: SandboxOptions) -> Result<Sandbox, SandboxError> {
        Self::load_with_progress(options, &|_| {}).await
    }

    /// [`Sandbox::load`], telling `progress` when a plugin's compile starts
    /// and ends (the CLI shows a spinner naming it).
    pub async fn load_with_progress(
        options: SandboxOptions,
        progress: &(dyn Fn(&LoadEvent<'_>) + Sync),
    ) -> Result<Sandbox, SandboxError> {
        let compilers = Compilers::new(
            cache::CompileCache::new(options.cache_dir.clone()),
            options.tiering,
            options.plugin_file_limit,
        )
        .map_err(SandboxError::Engine)?;

        let (sources, load_errors) = plugin_sources(&options)?;
        let protection = Arc::new(
            Protection::new(
                &options.workspace,
                options.protected.clone(),
                &options.records,
            )
            .with_every_repository(options.every_repository.clone()),
        );
        let mut sandbox =
            Sandbox::empty(&options, &compilers, Arc::clone(&protection), load_errors);
        // `list-tools` only names tools: it gets a small share of the
        // defaults, and all of a start's `list-tools` calls together get
        // LIST_TOOLS_TOTAL, so that copies of a plugin that spins there
        // cannot hold a start for the sum of their limits.
        let defaults = options.policy.defaults.limits;
        let load_limits = Limits {
            fuel: defaults.fuel.min(LIST_TOOLS_FUEL),
            timeout: defaults.timeout.min(LIST_TOOLS_TOTAL),
            ..defaults
        };
        let listing = plugin::ListingBudget::new(LIST_TOOLS_TOTAL);
        // `list-tools` runs with no grants at all.
        let nothing = Arc::clone(&sandbox.nothing);
        // Optimized compiles wait until every plugin is loaded: on two
        // cores they would otherwise slow the loads still to come.
        let mut to_optimize = Vec::new();
        let mut shipped_cost = ShippedCost::default();
        for (origin, builtin) in sources {
            if listing.is_spent() {
                sandbox.load_errors.push(listing_spent(origin));
                continue;
            }
            // Once the budget is spent, a file of the shipped directory is
            // hashed (to tell one the user added) only while that reads
            // little: hashing is reading the whole file.
            if let Some(shipped) = &sandbox.shipped_plugins
                && shipped_cost.is_spent(shipped.max_plugins)
                && let PluginOrigin::File(path) = &origin
                && path.starts_with(&shipped.dir)
                && !shipped_cost.may_hash_after_spent(shipped, path)
            {
                shipped_cost.skipped.push(origin);
                continue;
            }
            let shipped = sandbox.is_shipped_file(&origin, &compilers);
            if let Some(shipped) = &shipped
                && shipped_cost.is_spent(shipped.max_plugins)
            {
                shipped_cost.skipped.push(origin);
                continue;
            }
            let policy = RunPolicy {
                deadline: None,
                limits: &load_limits,
                capabilities: &nothing,
            };
            let started = std::time::Instant::now();
            let listing_before = listing.remaining();
            let loaded =
                plugin::load(&compilers, origin, builtin, policy, &listing, progress).await;
            if shipped.is_some() {
                // What the plugin cost besides its `list-tools`, which has
                // a budget of its own.
                let listed = listing_before.saturating_sub(listing.remaining());
                shipped_cost.count += 1;
                shipped_cost.spent += started.elapsed().saturating_sub(listed);
            }
            match loaded {
                Ok(mut loaded) => {
                    let optimize = loaded.optimize.take();
                    if sandbox.add(loaded, &options.policy, &options.typed) {
                        to_optimize.extend(optimize);
                    }
                }
                Err(error) => sandbox.load_errors.push(error),
            }
        }
        for job in to_optimize {
            sandbox.optimizer.submit(job);
        }
        if let Some(shipped) = &sandbox.shipped_plugins
            && let Some(error) = shipped_cost.report(shipped, &sandbox.workspace)
        {
            sandbox.load_errors.push(error);
        }
        Ok(sandbox)
    }

    /// What an untrusted workspace ships, when `origin` is a plugin file
    /// it ships (in its plugins directory, and not one the user added,
    /// known by its sha256).
    fn is_shipped_file(
        &self,
        origin: &PluginOrigin,
        compilers: &Compilers,
    ) -> Option<Arc<ShippedPlugins>> {
        let shipped = self.shipped_plugins.as_ref()?;
        let PluginOrigin::File(path) = origin else {
            return None;
        };
        if !path.starts_with(&shipped.dir) {
            return None;
        }
        // A file that cannot be read or hashed is the repository's: its
        // load fails on its own.
        let added = plugin::file_sha256(compilers, path)
            .is_some_and(|sha256| shipped.added.contains(&sha256));
        (!added).then(|| Arc::clone(shipped))
    }

    /// Adds a loaded plugin's tools. A toolhost-world plugin whose tool
    /// name is taken is skipped whole, with an error naming both plugins; a
    /// typed export whose name is taken is renamed with the file's stem.
    /// Returns whether the plugin was added.
    ///
    /// Long: a loaded plugin's tools admitted one by one (name, clash, typed
    /// settings, policy, grant directories, spares), each step a few lines.
    fn add(&mut self, mut loaded: LoadedPlugin, policy: &Policy, typed: &TypedConfig) -> bool {
        let notices = std::mem::take(&mut loaded.notices);
        self.load_notices
            .extend(notices.into_iter().map(|message| LoadNotice {
                origin: loaded.origin.clone(),
                message,
            }));
        let code = loaded.code.current();
        if matches!(code.exports, Exports::Typed(_)) {
            self.settle_typed(&mut loaded, typed);
        } else {
            for spec in &loaded.tools {
                if let Some(existing) = self.tools.iter().find(|t| t.name == spec.name) {
                    self.load_errors.push(LoadError {
                        origin: loaded.origin.clone(),
                        reason: format!(
                            "tool `{}` is already offered by `{}`; rename one of them or remove one plugin",
                            spec.name, existing.plugin
                        ),
                    });
                    return false;
                }
                self.note_typed_only_keys(&loaded.origin, &spec.name, typed);
            }
        }
        let plugin_index = self.plugins.len();
        let output_schemas: Vec<Option<serde_json::Value>> = match &code.exports {
            Exports::Typed(functions) => loaded
                .tools
                .iter()
                .map(|spec| spec.function.map(|i| functions[i].output_schema.clone()))
                .collect(),
            Exports::Toolhost(_) => vec![None; loaded.tools.len()],
        };
        let shipped = self.shipped(&loaded);
        let uses_network = code
            .pre
            .component()
            .component_type()
            .imports(&code.engine)
            .any(|(name, _)| name.starts_with("wasi:http/"));
        for (spec, output_schema) in loaded.tools.iter().zip(output_schemas) {
            let (mut tool_policy, withheld) = match &shipped {
                Some(shipped) => {
                    let tool = shipped
                        .per_tool
                        .get(&spec.name)
                        .unwrap_or(&shipped.defaults);
                    (tool.policy.clone(), tool.withheld.clone())
                }
                None => (policy.for_tool(&spec.name).clone(), Vec::new()),
            };
            if spec.read_only {
                tool_policy = tool_policy.read_only();
            }
            if !withheld.is_empty() {
                let trust = format!("`toolhost trust {}`", self.workspace.display());
                let message = if withheld == ["network access"] {
                    format!(
                        "`{}` gets no network access: its plugin came with this workspace, and \
                         what a repository ships reaches the network only once you trust it \
                         ({trust})",
                        spec.name
                    )
                } else {
                    format!(
                        "`{}` gets none of what your configuration gives it by name ({}): its \
                         plugin came with this workspace, and what a repository ships gets \
                         those only once you trust it ({trust})",
                        spec.name,
                        withheld.join(", ")
                    )
                };
                self.load_notices.push(LoadNotice {
                    origin: loaded.origin.clone(),
                    message,
                });
            }
            // The model pages through a cut result's saved whole text with
            // the standard `read_file`; no other tool reads what another
            // tool read.
            tool_policy.fs.reads_saved_outputs = matches!(&loaded.origin, PluginOrigin::Builtin(plugin) if plugin == "read-file")
                && spec.name == "read_file";
            let shared = self
                .shared
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let capabilities = ToolCapabilities::configure(&tool_policy, shared);
            self.tools.push(Tool {
                name: spec.name.clone(),
                description: spec.description.clone(),
                input_schema: spec.schema.clone(),
                output_schema,
                read_only: spec.read_only,
                uses_network,
                plugin: loaded.origin.clone(),
                plugin_sha256: loaded.sha256.clone(),
                cache: loaded.cache,
                policy: tool_policy,
                capabilities,
                spares: Arc::default(),
                checker: spec.checker.clone(),
                path_args: spec.path_args.clone(),
                plugin_index,
                function: spec.function,
            });
        }
        self.plugins.push(loaded);
        true
    }

    /// What its tools get when a plugin came from an untrusted
    /// workspace's own plugins directory and the user did not put it
    /// there (`plugin add`, `plugin install`); `None` for the user's own.
    fn shipped(&self, loaded: &LoadedPlugin) -> Option<Arc<ShippedPlugins>> {
        let shipped = self.shipped_plugins.as_ref()?;
        match &loaded.origin {
            PluginOrigin::File(path)
                if path.starts_with(&shipped.dir) && !shipped.added.contains(&loaded.sha256) =>
            {
                Some(Arc::clone(shipped))
            }
            _ => None,
        }
    }

    /// Gives a typed plugin's tools their final names (the configured
    /// prefix, or the file's stem where a name is taken) and applies the
    /// config's read-only flags and path parameters under those names.
    fn settle_typed(&mut self, loaded: &mut LoadedPlugin, typed: &TypedConfig) {
        let code = loaded.code.current();
        let Exports::Typed(functions) = &code.exports else {
            return;
        };
        let stem = loaded.origin.stem();
        let shipped = self.shipped(loaded).is_some();
        let configured = shipped
            .then(|| typed.shipped_prefixes.get(&stem))
            .flatten()
            .or_else(|| typed.prefixes.get(&stem));
        let mut kept: Vec<CheckedSpec> = Vec::with_capacity(loaded.tools.len());
        let mut renames = Vec::new();
        for mut spec in std::mem::take(&mut loaded.tools) {
            let function = &functions[spec.function.expect("typed specs name their function")];
            let taken = |name: &str, kept: &[CheckedSpec]| {
                self.tools.iter().any(|t| t.name == name) || kept.iter().any(|t| t.name == name)
            };
            let mut rename = None;
            let name = match configured {
                Some(prefix) => format!("{prefix}_{}", spec.name),
                None if taken(&spec.name, &kept) => {
                    let renamed = format!("{}_{}", typed::stem_prefix(&stem), spec.name);
                    let holder = self
                        .tools
                        .iter()
                        .find(|t| t.name == spec.name)
                        .map_or_else(|| "this plugin".to_string(), |t| format!("`{}`", t.plugin));
                    rename = Some(typed::renames::Rename {
                        taken: spec.name.clone(),
                        holder,
                        wit_name: function.wit_name.clone(),
                        renamed: renamed.clone(),
                    });
                    renamed
                }
                None => spec.name.clone(),
            };
            if !is_tool_name(&name) || taken(&name, &kept) {
                self.load_notices.push(LoadNotice {
                    origin: loaded.origin.clone(),
                    message: format!(
                        "function `{}` is not offered: its tool name `{name}` is {}",
                        function.wit_name,
                        if is_tool_name(&name) {
                            "taken too; set `[plugins.<stem>] prefix` in toolhost.toml"
                        } else {
                            "not 1-64 characters of [a-zA-Z0-9_-]"
                        }
                    ),
                });
                continue;
            }
            renames.extend(rename);
            spec.name = name;
            if let Some(config) = typed.tools.get(&spec.name) {
                spec.read_only = config.read_only.unwrap_or(false);
                for (param, access) in &config.paths {
                    if typed::is_string_param(function, param) {
                        spec.path_args.push(plugin::PathArg {
                            key: param.clone(),
                            access: *access,
                            default: None,
                        });
                    } else {
                        self.load_notices.push(LoadNotice {
                            origin: loaded.origin.clone(),
                            message: format!(
                                "`[tools.{}] paths` names `{param}`, which is not a string parameter of `{}`; \
                                 it is not checked as a path (the sandbox still holds the tool to its grants)",
                                spec.name, function.wit_name
                            ),
                        });
                    }
                }
            }
            kept.push(spec);
        }
        loaded.tools = kept;
        if let Some(message) = typed::renames::notice(&stem, &renames) {
            self.load_notices.push(LoadNotice {
                origin: loaded.origin.clone(),
                message,
            });
        }
    }

    /// `paths` and `read_only` in `[tools.<name>]` describe typed exports;
    /// a toolhost-world tool declares both itself, so say they do nothing.
    fn note_typed_only_keys(&mut self, origin: &PluginOrigin, tool: &str, typed: &TypedConfig) {
        if typed.tools.contains_key(tool) {
            self.load_notices.push(LoadNotice {
                origin: origin.clone(),
                message: format!(
                    "`[tools.{tool}] paths` and `read_only` apply only to tools derived from typed exports; \
                     `{tool}` declares its own (`x-toolhost-path`, `read-only`), so they are ignored"
                ),
            });
        }
    }

    /// The loaded tools, standard tools first, then plugins in file order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`, if loaded.
    /// The fault for a call of `name`, which no loaded tool has, naming
    /// the tools there are: `run` and the MCP server give the same text.
    pub fn unknown_tool(&self, name: &str) -> ToolFault {
        ToolFault::UnknownTool {
            name: name.to_string(),
            available: self.tools.iter().map(|t| t.name.clone()).collect(),
        }
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Plugins that were skipped, with the reason.
    pub fn load_errors(&self) -> &[LoadError] {
        &self.load_errors
    }

    /// What the user should know about plugins that loaded: functions
    /// that are not tools, tools renamed on a clash, ignored config keys.
    pub fn load_notices(&self) -> &[LoadNotice] {
        &self.load_notices
    }

    /// The paths no tool may change (unless the user lifted one for it).
    pub fn protected(&self) -> Vec<&ProtectedPath> {
        self.protection.paths().collect()
    }

    /// What each tool may reach, one line per tool, then the paths no tool
    /// may change: how the system prompt and the MCP server's instructions
    /// both end, so a model told of its tools either way reads the same.
    pub fn describe_reach(&self) -> String {
        let mut text = String::from("Tools and their directories:\n");
        for tool in &self.tools {
            text.push_str(&format!("- {}\n", tool.reach().line()));
        }
        if let Some(sentence) = reach::protected_sentence(&self.protected()) {
            text.push_str(&format!("\n{sentence}\n"));
        }
        text
    }

    /// A grant the user typed in a session (`/allow bash=src`), or one a
    /// resumed session recorded, checked as the same flag would be: the
    /// tool is loaded; a directory is there (canonical); a write naming a
    /// protected path by its name lifts it, when a session may (with the
    /// directory itself when it is one); an origin parses; a program is on
    /// `PATH`.
    /// Why not, in words that follow "cannot allow it: ".
    pub fn permit(
        &self,
        tool: &str,
        kind: PermitKind,
        target: &str,
    ) -> Result<Vec<Permit>, String> {
        let Some(loaded) = self.tool(tool) else {
            return Err(self.unknown_tool(tool).model_text(tool));
        };
        let permit = |kind, target: String| Permit {
            tool: tool.to_string(),
            kind,
            target,
        };
        match kind {
            PermitKind::Read | PermitKind::Write | PermitKind::Lift => {
                let written = Path::new(target);
                let host = self.workspace.join(written);
                let writes = kind != PermitKind::Read;
                if writes && loaded.policy.fs.declared_read_only {
                    return Err(format!(
                        "`{tool}` declares itself read-only, so toolhost gives it no write access"
                    ));
                }
                let canonical = host.canonicalize();
                let lands = super::lift_target(&host).unwrap_or_else(|| host.clone());
                if writes && self.protection.lifted_by(&host, &lands, &[]) {
                    let path = &lands;
                    if !self.protection.lift_offered(path) {
                        let why = if path.starts_with(&self.workspace) {
                            "is toolhost's own (its configuration or state, which decides what \
                             every tool may do)"
                        } else {
                            "is protected, outside the workspace"
                        };
                        return Err(format!(
                            "`{target}` {why}; only a flag lifts that: restart with \
                             `--allow-write {tool}={target}`"
                        ));
                    }
                    // The lift as the user's words name it: where it lands
                    // is found again when it applies (`widened`).
                    let words = super::lexical_path(&host);
                    let mut given = vec![permit(
                        PermitKind::Lift,
                        words.to_string_lossy().into_owned(),
                    )];
                    if path.is_dir() {
                        given.push(permit(
                            PermitKind::Write,
                            path.to_string_lossy().into_owned(),
                        ));
                    }
                    return Ok(given);
                }
                let dir = canonical.map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => {
                        format!("`{}` does not exist; create it first", host.display())
                    }
                    _ => format!("`{}`: {e}", host.display()),
                })?;
                // As the flag: a relative path a link leads out of the
                // workspace is outside it.
                if written.is_relative() && !dir.starts_with(&self.workspace) {
                    return Err(format!(
                        "`{target}` leads outside the workspace (to `{}`); write the absolute \
                         path to allow a directory outside it on purpose",
                        dir.display()
                    ));
                }
                if !dir.is_dir() {
                    return Err(format!(
                        "`{}` is not a directory; allow the directory that holds it",
                        dir.display()
                    ));
                }
                let kind = if writes {
                    PermitKind::Write
                } else {
                    PermitKind::Read
                };
                Ok(vec![permit(kind, dir.to_string_lossy().into_owned())])
            }
            PermitKind::Net => {
                let grant = match NetGrant::parse(target) {
                    Ok(_) => target.to_string(),
                    Err(error) => Destination::of_url(target)
                        .map(|to| permits::origin(&to))
                        .map_err(|_| error.to_string())?,
                };
                Ok(vec![permit(PermitKind::Net, grant)])
            }
            PermitKind::Exec => {
                Program::find(target, &ProgramLookup::from_env())
                    .map_err(|why| format!("`{target}` {why}"))?;
                Ok(vec![permit(PermitKind::Exec, target.to_string())])
            }
        }
    }

    /// The workspace root the tools see as `.`.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Runs tool `name` on `input` (JSON text). Never fails: every problem
    /// is a [`ToolFault`] in the report, for the model to read.
    ///
    /// Long: a call's steps in order (a slot, the input, the export by its
    /// kind, the outcome and what it measured).
    pub async fn call(&self, name: &str, input: &str, options: &CallOptions) -> CallReport {
        // Every call waits for a slot of the engine's pools, however many
        // were asked for at once ([`slots`]); the wait is not the tool's,
        // so its deadline starts once it has one.
        let slot = slots::CallSlot::wait(&options.cancel).await;
        let start = Instant::now();
        let refuse = |fault: ToolFault| CallReport {
            outcome: ToolOutcome::Fault(fault),
            structured: None,
            stats: CallStats {
                duration: start.elapsed(),
                ..CallStats::default()
            },
            captured: Captured::default(),
            requests: Vec::new(),
            ask: None,
            notes: Vec::new(),
        };
        let Some(slot) = slot else {
            return refuse(ToolFault::Cancelled);
        };
        let Some(tool) = self.tool(name) else {
            return refuse(self.unknown_tool(name));
        };
        // The tool as loaded, or widened by what the user granted it in
        // this session.
        let widened = self.widened(tool, &options.permits);
        let (tool_policy, tool_capabilities) = match &widened {
            Some((policy, capabilities)) => (policy, capabilities),
            None => (&tool.policy, &tool.capabilities),
        };
        // Refused before any of its code ran: it may simply run again.
        let refuse = |fault: ToolFault| CallReport {
            ask: permits::ask_for(&fault, name, tool_policy, &self.protection, true),
            ..refuse(fault)
        };
        // One deadline for the whole call: checking the input spends it too.
        let deadline = start + tool.policy.limits.timeout;
        let input = match self
            .prepare_input(
                tool,
                (tool_policy, tool_capabilities),
                input,
                deadline,
                &options.cancel,
            )
            .await
        {
            Ok(input) => input,
            Err(fault) => return refuse(fault),
        };
        if options.cancel.is_cancelled() {
            return refuse(ToolFault::Cancelled);
        }

        let code = self.plugins[tool.plugin_index].code.current();
        let policy = RunPolicy {
            deadline: Some(deadline),
            limits: &tool.policy.limits,
            capabilities: tool_capabilities,
        };
        // What each kind of export answered, as text and (typed) JSON.
        let run = match &code.exports {
            Exports::Toolhost(exports) => {
                let export = CallTool {
                    exports,
                    name,
                    input: &input,
                };
                self.run_export(tool, &code, policy, options, &slot, export)
                    .await
                    .map(|answer| answer.map(|text| (text, None)))
            }
            Exports::Typed(functions) => {
                let function = &functions[tool
                    .function
                    .expect("a typed plugin's tools name their function")];
                if let Err(over) = TOOL_ARGUMENTS.check(input.as_bytes()) {
                    return refuse(ToolFault::InputOverBudget { over });
                }
                let params = match serde_json::from_str(&input)
                    .map_err(|e| e.to_string())
                    .and_then(|value| typed::value::params(&value, &function.params))
                {
                    Ok(params) => params,
                    Err(error) => return refuse(ToolFault::InvalidInput(error)),
                };
                let export = typed::CallTyped { function, params };
                self.run_export(tool, &code, policy, options, &slot, export)
                    .await
                    .map(|returned| {
                        typed::answer(returned, function).map(|(text, json)| (text, Some(json)))
                    })
            }
        };
        let call::Run {
            result,
            stats,
            captured,
            refusals,
            records,
            limit_hit,
            instantiation: _,
        } = run;
        let (result, structured) = match result {
            Ok(Ok((text, structured))) => (Ok(Ok(text)), structured),
            Ok(Err(error)) => (Ok(Err(error)), None),
            Err(fault) => (Err(fault), None),
        };
        let first_refused = refusals.first::<ToolFault>();
        let outcome = call::outcome_of(
            result,
            &refusals,
            limit_hit,
            name,
            &tool_policy.fs.grants,
            &tool.policy.limits,
        );
        // What to ask for: the refusal the call ended with, else the first
        // one it met on the way to its answer.
        // It ran: again only when it declares it changes nothing.
        let ask_for = |fault: &ToolFault| {
            permits::ask_for(fault, name, tool_policy, &self.protection, tool.read_only)
        };
        let ask = match &outcome {
            ToolOutcome::Fault(fault) => ask_for(fault),
            ToolOutcome::Ok(_) => None,
        }
        .or_else(|| first_refused.and_then(|fault| ask_for(&fault)));
        let structured = structured.filter(|_| !outcome.is_error());
        CallReport {
            outcome,
            structured,
            stats,
            captured,
            requests: records.net,
            ask,
            notes: Vec::new(),
        }
    }

    /// `tool` widened by what the user granted it in the session
    /// (`permits`): its policy and what it holds of each capability, made
    /// again for this call; `None` when it runs as loaded.
    fn widened(&self, tool: &Tool, permits: &[Permit]) -> Option<(ToolPolicy, ToolCapabilities)> {
        let policy = permits::widened(&tool.name, &tool.policy, permits, &self.protection)?;
        let mut shared = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let capabilities = ToolCapabilities::configure(&policy, &mut shared);
        Some((policy, capabilities))
    }

    /// Runs `export` of `code` for `tool` in a fresh instance under
    /// `policy`: its spare when one is ready, and then its next spare is
    /// made when instantiating it is slow. A spare taken leaves the spares'
    /// slots for `slot`, the call's, which is why the call holds one first.
    async fn run_export<E: call::Export>(
        &self,
        tool: &Tool,
        code: &Arc<Code>,
        policy: RunPolicy<'_>,
        options: &CallOptions,
        slot: &slots::CallSlot,
        export: E,
    ) -> call::Run<E::Output> {
        let ahead = tool.spares.take(code);
        let took_spare = ahead.is_some();
        let run = call::run(
            &code.engine,
            &code.pre,
            policy,
            &options.cancel,
            options.progress.clone(),
            (slot, ahead),
            export,
        )
        .await;
        if let Some(after) = self.spares_after {
            let slow = run.instantiation.is_some_and(|took| took >= after);
            if took_spare || slow {
                // Of the code current now: optimized code may have come in
                // during the call.
                let current = self.plugins[tool.plugin_index].code.current();
                tool.spares
                    .make(&current, &tool.policy.limits, &self.nothing);
            }
        }
        run
    }

    /// Which compiler made the code `tool` runs now: baseline for a big
    /// plugin new to the cache until its optimized code is in.
    pub fn tier(&self, tool: &Tool) -> Tier {
        self.plugins[tool.plugin_index].code.current().tier
    }

    /// Resolves when every plugin loaded with baseline code runs its
    /// optimized code (stored in the cache for the next start), or its
    /// optimized compile failed and it keeps the baseline code.
    pub async fn optimized(&self) {
        self.optimizer.settled().await;
    }

    /// The plugins still on baseline code, for a process about to exit to
    /// leave their optimized compile to a background one
    /// ([`compile_optimized`]): `None` when there are none, the compile
    /// cache is off (nothing could be kept) or
    /// [`Tiering::compile_after_exit`] is off.
    pub fn unfinished(&self) -> Option<Unfinished> {
        if !self.compile_after_exit {
            return None;
        }
        let cache_dir = self.cache_dir.clone()?;
        let plugins: Vec<PluginOrigin> = self
            .plugins
            .iter()
            .filter(|p| p.code.current().tier == Tier::Baseline)
            .map(|p| p.origin.clone())
            .collect();
        (!plugins.is_empty()).then_some(Unfinished {
            cache_dir,
            plugins,
            file_limit: self.plugin_file_limit,
        })
    }

    /// Bytes a plugin file may have ([`SandboxOptions::plugin_file_limit`]).
    pub fn plugin_file_limit(&self) -> u64 {
        self.plugin_file_limit
    }

    /// Parses and validates the input before any wasm runs, and checks path
    /// arguments against the tool's grants. Returns the JSON text to pass on.
    /// The schema check runs under the call's `deadline` and `cancel`.
    async fn prepare_input(
        &self,
        tool: &Tool,
        (policy, held): (&ToolPolicy, &ToolCapabilities),
        input: &str,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<String, ToolFault> {
        TOOL_ARGUMENTS
            .check(input.as_bytes())
            .map_err(|over| ToolFault::InputOverBudget { over })?;
        let value: serde_json::Value =
            serde_json::from_str(input).map_err(|e| ToolFault::InvalidJson {
                error: e.to_string(),
            })?;
        let value = Arc::new(value);
        let errors = tool
            .checker
            .validate(Arc::clone(&value), input.len(), deadline, cancel)
            .await
            .map_err(|stopped| match stopped {
                input_schema::Stopped::Deadline => ToolFault::Timeout {
                    limit: tool.policy.limits.timeout,
                },
                input_schema::Stopped::Cancelled => ToolFault::Cancelled,
            })?;
        if !errors.is_empty() {
            return Err(ToolFault::SchemaViolation { errors });
        }
        // The blocking thread that checked it may still hold a clone until
        // it unwinds; copy only then.
        let mut value = Arc::unwrap_or_clone(value);

        let mut rewritten = false;
        for arg in &tool.path_args {
            let given = value.get(&arg.key).and_then(|v| v.as_str());
            let Some(path) = given.or(arg.default.as_deref()) else {
                continue;
            };
            let guest = match capabilities::check_path(
                path,
                arg.access,
                &policy.fs.grants,
                &self.workspace,
            ) {
                PathCheck::Allowed => path.to_string(),
                // Only a path the model gave is rewritten; a default is the
                // tool's own and already in guest form.
                PathCheck::Rewrite(guest) if given.is_some() => {
                    value[&arg.key] = serde_json::Value::String(guest.clone());
                    rewritten = true;
                    guest
                }
                PathCheck::Rewrite(guest) => guest,
                PathCheck::Denied => {
                    return Err(ToolFault::Denied {
                        path: path.to_string(),
                        access: arg.access,
                        grants: policy.fs.grants.clone(),
                    });
                }
            };
            // The guard would refuse the write inside the sandbox; say so
            // before any wasm runs. A path in directories still to be made
            // lands where they would be.
            if arg.access == Access::Write {
                let target = capabilities::protect::locate(&self.workspace, &guest, true)
                    .unwrap_or_else(|_| {
                        capabilities::protect::locate_loose(&self.workspace.join(&guest))
                    });
                let rules = &held.fs.rules;
                if let Some(hit) = rules.protected(&target) {
                    return Err(ToolFault::FsDenied(Denial::Protected {
                        path: rules.shown(&target),
                        hit,
                    }));
                }
                if let Some(denial) = rules.hard_linked(&target) {
                    return Err(ToolFault::FsDenied(denial));
                }
            }
        }
        Ok(if rewritten {
            value.to_string()
        } else {
            input.to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::ShippedTool;
    use std::collections::BTreeMap;

    fn shipped(dir: &Path, added: &[&str]) -> ShippedPlugins {
        ShippedPlugins {
            dir: dir.to_path_buf(),
            added: added.iter().map(|sha| sha.to_string()).collect(),
            per_tool: BTreeMap::new(),
            defaults: ShippedTool::default(),
            max_plugins: 1,
        }
    }

    /// Past the shipped plugins' budget, the files left are hashed (read
    /// whole) only to find one the user added, and only for so many bytes.
    #[test]
    fn past_the_budget_a_shipped_file_is_hashed_only_while_that_reads_little() {
        let dir = tempfile::tempdir().expect("tempdir");
        let small = dir.path().join("small.wasm");
        std::fs::write(&small, [0u8; 1024]).expect("write");
        let big = dir.path().join("big.wasm");
        std::fs::File::create(&big)
            .and_then(|file| file.set_len(limits::SHIPPED_HASH_AFTER_SPENT))
            .expect("big");

        // The user added no plugin: nothing past the budget is theirs.
        let mut cost = ShippedCost::default();
        assert!(!cost.may_hash_after_spent(&shipped(dir.path(), &[]), &small));

        // They added one: small files are hashed until the bytes run out.
        let theirs = shipped(dir.path(), &["00"]);
        assert!(cost.may_hash_after_spent(&theirs, &small));
        assert!(!cost.may_hash_after_spent(&theirs, &big));
        assert!(cost.may_hash_after_spent(&theirs, &small));
        assert_eq!(cost.hashed_after_spent, 2048);
    }
}
