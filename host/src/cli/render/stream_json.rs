//! `--output-format stream-json`: every event as one JSON line on stdout,
//! as it happens (retries included). Nothing else is printed.

use std::io;

use super::out::{RunOutput, put_json};
use crate::agent::{AgentEvent, Message, StopRecord};
use crate::transcript::SessionWriter;

pub(super) struct StreamJsonOutput;

impl RunOutput for StreamJsonOutput {
    fn event(&mut self, event: &AgentEvent) {
        let _ = put_json(&mut io::stdout().lock(), event, false);
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
