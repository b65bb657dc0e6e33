//! The `scripted` provider: replays assistant turns from a JSON file. Used
//! for the offline demo and for tests that drive the real binary; it never
//! looks at what the tools returned.
//!
//! Format (documented in docs/using/run.md#the-scripted-model):
//!
//! ```json
//! {"turns": [
//!   {"text": "Looking around.", "tool_calls": [{"name": "list_files", "arguments": {}}]},
//!   {"text": "Done.", "finish": "stop"}
//! ]}
//! ```
//!
//! Each turn may have `text`, `reasoning`, `tool_calls` (each `{id?, name,
//! arguments?}` or `{id?, name, arguments_raw}` for arguments that are not
//! valid JSON) and `finish` (`stop`, `tool_use`, `length`, `error`; default
//! `tool_use` when there are calls, else `stop`) and `delay_ms` (wait that
//! long before replying, as a slow model would). `{last_user}` in a
//! turn's `text` becomes the text of the last user message the model was
//! sent (the prompt, or input delivered while the run went on), so a script
//! can show what it received. A run that asks for more turns than the
//! script has ends with an error naming the script.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::Value;

use super::{AssistantMessage, Block, Finish, Message, ProviderError};
use crate::json_budget::JsonBudget;

/// What a script may make toolhost parse: 1,000,000 JSON values, 128
/// deep (a script may come with a repository, as the demo's does).
const SCRIPT: JsonBudget = JsonBudget {
    max_bytes: usize::MAX,
    max_depth: 128,
    max_values: 1_000_000,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    turns: Vec<ScriptTurn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptTurn {
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    #[serde(default)]
    finish: Option<Finish>,
    /// Milliseconds to wait before replying, as a slow model would.
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    arguments_raw: Option<String>,
}

/// A model that replays a script, one turn per request.
#[derive(Debug)]
pub struct ScriptedModel {
    path: PathBuf,
    turns: Vec<ScriptedTurn>,
    next: AtomicUsize,
}

/// One reply of the script, and how long to wait before giving it.
#[derive(Debug, Clone)]
pub struct ScriptedTurn {
    pub message: AssistantMessage,
    pub delay: std::time::Duration,
}

impl ScriptedTurn {
    /// How long to wait before giving this reply, if at all.
    pub fn pause(&self) -> Option<std::time::Duration> {
        (!self.delay.is_zero()).then_some(self.delay)
    }
}

impl ScriptedModel {
    /// Reads and checks a script file; errors name the file.
    pub fn from_file(path: &Path) -> Result<ScriptedModel, ProviderError> {
        let bad = |detail: String| ProviderError::Script {
            path: path.to_path_buf(),
            detail,
        };
        let text =
            std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        ScriptedModel::from_json(path, &text)
    }

    /// Parses a script held in memory; `path` names it in errors.
    pub fn from_json(path: &Path, text: &str) -> Result<ScriptedModel, ProviderError> {
        let bad = |detail: String| ProviderError::Script {
            path: path.to_path_buf(),
            detail,
        };
        let file: ScriptFile = SCRIPT
            .parse(text.as_bytes())
            .map_err(|e| bad(format!("not a valid script: {e}")))?;
        let turns = file
            .turns
            .into_iter()
            .enumerate()
            .map(|(index, turn)| ScriptedTurn {
                delay: std::time::Duration::from_millis(turn.delay_ms),
                message: assistant_message(index + 1, turn),
            })
            .collect();
        Ok(ScriptedModel {
            path: path.to_path_buf(),
            turns,
            next: AtomicUsize::new(0),
        })
    }

    /// The next scripted turn for a request of `history`, or an error once
    /// the script is used up.
    pub fn next_turn(&self, history: &[Message]) -> Result<ScriptedTurn, ProviderError> {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let last_user = history.iter().rev().find_map(|message| match message {
            Message::User { text, .. } => Some(text.as_str()),
            _ => None,
        });
        let mut turn = self.turns.get(index).cloned();
        for block in turn
            .iter_mut()
            .flat_map(|turn| turn.message.blocks.iter_mut())
        {
            if let Block::Text { text } = block {
                *text = text.replace("{last_user}", last_user.unwrap_or_default());
            }
        }
        turn.ok_or_else(|| ProviderError::Script {
            path: self.path.clone(),
            detail: format!(
                "the script has {} turn(s) and the run asked for turn {}; add turns or lower --max-turns",
                self.turns.len(),
                index + 1
            ),
        })
    }
}

fn assistant_message(turn: usize, script: ScriptTurn) -> AssistantMessage {
    let mut blocks = Vec::new();
    if let Some(text) = script.reasoning {
        blocks.push(Block::Reasoning {
            text,
            signature: None,
        });
    }
    if let Some(text) = script.text.filter(|t| !t.is_empty()) {
        blocks.push(Block::Text { text });
    }
    let has_calls = !script.tool_calls.is_empty();
    for (n, call) in script.tool_calls.into_iter().enumerate() {
        let (arguments, arguments_raw) = match (call.arguments, call.arguments_raw) {
            (_, Some(raw)) => (super::message::parse_arguments(&raw), raw),
            (Some(value), None) => {
                let raw = value.to_string();
                (Some(value), raw)
            }
            (None, None) => (Some(Value::Object(Default::default())), "{}".to_string()),
        };
        blocks.push(Block::ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{turn}_{}", n + 1)),
            name: call.name,
            arguments,
            arguments_raw,
        });
    }
    let finish = script.finish.unwrap_or(if has_calls {
        Finish::ToolUse
    } else {
        Finish::Stop
    });
    AssistantMessage {
        blocks,
        finish,
        usage: None,
        cut: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_turns_with_default_ids_and_finishes() {
        let model = ScriptedModel::from_json(
            Path::new("s.json"),
            r#"{"turns":[{"text":"look","tool_calls":[{"name":"read_file","arguments":{"path":"a"}}]},{"text":"done"}]}"#,
        )
        .expect("valid");
        let first = model.next_turn(&[]).expect("turn 1");
        assert_eq!(first.message.finish, Finish::ToolUse);
        assert_eq!(
            first.message.blocks[1],
            Block::ToolCall {
                id: "call_1_1".into(),
                name: "read_file".into(),
                arguments: Some(serde_json::json!({"path": "a"})),
                arguments_raw: r#"{"path":"a"}"#.into()
            }
        );
        let second = model.next_turn(&[]).expect("turn 2");
        assert_eq!(second.message.finish, Finish::Stop);
        let err = model.next_turn(&[]).expect_err("used up").to_string();
        assert!(
            err.contains("s.json") && err.contains("has 2 turn(s) and the run asked for turn 3"),
            "{err}"
        );
    }

    #[test]
    fn a_turn_can_echo_the_last_user_message() {
        let model = ScriptedModel::from_json(
            Path::new("s.json"),
            r#"{"turns":[{"text":"you said: {last_user}"}]}"#,
        )
        .expect("valid");
        let history = [
            Message::prompt("first"),
            Message::User {
                text: "use tabs".into(),
                delivery: Some(super::super::Delivery::Steer),
            },
        ];
        let turn = model.next_turn(&history).expect("turn");
        assert_eq!(
            turn.message.blocks,
            [Block::Text {
                text: "you said: use tabs".into()
            }]
        );
    }

    #[test]
    fn raw_arguments_that_are_not_json_stay_unparsed() {
        let model = ScriptedModel::from_json(
            Path::new("s.json"),
            r#"{"turns":[{"tool_calls":[{"name":"write_file","arguments_raw":"{\"path\": \"a"}],"finish":"length"}]}"#,
        )
        .expect("valid");
        let turn = model.next_turn(&[]).expect("turn");
        assert_eq!(turn.message.finish, Finish::Length);
        assert!(matches!(
            &turn.message.blocks[0],
            Block::ToolCall {
                arguments: None,
                ..
            }
        ));
    }

    #[test]
    fn a_bad_script_names_the_file() {
        let err = ScriptedModel::from_json(Path::new("bad.json"), r#"{"turns":[{"txt":"x"}]}"#)
            .expect_err("unknown field")
            .to_string();
        assert!(err.contains("bad.json") && err.contains("txt"), "{err}");
    }
}
