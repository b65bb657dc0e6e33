//! `--output-format stream-json`: every event as one JSON line on stdout,
//! as it happens (retries included). Nothing else is printed.

use std::io::{self, Write as _};

use super::RunOutput;
use crate::agent::{AgentEvent, Message, StopRecord};
use crate::transcript::SessionWriter;

pub(super) struct StreamJsonOutput;

impl RunOutput for StreamJsonOutput {
    fn event(&mut self, event: &AgentEvent) {
        if let Ok(line) = serde_json::to_string(event) {
            let _ = writeln!(io::stdout().lock(), "{line}");
        }
    }

    fn finish(
        &mut self,
        _ledger: &[Message],
        _stop: &StopRecord,
        _session: Option<&SessionWriter>,
    ) -> io::Result<()> {
        Ok(())
    }
}
