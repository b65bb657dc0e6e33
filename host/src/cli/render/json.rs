//! `--output-format json`: nothing while the run goes (but retries, on
//! stderr), then one JSON object with the final text, the stop record, the
//! token usage and the session.

use std::io;

use serde_json::json;

use super::{RunOutput, put_json, retry_notice};
use crate::agent::{AgentEvent, Message, StopRecord};
use crate::transcript::SessionWriter;

pub(super) struct JsonOutput;

impl RunOutput for JsonOutput {
    fn event(&mut self, event: &AgentEvent) {
        retry_notice(event);
    }

    fn finish(
        &mut self,
        ledger: &[Message],
        stop: &StopRecord,
        session: Option<&SessionWriter>,
    ) -> io::Result<()> {
        let assistants = ledger.iter().filter_map(|m| match m {
            Message::Assistant(a) => Some(a),
            _ => None,
        });
        let (mut input, mut output) = (0u64, 0u64);
        let mut final_text = String::new();
        for assistant in assistants {
            if let Some(usage) = &assistant.usage {
                input += usage.input_tokens;
                output += usage.output_tokens;
            }
            final_text = assistant.text();
        }
        let doc = json!({
            "final_text": final_text,
            "session": session.map(|s| json!({"id": s.id(), "path": s.path()})),
            "stop": stop,
            "turns": stop.turns,
            "usage": {"input_tokens": input, "output_tokens": output},
        });
        put_json(&mut io::stdout().lock(), &doc, false)
    }
}
