//! The stop record: why a run ended. Every path that ends a run writes
//! exactly one.

use serde::{Deserialize, Serialize};

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model replied without tool calls.
    Completed,
    /// The user cancelled (before a request, mid-stream or during tools).
    Aborted,
    /// The model asked for tools after the last allowed turn.
    MaxTurns,
    /// The model repeated the same call too many times in a row.
    LoopDetected,
    /// The model could not be reached or its stream not understood.
    Error,
    /// The next request would have passed the run's token budget
    /// (`--max-tokens-total`); it was not sent.
    BudgetExhausted,
    /// A model request ran past its deadline (`--request-timeout`).
    RequestTimeout,
}

impl StopReason {
    /// The name used in stop records, session files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::Aborted => "aborted",
            StopReason::MaxTurns => "max_turns",
            StopReason::LoopDetected => "loop_detected",
            StopReason::Error => "error",
            StopReason::BudgetExhausted => "budget_exhausted",
            StopReason::RequestTimeout => "request_timeout",
        }
    }
}

/// The end of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopRecord {
    pub reason: StopReason,
    /// Assistant messages added by this run.
    pub turns: u32,
    /// The last reply hit the output limit.
    pub truncated: bool,
    /// A short, human-readable explanation (the error text for `error`).
    pub evidence: String,
}

impl StopRecord {
    /// A stop after `turns` replies, the last not cut by the output limit.
    pub(super) fn new(reason: StopReason, turns: u32, evidence: impl Into<String>) -> Self {
        StopRecord {
            reason,
            turns,
            truncated: false,
            evidence: evidence.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn as_str_is_the_serialised_name() {
        for reason in [
            StopReason::Completed,
            StopReason::Aborted,
            StopReason::MaxTurns,
            StopReason::LoopDetected,
            StopReason::Error,
            StopReason::BudgetExhausted,
            StopReason::RequestTimeout,
        ] {
            assert_eq!(
                serde_json::to_value(reason).expect("serialise"),
                json!(reason.as_str())
            );
        }
    }

    #[test]
    fn serialises_in_snake_case() {
        let stop = StopRecord {
            reason: StopReason::LoopDetected,
            turns: 5,
            truncated: false,
            evidence: "x".into(),
        };
        assert_eq!(
            serde_json::to_value(&stop).expect("serialise"),
            json!({"reason": "loop_detected", "turns": 5, "truncated": false, "evidence": "x"})
        );
    }
}
