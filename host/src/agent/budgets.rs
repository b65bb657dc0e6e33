//! What a run may spend: its token and cost budgets, checked before each
//! model request is sent, and the deadline each request is answered by.

use std::future::Future;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::config::LoopConfig;
use super::context;
use super::stop::{StopReason, StopRecord};
use crate::provider::TokenTotals;
use crate::provider::prices::dollars;

/// Stops the run when a request of about `next` tokens would pass the
/// token budget or, at the user's prices, the cost budget; the request is
/// then never sent.
pub(super) fn check(
    config: &LoopConfig,
    used: &TokenTotals,
    next: u64,
    turns: u32,
) -> ControlFlow<StopRecord> {
    if let Some(budget) = config.max_tokens_total {
        let spent = context::spent(used);
        if spent.saturating_add(next) > budget {
            return ControlFlow::Break(StopRecord::new(
                StopReason::BudgetExhausted,
                turns,
                format!(
                    "the next model request (about {next} tokens) would pass the run's budget \
                     of {budget} tokens; {spent} spent so far ({used})"
                ),
            ));
        }
    }
    if let Some(budget) = &config.cost_budget {
        let spent = budget.prices.cost(used);
        let next_cost = budget.prices.prompt_cost(next);
        if spent + next_cost > budget.dollars {
            return ControlFlow::Break(StopRecord::new(
                StopReason::BudgetExhausted,
                turns,
                format!(
                    "the next model request (about {next} tokens, {}) would pass the run's cost \
                     budget of {}; {} spent so far ({used})",
                    dollars(next_cost),
                    dollars(budget.dollars),
                    dollars(spent)
                ),
            ));
        }
    }
    ControlFlow::Continue(())
}

/// Awaits `request` within `limit`, its retries included; past it, the
/// stop that says so (nothing of the reply is kept).
pub(super) async fn by_deadline<F: Future>(
    limit: Option<Duration>,
    turns: u32,
    request: F,
) -> Result<F::Output, StopRecord> {
    let Some(limit) = limit else {
        return Ok(request.await);
    };
    let started = Instant::now();
    tokio::time::timeout(limit, request).await.map_err(|_| {
        StopRecord::new(
            StopReason::RequestTimeout,
            turns,
            format!(
                "the model request was still unanswered after {:.1} s, past the deadline of {} s \
                 (--request-timeout); nothing of its reply is kept",
                started.elapsed().as_secs_f64(),
                limit.as_secs_f64()
            ),
        )
    })
}
