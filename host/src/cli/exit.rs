//! Exit codes, decided in one place: commands say how they ended
//! ([`Ended`]) or fail with an error, and only this module turns either
//! into a number (docs/contributing/decisions.md#exit-codes).

use crate::agent::StopReason;

/// A bad command line found after parsing; exits with [`USAGE`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub const OK: u8 = 0;
/// An error, including a tool call that ended as `isError`.
pub const ERROR: u8 = 1;
/// Bad command-line usage (clap's own code).
pub const USAGE: u8 = 2;
/// `toolhost run` stopped at `--max-turns`.
pub const MAX_TURNS: u8 = 3;
/// `toolhost run` stopped because the model repeated itself.
pub const LOOP_DETECTED: u8 = 4;
/// `toolhost run` stopped before a request that would pass its token
/// budget.
pub const BUDGET_EXHAUSTED: u8 = 5;
/// A model request of `toolhost run` ran past `--request-timeout`.
pub const REQUEST_TIMEOUT: u8 = 6;
/// `toolhost run` was cancelled (Ctrl+C).
pub const ABORTED: u8 = 130;

/// How a command that ran to its end ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It did what was asked.
    Done,
    /// It ran and reported a failure it already printed (`toolhost call` of
    /// an `isError` result, `plugin check` of a broken plugin).
    Failed,
    /// `toolhost run` stopped for this reason.
    Run(StopReason),
}

impl Ended {
    pub fn code(self) -> u8 {
        match self {
            Ended::Done | Ended::Run(StopReason::Completed) => OK,
            Ended::Failed | Ended::Run(StopReason::Error) => ERROR,
            Ended::Run(StopReason::MaxTurns) => MAX_TURNS,
            Ended::Run(StopReason::LoopDetected) => LOOP_DETECTED,
            Ended::Run(StopReason::Aborted) => ABORTED,
            Ended::Run(StopReason::BudgetExhausted) => BUDGET_EXHAUSTED,
            Ended::Run(StopReason::RequestTimeout) => REQUEST_TIMEOUT,
        }
    }
}

/// The code of a command that failed with `error`: [`USAGE`] for a bad
/// command line found after parsing, [`OK`] when the reader of stdout went
/// away (`toolhost tools | head`), [`ERROR`] for everything else.
pub fn code_of_error(error: &anyhow::Error) -> u8 {
    let model_usage = error
        .downcast_ref::<crate::config::ModelChoiceError>()
        .is_some_and(|e| e.is_usage());
    if model_usage || error.downcast_ref::<UsageError>().is_some() {
        return USAGE;
    }
    let broken_pipe = error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe { OK } else { ERROR }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_reason_has_its_code() {
        let table = [
            (StopReason::Completed, OK),
            (StopReason::Error, ERROR),
            (StopReason::MaxTurns, MAX_TURNS),
            (StopReason::LoopDetected, LOOP_DETECTED),
            (StopReason::Aborted, ABORTED),
            (StopReason::BudgetExhausted, BUDGET_EXHAUSTED),
            (StopReason::RequestTimeout, REQUEST_TIMEOUT),
        ];
        for (reason, code) in table {
            assert_eq!(Ended::Run(reason).code(), code, "{reason:?}");
        }
        assert_eq!(Ended::Done.code(), OK);
        assert_eq!(Ended::Failed.code(), ERROR);
    }

    #[test]
    fn errors_are_usage_broken_pipe_or_error() {
        let usage = anyhow::Error::from(super::super::UsageError("no prompt".into()));
        assert_eq!(code_of_error(&usage), USAGE);
        let pipe = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing the tool list");
        assert_eq!(code_of_error(&pipe), OK);
        assert_eq!(code_of_error(&anyhow::anyhow!("plugin dir missing")), ERROR);
    }
}
