//! `--output-format json`: nothing while the run goes (but retries, on
//! stderr), then one JSON object with the final text, the stop record, the
//! token usage and the session.

use std::io;

use serde_json::json;

use super::out::{RunOutput, put_json, stderr_notice};
use crate::agent::{AgentEvent, Message, StopRecord};
use crate::provider::TokenTotals;
use crate::provider::prices::Prices;
use crate::transcript::SessionWriter;

/// Sums the run's usage as its events pass: the ledger of a resumed or
/// compacted session holds other runs' replies, or no longer holds some.
#[derive(Default)]
pub(super) struct JsonOutput {
    tokens: TokenTotals,
    /// What tokens cost, when the user said: adds `cost_usd`.
    prices: Option<Prices>,
}

impl JsonOutput {
    pub(super) fn new(prices: Option<Prices>) -> Self {
        JsonOutput {
            prices,
            ..JsonOutput::default()
        }
    }
}

impl RunOutput for JsonOutput {
    fn event(&mut self, event: &AgentEvent) {
        stderr_notice(event);
        if let Some(usage) = event.usage() {
            self.tokens.add(usage);
        }
    }

    fn finish(
        &mut self,
        ledger: &[Message],
        stop: &StopRecord,
        session: Option<&SessionWriter>,
    ) -> io::Result<()> {
        let final_text = ledger
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant(a) => Some(a.text()),
                _ => None,
            })
            .unwrap_or_default();
        let mut doc = json!({
            "final_text": final_text,
            "session": session.map(|s| json!({"id": s.id(), "path": s.path()})),
            "stop": stop,
            "turns": stop.turns,
            "usage": self.tokens,
        });
        if let Some(prices) = &self.prices {
            doc["cost_usd"] = prices.cost(&self.tokens).into();
        }
        put_json(&mut io::stdout().lock(), &doc, false)
    }
}
