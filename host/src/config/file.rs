//! The `toolhost.toml` format, as written by users.
//!
//! Unknown keys are errors: a misspelt `wirte = [...]` must not silently
//! leave a tool without the access the user meant to give it (or with more).

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A grant as written, with where in the file it was written.
pub(crate) type GrantList = Option<Vec<Spanned<String>>>;

/// The whole file. Every section is optional.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    #[serde(default)]
    pub(crate) defaults: AccessSection,
    #[serde(default)]
    pub(crate) limits: LimitsSection,
    #[serde(default)]
    pub(crate) tools: BTreeMap<String, ToolSection>,
    #[serde(default)]
    pub(crate) model: ModelSection,
    #[serde(default)]
    pub(crate) sandbox: SandboxSection,
    /// `[plugins.<file stem>]`, e.g. `[plugins.fs]` for `fs.wasm`.
    #[serde(default)]
    pub(crate) plugins: BTreeMap<String, PluginSection>,
    #[serde(default)]
    pub(crate) chat: ChatSection,
    #[serde(default)]
    pub(crate) run: RunSection,
    #[serde(default)]
    pub(crate) network: NetworkSection,
}

/// `[network]`: how tools' granted requests are sent.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct NetworkSection {
    /// PEM certificates to trust besides the system's roots (a company or
    /// a test CA); relative to the file's directory.
    pub(crate) ca_file: Option<Spanned<String>>,
}

/// `[run]`: bounds of one run (one prompt and the work it leads to).
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSection {
    /// Tokens a run may spend, in and out, over all its requests.
    pub(crate) max_tokens_total: Option<std::num::NonZeroU64>,
    /// US dollars a run may spend, at `[model.prices]`.
    #[serde(default, deserialize_with = "positive_dollars")]
    pub(crate) max_cost: Option<f64>,
}

/// A budget in dollars: a number above 0.
fn positive_dollars<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<f64>, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if value.is_finite() && value > 0.0 {
        Ok(Some(value))
    } else {
        Err(serde::de::Error::custom(format!(
            "a cost budget is US dollars above 0; {value} is not"
        )))
    }
}

/// `[chat]`: how a session takes the input typed while it works.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ChatSection {
    /// How many queued messages the loop takes at a time.
    pub delivery: Option<DeliverySetting>,
}

/// `[chat] delivery`: `one-at-a-time` (each queued message answered before
/// the next is sent) or `all`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DeliverySetting {
    OneAtATime,
    All,
}

/// `[plugins.<stem>]`: what the user says about one plugin file.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct PluginSection {
    /// For a component with typed exports: `<prefix>_` before every tool
    /// name it derives.
    pub(crate) prefix: Option<Spanned<String>>,
}

/// How a typed export's parameter is used as a path: `"read"` or `"write"`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PathUse {
    Read,
    Write,
}

/// `[sandbox]`: rules for every tool beyond grants and limits.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxSection {
    /// More paths no tool may change, relative to the workspace. Adds to
    /// the built-in ones; nothing removes those.
    #[serde(default)]
    pub(crate) protect: Vec<String>,
}

/// `[model]`: which model `toolhost run` talks to when no flag says.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// `openai`, `anthropic` or `scripted`; anything else is an error of
    /// the file, at its line.
    pub provider: Option<ProviderKind>,
    /// The model's name, e.g. `gpt-4o` or `claude-sonnet-4-5`.
    pub name: Option<String>,
    /// The API root, e.g. `http://localhost:11434/v1` for Ollama.
    pub base_url: Option<String>,
    /// The cap on one reply, in MiB (default 8): a limit, so an untrusted
    /// workspace's file may only lower it (resolved with the other limits
    /// in `limits.rs`, not merged with the keys above).
    pub max_reply_mib: Option<Spanned<u64>>,
    /// The model's context window in tokens, where the server does not say
    /// it (the vendors' APIs, Ollama).
    pub context_window: Option<std::num::NonZeroU64>,
    /// Seconds a streamed reply may go on without content (default 120);
    /// an untrusted workspace's file may only lower it.
    pub content_timeout: Option<std::num::NonZeroU64>,
    /// `[model.prices]`: US dollars per million tokens, for the cost
    /// figure and a cost budget.
    pub prices: Option<crate::provider::prices::Prices>,
    /// Set when merging the files: `provider` came from a workspace's
    /// file the user does not trust (which key goes where is the user's).
    #[serde(skip)]
    pub provider_untrusted: Option<UntrustedChoice>,
    /// Set when merging the files: the `provider` of the user's own
    /// config (or a trusted workspace's), even when an untrusted file's
    /// came over it.
    #[serde(skip)]
    pub users_provider: Option<ProviderKind>,
    /// Set when merging the files: `base_url` came from the user's own
    /// config (or a trusted workspace's), so the user chose that server.
    #[serde(skip)]
    pub base_url_yours: bool,
    /// Set when merging the files: where an untrusted workspace's file set
    /// `base_url` (the server is on this machine; the user's key is not
    /// sent there).
    #[serde(skip)]
    pub base_url_untrusted: Option<UntrustedChoice>,
}

/// Where an untrusted file set a key: the file, its line and the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntrustedChoice {
    pub file: std::path::PathBuf,
    pub line: usize,
    pub workspace: std::path::PathBuf,
}

impl ProviderKind {
    /// The name as `--provider` and `[model] provider` write it.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Scripted => "scripted",
        }
    }
}

/// The model's wire API, as `--provider` and `[model] provider` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    // Plain comments: clap would show doc comments as the values' help.
    // Chat Completions, and the servers that copy it.
    Openai,
    // Messages.
    Anthropic,
    // Replays `--script`, offline.
    Scripted,
}

/// Directory grants. `None` (key absent) differs from `Some([])`: the
/// built-in default (read `.`) applies only when nothing mentions reads.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct AccessSection {
    pub(crate) read: GrantList,
    pub(crate) write: GrantList,
    /// Network grants, `scheme://host[:port]`.
    pub(crate) net: GrantList,
}

/// Limit overrides; absent keys keep the value from the level above. Each
/// value keeps where it was written, for the notice when it is clamped.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsSection {
    pub(crate) fuel: Option<Spanned<u64>>,
    pub(crate) timeout_ms: Option<Spanned<u64>>,
    pub(crate) memory_mib: Option<Spanned<u64>>,
    pub(crate) output_kib: Option<Spanned<u64>>,
    pub(crate) write_mib: Option<Spanned<u64>>,
    pub(crate) net_mib: Option<Spanned<u64>>,
    pub(crate) net_requests: Option<Spanned<u64>>,
    pub(crate) net_connections: Option<Spanned<u64>>,
    /// Only in `[limits]`: MiB a plugin file may have (not per tool).
    pub(crate) plugin_file_mib: Option<Spanned<u64>>,
    /// Only in `[limits]`: plugins an untrusted workspace ships that one
    /// start loads (not per tool).
    pub(crate) shipped_plugins: Option<Spanned<u64>>,
}

/// `[tools.<name>]`: grants and limits of one tool.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolSection {
    pub(crate) read: GrantList,
    pub(crate) write: GrantList,
    pub(crate) net: GrantList,
    /// Host variables this tool may read, by name.
    pub(crate) env: GrantList,
    /// Native programs this tool may run, by name on `PATH` or absolute.
    pub(crate) exec: GrantList,
    /// `[tools.<name>.headers."https://api.example.com"]`: headers the host
    /// adds to the tool's requests matching the pattern, `${VAR}` read from
    /// toolhost's environment.
    pub(crate) headers: Option<BTreeMap<String, BTreeMap<String, Spanned<String>>>>,
    #[serde(default)]
    pub(crate) limits: LimitsSection,
    /// For a tool derived from typed exports: which parameters are paths.
    pub(crate) paths: Option<BTreeMap<String, PathUse>>,
    /// For a tool derived from typed exports: it changes nothing.
    pub(crate) read_only: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section() {
        let file: ConfigFile = toml::from_str(
            r#"
            [defaults]
            read = ["src"]

            [limits]
            fuel = 1000
            timeout_ms = 500

            [tools.write_file]
            write = ["out"]
            limits = { output_kib = 4 }
            "#,
        )
        .expect("valid");
        let paths = |list: &GrantList| -> Option<Vec<String>> {
            list.as_ref()
                .map(|l| l.iter().map(|s| s.get_ref().clone()).collect())
        };
        assert_eq!(paths(&file.defaults.read), Some(vec!["src".to_string()]));
        assert_eq!(file.defaults.write, None);
        assert_eq!(file.limits.fuel.map(Spanned::into_inner), Some(1000));
        assert_eq!(
            paths(&file.tools["write_file"].write),
            Some(vec!["out".to_string()])
        );
        let output = file.tools["write_file"].limits.output_kib.clone();
        assert_eq!(output.map(Spanned::into_inner), Some(4));
    }

    #[test]
    fn the_provider_is_one_of_three_names() {
        let file: ConfigFile =
            toml::from_str("[model]\nprovider = \"anthropic\"\n").expect("valid");
        assert_eq!(file.model.provider, Some(ProviderKind::Anthropic));
        let err = toml::from_str::<ConfigFile>("[model]\nprovider = \"OpenAI\"\n")
            .expect_err("not a provider");
        let text = err.to_string();
        assert!(text.contains("line 2"), "{text}");
        assert!(text.contains("unknown variant `OpenAI`"), "{text}");
    }

    #[test]
    fn a_misspelt_key_is_an_error_naming_it() {
        let err = toml::from_str::<ConfigFile>("[tools.write_file]\nwirte = [\"out\"]\n")
            .expect_err("typo");
        assert!(err.to_string().contains("wirte"), "{err}");
    }
}
