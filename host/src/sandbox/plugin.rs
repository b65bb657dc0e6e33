//! Loading plugins: bytes → compiled component (through the cache, with the
//! baseline compiler first for a big one: [`super::tiers`]) →
//! `InstancePre` → tool specs: from `list-tools` for the toolhost world,
//! derived from the WIT types for a component with typed exports
//! ([`super::typed`]).
//!
//! Every way a plugin can fail to load is a [`LoadError`] naming the plugin;
//! the caller reports it and goes on with the other plugins.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use wasmtime::component::{Component, Instance};
use wasmtime::{Engine, Store};

use super::bindings::{CallError, PluginIndices, ToolSpec};
use super::cache::CacheStatus;
use super::call::{self, Export, RunPolicy, State};
use super::capabilities::Access;
use super::engine::Tier;
use super::input_schema::InputSchema;
use super::plugin_file::{PluginOrigin, Source};
use super::precheck::precheck;
use super::slots::CallSlot;
use super::standard::Builtin;
use super::tiers::{Backend, Code, CodeSlot, Compilers, Exports, Job};
use super::tool_name::is_tool_name;
use super::typed::{self, TypedFunction, docs::Docs};

/// A plugin that could not be loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin `{origin}`: {reason}")]
pub struct LoadError {
    pub origin: PluginOrigin,
    pub reason: String,
}

/// Something the user should know about a plugin that loaded: a function
/// that is not a tool, a tool renamed to avoid a clash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin `{origin}`: {message}")]
pub struct LoadNotice {
    pub origin: PluginOrigin,
    pub message: String,
}

/// What loading reports as it goes: a plugin that is not in the compile
/// cache takes seconds to compile (a Python or JavaScript component ten or
/// more), and a user on a terminal should see which one and that it is
/// moving.
#[derive(Debug, Clone, Copy)]
pub enum LoadEvent<'a> {
    /// Compiling `origin` (`bytes` long) starts.
    CompileStart {
        origin: &'a PluginOrigin,
        bytes: usize,
    },
    /// The compile of `origin` has ended (well or not).
    CompileEnd { origin: &'a PluginOrigin },
}

/// A loaded plugin: ready to instantiate, with its checked tools.
pub(crate) struct LoadedPlugin {
    pub(crate) origin: PluginOrigin,
    pub(crate) sha256: String,
    pub(crate) cache: CacheStatus,
    pub(crate) code: Arc<CodeSlot>,
    pub(crate) tools: Vec<CheckedSpec>,
    /// What the user should know about a plugin that loaded (functions
    /// that are not tools).
    pub(crate) notices: Vec<String>,
    /// Loaded with baseline code: the optimized compile to queue.
    pub(crate) optimize: Option<Job>,
}

/// The sha256 of the plugin file at `path` as loading would find it
/// (remembered for an unchanged file); `None` when it cannot be read.
pub(crate) fn file_sha256(compilers: &Compilers, path: &Path) -> Option<String> {
    let origin = PluginOrigin::File(path.to_path_buf());
    let mut source = Source::open(&origin, None, compilers.file_limit).ok()?;
    source.sha256(&compilers.cache).ok()
}

/// The world's `list-tools`.
pub(crate) struct ListTools<'a>(pub(crate) &'a PluginIndices);

impl Export for ListTools<'_> {
    type Output = Vec<ToolSpec>;

    async fn call(
        self,
        store: &mut Store<State>,
        instance: Instance,
    ) -> wasmtime::Result<Vec<ToolSpec>> {
        let plugin = self.0.load(&mut *store, &instance)?;
        plugin.call_list_tools(store).await
    }
}

/// The world's `call-tool` with a tool's name and its JSON input.
pub(crate) struct CallTool<'a> {
    pub(crate) exports: &'a PluginIndices,
    pub(crate) name: &'a str,
    pub(crate) input: &'a str,
}

impl Export for CallTool<'_> {
    type Output = Result<String, CallError>;

    async fn call(
        self,
        store: &mut Store<State>,
        instance: Instance,
    ) -> wasmtime::Result<Result<String, CallError>> {
        let plugin = self.exports.load(&mut *store, &instance)?;
        plugin.call_call_tool(store, self.name, self.input).await
    }
}

/// A tool spec that passed every load-time check.
pub(crate) struct CheckedSpec {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) schema: serde_json::Value,
    pub(crate) checker: InputSchema,
    pub(crate) read_only: bool,
    /// Top-level string properties marked `x-toolhost-path`.
    pub(crate) path_args: Vec<PathArg>,
    /// For a typed function: its index in [`Exports::Typed`].
    pub(crate) function: Option<usize>,
}

/// The time all `list-tools` calls of one start may still take together:
/// copies of a plugin that spins there must not hold a start for the sum of
/// their limits. Compiling does not count.
#[derive(Debug)]
pub(crate) struct ListingBudget {
    /// Nanoseconds left (the budget is seconds: it fits).
    remaining: std::sync::atomic::AtomicU64,
}

impl ListingBudget {
    pub(crate) fn new(total: std::time::Duration) -> Self {
        let nanos = u64::try_from(total.as_nanos()).unwrap_or(u64::MAX);
        ListingBudget {
            remaining: std::sync::atomic::AtomicU64::new(nanos),
        }
    }

    pub(crate) fn is_spent(&self) -> bool {
        self.remaining().is_zero()
    }

    pub(crate) fn remaining(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.remaining.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn spend(&self, spent: std::time::Duration) {
        let spent = u64::try_from(spent.as_nanos()).unwrap_or(u64::MAX);
        let left = self.remaining.load(std::sync::atomic::Ordering::Relaxed);
        self.remaining.store(
            left.saturating_sub(spent),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
}

/// Loads the plugin from `origin` (a standard tool's bytes are `builtin`):
/// its code from the cache, or compiled (with the baseline compiler first
/// when it is big), instantiated and asked for its tools under `policy` (no
/// grants), within what is left of `listing`.
///
/// Long: a load's steps in order (read, hash, cached code or a compile,
/// instantiate, list tools, check them), each a few lines over the one source.
pub(crate) async fn load(
    compilers: &Compilers,
    origin: PluginOrigin,
    builtin: Option<Builtin>,
    policy: RunPolicy<'_>,
    listing: &ListingBudget,
    progress: &(dyn Fn(&LoadEvent<'_>) + Sync),
) -> Result<LoadedPlugin, LoadError> {
    let fail = |reason: String| LoadError {
        origin: origin.clone(),
        reason,
    };
    let cache = &compilers.cache;
    let mut source = Source::open(&origin, builtin, compilers.file_limit).map_err(fail)?;
    let sha256 = source.sha256(cache).map_err(fail)?;
    let (backend, component, cache_status) = match cached(compilers, &source, &sha256) {
        Some((backend, component)) => (backend, component, CacheStatus::Hit),
        None => {
            let bytes = source.bytes().map_err(fail)?;
            compile(compilers, &origin, &bytes, &sha256, progress).map_err(fail)?
        }
    };
    let instance_pre = backend.linker.instantiate_pre(&component).map_err(|e| {
        fail(format!("it imports something toolhost does not provide: {e:#}; plugins may import only WASI p2 and toolhost:plugin/host"))
    })?;
    let engine = &backend.engine;
    let indices = match PluginIndices::new(&instance_pre) {
        Ok(indices) => indices,
        Err(e) if targets_toolhost_world(engine, &component) => {
            return Err(fail(format!(
                "it does not implement the toolhost:plugin/plugin world ({e:#}); it must export `list-tools` and \
                 `call-tool` as defined in wit/plugin.wit"
            )));
        }
        Err(_) => {
            let docs = Docs::of_component(&source.bytes().map_err(fail)?);
            let discovered = typed::discover(engine, &component, &docs);
            let code = |functions| Code {
                tier: backend.tier,
                engine: engine.clone(),
                pre: instance_pre,
                exports: Exports::Typed(functions),
            };
            let mut loaded = typed_plugin(origin, sha256, cache_status, code, discovered)?;
            loaded.optimize = job_for(compilers, &loaded.code, &mut source, &loaded.sha256)
                .map_err(|reason| LoadError {
                    origin: loaded.origin.clone(),
                    reason,
                })?;
            return Ok(loaded);
        }
    };

    // A reload's `list-tools` waits for a slot as a call does, before its
    // share of the listing budget starts.
    let never = CancellationToken::new();
    let Some(slot) = CallSlot::wait(&never).await else {
        return Err(fail("`list-tools` was cancelled".into()));
    };
    let started = std::time::Instant::now();
    let policy = RunPolicy {
        deadline: Some(started + policy.limits.timeout.min(listing.remaining())),
        ..policy
    };
    let run = call::run(
        engine,
        &instance_pre,
        policy,
        &never,
        None,
        (&slot, None),
        ListTools(&indices),
    )
    .await;
    drop(slot);
    listing.spend(started.elapsed());
    let specs = run
        .result
        .map_err(|fault| fail(format!("`list-tools` {fault}")))?;
    if specs.is_empty() {
        return Err(fail("`list-tools` returned no tools".into()));
    }
    let mut tools: Vec<CheckedSpec> = Vec::with_capacity(specs.len());
    for spec in specs {
        if tools.iter().any(|t| t.name == spec.name) {
            return Err(fail(format!("it offers tool `{}` twice", spec.name)));
        }
        tools.push(check_spec(spec).map_err(fail)?);
    }
    let code = CodeSlot::new(Code {
        tier: backend.tier,
        engine: engine.clone(),
        pre: instance_pre,
        exports: Exports::Toolhost(indices),
    });
    Ok(LoadedPlugin {
        optimize: job_for(compilers, &code, &mut source, &sha256).map_err(fail)?,
        origin,
        sha256,
        cache: cache_status,
        code,
        tools,
        notices: Vec::new(),
    })
}

/// The optimized compile to queue for a plugin loaded with baseline code,
/// when this process optimizes in the background.
fn job_for(
    compilers: &Compilers,
    code: &Arc<CodeSlot>,
    source: &mut Source,
    sha256: &str,
) -> Result<Option<Job>, String> {
    if code.current().tier == Tier::Optimized || !compilers.optimizes_in_background() {
        return Ok(None);
    }
    Ok(Some(Job {
        slot: Arc::clone(code),
        bytes: source.bytes()?,
        sha256: sha256.to_string(),
    }))
}

/// The plugin's compiled code from the cache: the optimized code, else
/// (for a plugin big enough to start on it) the baseline code. Neither
/// reads the plugin's file.
fn cached<'c>(
    compilers: &'c Compilers,
    source: &Source,
    sha256: &str,
) -> Option<(&'c Backend, Component)> {
    let cache = &compilers.cache;
    let optimized = &compilers.optimized;
    if let Some(component) = cache.load(&optimized.engine, Tier::Optimized, sha256) {
        return Some((optimized, component));
    }
    let baseline = compilers.baseline_for(source.len())?;
    let component = cache.load(&baseline.engine, Tier::Baseline, sha256)?;
    Some((baseline, component))
}

/// Compiles a plugin that is not in the cache: with the baseline compiler
/// when it is big (falling back to Cranelift should Winch refuse it), else
/// with Cranelift. Checks its magic and its imports first: a refused
/// plugin costs no compile time.
fn compile<'c>(
    compilers: &'c Compilers,
    origin: &PluginOrigin,
    bytes: &[u8],
    sha256: &str,
    progress: &(dyn Fn(&LoadEvent<'_>) + Sync),
) -> Result<(&'c Backend, Component, CacheStatus), String> {
    precheck(bytes)?;
    let compiling = |started: bool| {
        progress(&if started {
            LoadEvent::CompileStart {
                origin,
                bytes: bytes.len(),
            }
        } else {
            LoadEvent::CompileEnd { origin }
        });
    };
    let cache = &compilers.cache;
    if let Some(baseline) = compilers.baseline_for(bytes.len())
        && let Ok((component, status)) =
            cache.compile(&baseline.engine, Tier::Baseline, bytes, sha256, &compiling)
    {
        return Ok((baseline, component, status));
    }
    let optimized = &compilers.optimized;
    let (component, status) = cache
        .compile(&optimized.engine, Tier::Optimized, bytes, sha256, &compiling)
        .map_err(|e| {
            format!(
                "not a valid WebAssembly component: {e:#}; build it for wasm32-wasip2 or wrap a core module with \
                 `wasm-tools component new`"
            )
        })?;
    Ok((optimized, component, status))
}

/// A component that exports `list-tools` or `call-tool` means to be a
/// toolhost plugin: a mistake in either is reported as such, not read as
/// typed exports.
fn targets_toolhost_world(engine: &Engine, component: &wasmtime::component::Component) -> bool {
    let ty = component.component_type();
    ["list-tools", "call-tool"]
        .iter()
        .any(|name| ty.get_export(engine, name).is_some())
}

/// The plugin of a component with typed exports: one tool per function.
/// Read-only flags and path arguments come from the user's config, when the
/// sandbox adds the tools under their final names.
fn typed_plugin(
    origin: PluginOrigin,
    sha256: String,
    cache: CacheStatus,
    code: impl FnOnce(Vec<TypedFunction>) -> Code,
    discovered: typed::Discovered,
) -> Result<LoadedPlugin, LoadError> {
    let fail = |reason: String| LoadError {
        origin: origin.clone(),
        reason,
    };
    if discovered.functions.is_empty() {
        let mut reason = String::from(
            "it does not implement the toolhost:plugin/plugin world and exports no functions to offer as tools",
        );
        if !discovered.wasi_exports.is_empty() {
            reason.push_str(&format!(
                " (it exports only {}: an entry point for other hosts, such as a WASI command's `run`)",
                discovered.wasi_exports.join(", ")
            ));
        }
        for skipped in &discovered.skipped {
            reason.push_str("; ");
            reason.push_str(skipped);
        }
        reason.push_str(
            "; export `list-tools` and `call-tool` as defined in wit/plugin.wit, or functions with typed parameters",
        );
        return Err(fail(reason));
    }
    let mut tools = Vec::with_capacity(discovered.functions.len());
    for (index, function) in discovered.functions.iter().enumerate() {
        let schema_text = function.input_schema.to_string().len();
        check_sizes(&function.name, &function.description, schema_text).map_err(&fail)?;
        let checker = InputSchema::compile(&function.input_schema).map_err(|e| {
            fail(format!(
                "the schema derived for `{}` is refused ({e}); please report this as a toolhost bug",
                function.wit_name
            ))
        })?;
        tools.push(CheckedSpec {
            name: function.name.clone(),
            description: function.description.clone(),
            schema: function.input_schema.clone(),
            checker,
            read_only: false,
            path_args: Vec::new(),
            function: Some(index),
        });
    }
    Ok(LoadedPlugin {
        origin,
        sha256,
        cache,
        code: CodeSlot::new(code(discovered.functions)),
        tools,
        notices: discovered.skipped,
        optimize: None,
    })
}

/// The longest description a tool may have: the host holds it, prints it
/// and sends it to the model with every request. Real ones are a few KiB.
const MAX_DESCRIPTION: usize = 64 * 1024;

/// The longest input schema, as JSON text, a tool may have (sent to the
/// model with every request, like the description).
const MAX_SCHEMA_TEXT: usize = 256 * 1024;

/// Refuses a description or schema longer than toolhost holds for a tool.
fn check_sizes(name: &str, description: &str, schema_text: usize) -> Result<(), String> {
    if description.len() > MAX_DESCRIPTION {
        return Err(format!(
            "tool `{name}`: its description is {} bytes, over the limit of {} KiB (it is sent \
             to the model with every request); shorten it",
            description.len(),
            MAX_DESCRIPTION / 1024
        ));
    }
    if schema_text > MAX_SCHEMA_TEXT {
        return Err(format!(
            "tool `{name}`: its `input-schema` is {schema_text} bytes, over the limit of {} KiB \
             (it is sent to the model with every request); simplify it",
            MAX_SCHEMA_TEXT / 1024
        ));
    }
    Ok(())
}

/// Checks a tool's name and schema; the error names the tool.
fn check_spec(spec: ToolSpec) -> Result<CheckedSpec, String> {
    let name = spec.name;
    if !is_tool_name(&name) {
        return Err(format!(
            "tool name `{name}` is not 1-64 characters of [a-zA-Z0-9_-]"
        ));
    }
    check_sizes(&name, &spec.description, spec.input_schema.len())?;
    let schema: serde_json::Value = serde_json::from_str(&spec.input_schema)
        .map_err(|e| format!("tool `{name}`: `input-schema` is not valid JSON: {e}"))?;
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(format!(
            "tool `{name}`: `input-schema` must describe an object (`\"type\": \"object\"`)"
        ));
    }
    let checker = InputSchema::compile(&schema).map_err(|e| format!("tool `{name}`: {e}"))?;
    let path_args = path_args(&schema).map_err(|e| format!("tool `{name}`: {e}"))?;
    Ok(CheckedSpec {
        name,
        description: spec.description,
        schema,
        checker,
        read_only: spec.read_only,
        path_args,
        function: None,
    })
}

/// A path argument the host checks against the tool's grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathArg {
    pub(crate) key: String,
    pub(crate) access: Access,
    /// The schema's `default`, checked when the argument is absent: the
    /// tool will use it.
    pub(crate) default: Option<String>,
}

/// The top-level properties marked `"x-toolhost-path": "read" | "write"`.
fn path_args(schema: &serde_json::Value) -> Result<Vec<PathArg>, String> {
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Ok(Vec::new());
    };
    let mut args = Vec::new();
    for (key, property) in properties {
        let access = match property.get("x-toolhost-path") {
            None => continue,
            Some(v) if v == "read" => Access::Read,
            Some(v) if v == "write" => Access::Write,
            Some(other) => {
                return Err(format!(
                    "property `{key}`: `x-toolhost-path` must be \"read\" or \"write\", not {other}"
                ));
            }
        };
        let default = property
            .get("default")
            .and_then(|d| d.as_str())
            .map(str::to_string);
        args.push(PathArg {
            key: key.clone(),
            access,
            default,
        });
    }
    Ok(args)
}

/// The `*.wasm` files directly in `dir`, sorted by name so load order (and
/// which of two duplicates wins) does not depend on the file system, and
/// the `*.wasm` symbolic links, which are not loaded: a link can be pointed
/// at other code after the user looked at the directory.
pub(crate) fn wasm_files(dir: &Path) -> std::io::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut files = Vec::new();
    let mut links = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if path.extension().is_none_or(|ext| ext != "wasm") {
            continue;
        }
        if entry.file_type()?.is_symlink() {
            links.push(path);
        } else if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    links.sort();
    Ok((files, links))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::cache::sha256_hex;

    fn spec(name: &str, schema: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: schema.into(),
            read_only: true,
        }
    }

    #[test]
    fn accepts_a_good_spec_and_finds_path_arguments() {
        let checked = check_spec(spec(
            "read_file",
            r#"{"type":"object","properties":{"path":{"type":"string","x-toolhost-path":"read"},"n":{"type":"integer"}}}"#,
        ))
        .expect("valid");
        assert_eq!(
            checked.path_args,
            vec![PathArg {
                key: "path".into(),
                access: Access::Read,
                default: None
            }]
        );
    }

    #[test]
    fn the_standard_plugins_build_time_hashes_are_their_bytes_hashes() {
        use crate::sandbox::standard::{STANDARD_PLUGIN_SHA256, STANDARD_PLUGINS};
        assert_eq!(STANDARD_PLUGINS.len(), STANDARD_PLUGIN_SHA256.len());
        for ((name, bytes), sha256) in STANDARD_PLUGINS.iter().zip(STANDARD_PLUGIN_SHA256) {
            assert_eq!(&sha256_hex(bytes), sha256, "{name}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        for name in ["", "has space", "ünï", &"x".repeat(65)] {
            let err = check_spec(spec(name, r#"{"type":"object"}"#))
                .err()
                .expect("bad name");
            assert!(err.contains("is not 1-64 characters"), "{err}");
        }
    }

    #[test]
    fn rejects_bad_schemas_naming_the_tool() {
        let cases = [
            ("not json", "is not valid JSON"),
            (r#"{"type":"string"}"#, "must describe an object"),
            (
                r#"{"type":"object","properties":{"x":{"type":12}}}"#,
                "is not a valid JSON Schema",
            ),
            (
                r#"{"type":"object","properties":{"p":{"x-toolhost-path":"delete"}}}"#,
                "must be \"read\" or \"write\"",
            ),
        ];
        for (schema, expected) in cases {
            let err = check_spec(spec("t", schema)).err().expect("bad schema");
            assert!(
                err.starts_with("tool `t`") && err.contains(expected),
                "{schema}: {err}"
            );
        }
    }
}
