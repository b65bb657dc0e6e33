//! Which model `toolhost run` talks to. Provider and name: flags, then
//! `[model]` of the config files, then (when resuming) the session's
//! recorded ones; `--script` alone means the scripted model. The API root:
//! `--base-url`, then `[model] base_url`, then the user's environment
//! (`OPENAI_BASE_URL`, for openai), then the resumed session's recorded
//! one, then the vendor's. Keys come only from the environment
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), and go only to a server the
//! user named (a flag, their environment, their own config or a trusted
//! workspace's) or to the provider's own API: a server an untrusted
//! workspace's file or session record chose gets none ([`key_withheld`]).
//!
//! A session file may have come with the repository, like the workspace's
//! `toolhost.toml`: the server it recorded is used only when it is on this
//! machine, is the provider's own, or the workspace is trusted; otherwise
//! the run stops before any request (so before the key is sent anywhere).
//!
//! Only the precedence and that check live here; building and checking a
//! client (a missing key at the vendor's URL, a bad script) is the
//! provider's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::{ModelSection, ProviderKind};
use crate::provider::http::HttpOptions;
use crate::provider::scripted::ScriptedModel;
use crate::provider::{Model, ProviderError, anthropic, openai};

/// What the command line says about the model.
#[derive(Debug, Clone, Default)]
pub struct ModelFlags {
    /// The command that asks (`run`, `chat`), for its advice.
    pub command: &'static str,
    pub provider: Option<ProviderKind>,
    pub script: Option<PathBuf>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// `command` with the scripted model of `hello.json`, as the user would
/// type it.
fn try_scripted(command: &str) -> String {
    match command {
        "chat" => "toolhost chat --script hello.json".into(),
        _ => format!("toolhost {command} --script hello.json \"hi\""),
    }
}

/// The model a resumed session recorded, and where the record came from.
#[derive(Debug, Clone, Copy)]
pub struct RecordedModel<'a> {
    pub provider: &'a str,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    /// The session file.
    pub file: &'a Path,
    /// The workspace of the run, and whether the user trusts it: only then
    /// may a session file there send the traffic to another machine.
    pub workspace: &'a Path,
    pub trusted: bool,
}

/// Why no model could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum ModelChoiceError {
    #[error(
        "no model name: pass --model NAME (e.g. gpt-4o, claude-sonnet-4-5, qwen2.5-coder) or set \
         `name` under [model] in toolhost.toml"
    )]
    NoName,
    #[error(
        "`--provider scripted` needs `--script FILE`: a JSON file of the replies to play, such \
         as `{{\"turns\": [{{\"text\": \"Hello.\"}}]}}` (`toolhost run --help` says more)"
    )]
    NoScript,
    #[error(
        "`{RETRY_BACKOFF_ENV}` is `{value}`; set it to the milliseconds to wait before the first \
         retry of a model request (each further retry waits twice as long, up to 30 s), or unset \
         it for the default of 500"
    )]
    RetryBackoff { value: String },
    #[error(
        "no model configured: pass `--provider openai --model NAME` (OPENAI_API_KEY; \
         OPENAI_BASE_URL or --base-url for Ollama, vLLM, llama.cpp), `--provider anthropic \
         --model NAME` (ANTHROPIC_API_KEY), or `--script FILE` to play a scripted model offline \
         (try it here: `echo '{{\"turns\": [{{\"text\": \"Hello from a scripted model.\"}}]}}' > \
         hello.json`, then `{}`)",
        try_scripted(command)
    )]
    NoModel {
        /// The command typed (`run`, `chat`), which the advice repeats.
        command: &'static str,
    },
    #[error(
        "the resumed session `{}` was recorded with the model server `{url}`, which would receive \
         your prompts and API key, and a session file is not trusted to choose that (it may have \
         come with the repository). If you meant that server, name it yourself (add \
         `--base-url {url}`), or trust this workspace (`toolhost trust {}`)",
        .file.display(), .workspace.display()
    )]
    UntrustedSessionUrl {
        file: PathBuf,
        url: String,
        workspace: PathBuf,
    },
    #[error(
        "{chooser}, which would send your {key} to the model server you chose \
         (`{url}`, from {from}), and {whom} is not trusted to choose which key goes where (it may \
         have come with the repository). Pass `--provider NAME` yourself (the API that server \
         speaks), or trust this workspace (`toolhost trust {}`)",
        .workspace.display()
    )]
    UntrustedProvider {
        /// What chose which provider: "`FILE:LINE` sets [model] provider
        /// = \"anthropic\"" or "the resumed session `FILE` was recorded
        /// with the provider `anthropic`".
        chooser: String,
        whom: &'static str,
        key: &'static str,
        url: String,
        from: &'static str,
        workspace: PathBuf,
    },
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

impl ModelChoiceError {
    /// True when the command line is what is missing (exit code 2).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            ModelChoiceError::Provider(_)
                | ModelChoiceError::UntrustedSessionUrl { .. }
                | ModelChoiceError::UntrustedProvider { .. }
        )
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
        .or(from_session.map(|(kind, _)| kind))
        // A server named without a wire API: Ollama, vLLM and llama.cpp
        // speak OpenAI's.
        .or((flags.base_url.is_some() || section.base_url.is_some())
            .then_some(ProviderKind::Openai));
    let Some(kind) = kind else {
        let command = flags.command;
        return Err(ModelChoiceError::NoModel { command });
    };
    let from_session = from_session.map(|(_, recorded)| recorded);
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let initial_backoff = retry_backoff(env(RETRY_BACKOFF_ENV))?;
    check_key_choice(kind, flags, section, from_session, &env)?;
    let name = || {
        flags
            .model
            .clone()
            .or_else(|| section.name.clone())
            .or_else(|| from_session.and_then(|r| r.model.map(str::to_owned)))
            .ok_or(ModelChoiceError::NoName)
    };
    let base_url = |default: &str, env_url: Option<String>| {
        choose_base_url(
            BaseUrls {
                flag: flags.base_url.clone(),
                config: section.base_url.clone(),
                env: env_url,
                session: from_session,
            },
            default,
        )
    };
    Ok(match kind {
        ProviderKind::Scripted => {
            let script = flags.script.as_ref().ok_or(ModelChoiceError::NoScript)?;
            Model::Scripted(ScriptedModel::from_file(script)?)
        }
        ProviderKind::Openai => {
            let env_url = env("OPENAI_BASE_URL");
            // The flag wins over the config, the config over the environment.
            let users =
                flags.base_url.is_some() || (section.base_url.is_none() && env_url.is_some());
            let url = base_url(openai::DEFAULT_BASE_URL, env_url)?;
            let mut http = HttpOptions::new(url);
            http.initial_backoff = initial_backoff;
            http.key_withheld = key_withheld(
                &http.base_url,
                openai::DEFAULT_BASE_URL,
                openai::API_KEY_ENV,
                users,
                section,
                from_session,
            );
            if http.key_withheld.is_none() {
                http.api_key = env(openai::API_KEY_ENV);
            }
            Model::OpenAi(openai::OpenAiClient::new(http, name()?)?)
        }
        ProviderKind::Anthropic => {
            let url = base_url(anthropic::DEFAULT_BASE_URL, None)?;
            let mut http = HttpOptions::new(url);
            http.initial_backoff = initial_backoff;
            http.key_withheld = key_withheld(
                &http.base_url,
                anthropic::DEFAULT_BASE_URL,
                anthropic::API_KEY_ENV,
                flags.base_url.is_some(),
                section,
                from_session,
            );
            if http.key_withheld.is_none() {
                http.api_key = env(anthropic::API_KEY_ENV);
            }
            Model::Anthropic(anthropic::AnthropicClient::new(http, name()?)?)
        }
    })
}

/// Which key goes to which server is the user's: a provider an untrusted
/// file chose (the workspace's `[model] provider`, a resumed session's
/// record) may not send a key to a server the user chose (`--base-url`,
/// their config's `base_url`, `OPENAI_BASE_URL`) unless that server is the
/// provider's own API, or the user's own choices give the same provider.
/// With no server of the user's, the provider's own API (or the
/// workspace's server on this machine) is used, which is fine.
fn check_key_choice(
    kind: ProviderKind,
    flags: &ModelFlags,
    section: &ModelSection,
    from_session: Option<RecordedModel<'_>>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ModelChoiceError> {
    let (default, key) = match kind {
        ProviderKind::Openai => (openai::DEFAULT_BASE_URL, openai::API_KEY_ENV),
        ProviderKind::Anthropic => (anthropic::DEFAULT_BASE_URL, anthropic::API_KEY_ENV),
        ProviderKind::Scripted => return Ok(()),
    };
    // Who chose the provider, when it was not the user.
    let (chooser, whom, workspace) = if flags.provider.is_some() {
        return Ok(());
    } else if section.provider.is_some() {
        let Some(choice) = &section.provider_untrusted else {
            return Ok(());
        };
        (
            format!(
                "`{}:{}` sets [model] provider = \"{}\"",
                choice.file.display(),
                choice.line,
                kind.name()
            ),
            "a workspace's own toolhost.toml",
            choice.workspace.clone(),
        )
    } else if let Some(session) = from_session.filter(|s| !s.trusted) {
        (
            format!(
                "the resumed session `{}` was recorded with the provider `{}`",
                session.file.display(),
                kind.name()
            ),
            "a session file",
            session.workspace.to_path_buf(),
        )
    } else {
        return Ok(());
    };
    // The server, when the user chose it.
    let users = if let Some(url) = &flags.base_url {
        Some((url.clone(), "--base-url"))
    } else if let Some(url) = &section.base_url {
        section
            .base_url_yours
            .then(|| (url.clone(), "your config.toml"))
    } else if kind == ProviderKind::Openai {
        env("OPENAI_BASE_URL").map(|url| (url, "OPENAI_BASE_URL"))
    } else {
        None
    };
    let Some((url, from)) = users else {
        return Ok(());
    };
    // No key, nothing to send (a server of the user's that needs none).
    if env(key).is_none() {
        return Ok(());
    }
    let own_api = url.trim_end_matches('/') == default.trim_end_matches('/');
    // What the user's own choices give: their config's provider, else the
    // wire API of a server named without one.
    let users_kind = section.users_provider.unwrap_or(ProviderKind::Openai);
    if own_api || users_kind == kind {
        return Ok(());
    }
    Err(ModelChoiceError::UntrustedProvider {
        chooser,
        whom,
        key,
        url,
        from,
        workspace,
    })
}

/// Where the user's key may go: only to a server the user named (a flag,
/// their environment, their own config or a trusted workspace's) or to the
/// provider's own API. A server an untrusted file chose (the workspace's
/// `[model] base_url`, a resumed session's record), which can only be on
/// this machine, gets no key: any local user may own a port there. `Some`
/// says so, with the fix, for the error a server that wants a key causes.
/// `users` is whether a flag or the environment named the server.
fn key_withheld(
    url: &str,
    default: &str,
    key: &str,
    users: bool,
    section: &ModelSection,
    from_session: Option<RecordedModel<'_>>,
) -> Option<String> {
    if users || url.trim_end_matches('/') == default.trim_end_matches('/') {
        return None;
    }
    let (chooser, whom, workspace) = if section.base_url.is_some() {
        let choice = section.base_url_untrusted.as_ref()?;
        (
            format!(
                "`{}:{}` sets [model] base_url = \"{url}\"",
                choice.file.display(),
                choice.line
            ),
            "a workspace's own toolhost.toml",
            choice.workspace.clone(),
        )
    } else {
        let session = from_session.filter(|s| !s.trusted && s.base_url == Some(url))?;
        (
            format!(
                "the resumed session `{}` was recorded with the model server `{url}`",
                session.file.display()
            ),
            "a session file",
            session.workspace.to_path_buf(),
        )
    };
    Some(format!(
        "the server wants an API key, and toolhost did not send your {key}: {chooser}, and {whom} \
         is not trusted to choose where your key goes (any user of this machine may listen on a \
         port of it). If that server is yours, name it yourself (add `--base-url {url}`), or \
         trust this workspace (`toolhost trust {}`)",
        workspace.display()
    ))
}

/// Where an API root may come from, in precedence order.
struct BaseUrls<'a> {
    /// `--base-url`.
    flag: Option<String>,
    /// `[model] base_url` of the config files (an untrusted workspace's was
    /// checked when the files were read).
    config: Option<String>,
    /// The user's environment (`OPENAI_BASE_URL`).
    env: Option<String>,
    /// The resumed session's record, when its provider is the one used.
    session: Option<RecordedModel<'a>>,
}

/// The API root: the first of `urls` that is set, else the provider's
/// `default`. A session's recorded server is refused unless it is on this
/// machine, is the provider's own, or the workspace is trusted.
fn choose_base_url(urls: BaseUrls<'_>, default: &str) -> Result<String, ModelChoiceError> {
    if let Some(url) = urls.flag.or(urls.config).or(urls.env) {
        return Ok(url);
    }
    let Some(session) = urls.session else {
        return Ok(default.to_owned());
    };
    let Some(url) = session.base_url else {
        return Ok(default.to_owned());
    };
    let own = url.trim_end_matches('/') == default.trim_end_matches('/');
    if own || session.trusted || crate::provider::http::is_loopback_url(url) {
        return Ok(url.to_owned());
    }
    Err(ModelChoiceError::UntrustedSessionUrl {
        file: session.file.to_path_buf(),
        url: url.to_owned(),
        workspace: session.workspace.to_path_buf(),
    })
}

/// The environment variable that sets the wait before a model request's
/// first retry, in milliseconds: a user behind a rate limit may want
/// longer, a test against a refusing server far shorter.
const RETRY_BACKOFF_ENV: &str = "TOOLHOST_RETRY_BACKOFF_MS";

/// `$TOOLHOST_RETRY_BACKOFF_MS` as a duration; the default when unset.
fn retry_backoff(value: Option<String>) -> Result<Duration, ModelChoiceError> {
    let Some(value) = value else {
        return Ok(crate::provider::http::DEFAULT_INITIAL_BACKOFF);
    };
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| ModelChoiceError::RetryBackoff { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_backoff_is_milliseconds_or_the_default() {
        assert_eq!(
            retry_backoff(None).expect("default"),
            crate::provider::http::DEFAULT_INITIAL_BACKOFF
        );
        assert_eq!(
            retry_backoff(Some("10".into())).expect("ten"),
            Duration::from_millis(10)
        );
        assert_eq!(
            retry_backoff(Some("soon".into()))
                .expect_err("not a number")
                .to_string(),
            "`TOOLHOST_RETRY_BACKOFF_MS` is `soon`; set it to the milliseconds to wait before the \
             first retry of a model request (each further retry waits twice as long, up to 30 s), \
             or unset it for the default of 500"
        );
    }

    fn recorded(base_url: Option<&str>, trusted: bool) -> RecordedModel<'_> {
        RecordedModel {
            provider: "openai",
            model: Some("gpt-4o"),
            base_url,
            file: Path::new("/work/repo/.toolhost/sessions/s.jsonl"),
            workspace: Path::new("/work/repo"),
            trusted,
        }
    }

    fn urls<'a>(
        flag: Option<&str>,
        config: Option<&str>,
        env: Option<&str>,
        session: Option<RecordedModel<'a>>,
    ) -> BaseUrls<'a> {
        BaseUrls {
            flag: flag.map(str::to_owned),
            config: config.map(str::to_owned),
            env: env.map(str::to_owned),
            session,
        }
    }

    const DEFAULT: &str = openai::DEFAULT_BASE_URL;
    const REMOTE: &str = "https://collector.example/v1";

    #[test]
    fn the_flag_then_the_config_then_the_environment_then_the_session() {
        let session = Some(recorded(Some(REMOTE), true));
        let pick = |flag, config, env| choose_base_url(urls(flag, config, env, session), DEFAULT);
        let ok = |r: Result<String, ModelChoiceError>| r.expect("chosen");
        assert_eq!(ok(pick(Some("f"), Some("c"), Some("e"))), "f");
        assert_eq!(ok(pick(None, Some("c"), Some("e"))), "c");
        assert_eq!(ok(pick(None, None, Some("e"))), "e");
        assert_eq!(ok(pick(None, None, None)), REMOTE);
        assert_eq!(
            ok(choose_base_url(urls(None, None, None, None), DEFAULT)),
            DEFAULT
        );
    }

    #[test]
    fn an_untrusted_provider_may_not_send_its_key_to_a_server_the_user_chose() {
        let section = |base_url: Option<&str>, yours: bool| ModelSection {
            provider: Some(ProviderKind::Anthropic),
            base_url: base_url.map(str::to_owned),
            base_url_yours: yours,
            provider_untrusted: Some(super::super::file::UntrustedChoice {
                file: PathBuf::from("/work/repo/toolhost.toml"),
                line: 2,
                workspace: PathBuf::from("/work/repo"),
            }),
            ..ModelSection::default()
        };
        let check = |flags: &ModelFlags, section: &ModelSection, env: Option<&str>| {
            check_key_choice(
                ProviderKind::Anthropic,
                flags,
                section,
                None,
                &|name: &str| match name {
                    "OPENAI_BASE_URL" => env.map(str::to_owned),
                    _ => Some("key".to_owned()),
                },
            )
        };
        let no_flags = ModelFlags::default();
        let flag = |url: &str| ModelFlags {
            base_url: Some(url.to_owned()),
            ..ModelFlags::default()
        };
        // No server of the user's: the provider's own API, or the
        // workspace's server on this machine.
        assert!(check(&no_flags, &section(None, false), Some(REMOTE)).is_ok());
        assert!(check(&no_flags, &section(Some("http://127.0.0.1:1"), false), None).is_ok());
        // The user's server, the provider's own API: fine.
        assert!(
            check(
                &flag("https://api.anthropic.com/"),
                &section(None, false),
                None
            )
            .is_ok()
        );
        // The user's server elsewhere: refused, from a flag or their config.
        let err = check(&flag(REMOTE), &section(None, false), None)
            .expect_err("refused")
            .to_string();
        assert!(
            err.starts_with(
                "`/work/repo/toolhost.toml:2` sets [model] provider = \"anthropic\", which would \
                 send your ANTHROPIC_API_KEY to the model server you chose \
                 (`https://collector.example/v1`, from --base-url)"
            ),
            "{err}"
        );
        assert!(check(&no_flags, &section(Some(REMOTE), true), None).is_err());
        // The user's own provider is the same: nothing changes hands.
        let mut same = section(Some(REMOTE), true);
        same.users_provider = Some(ProviderKind::Anthropic);
        assert!(check(&no_flags, &same, None).is_ok());
        // No key of that provider set: nothing to send.
        let no_key = check_key_choice(
            ProviderKind::Anthropic,
            &flag(REMOTE),
            &section(None, false),
            None,
            &|_| None,
        );
        assert!(no_key.is_ok());
        // A flag naming the provider is the user's choice.
        let chosen = ModelFlags {
            provider: Some(ProviderKind::Anthropic),
            ..flag(REMOTE)
        };
        assert!(check(&chosen, &section(None, false), None).is_ok());
    }

    #[test]
    fn a_key_goes_only_to_a_server_the_user_named_or_the_vendors() {
        const LOCAL: &str = "http://127.0.0.1:8000/v1";
        let workspace_named = ModelSection {
            base_url: Some(LOCAL.to_owned()),
            base_url_untrusted: Some(super::super::file::UntrustedChoice {
                file: PathBuf::from("/work/repo/toolhost.toml"),
                line: 3,
                workspace: PathBuf::from("/work/repo"),
            }),
            ..ModelSection::default()
        };
        let withheld = |users, section: &ModelSection, session| {
            key_withheld(LOCAL, DEFAULT, "OPENAI_API_KEY", users, section, session)
        };
        assert_eq!(
            withheld(false, &workspace_named, None).as_deref(),
            Some(
                "the server wants an API key, and toolhost did not send your OPENAI_API_KEY: \
                 `/work/repo/toolhost.toml:3` sets [model] base_url = \"http://127.0.0.1:8000/v1\", \
                 and a workspace's own toolhost.toml is not trusted to choose where your key goes \
                 (any user of this machine may listen on a port of it). If that server is yours, \
                 name it yourself (add `--base-url http://127.0.0.1:8000/v1`), or trust this \
                 workspace (`toolhost trust /work/repo`)"
            )
        );
        // Named by a flag or the environment, or by the user's own file.
        assert_eq!(withheld(true, &workspace_named, None), None);
        let users_file = ModelSection {
            base_url: Some(LOCAL.to_owned()),
            base_url_yours: true,
            ..ModelSection::default()
        };
        assert_eq!(withheld(false, &users_file, None), None);
        // A session's record: only an untrusted one is held back.
        let none = ModelSection::default();
        let withheld_for =
            |trusted| withheld(false, &none, Some(recorded(Some(LOCAL), trusted))).is_some();
        assert!(withheld_for(false));
        assert!(!withheld_for(true));
        // The provider's own API always gets the key.
        assert_eq!(
            key_withheld(
                DEFAULT,
                DEFAULT,
                "OPENAI_API_KEY",
                false,
                &none,
                Some(recorded(Some(DEFAULT), false))
            ),
            None
        );
    }

    #[test]
    fn an_untrusted_session_may_name_only_this_machine_or_the_vendor() {
        let pick =
            |url| choose_base_url(urls(None, None, None, Some(recorded(url, false))), DEFAULT);
        for fine in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080/v1",
            "http://[::1]:8080/v1",
            DEFAULT,
            "https://api.openai.com/v1/",
        ] {
            assert_eq!(pick(Some(fine)).expect("allowed"), fine);
        }
        assert_eq!(pick(None).expect("allowed"), DEFAULT);
        for remote in [
            REMOTE,
            "http://10.9.0.1:8080/v1",
            "http://127.0.0.1.example/v1",
            "https://api.anthropic.com",
        ] {
            let err = pick(Some(remote)).expect_err("refused").to_string();
            assert_eq!(
                err,
                format!(
                    "the resumed session `/work/repo/.toolhost/sessions/s.jsonl` was recorded \
                     with the model server `{remote}`, which would receive your prompts and API \
                     key, and a session file is not trusted to choose that (it may have come \
                     with the repository). If you meant that server, name it yourself (add \
                     `--base-url {remote}`), or trust this workspace (`toolhost trust /work/repo`)"
                )
            );
        }
        // The user's own choice of server wins without a check.
        let env = urls(
            None,
            None,
            Some(REMOTE),
            Some(recorded(Some("http://x.example"), false)),
        );
        assert_eq!(choose_base_url(env, DEFAULT).expect("env"), REMOTE);
    }
}
