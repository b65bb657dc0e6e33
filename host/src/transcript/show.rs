//! `toolhost sessions`: one summary per session, and one session as a
//! readable list of steps (`step=2 model.finish=tool_use calls=2 ...`,
//! `call=c1 tool=read_file status=ok ...`). Pure: returns text, prints
//! nothing.

use std::collections::HashSet;

use serde::Serialize;

use super::reader::SessionFile;
use super::record::{ExecutionEnd, Record};
use crate::agent::{Message, StopReason};
use crate::provider::prices::{dollars, spent};

/// One line of `toolhost sessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub id: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// `openai`, `anthropic`, `scripted`, or `mcp` for an MCP server's
    /// audit.
    pub provider: String,
    /// The first line of the first prompt.
    pub first_prompt: String,
    /// Assistant replies over all runs.
    pub turns: u32,
    /// Tool calls started, over all runs.
    pub calls: u32,
    /// Runs (the first and each resume).
    pub runs: u32,
    /// How the last run ended; `None` when it has no stop record (the
    /// process was killed or crashed, or it is still running).
    pub stop: Option<StopReason>,
    /// Without a stop record: whether its process still writes the file
    /// (it holds the file's lock; see [`super::in_use`]).
    pub running: bool,
    /// The file this one continues (an MCP server's audit past its cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
    /// The file the session went on in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continued_in: Option<String>,
}

impl Summary {
    /// The summary of `file`, read as it is (not `running`: the caller
    /// asks the lock).
    pub fn of(file: &SessionFile) -> Summary {
        let start = file.first_start();
        let mut summary = Summary {
            id: start.id.clone(),
            started_at: start.at.clone(),
            provider: start.provider.clone(),
            first_prompt: String::new(),
            turns: 0,
            calls: 0,
            runs: 0,
            stop: None,
            running: false,
            continues: start.continues.clone(),
            continued_in: None,
        };
        // A start that only `sessions compact` followed begins no run: the
        // last stop holds until a message comes.
        let mut started = false;
        for record in &file.records {
            if started && runs_something(record) {
                started = false;
                summary.stop = None;
            }
            match record {
                Record::SessionStart(_) => {
                    summary.runs += 1;
                    started = true;
                }
                Record::Message(entry) => match &entry.message {
                    Message::User { text, .. } if summary.first_prompt.is_empty() => {
                        summary.first_prompt = text.lines().next().unwrap_or_default().to_owned();
                    }
                    Message::Assistant(_) => summary.turns += 1,
                    _ => {}
                },
                Record::ToolExecutionStart(_) => summary.calls += 1,
                Record::Stop(entry) => {
                    summary.stop = Some(entry.stop.reason);
                    summary.continued_in.clone_from(&entry.continued_in);
                }
                _ => {}
            }
        }
        summary
    }

    /// An MCP server's audit, not a run.
    pub fn is_mcp_server(&self) -> bool {
        self.provider == super::audit::AUDIT_PROVIDER
    }
}

/// `toolhost sessions show ID`: the session, one line per event worth
/// reading. `still_running`: its process still writes it (see
/// [`super::in_use`]), so a last run without a stop record has not died.
///
/// Long: one arm per record type, each a few lines, sharing the walk's
/// state (the step, the calls still running).
pub fn lines(file: &SessionFile, still_running: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut step = 0;
    // Calls of the last reply that started but have not ended.
    let mut running: Vec<(String, String)> = Vec::new();
    // Calls of the last reply that ended (their results need no line).
    let mut ended: HashSet<String> = HashSet::new();
    // The last reply's call ids, and the lines of its calls that ended:
    // concurrent calls end in any order, and are shown in the reply's.
    let mut batch = Batch::default();
    let mut stopped = true;
    // Whether the run since the last start recorded a message: a start
    // that only `sessions compact` followed ran nothing, so lacks no stop.
    let mut ran = false;
    // The tokens of the run since the last start, and that start's prices.
    let mut run_tokens: Option<crate::provider::TokenTotals> = None;
    let mut prices = None;
    for record in &file.records {
        if let Some(usage) = usage_of(record) {
            run_tokens.get_or_insert_default().add(usage);
        }
        ran |= runs_something(record);
        if !matches!(
            record,
            Record::ToolExecutionStart(_) | Record::ToolExecutionEnd(_)
        ) {
            batch.flush(&mut out);
        }
        match record {
            Record::SessionStart(start) => {
                if !stopped && ran {
                    close_run(&mut out, &mut running);
                }
                stopped = false;
                ran = false;
                run_tokens = None;
                prices = start.prices;
                let verb = if start.resumed { "resumed" } else { "session" };
                let model = start.model.as_deref().unwrap_or("-");
                out.push(format!(
                    "{verb} {} at {} (toolhost {}) provider={} model={model} tools={}",
                    start.id,
                    start.at,
                    start.toolhost,
                    start.provider,
                    start.tools.len()
                ));
                if let Some(earlier) = &start.continues {
                    out.push(format!(
                        "continues session {earlier} (the server's earlier calls)"
                    ));
                }
            }
            Record::Message(entry) => match &entry.message {
                Message::User { text, delivery } => {
                    let how = delivery.map(|d| format!(" ({})", d.as_str()));
                    out.push(format!(
                        "user{}: {}",
                        how.unwrap_or_default(),
                        one_line(text, 100)
                    ));
                }
                Message::Assistant(assistant) => {
                    step += 1;
                    running.clear();
                    ended.clear();
                    let calls = crate::agent::tool_calls(assistant);
                    batch.order = calls.iter().map(|call| call.id.to_owned()).collect();
                    let calls = calls.len();
                    let mut line = format!(
                        "step={step} model.finish={} calls={calls}",
                        assistant.finish.as_str()
                    );
                    if let Some(ms) = entry.ttft_ms {
                        line.push_str(&format!(" ttft={ms}ms"));
                    }
                    if let Some(ms) = entry.duration_ms {
                        line.push_str(&format!(" time={}", crate::units::short_duration_ms(ms)));
                    }
                    if let Some(usage) = &assistant.usage {
                        line.push_str(&format!(
                            " tokens={}/{}",
                            usage.input_tokens, usage.output_tokens
                        ));
                        if usage.cache_read_tokens > 0 || usage.cache_write_tokens > 0 {
                            line.push_str(&format!(
                                " cache={}/{}",
                                usage.cache_read_tokens, usage.cache_write_tokens
                            ));
                        }
                    }
                    out.push(line);
                    let text = assistant.text();
                    if !text.trim().is_empty() {
                        out.push(format!("  text: {}", one_line(&text, 100)));
                    }
                }
                Message::ToolResults { results } => {
                    for result in results {
                        if ended.contains(&result.call_id) {
                            continue;
                        }
                        running.retain(|(id, _)| id != &result.call_id);
                        let status = if entry.recovered {
                            "recovered"
                        } else {
                            "not_run"
                        };
                        out.push(format!(
                            "  call={} tool={} status={status}: {}",
                            result.call_id,
                            result.tool,
                            one_line(&result.text, 100)
                        ));
                    }
                }
            },
            Record::ToolExecutionStart(start) => {
                running.push((start.call_id.clone(), start.tool.clone()));
            }
            Record::ToolExecutionEnd(end) => {
                running.retain(|(id, _)| id != &end.call_id);
                ended.insert(end.call_id.clone());
                batch.ended(&end.call_id, call_line(end), &mut out);
            }
            Record::Compaction(compaction) => {
                out.push(format!(
                    "  {} reason={}",
                    crate::agent::compaction_line(
                        compaction.tokens_before,
                        compaction.tokens_after,
                        compaction.masked.len(),
                        compaction.first_kept,
                    ),
                    compaction.reason.as_str()
                ));
                if let Some(summary) = &compaction.summary {
                    out.push(format!("  summary: {}", one_line(summary, 200)));
                }
            }
            Record::Warning(warning) => {
                out.push(format!("  warning: {}", one_line(&warning.message, 200)));
            }
            Record::Grant(grant) => {
                let workspace = std::path::Path::new(&file.first_start().workspace);
                let said = match grant.answer {
                    crate::agent::Answer::Once => "allowed once",
                    crate::agent::Answer::Session => "allowed for the session",
                    crate::agent::Answer::Deny => "denied",
                };
                out.push(format!(
                    "  {said}: `{}` may {} ({})",
                    one_line(&grant.permit.tool, 60),
                    one_line(&grant.permit.what(workspace), 200),
                    one_line(&grant.permit.flag(workspace), 200)
                ));
            }
            Record::Retry(retry) => out.push(format!(
                "  retry={} wait={}: {}",
                retry.attempt,
                crate::units::short_duration_ms(retry.wait_ms),
                one_line(&retry.reason, 100)
            )),
            Record::Stop(entry) => {
                stopped = true;
                out.push(format!(
                    "stop reason={} turns={}{}: {}",
                    entry.stop.reason.as_str(),
                    entry.stop.turns,
                    if entry.stop.truncated {
                        " truncated"
                    } else {
                        ""
                    },
                    one_line(&entry.stop.evidence, 120)
                ));
                if let Some(tokens) = run_tokens.take() {
                    out.push(format!("  spent: {}", spent(&tokens, prices.as_ref())));
                }
            }
            Record::InputQueued(input) => out.push(format!(
                "  queued ({}): {}",
                input.delivery.as_str(),
                one_line(&input.text, 100)
            )),
            Record::InputReturned(input) => out.push(format!(
                "  returned undelivered ({}): {}",
                input.delivery.as_str(),
                one_line(&input.text, 100)
            )),
            // The user message that follows shows it.
            Record::InputDelivered(_) | Record::Unknown => {}
        }
    }
    batch.flush(&mut out);
    if !stopped && still_running {
        for (id, tool) in running.drain(..) {
            out.push(format!("  call={id} tool={tool} status=running"));
        }
        out.push("stop: none yet (it is still running)".into());
    } else if !stopped && ran {
        close_run(&mut out, &mut running);
    }
    // The session's tokens, and their cost at each run's prices when every
    // run that spent any had prices.
    let mut tokens = crate::provider::TokenTotals::default();
    let mut counted = false;
    let mut cost = Some(0.0);
    let mut prices = None;
    for record in &file.records {
        if let Record::SessionStart(start) = record {
            prices = start.prices;
        }
        if let Some(usage) = usage_of(record) {
            tokens.add(usage);
            counted = true;
            let mut one = crate::provider::TokenTotals::default();
            one.add(usage);
            cost = cost
                .zip(prices)
                .map(|(sum, prices)| sum + prices.cost(&one));
        }
    }
    if counted {
        match cost {
            Some(cost) => out.push(format!("total: {tokens} · {}", dollars(cost))),
            None => out.push(format!("total: {tokens}")),
        }
    }
    out.extend(file.warnings.iter().map(|w| format!("warning: {w}")));
    out
}

/// The call lines of one reply, held until the reply's calls are all in so
/// they are shown in the order the model made them.
#[derive(Default)]
struct Batch {
    order: Vec<String>,
    lines: Vec<(usize, String)>,
}

impl Batch {
    /// A call of the reply waits for the others; any other call (an MCP
    /// client's, which has no reply) is shown at once.
    fn ended(&mut self, call_id: &str, line: String, out: &mut Vec<String>) {
        match self.order.iter().position(|id| id == call_id) {
            Some(at) => self.lines.push((at, line)),
            None => out.push(line),
        }
    }

    fn flush(&mut self, out: &mut Vec<String>) {
        self.lines.sort_by_key(|(at, _)| *at);
        out.extend(self.lines.drain(..).map(|(_, line)| line));
    }
}

/// The tokens a record's model request used: a reply's, or a compaction's
/// summary request's.
fn usage_of(record: &Record) -> Option<&crate::provider::Usage> {
    match record {
        Record::Message(entry) => match &entry.message {
            Message::Assistant(reply) => reply.usage.as_ref(),
            _ => None,
        },
        Record::Compaction(compaction) => compaction.usage.as_ref(),
        _ => None,
    }
}

/// Whether `record` is part of a run (a message or a call, as an MCP
/// server records), not only of a start and a compaction.
fn runs_something(record: &Record) -> bool {
    matches!(
        record,
        Record::Message(_) | Record::ToolExecutionStart(_) | Record::ToolExecutionEnd(_)
    )
}

/// The end of a run that has no stop record.
fn close_run(out: &mut Vec<String>, running: &mut Vec<(String, String)>) {
    for (id, tool) in running.drain(..) {
        out.push(format!(
            "  call={id} tool={tool} status=no_result (it was running when the process died)"
        ));
    }
    out.push("stop: none recorded (the process was killed or crashed)".into());
}

/// `toolhost sessions show ID --call CALL`: each call of that id (a resumed
/// session may reuse one), its arguments and the whole text the model read.
/// `None` when the session has no such call.
pub fn call(file: &SessionFile, call_id: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut arguments: Option<&serde_json::Value> = None;
    for record in &file.records {
        match record {
            Record::ToolExecutionStart(start) if start.call_id == call_id => {
                arguments = Some(&start.arguments);
            }
            Record::ToolExecutionEnd(end) if end.call_id == call_id => {
                if !out.is_empty() {
                    out.push(String::new());
                }
                out.push(call_line(end).trim_start().to_string());
                out.push("arguments:".into());
                let pretty = arguments
                    .take()
                    .map(|a| serde_json::to_string_pretty(a).unwrap_or_else(|_| a.to_string()))
                    .unwrap_or_else(|| "(not recorded)".into());
                out.extend(pretty.lines().map(|line| format!("  {line}")));
                out.push(if end.text_cut {
                    format!(
                        "text (the first {} of {} bytes; the client read it whole):",
                        end.text.len(),
                        end.output_bytes
                    )
                } else {
                    "text:".into()
                });
                out.extend(end.text.lines().map(|line| format!("  {line}")));
            }
            _ => {}
        }
    }
    (!out.is_empty()).then_some(out)
}

fn call_line(end: &ExecutionEnd) -> String {
    let status = match &end.execution {
        Some(execution) => execution.outcome.clone(),
        None if end.is_error => "error".into(),
        None => "ok".into(),
    };
    let mut line = format!(
        "  call={} tool={} status={status} bytes={}",
        end.call_id, end.tool, end.output_bytes
    );
    if end.text_cut {
        line.push_str(&format!(" recorded={}", end.text.len()));
    }
    if let Some(execution) = &end.execution {
        line.push_str(&format!(
            " fuel={} mem={}",
            crate::units::short_count(execution.fuel_used),
            bytes(execution.peak_memory)
        ));
    }
    line.push_str(&format!(
        " {}",
        crate::units::short_duration_ms(end.duration_ms)
    ));
    if let Some(saved) = &end.saved_to {
        line.push_str(&format!(" saved={saved}"));
    }
    if end.is_error {
        line.push_str(&format!(": {}", one_line(&end.text, 100)));
    }
    line
}

/// `text`'s first line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let first = text.trim_start().lines().next().unwrap_or_default();
    let mut line: String = first.chars().take(max).collect();
    if line.len() < first.len() || text.trim().lines().nth(1).is_some() {
        line.push_str("...");
    }
    line
}

/// 1_310_720 -> `1.2MiB`.
fn bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n}B"),
        1024..1_048_576 => format!("{:.1}KiB", n as f64 / 1024.0),
        _ => format!("{:.1}MiB", n as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_the_issue_examples() {
        assert_eq!(bytes(1_310_720), "1.2MiB");
        assert_eq!(one_line("a\nb", 10), "a...");
        assert_eq!(one_line("abc", 2), "ab...");
        assert_eq!(one_line("abc", 3), "abc");
    }
}
