//! How a run is bounded: the settings each step of the loop reads.

use super::long_output::ResultBudget;
use crate::provider::prices::CostBudget;

/// How a run is bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    /// Assistant messages allowed per run; a reply at this turn that still
    /// asks for tools ends the run with `max_turns`. Default 100.
    pub max_turns: u32,
    /// The same call (tool + canonical arguments) this many times in a row
    /// gets a warning appended to its result, once per streak. Default 3.
    pub warn_after: u32,
    /// The same call this many times in a row ends the run with
    /// `loop_detected`, after its results are recorded. Default 5.
    pub stop_after: u32,
    /// Sent with every request. Default empty.
    pub system_prompt: String,
    /// Cuts long results to head + tail and saves the whole text. Default
    /// `None`: results reach the model whole.
    pub result_budget: Option<ResultBudget>,
    /// Tokens a run may spend over all its requests, in and out: the run
    /// stops as `budget_exhausted` before the request that would pass it
    /// (module `context` estimates it). Default `None`.
    pub max_tokens_total: Option<u64>,
    /// Dollars a run may spend at the user's prices: the run stops as
    /// `budget_exhausted` before the request whose prompt would pass it.
    /// Default `None`.
    pub cost_budget: Option<CostBudget>,
    /// The longest one model request may take, its retries included; past
    /// it the run stops as `request_timeout`. Default `None`.
    pub request_timeout: Option<std::time::Duration>,
    /// The model's context window in tokens: before a request that would
    /// leave no room for the reply, old tool results are set aside (module
    /// `context`). Default `None`: only a server's overflow error compacts.
    pub context_window: Option<u64>,
    /// Bytes the conversation may hold in memory when no window is known:
    /// past it the oldest tool results are set aside as compaction's first
    /// stage does, until it holds half. Default [`LEDGER_MOST`].
    pub ledger_most: u64,
}

/// What the conversation may hold by default with no window known: 64 MiB,
/// about 16M tokens, past any model's window, so only a server that asks
/// for results without end reaches it.
pub(crate) const LEDGER_MOST: u64 = 64 << 20;

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            max_turns: 100,
            warn_after: 3,
            stop_after: 5,
            system_prompt: String::new(),
            result_budget: None,
            max_tokens_total: None,
            cost_budget: None,
            request_timeout: None,
            context_window: None,
            ledger_most: LEDGER_MOST,
        }
    }
}
