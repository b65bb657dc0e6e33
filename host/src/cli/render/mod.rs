//! Everything toolhost prints. The rest of the crate returns values.
//!
//! `toolhost run` prints through one [`RunOutput`] per output format
//! (`text`, `json`, `stream_json`); the one-shot reports of the other
//! commands are the functions below. Every line goes out through
//! [`put_line`] or [`note`], which escape the control characters of any
//! text from plugins, tools, the model or shipped files (`crate::terminal`);
//! fields of one line are escaped with [`terminal::one_line`] on their way in,
//! so they cannot start a line of their own either. `print!` and `eprint!`
//! stay denied here, as in the rest of the crate.

mod json;
mod out;
mod program;
mod stream_json;
mod text;

pub(super) use crate::terminal::shell_word;
pub(super) use program::program;
pub(super) use text::ResumeCommand;

use std::io::{self, Write as _};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;

use super::exit::Ended;
use crate::agent::{AgentEvent, EventSink, Message, StopRecord};
use crate::provider::prices::Prices;
use crate::sandbox::{CallReport, Limits, LoadEvent, Sandbox, Tier, Tool, ToolOutcome};
use crate::terminal::{self, one_line, short};
use crate::transcript::show::{self, Summary};
use crate::transcript::{SessionFile, SessionWriter, TranscriptError};
use out::{RunOutput, ignore_broken_pipe, note, put_json, put_line, stderr_notice};

/// Prints a `toolhost run` as its events arrive: one [`RunOutput`] per
/// output format, fed by the agent's events.
pub(super) struct RunRenderer {
    output: Arc<Mutex<Box<dyn RunOutput>>>,
}

impl RunRenderer {
    /// `header` opens the text output (model, workspace, tools, session).
    /// `prices`, when the user gave them, turn the token counts into a cost.
    pub(super) fn new(
        format: OutputFormat,
        resume: ResumeCommand,
        header: String,
        prices: Option<Prices>,
    ) -> Self {
        let output: Box<dyn RunOutput> = match format {
            OutputFormat::Text => Box::new(text::TextOutput::new(resume, header, prices)),
            OutputFormat::Json => Box::new(json::JsonOutput::new(prices)),
            OutputFormat::StreamJson => Box::new(stream_json::StreamJsonOutput),
        };
        RunRenderer {
            output: Arc::new(Mutex::new(output)),
        }
    }

    /// The callback the agent loop sends its events to.
    pub(super) fn sink(&self) -> EventSink {
        let output = Arc::clone(&self.output);
        Arc::new(move |event: &AgentEvent| {
            output
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .event(event);
        })
    }

    /// The end of the run: a warning when the session file is incomplete,
    /// then the format's own ending.
    pub(super) fn finish(
        &self,
        ledger: &[Message],
        stop: &StopRecord,
        session: Option<&SessionWriter>,
    ) -> io::Result<()> {
        if let Some(error) = session.and_then(SessionWriter::error) {
            note(format_args!(
                "warning: the session file `{}` is incomplete: writing it failed: {error}",
                session
                    .map(|s| s.path().display().to_string())
                    .unwrap_or_default()
            ));
        }
        self.output
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .finish(ledger, stop, session)
    }
}

/// How `toolhost run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// The assistant's text on stdout, one line per tool call on stderr.
    Text,
    /// One JSON object at the end.
    Json,
    /// One JSON event per line as the run goes.
    StreamJson,
}

/// What `plugin add` did, for the report.
pub(super) struct Added {
    pub(super) installed: std::path::PathBuf,
    pub(super) tools: Vec<String>,
    /// An identical file was already installed.
    pub(super) unchanged: bool,
}

/// What `plugin install` did, for the report.
pub(super) struct Installed {
    pub(super) added: Added,
    /// The build was in the cache already.
    pub(super) cached: bool,
    pub(super) seconds: f64,
}

/// The error a command failed with (`error: ...`), on stderr.
pub(super) fn error(error: &anyhow::Error) {
    note(format_args!("error: {}", error_chain(error.chain())));
}

/// An error and its causes, `: `-joined, each cause left out when the text
/// so far already holds it. Error types name their source where it reads
/// best (`cannot read `x`: No such file or directory (os error 2); create
/// it`) and also return it as their source, so anyhow's `{:#}` would tell
/// the OS error twice; a cause that adds something (a `.context()` over an
/// `io::Error`) is still told.
fn error_chain<'a>(
    chain: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> String {
    let mut text = String::new();
    for cause in chain {
        let cause = cause.to_string();
        if text.is_empty() {
            text = cause;
        } else if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The sink of a command that runs no prompt: the notices alone.
pub(super) fn notices() -> EventSink {
    std::sync::Arc::new(stderr_notice)
}

/// Prints each warning to stderr, on one line each: a warning may quote a
/// shipped file (a tool name in toolhost.toml, a session's workspace).
pub(super) fn warnings(warnings: &[String]) {
    for warning in warnings {
        note(format_args!("warning: {}", one_line(warning)));
    }
}

/// A line of `--input-format stream-json` input that was not used.
pub(super) fn stdin_line_ignored(line: u64, error: &str) {
    note(format_args!(
        "warning: stdin line {line} ignored: {}",
        one_line(error)
    ));
}

/// A message from stdin the inbox had no room for.
pub(super) fn stdin_input_refused(full: &crate::agent::InboxFull) {
    note(format_args!("warning: stdin message {full}"));
}

/// Tells the user which calls of the resumed session had no result and
/// what the model will be told instead.
pub(super) fn recovered(results: &Message) -> Vec<String> {
    let Message::ToolResults { results } = results else {
        return Vec::new();
    };
    results
        .iter()
        .map(|result| {
            format!(
                "resuming: call {} ({}) has no recorded result; the model is told: {}",
                one_line(&result.call_id),
                one_line(&result.tool),
                one_line(&short(&result.text, 120))
            )
        })
        .collect()
}

/// Lines for the user, on stderr.
pub(super) fn notes(lines: &[String]) {
    for line in lines {
        note(line);
    }
}

/// `toolhost sessions`: the runs, then the MCP servers' audits (an MCP
/// client's calls are not turns of a prompt), each newest first; an
/// unreadable file is listed with the runs, with the reason, rather than
/// hiding the others.
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
        return put_json(&mut out, &list, true);
    }
    if sessions.is_empty() {
        note(format_args!(
            "no sessions in `{}` yet: {}",
            dir.display(),
            crate::transcript::WHO_WRITES_SESSIONS
        ));
        return Ok(());
    }
    let (servers, runs): (Vec<_>, Vec<_>) = sessions
        .iter()
        .partition(|s| s.as_ref().is_ok_and(Summary::is_mcp_server));
    if !runs.is_empty() {
        put_line(
            &mut out,
            format_args!(
                "{:<22} {:<19} {:>5}  {:<13} PROMPT",
                "ID", "STARTED (UTC)", "TURNS", "STOP"
            ),
        )?;
    }
    for session in runs {
        let line = match session {
            Ok(s) => format!(
                "{:<22} {:<19} {:>5}  {:<13} {}",
                one_line(&s.id),
                started(s),
                s.turns,
                match (s.stop, s.running) {
                    (Some(reason), _) => reason.as_str(),
                    (None, true) => "running",
                    (None, false) => "(none: died)",
                },
                one_line(&short(&s.first_prompt, 60))
            ),
            Err(error) => format!("unreadable: {}", one_line(&error.to_string())),
        };
        put_line(&mut out, line)?;
    }
    if servers.is_empty() {
        return Ok(());
    }
    if sessions.len() > servers.len() {
        put_line(&mut out, "")?;
    }
    put_line(
        &mut out,
        format_args!(
            "{:<22} {:<19} {:>5}  STATUS",
            "MCP SERVER", "STARTED (UTC)", "CALLS"
        ),
    )?;
    for s in servers.into_iter().flatten() {
        let status = match (&s.continued_in, s.stop, s.running) {
            (Some(next), _, _) => format!("continued in {}", one_line(next)),
            (None, Some(reason), _) => reason.as_str().into(),
            (None, None, true) => "serving".into(),
            (None, None, false) => "died".into(),
        };
        put_line(
            &mut out,
            format!(
                "{:<22} {:<19} {:>5}  {status}",
                one_line(&s.id),
                started(s),
                s.calls
            ),
        )?;
    }
    Ok(())
}

/// A summary's start as `2026-11-30 21:59:05`.
fn started(s: &Summary) -> String {
    one_line(s.started_at.get(..19).unwrap_or(&s.started_at)).replace('T', " ")
}

/// `toolhost sessions show ID`.
pub(super) fn session(file: &SessionFile, running: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    // Each of `show`'s lines is one line: a field cannot break it.
    for line in show::lines(file, running) {
        put_line(&mut out, one_line(&line))?;
    }
    Ok(())
}

/// `toolhost sessions show ID --call CALL`: the call whole (each line made
/// inert by `put_line`, tabs kept).
pub(super) fn session_call(lines: &[String]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for line in lines {
        put_line(&mut out, line)?;
    }
    Ok(())
}

/// Prints warnings and skipped plugins to stderr.
pub(super) fn load_problems(sandbox: &Sandbox, warnings: &[String]) {
    for warning in warnings {
        note(format_args!("warning: {}", one_line(warning)));
    }
    for notice in sandbox.load_notices() {
        note(format_args!("warning: {}", one_line(&notice.to_string())));
    }
    for error in sandbox.load_errors() {
        note(format_args!(
            "warning: skipped {}",
            one_line(&error.to_string())
        ));
    }
}

/// `toolhost tools`.
pub(super) fn tools(sandbox: &Sandbox, as_json: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if as_json {
        return put_json(&mut out, &tools_json(sandbox), true);
    }
    for tool in sandbox.tools() {
        tool_lines(&mut out, tool, sandbox.workspace())?;
    }
    protected_lines(&mut out, sandbox)
}

/// `toolhost tools --json`'s document.
fn tools_json(sandbox: &Sandbox) -> serde_json::Value {
    let tools: Vec<_> = sandbox
        .tools()
        .iter()
        .map(|tool| tool_json(tool, sandbox.tier(tool)))
        .collect();
    let errors: Vec<_> = sandbox
        .load_errors()
        .iter()
        .map(|e| json!({"plugin": e.origin, "reason": e.reason}))
        .collect();
    let protected: Vec<_> = sandbox
        .protected()
        .iter()
        .map(|p| json!({"path": p.relative, "at_any_depth": p.at_any_depth, "why": p.why}))
        .collect();
    json!({
        "workspace": sandbox.workspace(),
        "tools": tools,
        "protected": protected,
        "load_errors": errors,
    })
}

/// One tool in `toolhost tools`: its name, what it does, its grants,
/// network, limits and lifts.
fn tool_lines(out: &mut impl io::Write, tool: &Tool, workspace: &Path) -> io::Result<()> {
    let mode = if tool.read_only {
        "read-only"
    } else {
        "writes"
    };
    let plugin = tool.plugin.to_string();
    put_line(
        out,
        format_args!("{}  ({mode}, {})", one_line(&tool.name), one_line(&plugin)),
    )?;
    put_line(
        out,
        format_args!("    {}", one_line(first_sentence(&tool.description))),
    )?;
    let reach = tool.reach();
    // A tool that writes with nothing to write to: say how to grant it.
    let hint = if tool.read_only || reach.may(crate::sandbox::Access::Write) {
        String::new()
    } else {
        format!(
            "; it may write nowhere: grant a directory with `--allow-write {}=DIR`",
            one_line(&tool.name)
        )
    };
    put_line(
        out,
        format_args!("    grants: {}{hint}", one_line(&reach.dirs_plain())),
    )?;
    if reach.hosts.is_empty() && tool.uses_network {
        put_line(
            out,
            format_args!(
                "    network: none (grant with `--allow-net {}=URL`)",
                one_line(&tool.name)
            ),
        )?;
    }
    if !reach.hosts.is_empty() {
        let limits = &tool.policy.limits;
        put_line(
            out,
            format_args!(
                "    network: {} ({} requests, {} connections at once, {} MiB of responses a call)",
                one_line(&reach.hosts.join(", ")),
                limits.net_requests,
                limits.net_connections,
                limits.net_bytes.div_ceil(1 << 20)
            ),
        )?;
    }
    for more in &reach.more {
        put_line(out, format_args!("    {}", one_line(more)))?;
    }
    put_line(
        out,
        format_args!("    limits: {}", limits_text(&tool.policy.limits)),
    )?;
    if !tool.policy.fs.lifted.is_empty() {
        let lifted: Vec<String> = tool
            .policy
            .fs
            .lifted
            .iter()
            .map(|path| {
                let shown = |p: &'_ Path| match p.strip_prefix(workspace) {
                    Ok(inside) if inside.as_os_str().is_empty() => ".".to_string(),
                    Ok(inside) => inside.display().to_string(),
                    Err(_) => p.display().to_string(),
                };
                // A lift of a `HEAD` lifts the repository it marks.
                match path.parent() {
                    Some(dir) if path.file_name() == Some(std::ffi::OsStr::new("HEAD")) => {
                        format!("{} (the repository `{}`)", shown(path), shown(dir))
                    }
                    _ => shown(path),
                }
            })
            .collect();
        put_line(
            out,
            format_args!(
                "    may change protected: {} (granted by name)",
                one_line(&lifted.join(", "))
            ),
        )?;
    }
    Ok(())
}

/// The protected paths, last in `toolhost tools`.
fn protected_lines(out: &mut impl io::Write, sandbox: &Sandbox) -> io::Result<()> {
    let names = |any_depth: bool| -> Vec<String> {
        sandbox
            .protected()
            .iter()
            .filter(|p| p.at_any_depth == any_depth)
            .map(|p| p.relative.clone())
            .collect()
    };
    put_line(
        out,
        format_args!(
            "protected at any depth (no tool may change): {}",
            one_line(&names(true).join(", "))
        ),
    )?;
    let exact = names(false);
    if exact.is_empty() {
        return Ok(());
    }
    put_line(
        out,
        format_args!(
            "protected (no tool may change): {}",
            one_line(&exact.join(", "))
        ),
    )
}

fn tool_json(tool: &Tool, tier: Tier) -> serde_json::Value {
    let limits = &tool.policy.limits;
    json!({
        "name": tool.name,
        "description": tool.description,
        "read_only": tool.read_only,
        "plugin": tool.plugin,
        "plugin_sha256": tool.plugin_sha256,
        "compile_cache": tool.cache,
        "compiled": tier,
        "lifted": tool.policy.fs.lifted,
        "net": tool.reach().hosts,
        "more": tool.reach().more,
        "grants": tool.policy.fs.grants.iter().map(|g| json!({
            "path": g.guest_path,
            "host_path": g.host_path,
            "access": g.access.grant_label(),
        })).collect::<Vec<_>>(),
        "limits": {
            "fuel": limits.fuel,
            "timeout_ms": limits.timeout.as_millis() as u64,
            "memory_bytes": limits.memory,
            "output_bytes": limits.output,
            "write_bytes": limits.write,
            "net_bytes": limits.net_bytes,
            "net_requests": limits.net_requests,
            "net_connections": limits.net_connections,
        },
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
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
            ignore_broken_pipe(write!(out, "{}{newline}", terminal::multiline(text)))
        }
        outcome @ ToolOutcome::Fault(_) => {
            note(outcome.model_text(tool));
            Ok(())
        }
    }
}

/// `toolhost plugin new`: where the project is and how to build it.
pub(super) fn plugin_created(dir: &Path, build: &str, name: &str) {
    let mut out = io::stdout().lock();
    let _ = put_line(
        &mut out,
        format_args!("created `{}`; build it with:", dir.display()),
    )
    .and_then(|()| put_line(&mut out, format_args!("  cd {} && {build}", dir.display())))
    .and_then(|()| {
        put_line(
            &mut out,
            format_args!(
                "then: {} plugin check {name}.wasm (its README says how to drop it in)",
                program()
            ),
        )
    });
}

/// `toolhost plugin add FILE`: where it went and what it offers.
pub(super) fn plugin_added(installed: &Path, tools: &[String], unchanged: bool) {
    let what = if unchanged {
        "already installed (identical)"
    } else {
        "installed"
    };
    let _ = put_line(
        &mut io::stdout().lock(),
        format_args!(
            "{what}: `{}`, compiled into the cache; {} tool(s): {}",
            installed.display(),
            tools.len(),
            one_line(&tools.join(", "))
        ),
    );
}

/// `toolhost plugin install TOOL`: what was installed, and whether the
/// build came from the cache.
pub(super) fn plugin_installed(installed: &Installed) {
    let added = &installed.added;
    plugin_added(&added.installed, &added.tools, added.unchanged);
    let how = if installed.cached {
        "the build was in the cache"
    } else {
        "built now; the next install takes it from the cache"
    };
    note(format_args!("{how} ({:.1} s in all)", installed.seconds));
}

/// A step of a long command, on stderr.
pub(super) fn progress_note(line: &str) {
    note(one_line(line));
}

/// `toolhost plugin check FILE`: the file's tools, or why it cannot load.
pub(super) fn plugin_check(sandbox: &Sandbox, file: &Path) -> anyhow::Result<Ended> {
    let own: Vec<&Tool> = sandbox
        .tools()
        .iter()
        .filter(|t| matches!(&t.plugin, crate::sandbox::PluginOrigin::File(p) if p == file))
        .collect();
    if let Some(error) = sandbox.load_errors().first() {
        note(format_args!("error: {error}"));
        return Ok(Ended::Failed);
    }
    let kind = if own.iter().any(|t| t.output_schema.is_some()) {
        "a component with typed exports, offered as"
    } else {
        "a toolhost plugin with"
    };
    let mut out = io::stdout().lock();
    put_line(
        &mut out,
        format_args!("ok: `{}` is {kind} {} tool(s):", file.display(), own.len()),
    )?;
    for tool in own {
        let mode = if tool.read_only {
            "read-only"
        } else {
            "writes"
        };
        put_line(
            &mut out,
            format_args!(
                "  {} ({mode}): {}",
                one_line(&tool.name),
                one_line(first_sentence(&tool.description))
            ),
        )?;
        // Schemas print as JSON, so what the plugin wrote in them stays
        // escaped as JSON and the schema stays valid JSON.
        let schema = tool.input_schema.to_string();
        put_line(
            &mut out,
            format_args!("    input schema: {}", terminal::json(&schema)),
        )?;
        if let Some(output) = &tool.output_schema {
            let schema = output.to_string();
            put_line(
                &mut out,
                format_args!("    output schema: {}", terminal::json(&schema)),
            )?;
        }
    }
    for notice in sandbox.load_notices() {
        if matches!(&notice.origin, crate::sandbox::PluginOrigin::File(p) if p == file) {
            put_line(
                &mut out,
                format_args!("  note: {}", one_line(&notice.message)),
            )?;
        }
    }
    put_line(
        &mut out,
        format_args!(
            "  checked: each input schema expands to at most {} subschemas with its `$ref`s followed",
            crate::sandbox::MAX_SCHEMA_EXPANSION
        ),
    )?;
    if let Ok(meta) = std::fs::metadata(file) {
        put_line(
            &mut out,
            format_args!(
                "  file: {} KiB, within the limit of {} on a plugin file (`plugin_file_mib` under [limits])",
                meta.len().div_ceil(1024),
                crate::units::mib_or_gib(sandbox.plugin_file_limit())
            ),
        )?;
    }
    Ok(Ended::Done)
}

fn limits_text(limits: &Limits) -> String {
    crate::units::tool_limits(
        limits.fuel,
        limits.timeout,
        limits.memory,
        limits.output as u64,
        limits.write,
    )
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

/// `toolhost trust --list`.
pub(super) fn trusted(list: &crate::config::TrustList) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if list.workspaces().is_empty() {
        note("no trusted workspaces (`toolhost trust DIR` adds one)");
    }
    for workspace in list.workspaces() {
        put_line(&mut out, one_line(&workspace.display().to_string()))?;
    }
    Ok(())
}

/// `toolhost trust [--remove] DIR`.
pub(super) fn trust_changed(workspace: &Path, removed: bool, changed: bool, file: &Path) {
    let (workspace, file) = (workspace.display(), file.display());
    let line = match (removed, changed) {
        (false, true) => format!(
            "trusted `{workspace}`: its toolhost.toml may now give every tool write access, grant \
             directories outside it, raise limits, grant network access and environment \
             variables, and it and its session files may pick a model server elsewhere than \
             this machine (recorded in `{file}`)"
        ),
        (false, false) => format!("`{workspace}` is already trusted (in `{file}`)"),
        (true, true) => format!("`{workspace}` is no longer trusted (recorded in `{file}`)"),
        (true, false) => format!("`{workspace}` was not trusted (see `toolhost trust --list`)"),
    };
    let _ = put_line(&mut io::stdout().lock(), line);
}

/// A spinner naming the plugin while it compiles (seconds for a Python or
/// JavaScript component, only on its first load), when stderr is a
/// terminal; elsewhere nothing, as scripts and tests read stderr.
pub(super) struct CompileProgress {
    interactive: bool,
    spinner: Mutex<Option<indicatif::ProgressBar>>,
}

impl CompileProgress {
    pub(super) fn new() -> Self {
        use std::io::IsTerminal as _;
        CompileProgress {
            interactive: io::stderr().is_terminal(),
            spinner: Mutex::new(None),
        }
    }

    pub(super) fn event(&self, event: &LoadEvent<'_>) {
        if !self.interactive {
            return;
        }
        let mut slot = self.spinner.lock().unwrap_or_else(PoisonError::into_inner);
        match event {
            LoadEvent::CompileStart { origin, bytes } => {
                let spinner = indicatif::ProgressBar::new_spinner();
                spinner.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                if let Ok(style) =
                    indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                {
                    spinner.set_style(style);
                }
                spinner.set_message(format!(
                    "compiling plugin {} ({:.1} MB; first load only, later starts use the compile cache)",
                    one_line(&origin.to_string()),
                    *bytes as f64 / 1e6
                ));
                spinner.enable_steady_tick(std::time::Duration::from_millis(100));
                *slot = Some(spinner);
            }
            LoadEvent::CompileEnd { .. } => {
                if let Some(spinner) = slot.take() {
                    spinner.finish_and_clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source the message already prints, as `thiserror`'s `{source}`
    /// and `#[source]` together make it.
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read `{path}`: {source}; create it")]
    struct ReadFailed {
        path: &'static str,
        source: io::Error,
    }

    fn not_found() -> io::Error {
        io::Error::from_raw_os_error(2)
    }

    #[test]
    fn a_source_the_message_holds_is_told_once() {
        let error = anyhow::Error::from(ReadFailed {
            path: "x",
            source: not_found(),
        });
        assert_eq!(
            error_chain(error.chain()),
            "cannot read `x`: No such file or directory (os error 2); create it"
        );
        // Wrapped again, by a context that does not print it.
        let error = error.context("loading the plugins");
        assert_eq!(
            error_chain(error.chain()),
            "loading the plugins: cannot read `x`: No such file or directory (os error 2); create it"
        );
    }

    #[test]
    fn a_cause_the_message_lacks_is_told() {
        let error = anyhow::Error::from(not_found()).context("reading `x`");
        assert_eq!(
            error_chain(error.chain()),
            "reading `x`: No such file or directory (os error 2)"
        );
        assert_eq!(
            error_chain(anyhow::anyhow!("no prompt").chain()),
            "no prompt"
        );
    }
}
