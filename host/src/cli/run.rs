//! `toolhost run`: its flags, the prompt from the argument or stdin, the
//! loop run once (or from stdin's JSON lines), printed, and the exit code.

use std::io::Read as _;
use std::path::Path;

use anyhow::Context as _;
use clap::Args;

use super::exit::Ended;
use super::flags::SandboxArgs;
use super::load::spawn_ctrl_c_handler;
use super::render::OutputFormat;
use super::setup::{AgentArgs, Prepared, header, prepare};
use super::{UsageError, background, headless, render, session};
use crate::agent::{AgentLoop, Granting, Inbox, Message, StopRecord};

/// `toolhost run`'s flags.
#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// The task. `-` or no argument with piped stdin reads it from stdin.
    pub(super) prompt: Option<String>,
    #[command(flatten)]
    pub(super) agent: AgentArgs,
    /// How to print the run.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, help_heading = "Input and output")]
    pub(super) output_format: OutputFormat,
    /// How to read input: `text` (the prompt only), or `stream-json` (JSON
    /// lines on stdin: a prompt or a message for a run while it works,
    /// `{"type": "user", "message": {"role": "user", "content": "..."}}`,
    /// or `{"type": "interrupt"}`).
    #[arg(long, value_enum, default_value_t = InputFormat::Text, help_heading = "Input and output")]
    pub(super) input_format: InputFormat,
    #[command(flatten)]
    pub(super) sandbox: SandboxArgs,
}

/// How `toolhost run` reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InputFormat {
    /// The prompt, from the argument or stdin.
    Text,
    /// One JSON object per line on stdin, for as long as it is open.
    StreamJson,
}

/// `toolhost run`: prepare, run the loop (one prompt, or prompts from
/// stdin), print, and map the stop reason to the exit code.
pub(super) async fn run_agent(sandbox_args: &SandboxArgs, args: &RunArgs) -> anyhow::Result<Ended> {
    use std::io::IsTerminal as _;
    let headless = args.input_format == InputFormat::StreamJson;
    // No task and a person at the terminal: they meant a chat.
    if !headless
        && args.prompt.is_none()
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
    {
        return super::chat::run_chat(sandbox_args, &args.agent, None).await;
    }
    let prepared = prepare(sandbox_args, (&args.agent, "run"), || {
        Ok(if headless {
            // The argument, if any, is the first prompt; stdin has the rest.
            args.prompt.clone().filter(|prompt| prompt != "-")
        } else {
            Some(read_prompt(args.prompt.as_deref())?)
        })
    })
    .await?;
    let Prepared {
        workspace,
        sandbox,
        model,
        config,
        writer,
        mut ledger,
        mut instructions,
        delivery,
        prices,
        grants,
        early: prompt,
        ..
    } = prepared;

    let cancel = tokio_util::sync::CancellationToken::new();
    spawn_ctrl_c_handler(cancel.clone());
    let renderer = render::RunRenderer::new(
        args.output_format,
        resume_command(sandbox_args, &args.agent, &workspace),
        header(
            "run",
            &model,
            &workspace,
            sandbox.tools().len(),
            writer.as_deref(),
        ),
        prices,
    );
    let sink = match &writer {
        Some(writer) => session::record_then(writer, renderer.sink()),
        None => renderer.sink(),
    };
    let inbox = Inbox::new(delivery).with_events(sink.clone());
    // Headless: nobody is asked; a resumed session's grants apply.
    let granting = Granting {
        grants,
        approver: None,
    };
    let mut agent = AgentLoop::new(model, &sandbox, config)
        .with_events(sink)
        .with_inbox(inbox.clone())
        .with_granting(granting);
    let stop = match prompt {
        Some(prompt) if !headless => agent.run(&mut ledger, prompt, &cancel).await,
        first => {
            let mut failed = Ok(());
            let hooks = headless::Hooks {
                // Read again before each prompt: a tool may have changed it.
                system_prompt: &mut || instructions.refreshed(),
                after_run: &mut |ledger: &[Message], stop: &StopRecord| {
                    if failed.is_ok() {
                        failed = renderer.finish(ledger, stop, writer.as_deref());
                    }
                },
            };
            let last =
                headless::drive(&mut agent, &mut ledger, &inbox, first, &cancel, hooks).await;
            failed?;
            match last {
                Some(stop) => stop,
                None => {
                    background::hand_off(&sandbox);
                    return Err(UsageError(
                        "no prompt: stdin closed before a {\"type\":\"user\",...} line came".into(),
                    )
                    .into());
                }
            }
        }
    };
    if !headless {
        renderer.finish(&ledger, &stop, writer.as_deref())?;
    }
    background::hand_off(&sandbox);
    Ok(Ended::Run(stop.reason))
}

pub(super) fn resume_command(
    sandbox_args: &SandboxArgs,
    args: &AgentArgs,
    workspace: &Path,
) -> render::ResumeCommand {
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string()
    };
    let mut before = vec![render::program().to_string()];
    let flag = |words: &mut Vec<String>, name: &str, value: String| {
        words.push(name.to_string());
        words.push(render::shell_word(&value));
    };
    flag(&mut before, "--workspace", workspace.display().to_string());
    if let Some(config) = &sandbox_args.config {
        flag(&mut before, "--config", absolute(config));
    }
    for dir in &sandbox_args.plugins {
        flag(&mut before, "--plugins", absolute(dir));
    }
    for grant in &sandbox_args.allow_read {
        flag(&mut before, "--allow-read", grant.clone());
    }
    for grant in &sandbox_args.allow_write {
        flag(&mut before, "--allow-write", grant.clone());
    }
    before.extend(["run".to_string(), "--resume".to_string()]);
    let mut after = Vec::new();
    if let Some(script) = &args.script {
        flag(&mut after, "--script", absolute(script));
    }
    if let Some(dir) = &args.session_dir {
        flag(&mut after, "--session-dir", absolute(dir));
    }
    render::ResumeCommand {
        before_id: before.join(" "),
        after_id: after.iter().map(|word| format!(" {word}")).collect(),
    }
}

/// The prompt from the argument, or from stdin for `-` or when stdin is piped.
pub(super) fn read_prompt(arg: Option<&str>) -> anyhow::Result<String> {
    use std::io::IsTerminal as _;
    let from_stdin = match arg {
        Some("-") => true,
        Some(_) => false,
        None => !std::io::stdin().is_terminal(),
    };
    let prompt = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the prompt from stdin")?;
        text
    } else {
        arg.unwrap_or_default().to_string()
    };
    if prompt.trim().is_empty() {
        return Err(UsageError(
            "no prompt: pass the task as an argument, or `-` to read it from stdin".into(),
        )
        .into());
    }
    Ok(prompt)
}
