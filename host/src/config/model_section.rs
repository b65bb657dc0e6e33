//! The `[model]` section of the files, merged: the workspace's keys over
//! the user's, with what an untrusted workspace's may not do checked
//! (`model.rs` adds the flags, the environment and a resumed session).

use std::path::Path;

use super::error::ConfigError;
use super::file::{self, ModelSection};
use super::origin::FileKind;
use super::source::Source;

/// The `[model]` keys: the workspace's over the user's. A base URL from an
/// untrusted workspace's file must be a server on this machine: anywhere else
/// would receive the prompts and the API key.
pub(super) fn merged_model(
    sources: &[Source],
    workspace: &Path,
    trusted: bool,
) -> Result<ModelSection, ConfigError> {
    let mut model = ModelSection::default();
    for source in sources {
        let section = &source.file.model;
        if source.kind == FileKind::Workspace
            && !trusted
            && let Some(url) = &section.base_url
            && !crate::provider::http::is_loopback_url(url)
        {
            return Err(ConfigError::UntrustedModelUrl {
                file: source.path.clone(),
                url: url.clone(),
                workspace: workspace.to_path_buf(),
            });
        }
        let untrusted = source.kind == FileKind::Workspace && !trusted;
        if let Some(provider) = section.provider {
            model.provider = Some(provider);
            model.provider_untrusted = untrusted.then(|| file::UntrustedChoice {
                file: source.path.clone(),
                line: key_line(&source.text, "provider"),
                workspace: workspace.to_path_buf(),
            });
            if !untrusted {
                model.users_provider = Some(provider);
            }
        }
        if section.name.is_some() {
            model.name = section.name.clone();
        }
        if section.base_url.is_some() {
            model.base_url = section.base_url.clone();
            model.base_url_yours = !untrusted;
            model.base_url_untrusted = untrusted.then(|| file::UntrustedChoice {
                file: source.path.clone(),
                line: key_line(&source.text, "base_url"),
                workspace: workspace.to_path_buf(),
            });
        }
        if section.context_window.is_some() {
            model.context_window = section.context_window;
        }
        if let Some(seconds) = section.content_timeout {
            let default =
                std::num::NonZeroU64::new(crate::provider::http::DEFAULT_CONTENT_TIMEOUT.as_secs())
                    .unwrap_or(seconds);
            model.content_timeout = Some(match model.content_timeout {
                _ if !untrusted => seconds,
                before => seconds.min(before.unwrap_or(default)),
            });
        }
        if let Some(prices) = section.prices {
            model.prices = Some(match model.prices {
                Some(before) if untrusted => before.at_least(prices),
                _ => prices,
            });
        }
    }
    Ok(model)
}

/// Whether `[model.prices]` came from the user's config or a trusted
/// workspace: a cost budget counts only with prices the user set (an
/// untrusted file may only raise them, and could otherwise set them to 0).
pub(super) fn prices_from_you(sources: &[Source], trusted: bool) -> bool {
    sources.iter().any(|source| {
        source.file.model.prices.is_some() && (source.kind != FileKind::Workspace || trusted)
    })
}

/// The line of `text` (1-based) where `key` is set under `[model]`, for a
/// message naming it; 1 when it cannot be told.
fn key_line(text: &str, key: &str) -> usize {
    let mut in_model = false;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with('[') {
            in_model = line.trim_end() == "[model]";
        } else if in_model
            && line
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        {
            return index + 1;
        }
    }
    1
}
