//! Instances made before the call that uses them ("spares"), for plugins
//! whose instantiation is slow: `python`'s start code fills a function table
//! of thousands of entries from an interpreter's snapshot, about a
//! millisecond of each call. After a call of a tool whose instantiation
//! took at least [`super::Tiering::spares_after`], its next instance is
//! made in the background, and the next call starts at the export.
//!
//! What runs ahead of a call is the guest's start code, and only its
//! computation: the store has no directories and no network yet, and a
//! spare whose start code called any import at all (a file, a clock, its
//! output, `exit`) is thrown away, and its tool makes no more: its start
//! code runs inside each call, as every other plugin's does. What the start
//! code never touched (the WASI context and its clocks, the directories,
//! the network, the file-system guard, the output) is made anew for the
//! call that takes the spare (`call::State::enter_call`). Making a spare
//! spends the fuel of the call that takes it, as instantiating inside that
//! call would; it runs under the tool's timeout and memory limit, and one
//! that traps or runs out also turns its tool's spares off. At most
//! [`SPARE_INSTANCES`] spares are held or being made in the process, each in
//! a pool slot of their own beyond the calls', and they are made on one
//! thread of their own at the lowest CPU priority ([`maker`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, mpsc};
use std::time::Instant;

use super::call::{Fresh, Instantiated};
use super::capabilities::ToolCapabilities;
use super::capabilities::contract::CallBounds;
use super::limits::{Limits, SPARE_INSTANCES};
use super::tiers::Code;

/// Spares held or being made in the process.
static LIVE: AtomicU32 = AtomicU32::new(0);

/// One of [`SPARE_INSTANCES`], given back when dropped.
struct Reserved;

impl Reserved {
    fn take() -> Option<Reserved> {
        LIVE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |live| {
            (live < SPARE_INSTANCES).then_some(live + 1)
        })
        .ok()
        .map(|_| Reserved)
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A tool's spare: none yet, one being made, one ready, or none ever again.
#[derive(Default)]
pub(crate) struct Spares(Mutex<Slot>);

#[derive(Default)]
enum Slot {
    #[default]
    Empty,
    Making,
    Ready(Spare),
    /// Its start code called an import, trapped or ran out: calls
    /// instantiate for themselves.
    Off,
}

struct Spare {
    /// The code it is an instance of: a plugin whose optimized code came in
    /// since gets no instance of the baseline code.
    code: Arc<Code>,
    made: Instantiated,
    _reserved: Reserved,
}

impl Spares {
    /// The spare made of `code`, when one is ready; a spare of other code
    /// is dropped. A call that comes while its spare is still being made
    /// instantiates for itself: waiting for the spare was measured slower
    /// on two cores.
    pub(crate) fn take(&self, code: &Arc<Code>) -> Option<Instantiated> {
        let mut slot = self.lock();
        match std::mem::take(&mut *slot) {
            Slot::Ready(spare) if Arc::ptr_eq(&spare.code, code) => Some(spare.made),
            Slot::Ready(_) => None,
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Starts making this tool's next spare, of `code`, unless
    /// one is ready or on the way, its spares are off, or the process holds
    /// [`SPARE_INSTANCES`] already.
    pub(crate) fn make(
        self: &Arc<Self>,
        code: &Arc<Code>,
        limits: &Limits,
        nothing: &Arc<ToolCapabilities>,
    ) {
        let Some(maker) = maker() else {
            return;
        };
        let reserved = {
            let mut slot = self.lock();
            if !matches!(*slot, Slot::Empty) {
                return;
            }
            let Some(reserved) = Reserved::take() else {
                return;
            };
            *slot = Slot::Making;
            reserved
        };
        let spares = Arc::clone(self);
        let code = Arc::clone(code);
        let limits = *limits;
        let nothing = Arc::clone(nothing);
        let job = Box::pin(async move {
            let made = instantiate_ahead(&code, &limits, &nothing).await;
            *spares.lock() = match made {
                Some(made) => Slot::Ready(Spare {
                    code,
                    made,
                    _reserved: reserved,
                }),
                None => Slot::Off,
            };
        });
        if maker.send(job).is_err() {
            self.set_empty();
        }
    }

    fn set_empty(&self) {
        *self.lock() = Slot::Empty;
    }

    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Making one spare, run on the maker's thread.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The thread spares are made on, one at a time, started with the first:
/// off the runtime's workers, at the lowest CPU priority (nice 19), so that
/// making a spare never delays a call or its answer. Making one right after
/// a call, beside the answer on two cores, was measured to add 0.7-0.9 ms
/// to the answer. `None` when the thread cannot start: no spares then.
fn maker() -> Option<&'static mpsc::Sender<Job>> {
    static MAKER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    MAKER
        .get_or_init(|| {
            let (jobs, received) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("toolhost-spares".into())
                .spawn(move || {
                    lowest_priority();
                    // Built here, not on the caller's worker: a runtime may
                    // not be dropped inside another. Without one the jobs
                    // are refused (the receiver is gone) and each returns
                    // its slot to empty.
                    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                        .enable_time()
                        .build()
                    else {
                        return;
                    };
                    while let Ok(job) = received.recv() {
                        runtime.block_on(job);
                    }
                })
                .ok()?;
            Some(jobs)
        })
        .as_ref()
}

/// Lowers the calling thread's CPU priority to nice 19 (on Linux the
/// nice value is per thread); where that fails, it keeps the default.
fn lowest_priority() {
    // SAFETY: setpriority takes plain integers and changes only the
    // scheduling priority of the calling thread (`who` 0).
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
}

/// Instantiates `code` in a store given `nothing` (no directories, no
/// network), under `limits`: `None` when its start code called an import,
/// trapped, ran out of fuel or time.
async fn instantiate_ahead(
    code: &Code,
    limits: &Limits,
    nothing: &ToolCapabilities,
) -> Option<Instantiated> {
    let bounds = CallBounds {
        deadline: Instant::now() + limits.timeout,
        limits,
        progress: None,
    };
    let calls = nothing.prepare(&bounds).ok()?;
    let mut fresh = Fresh::new(&code.engine, limits, calls, None);
    let instance =
        tokio::time::timeout(limits.timeout, code.pre.instantiate_async(&mut fresh.store))
            .await
            .ok()?
            .ok()?;
    if fresh.store.data().imported() {
        return None;
    }
    Some(Instantiated { fresh, instance })
}
