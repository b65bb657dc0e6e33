//! The writing every part of render shares: a line or a JSON document
//! with the terminal's controls escaped, a note on stderr, the notices of a
//! run, and the trait each output format of `toolhost run` implements.

use std::fmt::Display;
use std::io::{self, Write as _};
use std::sync::{Mutex, PoisonError};

use crate::agent::{AgentEvent, Message, StopRecord};
use crate::terminal::{self, one_line};
use crate::transcript::SessionWriter;

/// One output format of `toolhost run`.
pub(super) trait RunOutput: Send {
    /// One event of the run, as it happens.
    fn event(&mut self, event: &AgentEvent);

    /// The end of the run.
    fn finish(
        &mut self,
        ledger: &[Message],
        stop: &StopRecord,
        session: Option<&SessionWriter>,
    ) -> io::Result<()>;
}

/// Writes `line` and a line feed to `out` with every control character but
/// `\n` and `\t` escaped: whatever a caller's fields hold, only toolhost's
/// own sequences reach a terminal. A closed pipe is not an error.
pub(super) fn put_line(out: &mut impl io::Write, line: impl Display) -> io::Result<()> {
    ignore_broken_pipe(writeln!(out, "{}", terminal::multiline(&line.to_string())))
}

/// `line` on stderr, escaped as [`put_line`] does. A failed write to stderr
/// has nowhere left to be told.
/// A command it quotes (`` `toolhost trust DIR` ``) starts as the user's
/// shell runs this binary ([`super::program::pasteable`]).
pub(super) fn note(line: impl Display) {
    let line = line.to_string();
    let _ = writeln!(
        io::stderr().lock(),
        "{}",
        terminal::multiline(&super::program::pasteable(&line))
    );
}

/// A JSON document on stdout, its DEL, C1 and bidi controls as `\u`
/// escapes (serde_json escapes only C0): the same value, inert on a
/// terminal.
pub(super) fn put_json(
    out: &mut impl io::Write,
    value: &impl serde::Serialize,
    pretty: bool,
) -> io::Result<()> {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    put_line(out, terminal::json(&text.unwrap_or_default()))
}

/// A model retry or a warning, told on stderr by the formats whose stdout
/// is the reply or one JSON object. A reason the same as the last retry's
/// is not repeated whole.
pub(super) fn stderr_notice(event: &AgentEvent) {
    static LAST_REASON: Mutex<String> = Mutex::new(String::new());
    if let AgentEvent::Warning { message } = event {
        note(format_args!("warning: {}", one_line(message)));
    }
    if let AgentEvent::CompactionStart {
        summarising: true, ..
    } = event
    {
        note("compacting: the model is summarising the conversation so far");
    }
    if let AgentEvent::CompactionEnd {
        tokens_before,
        tokens_after,
        masked,
        first_kept,
        ..
    } = event
    {
        note(crate::agent::compaction_line(
            *tokens_before,
            *tokens_after,
            masked.len(),
            *first_kept,
        ));
    }
    if let AgentEvent::ModelRetry {
        attempt,
        wait_ms,
        reason,
    } = event
    {
        let mut last = LAST_REASON.lock().unwrap_or_else(PoisonError::into_inner);
        let shown = if *last == *reason {
            "the same again".into()
        } else {
            reason.clone_into(&mut last);
            one_line(reason)
        };
        note(format_args!(
            "retrying the model request in {:.1} s (retry {attempt}): {shown}",
            *wait_ms as f64 / 1000.0,
        ));
    }
}
/// A closed pipe (`toolhost tools | head`) is not an error.
pub(super) fn ignore_broken_pipe(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
