//! Which model `toolhost run` talks to: flags, then `[model]` of the config
//! files, then (when resuming) the session's recorded model, then the
//! environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`).
//! `--script` alone means the scripted model.
//!
//! Only the precedence lives here; building and checking a client (a
//! missing key at the vendor's URL, a bad script) is the provider's.

use std::path::PathBuf;

use super::file::{ModelSection, ProviderKind};
use crate::provider::http::HttpOptions;
use crate::provider::scripted::ScriptedModel;
use crate::provider::{Model, ProviderError, anthropic, openai};

/// What the command line says about the model.
#[derive(Debug, Clone, Default)]
pub struct ModelFlags {
    pub provider: Option<ProviderKind>,
    pub script: Option<PathBuf>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// The model a resumed session recorded.
#[derive(Debug, Clone, Copy)]
pub struct RecordedModel<'a> {
    pub provider: &'a str,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
}

/// Why no model could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum ModelChoiceError {
    #[error(
        "no model name: pass --model NAME (e.g. gpt-4o, claude-sonnet-4-5, qwen2.5-coder) or set \
         `name` under [model] in toolhost.toml"
    )]
    NoName,
    #[error("`--provider scripted` needs `--script FILE` (the format is in the README)")]
    NoScript,
    #[error(
        "no model configured: pass `--provider openai --model NAME` (OPENAI_API_KEY; \
         OPENAI_BASE_URL or --base-url for Ollama, vLLM, llama.cpp), `--provider anthropic \
         --model NAME` (ANTHROPIC_API_KEY), or `--provider scripted --script FILE` to run \
         offline (try `toolhost --workspace examples/demo run --script \
         examples/scripts/demo.json \"review this project\"`)"
    )]
    NoModel,
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

impl ModelChoiceError {
    /// True when the command line is what is missing (exit code 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, ModelChoiceError::Provider(_))
    }
}

/// Picks and builds the model.
pub fn resolve_model(
    flags: &ModelFlags,
    section: &ModelSection,
    resumed: Option<RecordedModel<'_>>,
) -> Result<Model, ModelChoiceError> {
    // A resumed session's model, unless flags, config or --script pick one.
    // A scripted session is not picked up: its script is not recorded.
    let from_session = resumed
        .filter(|_| {
            flags.provider.is_none() && section.provider.is_none() && flags.script.is_none()
        })
        .and_then(|recorded| {
            let kind = match recorded.provider {
                "openai" => ProviderKind::Openai,
                "anthropic" => ProviderKind::Anthropic,
                _ => return None,
            };
            Some((kind, recorded))
        });
    let kind = flags
        .provider
        .or(section.provider)
        .or(flags.script.as_ref().map(|_| ProviderKind::Scripted))
        .or(from_session.map(|(kind, _)| kind));
    let from_session = from_session.map(|(_, recorded)| recorded);
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let name = || {
        flags
            .model
            .clone()
            .or_else(|| section.name.clone())
            .or_else(|| from_session.and_then(|r| r.model.map(str::to_owned)))
            .ok_or(ModelChoiceError::NoName)
    };
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| section.base_url.clone())
        .or_else(|| from_session.and_then(|r| r.base_url.map(str::to_owned)));
    Ok(match kind {
        Some(ProviderKind::Scripted) => {
            let script = flags.script.as_ref().ok_or(ModelChoiceError::NoScript)?;
            Model::Scripted(ScriptedModel::from_file(script)?)
        }
        Some(ProviderKind::Openai) => {
            let mut http = HttpOptions::new(
                base_url
                    .or_else(|| env("OPENAI_BASE_URL"))
                    .unwrap_or_else(|| openai::DEFAULT_BASE_URL.into()),
            );
            http.api_key = env(openai::API_KEY_ENV);
            Model::OpenAi(openai::OpenAiClient::new(http, name()?)?)
        }
        Some(ProviderKind::Anthropic) => {
            let mut http =
                HttpOptions::new(base_url.unwrap_or_else(|| anthropic::DEFAULT_BASE_URL.into()));
            http.api_key = env(anthropic::API_KEY_ENV);
            Model::Anthropic(anthropic::AnthropicClient::new(http, name()?)?)
        }
        None => return Err(ModelChoiceError::NoModel),
    })
}
