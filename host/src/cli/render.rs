//! Everything toolhost prints. The rest of the crate returns values.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, Write as _};
use std::path::Path;

use serde_json::json;

use super::exit;
use crate::sandbox::{CallReport, Grant, Limits, Sandbox, Tool, ToolOutcome};

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
            "access": if g.writable { "read-write" } else { "read-only" },
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
pub(super) fn plugin_check(sandbox: &Sandbox, file: &Path) -> anyhow::Result<u8> {
    let own: Vec<&Tool> = sandbox
        .tools()
        .iter()
        .filter(|t| matches!(&t.plugin, crate::sandbox::PluginOrigin::File(p) if p == file))
        .collect();
    if let Some(error) = sandbox.load_errors().first() {
        eprintln!("error: {error}");
        return Ok(exit::ERROR);
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
    Ok(exit::OK)
}

fn grants_text(grants: &[Grant]) -> String {
    if grants.is_empty() {
        return "none".into();
    }
    grants
        .iter()
        .map(|g| {
            format!(
                "{} ({})",
                g.guest_path,
                if g.writable {
                    "read-write"
                } else {
                    "read-only"
                }
            )
        })
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
