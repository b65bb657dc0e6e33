//! Model providers: turns a model's streamed reply (a Server-Sent Events body)
//! into one assembled [`AssistantMessage`].
//!
//! One module per wire API: [`openai`] (Chat Completions and the servers that
//! copy it: Ollama, vLLM, llama.cpp, Mistral, DeepSeek, Azure) and
//! [`anthropic`] (Messages). Each implements [`client::WireApi`] with its
//! request body, its assembler (fed one event at a time) and its finish
//! table; [`client`] holds the one client over them and
//! [`client::assemble`], which reads a whole byte stream, as an HTTP client
//! yields it. `sse` only frames bytes into events.
//!
//! This module knows nothing about wasm, tools' sandboxing or the agent loop;
//! [`http`] is its only HTTP code (POST, retries, timeouts). The shapes here
//! are the contract the agent loop and the ledger build on, so every quirk of
//! a server is absorbed here and never leaks upward.

pub mod anthropic;
mod budget;
pub mod client;
mod conversation;
mod error;
pub mod http;
mod message;
mod model;
pub mod openai;
pub mod overflow;
pub mod prices;
pub mod scripted;
mod sse;
pub mod window;

pub use budget::{BLOCK_COST, Cap, DEFAULT_MAX_REPLY_BYTES, ReplyBudget, ReplyCut};
pub use client::{Asking, TextSink};
pub use conversation::{Delivery, Message, ToolResultEntry, ToolSpecForModel};
pub use error::{EXCERPT_CHARS, ProviderError};
pub use message::{AssistantMessage, Block, CallRef, Finish, TokenTotals, Usage};
pub use model::Model;
