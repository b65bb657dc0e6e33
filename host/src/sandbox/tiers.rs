//! Tiered compilation: a big plugin that is not in the compile cache is
//! compiled with Winch (seconds faster) so its tools are usable at once,
//! while Cranelift compiles its optimized code on a background thread; the
//! optimized code then replaces the baseline code for the calls that follow
//! and in the cache. Both tiers run under the same engine settings (fuel,
//! epoch deadlines, stack limit), so a limit holds whichever code runs.
//!
//! Figures (BENCHMARKS.md): the 19 MB Python example compiles in about 1.7 s
//! with Winch and 11-17 s with Cranelift on a 2-core machine.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, PoisonError, RwLock, mpsc};
use std::thread;

use wasmtime::Engine;
use wasmtime::component::{InstancePre, Linker};

use super::Tiering;
use super::bindings::PluginIndices;
use super::cache::CompileCache;
use super::cache::sha256_hex;
use super::call::{self, State};
use super::engine::{self, Tier};

use super::plugin_file::{Bytes, PluginOrigin};
use super::standard::Builtin;
use super::typed::TypedFunction;
use super::typed::{self, docs::Docs};

/// Components at least this big compile with the baseline compiler first:
/// Python and JavaScript components (12-20 MB, 10 s or more with
/// Cranelift) and the bigger Rust plugins (`search_text`, 1.8 MB, about 1 s);
/// below it Cranelift takes a fraction of a second. On a first start with
/// an empty cache and the Python example, 1 MiB took `toolhost tools` from
/// 4.4-5.3 s (with 4 MiB) to 3.4-3.6 s (BENCHMARKS.md).
pub const DEFAULT_BASELINE_MIN_BYTES: u64 = 1 << 20;

/// An engine and the linker of toolhost's imports for it.
#[derive(Clone)]
pub(crate) struct Backend {
    pub(crate) tier: Tier,
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<State>,
}

impl Backend {
    fn new(tier: Tier) -> wasmtime::Result<Backend> {
        let engine = engine::engine(tier)?;
        let linker = call::linker(&engine)?;
        Ok(Backend {
            tier,
            engine,
            linker,
        })
    }
}

/// What loading compiles with.
pub(crate) struct Compilers {
    pub(crate) cache: CompileCache,
    pub(crate) optimized: Backend,
    baseline: OnceLock<Option<Backend>>,
    tiering: Tiering,
    /// Bytes a plugin file may have ([`SandboxOptions::plugin_file_limit`](super::SandboxOptions)).
    pub(crate) file_limit: u64,
}

impl Compilers {
    pub(crate) fn new(
        cache: CompileCache,
        tiering: Tiering,
        file_limit: u64,
    ) -> wasmtime::Result<Compilers> {
        Ok(Compilers {
            cache,
            optimized: Backend::new(Tier::Optimized)?,
            baseline: OnceLock::new(),
            tiering,
            file_limit,
        })
    }

    /// Whether a plugin loaded with baseline code gets an optimized compile
    /// in this process.
    pub(crate) fn optimizes_in_background(&self) -> bool {
        self.tiering.optimize_in_background
    }

    /// The baseline backend, for a component of `len` bytes that is not
    /// cached: `None` when it is small enough to wait for Cranelift (or the
    /// baseline engine cannot be built here).
    pub(crate) fn baseline_for(&self, len: usize) -> Option<&Backend> {
        let min = self.tiering.baseline_min_bytes?;
        if (len as u64) < min {
            return None;
        }
        self.baseline
            .get_or_init(|| Backend::new(Tier::Baseline).ok())
            .as_ref()
    }
}

/// How a plugin's tools are called, found once at load.
pub(crate) enum Exports {
    /// The `toolhost:plugin` world: `call-tool` with a name and JSON.
    Toolhost(PluginIndices),
    /// Typed functions; [`CheckedSpec::function`] indexes them.
    Typed(Vec<TypedFunction>),
}

/// The code a plugin runs: which engine, the instantiation recipe, and the
/// export indices of that compiled component.
pub(crate) struct Code {
    pub(crate) tier: Tier,
    pub(crate) engine: Engine,
    pub(crate) pre: InstancePre<State>,
    pub(crate) exports: Exports,
}

/// A plugin's current [`Code`], replaced once when its optimized code is in.
/// Each call takes the code current when it starts and keeps it to its end.
pub(crate) struct CodeSlot(RwLock<Arc<Code>>);

impl CodeSlot {
    pub(crate) fn new(code: Code) -> Arc<CodeSlot> {
        Arc::new(CodeSlot(RwLock::new(Arc::new(code))))
    }

    pub(crate) fn current(&self) -> Arc<Code> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn replace(&self, code: Code) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(code);
    }
}

/// A plugin running baseline code, to compile optimized.
pub(crate) struct Job {
    pub(crate) slot: Arc<CodeSlot>,
    pub(crate) bytes: Bytes,
    pub(crate) sha256: String,
}

/// Compiles optimized code for plugins loaded with baseline code, one at a
/// time on a background thread started with the first job. The thread ends
/// when the sandbox is dropped and its current compile is done.
pub(crate) struct Optimizer {
    backend: Backend,
    cache: CompileCache,
    jobs: Option<mpsc::Sender<Job>>,
    pending: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Optimizer {
    pub(crate) fn new(compilers: &Compilers) -> Optimizer {
        Optimizer {
            backend: compilers.optimized.clone(),
            cache: compilers.cache.clone(),
            jobs: None,
            pending: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }

    /// Queues `job`. Where no thread can be started, the plugin keeps its
    /// baseline code.
    pub(crate) fn submit(&mut self, job: Job) {
        if self.jobs.is_none() {
            let (sender, receiver) = mpsc::channel::<Job>();
            let backend = self.backend.clone();
            let cache = self.cache.clone();
            let pending = Arc::clone(&self.pending);
            let spawned = thread::Builder::new()
                .name("toolhost-optimize".into())
                .spawn(move || {
                    for job in receiver {
                        optimize(&backend, &cache, &job);
                        pending.send_modify(|n| *n = n.saturating_sub(1));
                    }
                });
            if spawned.is_err() {
                return;
            }
            self.jobs = Some(sender);
        }
        if let Some(jobs) = &self.jobs {
            self.pending.send_modify(|n| *n += 1);
            if jobs.send(job).is_err() {
                self.pending.send_modify(|n| *n = n.saturating_sub(1));
            }
        }
    }

    /// Resolves when every queued plugin runs its optimized code (or its
    /// compile failed and it keeps the baseline code).
    pub(crate) async fn settled(&self) {
        let mut pending = self.pending.subscribe();
        let _ = pending.wait_for(|n| *n == 0).await;
    }
}

/// Compiles `job`'s optimized code, stores it in the cache and swaps it in.
/// On any failure the plugin keeps its baseline code, which is correct,
/// only slower; the next start tries again.
fn optimize(backend: &Backend, cache: &CompileCache, job: &Job) {
    let Ok((component, _)) = cache.compile(
        &backend.engine,
        Tier::Optimized,
        &job.bytes,
        &job.sha256,
        &|_| {},
    ) else {
        return;
    };
    let Ok(pre) = backend.linker.instantiate_pre(&component) else {
        return;
    };
    let current = job.slot.current();
    let exports = match &current.exports {
        Exports::Toolhost(_) => match PluginIndices::new(&pre) {
            Ok(indices) => Exports::Toolhost(indices),
            Err(_) => return,
        },
        Exports::Typed(before) => {
            let found =
                typed::discover(&backend.engine, &component, &Docs::of_component(&job.bytes))
                    .functions;
            // The same component type gives the same functions in the same
            // order; anything else would call the wrong function.
            let same = found.len() == before.len()
                && found
                    .iter()
                    .zip(before)
                    .all(|(a, b)| a.wit_name == b.wit_name && a.name == b.name);
            if !same {
                return;
            }
            Exports::Typed(found)
        }
    };
    job.slot.replace(Code {
        tier: Tier::Optimized,
        engine: backend.engine.clone(),
        pre,
        exports,
    });
    if let Ok(baseline) = engine::engine(Tier::Baseline) {
        cache.remove(&baseline, Tier::Baseline, &job.sha256);
    }
}

/// What a command that is about to exit leaves on baseline code: plugins
/// whose optimized code is neither in the cache nor swapped in yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// The compile cache they belong in.
    pub cache_dir: PathBuf,
    pub plugins: Vec<PluginOrigin>,
    /// Bytes a plugin file may have, as this process held them.
    pub file_limit: u64,
}

/// Compiles the optimized code of `plugins` into the compile cache at
/// `cache_dir` and removes their baseline entries: the work a command
/// that exited left to a background `toolhost` (see [`Unfinished`]). A
/// plugin whose optimized code is already there only loses its baseline
/// entry. Returns why each plugin that could not be compiled was not.
pub fn compile_optimized(
    cache_dir: &Path,
    plugins: &[PluginOrigin],
    file_limit: u64,
) -> Vec<String> {
    let cache = CompileCache::new(Some(cache_dir.to_path_buf()));
    let optimized = match engine::engine(Tier::Optimized) {
        Ok(engine) => engine,
        Err(e) => return vec![format!("no optimizing engine: {e:#}")],
    };
    let baseline = engine::engine(Tier::Baseline).ok();
    let mut failures = Vec::new();
    for origin in plugins {
        let (bytes, sha256) = match origin_bytes(origin, file_limit) {
            Ok(found) => found,
            Err(reason) => {
                failures.push(format!("plugin `{origin}`: {reason}"));
                continue;
            }
        };
        if !cache.has(&optimized, Tier::Optimized, &sha256)
            && let Err(e) = cache.compile(&optimized, Tier::Optimized, &bytes, &sha256, &|_| {})
        {
            failures.push(format!("plugin `{origin}`: {e:#}"));
            continue;
        }
        if let Some(baseline) = &baseline {
            cache.remove(baseline, Tier::Baseline, &sha256);
        }
    }
    failures
}

/// A plugin's bytes and their sha256: a standard tool's from the binary,
/// a file's as it is now (a file changed since the command loaded it gets
/// the new contents compiled, which the next start will look for).
fn origin_bytes(origin: &PluginOrigin, file_limit: u64) -> Result<(Bytes, String), String> {
    match origin {
        PluginOrigin::Builtin(name) => Builtin::all()
            .find(|(builtin, _)| builtin == name)
            .map(|(_, builtin)| (Bytes::Static(builtin.bytes), builtin.sha256.to_string()))
            .ok_or_else(|| "no standard tool of that name in this toolhost".to_string()),
        PluginOrigin::File(path) => {
            let bytes = super::plugin_file::read_plugin_file(path, file_limit)?;
            // Changed since the command loaded it: checked again as a load would.
            super::precheck::precheck(&bytes)?;
            let sha256 = sha256_hex(&bytes);
            Ok((Bytes::Read(Arc::from(bytes)), sha256))
        }
    }
}
