//! toolhost: an agent host that runs every tool as a sandboxed WebAssembly
//! component.
//!
//! - [`sandbox`] loads plugins and runs tool calls under grants and limits;
//! - [`config`] turns `toolhost.toml` and flags into the sandbox's options;
//! - [`agent`] runs the loop: model, tool calls, ledger, stop record;
//! - [`provider`] assembles a model's streamed reply into one message (no wasm);
//! - [`mcp`] serves the sandbox's tools to MCP clients (`toolhost mcp`);
//! - [`transcript`] writes, reads and resumes the JSONL session files;
//! - [`instructions`] reads the project's AGENTS.md / CLAUDE.md safely;
//! - [`text_file`] reads a settings file a repository may have shipped, bounded;
//! - [`units`] writes sizes, durations and counts for people;
//! - [`workspace`] names the workspace's own files (`toolhost.toml`, `.toolhost/`);
//! - [`chat`] is `toolhost chat`'s terminal front end;
//! - [`cli`] is the command line; it is the only module that prints, every
//!   outside text through `terminal`'s escaping.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(unreachable_pub)]

pub mod agent;
pub(crate) mod chat;
pub mod cli;
pub mod config;
pub mod instructions;
pub mod json_budget;
pub mod mcp;
pub mod provider;
pub mod sandbox;
pub(crate) mod terminal;
pub(crate) mod text_file;
pub mod transcript;
pub(crate) mod units;
pub mod workspace;
