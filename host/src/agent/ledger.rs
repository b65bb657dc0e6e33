//! The ledger: the conversation as the agent loop records it, the single
//! source of truth for the next model request and for transcripts.
//!
//! Only the loop appends to it; it holds whole messages only (a reply cut
//! off by cancellation is never stored). It knows nothing of wire APIs:
//! the providers translate it.

use crate::provider::AssistantMessage;
pub use crate::provider::{CallRef, Delivery, Message, ToolResultEntry};

/// The tool calls of `message`, in order.
pub fn tool_calls(message: &AssistantMessage) -> Vec<CallRef<'_>> {
    message.tool_calls()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Block, Finish};
    use serde_json::json;

    #[test]
    fn messages_are_tagged_by_role() {
        let user = Message::prompt("hi");
        assert_eq!(
            serde_json::to_value(&user).expect("serialise"),
            json!({"role": "user", "text": "hi"})
        );
        let results = Message::ToolResults {
            results: vec![ToolResultEntry {
                call_id: "c1".into(),
                tool: "read_file".into(),
                text: "ok".into(),
                is_error: false,
            }],
        };
        let value = serde_json::to_value(&results).expect("serialise");
        assert_eq!(value["role"], "tool_results");
        let assistant = Message::Assistant(AssistantMessage {
            blocks: vec![Block::Text { text: "x".into() }],
            finish: Finish::Stop,
            usage: None,
            cut: None,
        });
        for message in [user, results, assistant] {
            let text = serde_json::to_string(&message).expect("serialise");
            let back: Message = serde_json::from_str(&text).expect("deserialise");
            assert_eq!(back, message);
        }
    }
}
