//! Everything toolhost prints. The rest of the crate returns values.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;

use super::OutputFormat;
use super::exit::Ended;
use crate::agent::{AgentEvent, EventSink, Message, StopReason, StopRecord};
use crate::sandbox::{CallReport, Grant, Limits, Sandbox, Tool, ToolOutcome};
use crate::transcript::show::{self, Summary};
use crate::transcript::{SessionFile, SessionWriter, TranscriptError};

/// Prints a `toolhost run` as its events arrive, in the chosen format.
pub(super) struct RunRenderer {
    format: OutputFormat,
    state: Arc<Mutex<TextState>>,
}

/// What the text renderer remembers between events.
#[derive(Debug, Default)]
struct TextState {
    /// Per call id, joined with the result when the tool-results message
    /// arrives.
    calls: HashMap<String, RunningCall>,
    /// The current reply's text was printed as it streamed in (so the whole
    /// message must not be printed again), and whether it ended a line.
    streamed: Option<bool>,
    /// Shown on a terminal stderr while the model has not answered yet.
    spinner: Option<indicatif::ProgressBar>,
    /// Whether stderr is a terminal (no spinner otherwise).
    interactive: bool,
}

/// What the text renderer remembers of a call until its result arrives.
#[derive(Debug, Default)]
struct RunningCall {
    short_arguments: String,
    duration_ms: Option<u64>,
}

impl RunRenderer {
    pub(super) fn new(format: OutputFormat) -> Self {
        use std::io::IsTerminal as _;
        let state = TextState {
            interactive: format == OutputFormat::Text && io::stderr().is_terminal(),
            ..TextState::default()
        };
        RunRenderer {
            format,
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// The callback the agent loop sends its events to.
    pub(super) fn sink(&self) -> EventSink {
        let format = self.format;
        let state = Arc::clone(&self.state);
        Arc::new(move |event: &AgentEvent| {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            render_event(format, &mut state, event);
        })
    }

    /// The end of the run: the JSON object, or a line saying why it stopped
    /// and where the session was recorded.
    pub(super) fn finish(
        &self,
        ledger: &[Message],
        stop: &StopRecord,
        session: Option<&SessionWriter>,
    ) -> io::Result<()> {
        if let Some(error) = session.and_then(SessionWriter::error) {
            eprintln!(
                "warning: the session file `{}` is incomplete: writing it failed: {error}",
                session
                    .map(|s| s.path().display().to_string())
                    .unwrap_or_default()
            );
        }
        if let (OutputFormat::Text, Some(session)) = (self.format, session) {
            eprintln!(
                "session {} (continue it with `toolhost run --resume {} \"...\"`)",
                session.id(),
                session.id()
            );
        }
        match self.format {
            OutputFormat::Json => {
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
                ignore_broken_pipe(writeln!(io::stdout().lock(), "{doc}"))
            }
            OutputFormat::Text if stop.reason != StopReason::Completed => {
                eprintln!(
                    "stopped: {} after {} turn(s): {}",
                    stop.reason.as_str(),
                    stop.turns,
                    stop.evidence
                );
                Ok(())
            }
            OutputFormat::Text | OutputFormat::StreamJson => Ok(()),
        }
    }
}

fn render_event(format: OutputFormat, state: &mut TextState, event: &AgentEvent) {
    if state.interactive {
        update_spinner(state, event);
    }
    // stream-json shows a retry as its event; the others tell the user on
    // stderr (stdout is the reply or the one JSON object).
    if let (
        AgentEvent::ModelRetry {
            attempt,
            wait_ms,
            reason,
        },
        OutputFormat::Text | OutputFormat::Json,
    ) = (event, format)
    {
        eprintln!(
            "retrying the model request in {:.1} s (retry {attempt}): {reason}",
            *wait_ms as f64 / 1000.0
        );
    }
    let TextState {
        calls, streamed, ..
    } = state;
    match format {
        OutputFormat::StreamJson => {
            if let Ok(line) = serde_json::to_string(event) {
                let _ = writeln!(io::stdout().lock(), "{line}");
            }
        }
        OutputFormat::Json => {}
        OutputFormat::Text => match event {
            AgentEvent::MessageDelta { text } => {
                let mut out = io::stdout().lock();
                let _ = write!(out, "{text}").and_then(|()| out.flush());
                *streamed = Some(text.ends_with('\n'));
            }
            AgentEvent::Message {
                message: Message::Assistant(assistant),
            } => match streamed.take() {
                // Already on screen; just end its line.
                Some(ended_line) => {
                    if !ended_line {
                        let _ = writeln!(io::stdout().lock());
                    }
                }
                None => {
                    let text = assistant.text();
                    if !text.is_empty() {
                        let newline = if text.ends_with('\n') { "" } else { "\n" };
                        let _ = write!(io::stdout().lock(), "{text}{newline}");
                    }
                }
            },
            AgentEvent::ToolExecutionStart {
                call_id, arguments, ..
            } => {
                let short_arguments = short(&arguments.to_string(), 60);
                calls.insert(
                    call_id.clone(),
                    RunningCall {
                        short_arguments,
                        duration_ms: None,
                    },
                );
            }
            AgentEvent::ToolExecutionEnd {
                call_id,
                duration_ms,
                ..
            } => {
                if let Some(entry) = calls.get_mut(call_id) {
                    entry.duration_ms = Some(*duration_ms);
                }
            }
            AgentEvent::Message {
                message: Message::ToolResults { results },
            } => {
                for result in results {
                    let RunningCall {
                        short_arguments: args,
                        duration_ms: duration,
                    } = calls.remove(&result.call_id).unwrap_or_default();
                    let status = if result.is_error { "error" } else { "ok" };
                    let timing = duration.map(|ms| format!(" {ms} ms")).unwrap_or_default();
                    let detail = if result.is_error {
                        format!(
                            ": {}",
                            short(result.text.lines().next().unwrap_or_default(), 120)
                        )
                    } else {
                        format!(" {} B", result.text.len())
                    };
                    eprintln!("-> {} {args} {status}{timing}{detail}", result.tool);
                }
            }
            _ => {}
        },
    }
}

/// A spinner from the start of a turn until the model's first text or its
/// whole reply, so a slow model does not look like a hung program.
fn update_spinner(state: &mut TextState, event: &AgentEvent) {
    match event {
        AgentEvent::TurnStart { .. } => {
            let spinner = indicatif::ProgressBar::new_spinner();
            spinner.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            spinner.set_message("waiting for the model");
            spinner.enable_steady_tick(std::time::Duration::from_millis(100));
            state.spinner = Some(spinner);
        }
        AgentEvent::MessageDelta { .. }
        | AgentEvent::Message { .. }
        | AgentEvent::TurnEnd { .. }
        | AgentEvent::AgentEnd { .. } => {
            if let Some(spinner) = state.spinner.take() {
                spinner.finish_and_clear();
            }
        }
        _ => {}
    }
}

/// `text` cut to `max` characters with an ellipsis.
fn short(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// Prints each warning to stderr.
pub(super) fn warnings(warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}

/// Tells the user which calls of the resumed session had no result and
/// what the model will be told instead.
pub(super) fn recovered(results: &Message) {
    if let Message::ToolResults { results } = results {
        for result in results {
            eprintln!(
                "resuming: call {} ({}) has no recorded result; the model is told: {}",
                result.call_id,
                result.tool,
                short(&result.text, 120)
            );
        }
    }
}

/// `toolhost sessions`: newest first; an unreadable file is listed with
/// the reason rather than hiding the others.
pub(super) fn sessions(
    dir: &Path,
    sessions: &[Result<Summary, TranscriptError>],
    as_json: bool,
) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if as_json {
        let list: Vec<_> = sessions
            .iter()
            .map(|s| match s {
                Ok(summary) => json!(summary),
                Err(error) => json!({"error": error.to_string()}),
            })
            .collect();
        return ignore_broken_pipe(writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        ));
    }
    if sessions.is_empty() {
        eprintln!(
            "no sessions in `{}` yet: each `toolhost run` writes one there",
            dir.display()
        );
        return Ok(());
    }
    let result = writeln!(
        out,
        "{:<22} {:<19} {:>5}  {:<13} PROMPT",
        "ID", "STARTED (UTC)", "TURNS", "STOP"
    );
    ignore_broken_pipe(result)?;
    for session in sessions {
        let line = match session {
            Ok(s) => format!(
                "{:<22} {:<19} {:>5}  {:<13} {}",
                s.id,
                s.started_at
                    .get(..19)
                    .unwrap_or(&s.started_at)
                    .replace('T', " "),
                s.turns,
                s.stop.map_or("(none: died)", StopReason::as_str),
                short(&s.first_prompt, 60)
            ),
            Err(error) => format!("unreadable: {error}"),
        };
        ignore_broken_pipe(writeln!(out, "{line}"))?;
    }
    Ok(())
}

/// `toolhost sessions show ID`.
pub(super) fn session(file: &SessionFile) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for line in show::lines(file) {
        ignore_broken_pipe(writeln!(out, "{line}"))?;
    }
    Ok(())
}

/// Prints warnings and skipped plugins to stderr.
pub(super) fn load_problems(sandbox: &Sandbox, warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    for error in sandbox.load_errors() {
        eprintln!("warning: skipped {error}");
    }
}

/// `toolhost tools`.
pub(super) fn tools(sandbox: &Sandbox, as_json: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if as_json {
        let tools: Vec<_> = sandbox.tools().iter().map(tool_json).collect();
        let errors: Vec<_> = sandbox
            .load_errors()
            .iter()
            .map(|e| json!({"plugin": e.origin, "reason": e.reason}))
            .collect();
        let doc = json!({"workspace": sandbox.workspace(), "tools": tools, "load_errors": errors});
        return ignore_broken_pipe(writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        ));
    }
    for tool in sandbox.tools() {
        let mode = if tool.read_only {
            "read-only"
        } else {
            "writes"
        };
        let result = writeln!(out, "{}  ({mode}, {})", tool.name, tool.plugin)
            .and_then(|()| writeln!(out, "    {}", first_sentence(&tool.description)))
            .and_then(|()| writeln!(out, "    grants: {}", grants_text(&tool.policy.grants)))
            .and_then(|()| writeln!(out, "    limits: {}", limits_text(&tool.policy.limits)));
        ignore_broken_pipe(result)?;
    }
    Ok(())
}

fn tool_json(tool: &Tool) -> serde_json::Value {
    let limits = &tool.policy.limits;
    json!({
        "name": tool.name,
        "description": tool.description,
        "read_only": tool.read_only,
        "plugin": tool.plugin,
        "plugin_sha256": tool.plugin_sha256,
        "compile_cache": tool.cache,
        "grants": tool.policy.grants.iter().map(|g| json!({
            "path": g.guest_path,
            "host_path": g.host_path,
            "access": g.access.grant_label(),
        })).collect::<Vec<_>>(),
        "limits": {
            "fuel": limits.fuel,
            "timeout_ms": limits.timeout.as_millis() as u64,
            "memory_bytes": limits.memory,
            "output_bytes": limits.output,
        },
        "input_schema": tool.input_schema,
    })
}

/// `toolhost call`: the result on stdout, or the error text on stderr.
pub(super) fn call_result(tool: &str, report: &CallReport) -> io::Result<()> {
    match &report.outcome {
        ToolOutcome::Ok(text) => {
            let mut out = io::stdout().lock();
            let newline = if text.ends_with('\n') || text.is_empty() {
                ""
            } else {
                "\n"
            };
            ignore_broken_pipe(write!(out, "{text}{newline}"))
        }
        outcome @ ToolOutcome::Fault(_) => {
            eprintln!("{}", outcome.model_text(tool));
            Ok(())
        }
    }
}

/// `toolhost plugin check FILE`: the file's tools, or why it cannot load.
pub(super) fn plugin_check(sandbox: &Sandbox, file: &Path) -> anyhow::Result<Ended> {
    let own: Vec<&Tool> = sandbox
        .tools()
        .iter()
        .filter(|t| matches!(&t.plugin, crate::sandbox::PluginOrigin::File(p) if p == file))
        .collect();
    if let Some(error) = sandbox.load_errors().first() {
        eprintln!("error: {error}");
        return Ok(Ended::Failed);
    }
    println!(
        "ok: `{}` is a toolhost plugin with {} tool(s):",
        file.display(),
        own.len()
    );
    for tool in own {
        let mode = if tool.read_only {
            "read-only"
        } else {
            "writes"
        };
        println!(
            "  {} ({mode}): {}",
            tool.name,
            first_sentence(&tool.description)
        );
    }
    Ok(Ended::Done)
}

fn grants_text(grants: &[Grant]) -> String {
    if grants.is_empty() {
        return "none".into();
    }
    grants
        .iter()
        .map(|g| format!("{} ({})", g.guest_path, g.access.grant_label()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn limits_text(limits: &Limits) -> String {
    format!(
        "fuel {}, timeout {} ms, memory {} MiB, output {} KiB",
        limits.fuel,
        limits.timeout.as_millis(),
        limits.memory >> 20,
        limits.output >> 10
    )
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

/// A closed pipe (`toolhost tools | head`) is not an error.
fn ignore_broken_pipe(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `toolhost trust --list`.
pub(super) fn trusted(list: &crate::config::TrustList) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if list.workspaces().is_empty() {
        eprintln!("no trusted workspaces (`toolhost trust DIR` adds one)");
    }
    for workspace in list.workspaces() {
        ignore_broken_pipe(writeln!(out, "{}", workspace.display()))?;
    }
    Ok(())
}

/// `toolhost trust [--remove] DIR`.
pub(super) fn trust_changed(workspace: &Path, removed: bool, changed: bool, file: &Path) {
    let (workspace, file) = (workspace.display(), file.display());
    match (removed, changed) {
        (false, true) => println!(
            "trusted `{workspace}`: its toolhost.toml may now grant directories outside it \
             (recorded in `{file}`)"
        ),
        (false, false) => println!("`{workspace}` is already trusted (in `{file}`)"),
        (true, true) => println!("`{workspace}` is no longer trusted (recorded in `{file}`)"),
        (true, false) => println!("`{workspace}` was not trusted (see `toolhost trust --list`)"),
    }
}
