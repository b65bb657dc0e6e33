//! `toolhost.toml` + the user's config + command-line flags + environment
//! → one resolved [`SandboxOptions`].
//!
//! Grant rules (deny by default):
//! - a tool's read grants are the union of `[defaults] read` and
//!   `[tools.<name>] read` of the user's config file and of the workspace's,
//!   `--allow-read PATH` and `--allow-read <name>=PATH`; when none of these
//!   mentions reads for the tool, it may read the workspace (`.`);
//! - write grants are the union of the same `write` sources; none by default;
//!   an untrusted workspace's `[defaults] write` is not applied (a notice
//!   says so): it would give every tool, the user's own code tools and
//!   plugins included, write access; its `[tools.<name>] write` gives the
//!   tool it names access inside the workspace;
//! - a write grant implies read access to that directory.
//!
//! Every grant must name an existing directory inside the workspace, unless
//! the user wrote an absolute path: in a flag or their own config file, or
//! in the workspace's file once they trust the workspace (`toolhost trust`).
//! Limits apply in order: built-in defaults, the user's `[limits]`, the
//! workspace's `[limits]`, then each file's `[tools.<name>.limits]`; until
//! the user trusts the workspace, its file may only lower them (a higher
//! value is clamped, with a notice: [`limits`]); so is `[model]
//! max_reply_mib`, the cap on one model reply. The other `[model]` keys are the
//! workspace's over the user's, and an untrusted workspace's `base_url`
//! must be on this machine; [`model`] adds the flags, the environment and a
//! resumed session's recorded model, whose server is checked the same way.
//! Problems are errors naming the grant and where it came from.

mod error;
pub(crate) mod file;
mod grants;
mod limits;
mod model;
mod network;
mod origin;
mod protected;
mod source;
pub mod user;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::sandbox::{
    Access, Grant, Policy, Protection, SandboxOptions, ShippedPlugins, ShippedTool, Tiering,
    ToolPolicy, TypedConfig, TypedToolConfig, simplify_grants,
};
use crate::workspace::Layout;
pub use error::ConfigError;
use file::PathUse;
pub use file::{ChatSection, DeliverySetting, ModelSection, ProviderKind, UntrustedChoice};
use grants::GrantSpec;
pub use model::{ModelChoiceError, ModelFlags, RecordedModel, resolve_model};
pub use origin::GrantOrigin;
use origin::{FileKind, line_of};
use protected::{Protect, protected_paths};
use source::{DEFAULTS_WRITE, Source};
pub use user::TrustList;

/// What the user asked for, before resolution: flags and their sources.
#[derive(Debug, Clone, Default)]
pub struct ConfigInputs {
    pub workspace: PathBuf,
    /// An explicit `--config FILE`; it must exist.
    pub config_file: Option<PathBuf>,
    /// The user config directory; `None` reads no user config and trusts
    /// no workspace. [`user::config_dir`] finds the usual one.
    pub user_config_dir: Option<PathBuf>,
    /// `--plugins DIR`, in order; empty means the defaults: the
    /// user's own `plugins/`, then the workspace's `.toolhost/plugins`
    /// (the workspace's first when the user trusts it).
    pub plugin_dirs: Vec<PathBuf>,
    /// `--allow-read [TOOL=]PATH`.
    pub allow_read: Vec<String>,
    /// `--allow-write [TOOL=]PATH`.
    pub allow_write: Vec<String>,
    /// `--allow-net [TOOL=]PATTERN`.
    pub allow_net: Vec<String>,
    /// `--cache-dir DIR`; falls back to the environment, then the user's cache.
    pub cache_dir: Option<PathBuf>,
    /// `--no-cache`: compile every plugin every time.
    pub no_cache: bool,
    /// Paths toolhost writes that the user named on the command line
    /// (`--session-dir`, `--http-token-file`): no tool may change them, so
    /// none can move them or put a link where the host will write.
    pub host_writes: Vec<PathBuf>,
}

/// The resolved configuration: the sandbox's options and the `[model]`
/// section for `toolhost run`.
#[derive(Debug)]
pub struct Resolved {
    pub sandbox: SandboxOptions,
    /// The workspace config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// The `[model]` section, for `toolhost run`: the workspace's keys over
    /// the user's.
    pub model: ModelSection,
    /// Whether the user trusts the workspace, so its own files (config,
    /// session files) may widen access.
    pub trusted: bool,
    /// The cap on one model reply, in bytes: `[model] max_reply_mib` of
    /// the files (an untrusted workspace's only lowers it), else 8 MiB.
    pub max_reply_bytes: u64,
    /// The `[chat]` section: the workspace's keys over the user's (none of
    /// them widens access).
    pub chat: ChatSection,
    /// `[run] max_tokens_total`: the lowest any file gives (a budget only
    /// stops a run sooner, so a workspace's may lower the user's).
    pub max_tokens_total: Option<u64>,
    /// `[run] max_cost`, in dollars: the lowest any file gives.
    pub max_cost: Option<f64>,
    /// Whether `[model.prices]` came from the user's config or a trusted
    /// workspace: a cost budget counts only with prices the user set (an
    /// untrusted file may only raise them, and could otherwise set them
    /// to 0).
    pub prices_from_you: bool,
    /// What the user should know about the configuration: each limit an
    /// untrusted workspace file asked to raise, and what applies instead.
    pub notices: Vec<String>,
}

/// Standard tools that work on no files (`fetch` reaches only the
/// network): they get no directory unless one is granted to them by name.
const FILELESS_TOOLS: &[&str] = &["fetch"];

/// Reads the config files and merges them with the flags.
pub fn resolve(inputs: &ConfigInputs) -> Result<Resolved, ConfigError> {
    let workspace = inputs
        .workspace
        .canonicalize()
        .and_then(|p| {
            if p.is_dir() {
                Ok(p)
            } else {
                Err(std::io::Error::other("not a directory"))
            }
        })
        .map_err(|source| ConfigError::Workspace {
            path: inputs.workspace.clone(),
            source,
        })?;
    Layout::of(&workspace).check_state_links()?;

    let trust = match &inputs.user_config_dir {
        Some(dir) => TrustList::load(dir)?,
        None => TrustList::empty(),
    };
    let trusted = trust.trusts(&workspace);
    let mut sources = Vec::new();
    if let Some(dir) = &inputs.user_config_dir {
        sources.extend(read_source(
            FileKind::User,
            dir.join(user::CONFIG_FILE),
            false,
        )?);
    }
    let (workspace_file, required) = match &inputs.config_file {
        Some(path) => (path.clone(), true),
        None => (Layout::of(&workspace).config_file(), false),
    };
    let workspace_source = read_source(FileKind::Workspace, workspace_file, required)?;
    let config_file = workspace_source.as_ref().map(|s| s.path.clone());
    sources.extend(workspace_source);

    let model = merged_model(&sources, &workspace, trusted)?;
    let user_file = inputs
        .user_config_dir
        .as_ref()
        .map(|dir| dir.join(user::CONFIG_FILE));
    let mut limits = limits::LimitChain::new(&sources, trusted, &workspace, user_file);
    let defaults_limits = limits.defaults()?;
    let max_reply_bytes = limits.max_reply_bytes()?;

    let (global_read, tool_read) =
        grants::from_flags(&inputs.allow_read, "--allow-read", Access::Read);
    let (global_write, tool_write) =
        grants::from_flags(&inputs.allow_write, "--allow-write", Access::Write);

    let (global_net, tool_net) = network::from_flags(&inputs.allow_net);

    let mentioned: BTreeSet<String> = sources
        .iter()
        .flat_map(|s| s.file.tools.keys().cloned())
        .chain(tool_read.keys().cloned())
        .chain(tool_write.keys().cloned())
        .chain(tool_net.keys().cloned())
        .chain(FILELESS_TOOLS.iter().map(|t| t.to_string()))
        .chain(crate::sandbox::CODE_TOOLS.iter().map(|t| t.to_string()))
        .collect();

    let cache_dir = if inputs.no_cache {
        None
    } else {
        inputs.cache_dir.clone().or_else(default_cache_dir)
    };
    // git's configuration, with the environment toolhost started in.
    let git_seen = crate::sandbox::git_config::seen(&workspace);
    let protected = protected_paths(
        &sources,
        &Protect {
            workspace: &workspace,
            config_file: inputs.config_file.as_deref(),
            host_writes: &inputs.host_writes,
            // `--plugins DIR`: a `.wasm` dropped there loads at the next start.
            own_dirs: inputs
                .user_config_dir
                .iter()
                .chain(cache_dir.iter())
                .chain(inputs.plugin_dirs.iter())
                .cloned()
                .collect(),
            git: &git_seen,
        },
    );
    let protection = Protection::new(&workspace, protected.clone());
    // Write grants on the command line of directories still to be made.
    let mut created = Vec::new();
    for spec in global_write.iter().chain(tool_write.values().flatten()) {
        let is_protected = |path: &Path| protection.names_protected(path);
        created.extend(grants::create_missing(spec, &workspace, &is_protected)?);
    }
    // An untrusted workspace may not give every tool write access: that
    // would reach tools it does not know of (the user's own code tools and
    // plugins). It may still name the tools its project needs.
    let withheld = |spec: &GrantSpec| {
        !trusted
            && spec.access == Access::Write
            && matches!(&spec.origin, GrantOrigin::WorkspaceConfig { section, .. }
                if section == DEFAULTS_WRITE)
    };
    let mut withheld_writes = Vec::new();
    for spec in sources.iter().flat_map(|s| s.grants(None)) {
        if !withheld(&spec) {
            continue;
        }
        // What the grant would be wrong in is said first, as for any grant.
        grants::resolve(&spec, &workspace, trusted, &|path: &Path| {
            protection.names_protected(path)
        })?;
        withheld_writes.push(format!(
            "write grant `{}` (from {}) is not applied: a workspace's own toolhost.toml may not give \
             every tool write access (it may have come with the repository, and every tool includes \
             your own). To allow it, pass it yourself (`--allow-write {}`), name the tools that need \
             it under [tools.NAME] write, or trust this workspace (`toolhost trust {}`)",
            spec.path,
            spec.origin,
            spec.path,
            workspace.display()
        ));
    }
    let grants_for = |tool: Option<&str>| -> Result<(Vec<Grant>, Vec<PathBuf>), ConfigError> {
        let mut specs: Vec<GrantSpec> = sources
            .iter()
            .flat_map(|s| s.grants(tool))
            .filter(|spec| !withheld(spec))
            .collect();
        specs.extend(global_read.iter().cloned());
        specs.extend(global_write.iter().cloned());
        if let Some(tool) = tool {
            specs.extend(tool_read.get(tool).into_iter().flatten().cloned());
            specs.extend(tool_write.get(tool).into_iter().flatten().cloned());
        }
        // A tool that works on no files gets only the directories granted
        // to it by name: not the defaults, not the workspace.
        if let Some(tool) = tool.filter(|t| FILELESS_TOOLS.contains(t)) {
            specs.retain(|spec| spec.names(tool));
        }
        let fileless = tool.is_some_and(|t| FILELESS_TOOLS.contains(&t));
        let reads_mentioned = fileless
            || sources.iter().any(|s| s.mentions_reads(tool))
            || specs.iter().any(|s| {
                s.access == Access::Read && matches!(s.origin, GrantOrigin::CommandLine { .. })
            });
        if !reads_mentioned {
            specs.push(GrantSpec {
                path: ".".into(),
                origin: GrantOrigin::Default,
                access: Access::Read,
                tool: None,
            });
        }
        let is_protected = |path: &Path| protection.names_protected(path);
        let mut resolved = Vec::new();
        let mut lifted = Vec::new();
        let mut lift_specs = Vec::new();
        for spec in &specs {
            match grants::resolve(spec, &workspace, trusted, &is_protected)? {
                grants::Resolved::Grant(grant) => {
                    // A protected directory the user granted by name may be
                    // changed by this tool; the workspace's own config
                    // cannot lift anything.
                    if spec.origin.is_users_own()
                        && grant.access == Access::Write
                        && is_protected(&grant.host_path)
                    {
                        lifted.push(grant.host_path.clone());
                    }
                    resolved.push(grant);
                }
                grants::Resolved::Lift(path) => {
                    lifted.push(path.clone());
                    lift_specs.push((spec, path));
                }
            }
        }
        // A lifted file is written through a grant of a directory holding
        // it; without one the lift would do nothing, so say so.
        for (spec, path) in lift_specs {
            let writable = resolved
                .iter()
                .any(|g| g.access == Access::Write && path.starts_with(&g.host_path));
            if !writable {
                let tool = spec
                    .tool
                    .as_deref()
                    .map_or(String::new(), |t| format!("{t}="));
                return Err(ConfigError::Grant {
                    grant: spec.path.clone(),
                    origin: spec.origin.clone(),
                    problem: format!(
                        "is not a directory: it lifts the protection of `{}`, but the tool also needs \
                         write access to a directory holding it; add `--allow-write {tool}.` (or a \
                         narrower directory)",
                        spec.path
                    ),
                });
            }
        }
        Ok((simplify_grants(resolved), lifted))
    };

    let mut net_notices = Vec::new();
    let mut net_for = |tool: Option<&str>| {
        let mut specs: Vec<_> = sources
            .iter()
            .flat_map(|s| network::from_source(s, tool))
            .collect();
        specs.extend(global_net.iter().cloned());
        if let Some(tool) = tool {
            specs.extend(tool_net.get(tool).into_iter().flatten().cloned());
        }
        network::resolve(&specs, trusted, &workspace, tool, &mut net_notices)
    };

    let (grants, lifted) = grants_for(None)?;
    let defaults = ToolPolicy {
        grants,
        limits: defaults_limits,
        lifted,
        net: net_for(None)?,
        credentials: Vec::new(),
    };
    let mut per_tool = BTreeMap::new();
    for tool in &mentioned {
        let tool_limits = limits.for_tool(defaults_limits, tool)?;
        let (grants, lifted) = grants_for(Some(tool))?;
        per_tool.insert(
            tool.clone(),
            ToolPolicy {
                grants,
                limits: tool_limits,
                lifted,
                net: net_for(Some(tool))?,
                credentials: network::credentials(&sources, tool, trusted, &workspace, &|name| {
                    std::env::var(name).ok()
                })?,
            },
        );
    }
    let plugin_file_limit = limits.plugin_file()?;
    let shipped_plugins_limit = limits.shipped_plugins()?;
    let mut notices = limits.into_notices();
    notices.extend(withheld_writes);
    notices.extend(created);
    notices.extend(net_notices);
    let ca_file = network::ca_file(&sources, trusted, &workspace)?;

    // The default plugins directory is the workspace's own: until the
    // user trusts the workspace, what it holds came with the repository
    // (but for the files the user put there with `plugin add`).
    let shipped_plugins = if inputs.plugin_dirs.is_empty() && !trusted {
        let mut ordinary = limits::LimitChain::ordinary(
            &sources,
            trusted,
            &workspace,
            inputs
                .user_config_dir
                .as_ref()
                .map(|dir| dir.join(user::CONFIG_FILE)),
        );
        let mut shipped_tools = BTreeMap::new();
        for (tool, full) in &per_tool {
            let ordinary_limits = ordinary.for_tool(defaults_limits, tool)?;
            shipped_tools.insert(
                tool.clone(),
                shipped_tool(full, &defaults, &workspace, ordinary_limits),
            );
        }
        Some(ShippedPlugins {
            dir: Layout::of(&workspace).plugins_dir(),
            added: inputs
                .user_config_dir
                .as_deref()
                .map(user::added_plugins)
                .unwrap_or_default(),
            defaults: shipped_tool(&defaults, &defaults, &workspace, defaults.limits),
            per_tool: shipped_tools,
            max_plugins: shipped_plugins_limit,
        })
    } else {
        None
    };
    // Without `--plugins`, each directory when it exists: the user's own
    // plugins (theirs, so never shipped) first, so that what an untrusted
    // workspace ships cannot take a tool name of theirs (the first plugin
    // to offer a name keeps it); a trusted workspace's plugins are the
    // user's too, and come first, as its config comes over theirs.
    let plugin_dirs = if inputs.plugin_dirs.is_empty() {
        let workspace_dir = Some(Layout::of(&workspace).plugins_dir());
        let users_dir = inputs
            .user_config_dir
            .as_ref()
            .map(|dir| dir.join(user::PLUGINS_DIR));
        let ordered = if trusted {
            [workspace_dir, users_dir]
        } else {
            [users_dir, workspace_dir]
        };
        ordered
            .into_iter()
            .flatten()
            .filter(|dir| dir.is_dir())
            .collect()
    } else {
        inputs.plugin_dirs.clone()
    };

    Ok(Resolved {
        sandbox: SandboxOptions {
            workspace,
            plugin_dirs,
            plugin_files: Vec::new(),
            standard_tools: true,
            cache_dir,
            tiering: Tiering {
                baseline_min_bytes: baseline_min_bytes(
                    std::env::var("TOOLHOST_BASELINE_MIN_BYTES").ok(),
                )?,
                optimize_in_background: true,
                compile_after_exit: compile_after_exit(
                    std::env::var("TOOLHOST_BACKGROUND_COMPILE").ok(),
                )?,
                spares_after: Some(Tiering::SPARES_AFTER),
            },
            policy: Policy { defaults, per_tool },
            protected,
            every_repository: git_seen.every_repository,
            typed: typed_config(&sources, trusted)?,
            plugin_file_limit,
            ca_file,
            shipped_plugins,
        },
        config_file,
        model,
        trusted,
        max_reply_bytes,
        chat: merged_chat(&sources),
        max_tokens_total: sources
            .iter()
            .filter_map(|source| source.file.run.max_tokens_total)
            .map(std::num::NonZeroU64::get)
            .min(),
        max_cost: sources
            .iter()
            .filter_map(|source| source.file.run.max_cost)
            .reduce(f64::min),
        prices_from_you: sources.iter().any(|source| {
            source.file.model.prices.is_some() && (source.kind != FileKind::Workspace || trusted)
        }),
        notices,
    })
}

/// What a tool of a plugin an untrusted workspace ships gets, where the
/// user's own plugin of that name would get `full`: the grants every tool
/// gets (`defaults`) and those of `full` inside the workspace, the lifts
/// every tool gets, no network, and limits no higher than `defaults`'
/// (`ordinary`: the tool's limits without a code tool's own defaults). The
/// configuration names tools, not plugins, so a name must not carry what
/// the user meant for their own plugin of that name.
fn shipped_tool(
    full: &ToolPolicy,
    defaults: &ToolPolicy,
    workspace: &Path,
    ordinary: crate::sandbox::Limits,
) -> ShippedTool {
    let mut withheld = Vec::new();
    let grants: Vec<Grant> = full
        .grants
        .iter()
        .filter(|g| g.host_path.starts_with(workspace) || defaults.grants.contains(g))
        .cloned()
        .collect();
    if grants.len() != full.grants.len() {
        withheld.push("a grant outside the workspace");
    }
    let lifted: Vec<PathBuf> = full
        .lifted
        .iter()
        .filter(|p| defaults.lifted.contains(p))
        .cloned()
        .collect();
    if lifted.len() != full.lifted.len() {
        withheld.push("a lifted protection");
    }
    let limits = limits::at_most(ordinary, &defaults.limits);
    if limits != ordinary {
        withheld.push("raised limits");
    }
    if !full.net.is_empty() || !full.credentials.is_empty() {
        withheld.push("network access");
    }
    ShippedTool {
        policy: ToolPolicy {
            grants,
            limits,
            lifted,
            net: Vec::new(),
            credentials: Vec::new(),
        },
        withheld,
    }
}

/// The `[chat]` keys: the workspace's over the user's.
fn merged_chat(sources: &[Source]) -> ChatSection {
    let mut chat = ChatSection::default();
    for source in sources {
        if source.file.chat.delivery.is_some() {
            chat.delivery = source.file.chat.delivery;
        }
    }
    chat
}

/// What the files say about tools derived from typed exports: the
/// workspace's keys over the user's. Path parameters only add checks (the
/// grants still hold); an untrusted workspace may make a tool read-only but
/// not undo that, and its prefixes name only its own plugins.
fn typed_config(sources: &[Source], trusted: bool) -> Result<TypedConfig, ConfigError> {
    let mut typed = TypedConfig::default();
    for source in sources {
        for (tool, section) in &source.file.tools {
            if section.paths.is_none() && section.read_only.is_none() {
                continue;
            }
            let entry: &mut TypedToolConfig = typed.tools.entry(tool.clone()).or_default();
            for (param, use_) in section.paths.iter().flatten() {
                let access = match use_ {
                    PathUse::Read => Access::Read,
                    PathUse::Write => Access::Write,
                };
                entry.paths.insert(param.clone(), access);
            }
            // An untrusted workspace may make a tool read-only, never undo
            // that: `read_only = false` would give back the write access
            // your config took away.
            let untrusted = source.kind == FileKind::Workspace && !trusted;
            match section.read_only {
                Some(false) if untrusted => {}
                Some(read_only) => entry.read_only = Some(read_only),
                None => {}
            }
        }
        for (stem, section) in &source.file.plugins {
            let Some(prefix) = &section.prefix else {
                continue;
            };
            let text = prefix.get_ref();
            let valid = text.len() <= 32 && crate::sandbox::is_tool_name(text);
            if !valid {
                return Err(ConfigError::ParseFile {
                    path: source.path.clone(),
                    message: format!(
                        "[plugins.{stem}] prefix = {text:?} at line {}: a prefix is 1-32 characters of \
                         [a-zA-Z0-9_-], as tool names are",
                        line_of(&source.text, prefix.span().start)
                    ),
                });
            }
            // An untrusted workspace names its own plugins, not yours: a
            // prefix could move one of your plugins' tools to a name your
            // config gives more.
            let prefixes = if source.kind == FileKind::Workspace && !trusted {
                &mut typed.shipped_prefixes
            } else {
                &mut typed.prefixes
            };
            prefixes.insert(stem.clone(), text.clone());
        }
    }
    Ok(typed)
}

/// The `[model]` keys: the workspace's over the user's. A base URL from an
/// untrusted workspace's file must be a server on this machine: anywhere else
/// would receive the prompts and the API key.
fn merged_model(
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

/// Names in `[tools.*]` or `TOOL=` flags that no loaded plugin offers:
/// almost always a typo that leaves a tool with other access than meant.
pub fn unknown_tool_warnings<'a>(
    policy: &Policy,
    loaded: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let loaded: BTreeSet<&str> = loaded.collect();
    policy
        .per_tool
        .keys()
        .filter(|name| !loaded.contains(name.as_str()))
        // Known by name before they are installed.
        .filter(|name| !crate::sandbox::CODE_TOOLS.contains(&name.as_str()))
        .map(|name| format!("the configuration names tool `{name}`, but no loaded plugin offers it; check the spelling"))
        .collect()
}

/// Reads one config file; `None` when it is optional and absent.
fn read_source(
    kind: FileKind,
    path: PathBuf,
    required: bool,
) -> Result<Option<Source>, ConfigError> {
    let text = match crate::text_file::read_text(&path) {
        Ok(text) => text,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ConfigError::ReadFile { path, source }),
    };
    let file = toml::from_str(&text).map_err(|e| ConfigError::ParseFile {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Ok(Some(Source {
        kind,
        path,
        text,
        file,
    }))
}

/// From `$TOOLHOST_BASELINE_MIN_BYTES` (the user's own setting): how big a
/// new plugin must be to run baseline code first.
fn baseline_min_bytes(value: Option<String>) -> Result<Option<u64>, ConfigError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(Some(crate::sandbox::DEFAULT_BASELINE_MIN_BYTES));
    };
    let trimmed = value.trim();
    if trimmed.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    trimmed
        .parse()
        .map(Some)
        .map_err(|_| ConfigError::BaselineMinBytes { value })
}

/// From `$TOOLHOST_BACKGROUND_COMPILE` (`on`, the default, or `off`):
/// whether a command leaves its unfinished optimized compiles to a
/// background process.
fn compile_after_exit(value: Option<String>) -> Result<bool, ConfigError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(true);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(ConfigError::BackgroundCompile { value }),
    }
}

/// `$TOOLHOST_CACHE_DIR`, else `$XDG_CACHE_HOME/toolhost`, else
/// `~/.cache/toolhost`.
fn default_cache_dir() -> Option<PathBuf> {
    env_path("TOOLHOST_CACHE_DIR")
        .or_else(|| env_path("XDG_CACHE_HOME").map(|p| p.join("toolhost")))
        .or_else(|| env_path("HOME").map(|p| p.join(".cache/toolhost")))
}

/// The path in environment variable `var`, unless it is unset or empty.
fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::Duration;

    #[test]
    fn the_baseline_threshold_is_a_number_or_off() {
        let read = |v: Option<&str>| baseline_min_bytes(v.map(str::to_string));
        assert_eq!(
            read(None).expect("test setup"),
            Some(crate::sandbox::DEFAULT_BASELINE_MIN_BYTES)
        );
        assert_eq!(
            read(Some("")).expect("test setup"),
            Some(crate::sandbox::DEFAULT_BASELINE_MIN_BYTES)
        );
        assert_eq!(read(Some("0")).expect("test setup"), Some(0));
        assert_eq!(read(Some(" 1048576 ")).expect("test setup"), Some(1 << 20));
        assert_eq!(read(Some("OFF")).expect("test setup"), None);
        let error = read(Some("4MB")).expect_err("an error").to_string();
        assert!(
            error.contains("`4MB`") && error.contains("`off`"),
            "{error}"
        );
    }

    #[test]
    fn the_background_compile_is_on_or_off() {
        let read = |v: Option<&str>| compile_after_exit(v.map(str::to_string));
        assert!(read(None).expect("test setup"));
        assert!(read(Some(" ")).expect("test setup"));
        assert!(read(Some("On")).expect("test setup"));
        assert!(!read(Some("off")).expect("test setup"));
        let error = read(Some("0")).expect_err("an error").to_string();
        assert!(
            error.contains("`TOOLHOST_BACKGROUND_COMPILE` is `0`") && error.contains("`off`"),
            "{error}"
        );
    }

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        fs::create_dir_all(dir.path().join("out")).expect("mkdir");
        dir
    }

    fn inputs(dir: &tempfile::TempDir) -> ConfigInputs {
        ConfigInputs {
            workspace: dir.path().to_path_buf(),
            no_cache: true,
            ..ConfigInputs::default()
        }
    }

    fn guest(policy: &ToolPolicy) -> Vec<(String, Access)> {
        policy
            .grants
            .iter()
            .map(|g| (g.guest_path.clone(), g.access))
            .collect()
    }

    #[test]
    fn by_default_every_tool_reads_the_workspace_and_none_writes() {
        let dir = workspace();
        let resolved = resolve(&inputs(&dir)).expect("ok");
        assert_eq!(
            guest(resolved.sandbox.policy.for_tool("anything")),
            vec![(".".into(), Access::Read)]
        );
    }

    #[test]
    fn a_tool_flag_replaces_the_default_read_for_that_tool_only() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["read_file=src".into()];
        inputs.allow_write = vec!["write_file=out".into()];
        let policy = resolve(&inputs).expect("ok").sandbox.policy;
        assert_eq!(
            guest(policy.for_tool("read_file")),
            vec![("src".into(), Access::Read)]
        );
        assert_eq!(
            guest(policy.for_tool("write_file")),
            vec![(".".into(), Access::Read), ("out".into(), Access::Write)]
        );
        assert_eq!(
            guest(policy.for_tool("list_files")),
            vec![(".".into(), Access::Read)]
        );
    }

    #[test]
    fn config_file_sections_merge_with_flags() {
        let dir = workspace();
        fs::write(
            dir.path().join("toolhost.toml"),
            "[defaults]\nread = [\"src\"]\n[limits]\ntimeout_ms = 500\n[tools.edit_file]\nwrite = [\"out\"]\nlimits = { fuel = 7 }\n",
        )
        .expect("write");
        let policy = resolve(&inputs(&dir)).expect("ok").sandbox.policy;
        assert_eq!(guest(&policy.defaults), vec![("src".into(), Access::Read)]);
        assert_eq!(policy.defaults.limits.timeout, Duration::from_millis(500));
        let edit = policy.for_tool("edit_file");
        assert_eq!(
            guest(edit),
            vec![("out".into(), Access::Write), ("src".into(), Access::Read)]
        );
        assert_eq!(edit.limits.fuel, 7);
        assert_eq!(edit.limits.timeout, Duration::from_millis(500));
    }

    #[test]
    fn a_grant_outside_the_workspace_is_an_error_naming_it() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["..".into()];
        let err = resolve(&inputs).expect_err("outside").to_string();
        assert!(
            err.starts_with("grant `..` (from --allow-read ..) points outside the workspace"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_grant_is_an_error_naming_it() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["read_file=nope".into()];
        let err = resolve(&inputs).expect_err("missing").to_string();
        assert!(
            err.contains("grant `nope` (from --allow-read read_file=nope)"),
            "{err}"
        );
        assert!(err.contains("does not exist"), "{err}");
    }

    #[test]
    fn an_absolute_grant_outside_the_workspace_is_allowed() {
        let dir = workspace();
        let outside = tempfile::tempdir().expect("temp dir");
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec![format!("read_file={}", outside.path().display())];
        let policy = resolve(&inputs).expect("ok").sandbox.policy;
        let canonical = outside.path().canonicalize().expect("canonical");
        assert_eq!(
            guest(policy.for_tool("read_file")),
            vec![(canonical.display().to_string(), Access::Read)]
        );
    }

    #[test]
    fn a_symlink_out_of_the_workspace_is_not_a_relative_grant() {
        let dir = workspace();
        let outside = tempfile::tempdir().expect("temp dir");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["link".into()];
        let err = resolve(&inputs).expect_err("escapes").to_string();
        assert!(err.contains("points outside the workspace"), "{err}");
    }

    #[test]
    fn chat_delivery_is_read_from_any_file_and_checked() {
        let dir = workspace();
        assert_eq!(resolve(&inputs(&dir)).expect("ok").chat.delivery, None);
        fs::write(
            dir.path().join("toolhost.toml"),
            "[chat]\ndelivery = \"all\"\n",
        )
        .expect("write");
        let resolved = resolve(&inputs(&dir)).expect("an untrusted file may set it");
        assert_eq!(resolved.chat.delivery, Some(DeliverySetting::All));
        fs::write(
            dir.path().join("toolhost.toml"),
            "[chat]\ndelivery = \"some\"\n",
        )
        .expect("write");
        let err = resolve(&inputs(&dir)).expect_err("not a mode").to_string();
        assert!(
            err.contains("unknown variant `some`, expected `one-at-a-time` or `all`"),
            "{err}"
        );
    }

    #[test]
    fn a_run_budget_is_the_lowest_any_file_gives_and_never_zero() {
        let dir = workspace();
        assert_eq!(resolve(&inputs(&dir)).expect("ok").max_tokens_total, None);
        fs::write(
            dir.path().join("toolhost.toml"),
            "[run]\nmax_tokens_total = 5000\n",
        )
        .expect("write");
        let resolved = resolve(&inputs(&dir)).expect("an untrusted file may lower it");
        assert_eq!(resolved.max_tokens_total, Some(5000));
        fs::write(
            dir.path().join("toolhost.toml"),
            "[run]\nmax_tokens_total = 0\n",
        )
        .expect("write");
        let err = resolve(&inputs(&dir)).expect_err("zero").to_string();
        assert!(err.contains("max_tokens_total"), "{err}");
    }

    #[test]
    fn a_shipped_plugins_tool_gets_what_every_tool_gets_and_no_more() {
        let dir = workspace();
        let user = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let outside = outside.path().canonicalize().expect("canonical");
        fs::write(
            user.path().join("config.toml"),
            format!(
                "[limits]\ntimeout_ms = 5000\n\n[tools.raw]\nwrite = [\"{}\"]\n\
                 [tools.raw.limits]\nfuel = 99000000000\nmemory_mib = 16\n",
                outside.display()
            ),
        )
        .expect("write");
        let mut inputs = inputs(&dir);
        inputs.user_config_dir = Some(user.path().to_path_buf());
        inputs.allow_write = vec!["raw=out".into()];
        let resolved = resolve(&inputs).expect("ok");
        let shipped = resolved.sandbox.shipped_plugins.expect("untrusted");
        let raw = &shipped.per_tool["raw"];
        assert_eq!(
            raw.withheld,
            ["a grant outside the workspace", "raised limits"]
        );
        // Inside the workspace by name still applies; a lower limit too.
        assert_eq!(
            guest(&raw.policy),
            vec![(".".into(), Access::Read), ("out".into(), Access::Write)]
        );
        assert_eq!(raw.policy.limits.fuel, 10_000_000_000);
        assert_eq!(raw.policy.limits.memory, 16 << 20);
        assert_eq!(raw.policy.limits.timeout, Duration::from_secs(5));
        // A code tool's name buys nothing, and says nothing.
        let python = &shipped.per_tool["python"];
        assert_eq!(
            python.policy.limits,
            resolved.sandbox.policy.defaults.limits
        );
        assert!(python.withheld.is_empty());
        // The user's own plugin of that name gets it all.
        let own = resolved.sandbox.policy.for_tool("raw");
        assert_eq!(own.limits.fuel, 99_000_000_000);
        assert!(own.grants.iter().any(|g| g.host_path == outside));
    }

    #[test]
    fn bad_config_files_name_the_file() {
        let dir = workspace();
        fs::write(dir.path().join("toolhost.toml"), "[limits]\nfuel = 0\n").expect("write");
        let err = resolve(&inputs(&dir)).expect_err("zero").to_string();
        assert!(
            err.contains("limit `fuel`") && err.contains("toolhost.toml [limits]"),
            "{err}"
        );

        fs::write(dir.path().join("toolhost.toml"), "[tols]\n").expect("write");
        let err = resolve(&inputs(&dir)).expect_err("unknown").to_string();
        assert!(
            err.starts_with("invalid config file") && err.contains("toolhost.toml"),
            "{err}"
        );

        let mut explicit = inputs(&dir);
        explicit.config_file = Some(dir.path().join("missing.toml"));
        let err = resolve(&explicit).expect_err("missing").to_string();
        assert!(
            err.contains("cannot read config file") && err.contains("missing.toml"),
            "{err}"
        );
    }
}
