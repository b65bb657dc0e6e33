//! Runs one export of one plugin in a fresh store and instance, under limits,
//! and classifies how it ended: the trap, or what the guest returned.
//!
//! A store and instance never outlive the call: after a trap an instance is
//! unusable, and state left by one call must not leak into the next. What is
//! called is an [`Export`], so every kind of plugin goes through this one
//! path and its limits.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use wasmtime::component::{HasSelf, Instance, InstancePre, Linker, ResourceTable};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::{CallError, Plugin};
use super::capabilities::contract::CallBounds;
use super::capabilities::filesystem::{self, Held};
use super::capabilities::held::TableCharge;
use super::capabilities::{
    self, CallCapabilities, CapabilityStore, Grant, Records, Refusals, StoreParts, ToolCapabilities,
};
use super::limits::{Limits, MemoryAccount, MemoryLimiter};
use super::outcome::{ToolFault, ToolOutcome};
use super::output::CapturedOutput;
use super::slots::CallSlot;

/// Bytes of a guest's stdout and of its stderr kept per call.
pub const CAPTURE_LIMIT: usize = 64 * 1024;

pub use super::capabilities::contract::ProgressSink;

/// Per-store state: the guest's WASI context plus what the host tracks.
pub(crate) struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    /// The call's memory, linear and host memory held for the guest.
    memory: Arc<MemoryAccount>,
    /// The table's charge to `memory`, kept current before every
    /// `wasi:http` call (the calls that can make the table big).
    table_charge: TableCharge,
    /// Each capability's state in this call.
    calls: CallCapabilities,
    progress_sink: Option<ProgressSink>,
    /// Whether the guest has called any import of this store: every
    /// interface reaches the host through one of the views below or the
    /// `host` interface's getter ([`linker`]), each of which sets it. A
    /// spare whose start code did is not used ([`super::spare_instances`]).
    imported: bool,
}

impl CapabilityStore for State {
    fn parts(&mut self) -> StoreParts<'_> {
        self.imported = true;
        StoreParts {
            calls: &mut self.calls,
            wasi: &mut self.wasi,
            table: &mut self.table,
            memory: &self.memory,
            table_charge: &mut self.table_charge,
        }
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        self.imported = true;
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl super::bindings::toolhost::plugin::tool_types::Host for State {}

impl super::bindings::toolhost::plugin::host::Host for State {
    fn progress(&mut self, message: String) {
        if let Some(sink) = &self.progress_sink {
            sink(&message);
        }
    }
}

/// The linker every plugin is instantiated against: WASI p2 (denied by the
/// per-call context where it matters, the file system guarded) plus the
/// `host` interface.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<State>> {
    let mut linker = Linker::new(engine);
    capabilities::add_wasi_to_linker(&mut linker)?;
    Plugin::add_to_linker::<State, HasSelf<State>>(&mut linker, |state| {
        state.imported = true;
        state
    })?;
    Ok(linker)
}

/// An export of a plugin with its arguments, to run in a fresh instance.
/// Each way of calling a plugin implements it; [`run`] supplies the store,
/// the instance, the limits and the classification of traps.
pub(crate) trait Export: Send {
    /// What the export returns when it returns at all.
    type Output: Send;

    /// Calls the export on `instance`, which lives for this call only.
    fn call(
        self,
        store: &mut Store<State>,
        instance: Instance,
    ) -> impl Future<Output = wasmtime::Result<Self::Output>> + Send;
}

/// Everything measured about one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallStats {
    /// Wall-clock time from the start of instantiation, or of the call
    /// when it ran on an instance made ahead.
    pub duration: Duration,
    /// Fuel spent, instantiating included (ahead of the call or in it).
    pub fuel_used: u64,
    /// Peak bytes of linear memory across the instance's memories, with
    /// the host memory held for it ([`super::limits::MemoryAccount`]).
    pub peak_memory: u64,
    /// Whether it ran on an instance made ahead of the call
    /// ([`super::Tiering::spares_after`]).
    #[serde(skip)]
    pub ahead: bool,
}

/// What the guest wrote besides its answer; for transcripts, never the model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes of stdout and stderr discarded past [`CAPTURE_LIMIT`].
    pub dropped: u64,
}

/// One run of an export: what it returned (or why it did not), measured.
pub(crate) struct Run<T> {
    pub(crate) result: Result<T, ToolFault>,
    pub(crate) stats: CallStats,
    pub(crate) captured: Captured,
    /// What each capability refused first.
    pub(crate) refusals: Refusals,
    /// What each capability kept of the run (every network request).
    pub(crate) records: Records,
    /// The memory or write limit the guest ran into, when the host refused
    /// it and the guest went on (Python raises MemoryError).
    pub(crate) limit_hit: Option<ToolFault>,
    /// How long instantiating took in this run; `None` when it ran on a
    /// spare made ahead, or never got that far.
    pub(crate) instantiation: Option<Duration>,
}

impl<T> Run<T> {
    /// The same run with what the export returned mapped by `f`.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Run<U> {
        Run {
            result: self.result.map(f),
            stats: self.stats,
            captured: self.captured,
            refusals: self.refusals,
            records: self.records,
            limit_hit: self.limit_hit,
            instantiation: self.instantiation,
        }
    }
}

/// What one run may touch and consume.
pub(crate) struct RunPolicy<'a> {
    /// When the call ends as a timeout, when it started before the run
    /// (checking a tool's input counts); `None`: the timeout from now.
    pub(crate) deadline: Option<Instant>,
    pub(crate) limits: &'a Limits,
    /// What the tool holds of each capability.
    pub(crate) capabilities: &'a ToolCapabilities,
}

/// A store with its instance's output buffers, ready to instantiate in.
pub(crate) struct Fresh {
    pub(crate) store: Store<State>,
    pub(crate) stdout: CapturedOutput,
    pub(crate) stderr: CapturedOutput,
}

impl Fresh {
    /// A new store under `limits` with the capabilities' `calls`: its
    /// fuel, its memory limiter, and a yield to the executor at every epoch
    /// tick, so the deadline and a cancellation can drop a guest that never
    /// calls the host.
    pub(crate) fn new(
        engine: &Engine,
        limits: &Limits,
        calls: CallCapabilities,
        progress_sink: Option<ProgressSink>,
    ) -> Fresh {
        let stdout = CapturedOutput::new(CAPTURE_LIMIT);
        let stderr = CapturedOutput::new(CAPTURE_LIMIT);
        let memory = MemoryAccount::new(limits.memory);
        let state = State {
            wasi: capabilities::wasi_ctx(stdout.clone(), stderr.clone()),
            table: bounded_table(),
            limiter: MemoryLimiter::new(Arc::clone(&memory)),
            table_charge: TableCharge::new(&memory),
            memory,
            calls,
            progress_sink,
            imported: false,
        };
        let mut store = Store::new(engine, state);
        store.limiter(|state| &mut state.limiter);
        // Fuel is only absent when the engine does not meter it, which ours does.
        let _ = store.set_fuel(limits.fuel);
        store.set_epoch_deadline(1);
        // A table gone over the memory limit refuses new entries at once;
        // a guest that goes on anyway is stopped here, within a tick.
        store.epoch_deadline_callback(|store| {
            let charge = &store.data().table_charge;
            if charge.is_over() {
                return Err(charge.trap());
            }
            Ok(UpdateDeadline::Yield(1))
        });
        Fresh {
            store,
            stdout,
            stderr,
        }
    }
}

/// An instance made before its call in a [`Fresh`] store, by
/// [`super::spare_instances`]: `run` gives it the call's capabilities.
pub(crate) struct Instantiated {
    pub(crate) fresh: Fresh,
    pub(crate) instance: Instance,
}

impl State {
    /// Whether the guest has called any import of this store.
    pub(crate) fn imported(&self) -> bool {
        self.imported
    }

    /// Gives a store made before its call what its start code never
    /// touched, anew for the call: a WASI context (its clocks count from
    /// now, not from when the previous call ended), each capability's call
    /// state (under the call's deadline and limits), where its progress
    /// goes, and its output buffers. What instantiating spent (fuel,
    /// memory) stays.
    fn enter_call(fresh: &mut Fresh, calls: CallCapabilities, progress_sink: Option<ProgressSink>) {
        let stdout = CapturedOutput::new(CAPTURE_LIMIT);
        let stderr = CapturedOutput::new(CAPTURE_LIMIT);
        let state = fresh.store.data_mut();
        debug_assert!(!state.imported, "a spare whose start code called an import");
        state.wasi = capabilities::wasi_ctx(stdout.clone(), stderr.clone());
        state.calls = calls;
        state.progress_sink = progress_sink;
        fresh.stdout = stdout;
        fresh.stderr = stderr;
    }
}

/// Instantiates `pre` in a new store under `policy`, or takes `ahead`, an
/// instance of the same code made for the same policy, and calls `export`,
/// stopping it at the deadline or on `cancel`. The instance lives in the
/// pool slot the caller holds (`_slot`), and is gone when this returns.
///
/// Long: the one place a call's store is made (or a spare taken), run under its
/// deadline and cancel, and the end classified; the steps share the store.
pub(crate) async fn run<E: Export>(
    engine: &Engine,
    pre: &InstancePre<State>,
    policy: RunPolicy<'_>,
    cancel: &CancellationToken,
    progress_sink: Option<ProgressSink>,
    (_slot, ahead): (&CallSlot, Option<Instantiated>),
    export: E,
) -> Run<E::Output> {
    let RunPolicy {
        deadline,
        limits,
        capabilities,
    } = policy;
    let start = Instant::now();
    let deadline = deadline.unwrap_or(start + limits.timeout);
    let calls = match capabilities.prepare(&CallBounds {
        deadline,
        limits,
        progress: progress_sink.as_ref(),
    }) {
        Ok(calls) => calls,
        Err(message) => {
            return Run {
                result: Err(ToolFault::Failed(message)),
                stats: CallStats::default(),
                captured: Captured::default(),
                refusals: Refusals::default(),
                records: Records::default(),
                limit_hit: None,
                instantiation: None,
            };
        }
    };
    let (
        Fresh {
            mut store,
            stdout,
            stderr,
        },
        ready,
    ) = match ahead {
        Some(Instantiated {
            mut fresh,
            instance,
        }) => {
            State::enter_call(&mut fresh, calls, progress_sink);
            (fresh, Some(instance))
        }
        None => (Fresh::new(engine, limits, calls, progress_sink), None),
    };

    let took_ahead = ready.is_some();
    let mut instantiation = None;
    let outcome = {
        let work = async {
            let instance = match ready {
                Some(instance) => instance,
                None => {
                    let started = Instant::now();
                    let instance = pre.instantiate_async(&mut store).await?;
                    instantiation = Some(started.elapsed());
                    instance
                }
            };
            export.call(&mut store, instance).await
        };
        tokio::select! {
            returned = work => Ok(returned),
            () = tokio::time::sleep_until(deadline.into()) => Err(ToolFault::Timeout { limit: limits.timeout }),
            () = cancel.cancelled() => Err(ToolFault::Cancelled),
        }
    };

    // The call is over: each capability ends it (connections close,
    // whatever the guest left).
    let (records, refusals) = store.data_mut().calls.close();
    let fuel_left = store.get_fuel().unwrap_or(0);
    let state = store.data();
    let (stdout, out_dropped) = stdout.contents();
    let (stderr, err_dropped) = stderr.contents();
    let hits = Hits {
        memory: state.memory.hit(),
        write: state.calls.fs.write_hit(),
        held: state.calls.fs.held_over(),
    };
    let limit_hit = limit_fault(&hits, limits);
    let result = match outcome {
        Ok(Ok(returned)) => Ok(returned),
        Ok(Err(error)) => Err(classify(&error, hits, limits, &stderr)),
        Err(fault) => Err(fault),
    };
    Run {
        result,
        stats: CallStats {
            duration: start.elapsed(),
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            peak_memory: state.memory.peak(),
            ahead: took_ahead,
        },
        captured: Captured {
            stdout,
            stderr,
            dropped: out_dropped + err_dropped,
        },
        refusals,
        records,
        limit_hit,
        instantiation,
    }
}

/// The outcome of a `call-tool` run. A guest that failed or crashed after
/// a capability refused it something reads the refusal, which says what to
/// do; a guest that handled the refusal and answered (a shell's `echo x >
/// f` fails, and the script goes on) keeps its answer, and the refusal
/// follows it: the guest's own words (`Permission denied`) do not say where
/// the tool may write or who can grant more.
pub(crate) fn outcome_of(
    result: Result<Result<String, CallError>, ToolFault>,
    refusals: &Refusals,
    limit_hit: Option<ToolFault>,
    tool: &str,
    grants: &[Grant],
    limits: &Limits,
) -> ToolOutcome {
    let outcome = match result {
        Ok(answer) => classify_answer(answer, tool, grants, limits),
        Err(fault) => ToolOutcome::Fault(fault),
    };
    let failed = matches!(
        outcome,
        ToolOutcome::Fault(
            ToolFault::Failed(_) | ToolFault::InvalidInput(_) | ToolFault::Trap { .. }
        )
    );
    // A guest that failed after a refused growth or write (Python's
    // MemoryError, caught and reported as a failure) failed because of the
    // limit: the model reads the limit's text, which says what to do.
    let failed_after_limit = matches!(outcome, ToolOutcome::Fault(ToolFault::Failed(_)));
    match (refusals.first::<ToolFault>(), limit_hit) {
        (Some(refused), _) if failed => ToolOutcome::Fault(refused),
        (_, Some(limit)) if failed_after_limit => ToolOutcome::Fault(limit),
        // The shell told the model of a program not granted itself.
        (Some(ToolFault::ExecNotGranted { .. }), _) => outcome,
        (Some(refused), _) => match outcome {
            ToolOutcome::Ok(answer) => ToolOutcome::Ok(answered_after(answer, &refused, tool)),
            other => other,
        },
        _ => outcome,
    }
}

/// `answer`, then what toolhost refused the call first.
fn answered_after(mut answer: String, refused: &ToolFault, tool: &str) -> String {
    if !answer.is_empty() && !answer.ends_with('\n') {
        answer.push('\n');
    }
    answer.push_str("--- toolhost ---\n");
    answer.push_str(&refused.model_text(tool));
    answer.push('\n');
    answer
}

/// What a tool's answer means for the model: its text, unless it is over
/// the output limit, or the guest's own error. With [`classify`] below, the
/// one place where a run becomes an outcome.
fn classify_answer(
    answer: Result<String, CallError>,
    tool: &str,
    grants: &[Grant],
    limits: &Limits,
) -> ToolOutcome {
    // A failure's message is output too: the model reads it whole.
    let len = match &answer {
        Ok(text) | Err(CallError::Failed(text) | CallError::InvalidInput(text)) => text.len(),
    };
    if len > limits.output {
        return ToolOutcome::Fault(ToolFault::OutputLimit {
            bytes: len,
            limit: limits.output,
        });
    }
    match answer {
        Ok(text) => ToolOutcome::Ok(text),
        Err(CallError::InvalidInput(message)) => {
            ToolOutcome::Fault(ToolFault::InvalidInput(message))
        }
        Err(CallError::Failed(message)) => ToolOutcome::Fault(ToolFault::Failed(
            filesystem::failed_with_grants_hint(tool, message, grants),
        )),
    }
}

/// Entries a call's resource table may hold at once: descriptors, streams,
/// pollables, listings. Each costs the host memory outside the guest's
/// limit; wasmtime's own bound is a million.
const MAX_TABLE_ENTRIES: usize = 1 << 16;

fn bounded_table() -> ResourceTable {
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_TABLE_ENTRIES);
    table
}

/// Limits the guest ran into before it stopped; each makes the host trap
/// the guest (or refuse it memory), so they explain the trap.
struct Hits {
    memory: bool,
    write: bool,
    held: Option<Held>,
}

/// Names the way a guest stopped, by the limit it ran into or the trap code
/// wasmtime attached (never by the error's text).
fn classify(error: &wasmtime::Error, hits: Hits, limits: &Limits, stderr: &[u8]) -> ToolFault {
    if let Some(fault) = limit_fault(&hits, limits) {
        return fault;
    }
    if let Some(held) = hits.held {
        return ToolFault::HoldLimit { held };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => ToolFault::OutOfFuel { fuel: limits.fuel },
        Some(Trap::Interrupt) => ToolFault::Timeout {
            limit: limits.timeout,
        },
        Some(Trap::StackOverflow) => ToolFault::Trap {
            message: with_stderr(
                "stack overflow (the tool recursed too deeply)".into(),
                stderr,
            ),
        },
        Some(trap) => ToolFault::Trap {
            message: with_stderr(trap.to_string(), stderr),
        },
        None => ToolFault::Trap {
            message: with_stderr(format!("{error:#}"), stderr),
        },
    }
}

/// The memory or write limit the guest ran into, if it did.
fn limit_fault(hits: &Hits, limits: &Limits) -> Option<ToolFault> {
    if hits.memory {
        Some(ToolFault::MemoryLimit {
            limit: limits.memory,
        })
    } else if hits.write {
        Some(ToolFault::WriteLimit {
            limit: limits.write,
        })
    } else {
        None
    }
}

/// Adds the end of the guest's stderr, where a Rust panic or a Python
/// traceback says what went wrong.
fn with_stderr(message: String, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| {
            !line.trim().is_empty() && !line.starts_with("note: run with `RUST_BACKTRACE=1`")
        })
        .collect();
    if lines.is_empty() {
        return message;
    }
    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
    let tail = if tail.len() > 2000 {
        let cut = tail
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| i >= tail.len() - 2000)
            .unwrap_or(0);
        &tail[cut..]
    } else {
        &tail
    };
    format!("{message}; its stderr ended with:\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_drops_rust_backtrace_hints() {
        let stderr = b"\nthread '<unnamed>' panicked at src/lib.rs:3:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            with_stderr("wasm trap".into(), stderr),
            "wasm trap; its stderr ended with:\nthread '<unnamed>' panicked at src/lib.rs:3:5:\nboom"
        );
        assert_eq!(with_stderr("wasm trap".into(), b""), "wasm trap");
    }

    #[test]
    fn a_failure_is_held_to_the_output_limit_like_a_result() {
        let limits = Limits {
            output: 8,
            ..Limits::default()
        };
        let long = "x".repeat(9);
        for answer in [
            Ok(long.clone()),
            Err(CallError::Failed(long.clone())),
            Err(CallError::InvalidInput(long.clone())),
        ] {
            assert_eq!(
                classify_answer(answer, "t", &[], &limits),
                ToolOutcome::Fault(ToolFault::OutputLimit { bytes: 9, limit: 8 })
            );
        }
        assert_eq!(
            classify_answer(Err(CallError::Failed("12345678".into())), "t", &[], &limits),
            ToolOutcome::Fault(ToolFault::Failed("12345678".into()))
        );
    }
}
