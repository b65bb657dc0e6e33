//! Limits from the config files: the built-in defaults, then each file's
//! `[limits]` (the user's `config.toml`, then the workspace's
//! `toolhost.toml` or `--config FILE`), then each file's
//! `[tools.<name>.limits]`.
//!
//! `[model] max_reply_mib`, the cap on one model reply, is a limit too and
//! follows the same rules (it has no per-tool form).
//!
//! A workspace's own file may have come with the repository: until the user
//! trusts the workspace, each of its values may only lower a limit. A value
//! over what the user's config and the defaults give at that point (for that
//! tool) is clamped to it, with a notice naming the file and line, the
//! value asked and the value applied, and the two ways to allow it.
//!
//! `[limits] plugin_file_mib` (the most a plugin file may have) follows the
//! same chain, in `[limits]` only: it holds for every plugin, not a tool.

use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::error::ConfigError;
use super::file::LimitsSection;
use super::origin::{FileKind, line_of};
use super::source::Source;
use crate::provider::DEFAULT_MAX_REPLY_BYTES;
use crate::sandbox::{DEFAULT_PLUGIN_FILE_LIMIT, DEFAULT_SHIPPED_PLUGINS, Limits};

/// The `[limits]` key of the plugin file limit, in MiB.
const PLUGIN_FILE_KEY: &str = "plugin_file_mib";

/// The `[limits]` key of how many plugins an untrusted workspace ships
/// one start loads.
const SHIPPED_PLUGINS_KEY: &str = "shipped_plugins";

/// One key of a `[limits]` section.
#[derive(Debug, Clone, Copy)]
enum Key {
    Fuel,
    TimeoutMs,
    MemoryMib,
    OutputKib,
    WriteMib,
    NetMib,
    NetRequests,
    NetConnections,
}

impl Key {
    const ALL: [Key; 8] = [
        Key::Fuel,
        Key::TimeoutMs,
        Key::MemoryMib,
        Key::OutputKib,
        Key::WriteMib,
        Key::NetMib,
        Key::NetRequests,
        Key::NetConnections,
    ];

    fn name(self) -> &'static str {
        match self {
            Key::Fuel => "fuel",
            Key::TimeoutMs => "timeout_ms",
            Key::MemoryMib => "memory_mib",
            Key::OutputKib => "output_kib",
            Key::WriteMib => "write_mib",
            Key::NetMib => "net_mib",
            Key::NetRequests => "net_requests",
            Key::NetConnections => "net_connections",
        }
    }

    fn written(self, section: &LimitsSection) -> Option<&Spanned<u64>> {
        match self {
            Key::Fuel => section.fuel.as_ref(),
            Key::TimeoutMs => section.timeout_ms.as_ref(),
            Key::MemoryMib => section.memory_mib.as_ref(),
            Key::OutputKib => section.output_kib.as_ref(),
            Key::WriteMib => section.write_mib.as_ref(),
            Key::NetMib => section.net_mib.as_ref(),
            Key::NetRequests => section.net_requests.as_ref(),
            Key::NetConnections => section.net_connections.as_ref(),
        }
    }

    /// What one unit of the file's value is in [`Limits`]' own unit (fuel,
    /// milliseconds, bytes).
    fn unit(self) -> u64 {
        match self {
            Key::Fuel | Key::TimeoutMs | Key::NetRequests | Key::NetConnections => 1,
            Key::MemoryMib | Key::WriteMib | Key::NetMib => 1 << 20,
            Key::OutputKib => 1 << 10,
        }
    }

    /// The limit in [`Limits`]' own unit.
    fn get(self, limits: &Limits) -> u64 {
        match self {
            Key::Fuel => limits.fuel,
            Key::TimeoutMs => u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
            Key::MemoryMib => limits.memory,
            Key::OutputKib => u64::try_from(limits.output).unwrap_or(u64::MAX),
            Key::WriteMib => limits.write,
            Key::NetMib => limits.net_bytes,
            Key::NetRequests => limits.net_requests,
            Key::NetConnections => limits.net_connections,
        }
    }

    fn set(self, limits: &mut Limits, value: u64) {
        match self {
            Key::Fuel => limits.fuel = value,
            Key::TimeoutMs => limits.timeout = Duration::from_millis(value),
            Key::MemoryMib => limits.memory = value,
            Key::OutputKib => limits.output = usize::try_from(value).unwrap_or(usize::MAX),
            Key::WriteMib => limits.write = value,
            Key::NetMib => limits.net_bytes = value,
            Key::NetRequests => limits.net_requests = value,
            Key::NetConnections => limits.net_connections = value,
        }
    }
}

/// Each limit of `limits` at most that of `ceiling`.
pub(super) fn at_most(mut limits: Limits, ceiling: &Limits) -> Limits {
    for key in Key::ALL {
        let value = key.get(&limits).min(key.get(ceiling));
        key.set(&mut limits, value);
    }
    limits
}

/// Resolves the limits of the config files, collecting a notice for each
/// value an untrusted workspace file asked to raise.
pub(super) struct LimitChain<'a> {
    sources: &'a [Source],
    /// Whether the workspace's file may raise limits.
    trusted: bool,
    workspace: &'a Path,
    /// The user's own `config.toml`, where a raise always applies.
    user_file: Option<PathBuf>,
    /// Whether a code tool starts from its own defaults: only when the
    /// plugin is the user's ([`LimitChain::ordinary`]).
    code_defaults: bool,
    notices: Vec<String>,
}

impl<'a> LimitChain<'a> {
    pub(super) fn new(
        sources: &'a [Source],
        trusted: bool,
        workspace: &'a Path,
        user_file: Option<PathBuf>,
    ) -> Self {
        LimitChain {
            sources,
            trusted,
            workspace,
            user_file,
            code_defaults: true,
            notices: Vec::new(),
        }
    }

    /// A chain in which no tool has defaults of its own: for a tool a
    /// shipped plugin offers, whose name (`python`) buys it nothing.
    pub(super) fn ordinary(
        sources: &'a [Source],
        trusted: bool,
        workspace: &'a Path,
        user_file: Option<PathBuf>,
    ) -> Self {
        LimitChain {
            code_defaults: false,
            ..LimitChain::new(sources, trusted, workspace, user_file)
        }
    }

    /// toolhost's own defaults for `tool` in this chain.
    fn own_defaults(&self, tool: &str) -> Limits {
        if self.code_defaults {
            Limits::defaults_for(tool)
        } else {
            Limits::default()
        }
    }

    /// Every tool's limits: the built-in defaults, then each file's
    /// `[limits]`.
    pub(super) fn defaults(&mut self) -> Result<Limits, ConfigError> {
        let ceiling = self.users_own(None)?;
        let mut limits = Limits::default();
        for source in self.sources {
            limits = self.apply(limits, source, &source.file.limits, "[limits]", &ceiling)?;
        }
        Ok(limits)
    }

    /// `tool`'s limits: `defaults`, then each file's
    /// `[tools.<tool>.limits]`. A tool with defaults of its own (a code
    /// tool) starts from those instead, with each file's `[limits]` on top.
    pub(super) fn for_tool(&mut self, defaults: Limits, tool: &str) -> Result<Limits, ConfigError> {
        let ceiling = self.users_own(Some(tool))?;
        let mut limits = defaults;
        let own = self.own_defaults(tool);
        if own != Limits::default() {
            limits = own;
            for source in self.sources {
                limits = self.apply(limits, source, &source.file.limits, "[limits]", &ceiling)?;
            }
        }
        let name = format!("[tools.{tool}.limits]");
        for source in self.sources {
            if let Some(section) = source.file.tools.get(tool) {
                if let Some(written) = &section.limits.plugin_file_mib {
                    return Err(ConfigError::ParseFile {
                        path: source.path.clone(),
                        message: format!(
                            "{name} {PLUGIN_FILE_KEY} at line {}: the plugin file limit holds for every \
                             plugin, not one tool; move it under [limits]",
                            line_of(&source.text, written.span().start)
                        ),
                    });
                }
                if let Some(written) = &section.limits.shipped_plugins {
                    return Err(ConfigError::ParseFile {
                        path: source.path.clone(),
                        message: format!(
                            "{name} {SHIPPED_PLUGINS_KEY} at line {}: the number of plugins a \
                             workspace ships holds for every plugin, not one tool; move it under \
                             [limits]",
                            line_of(&source.text, written.span().start)
                        ),
                    });
                }
                limits = self.apply(limits, source, &section.limits, &name, &ceiling)?;
            }
        }
        Ok(limits)
    }

    /// The cap on one model reply in bytes, from `[model] max_reply_mib`.
    pub(super) fn max_reply_bytes(&mut self) -> Result<u64, ConfigError> {
        self.mib_limit(
            "max_reply_mib",
            "[model]",
            DEFAULT_MAX_REPLY_BYTES,
            |source| source.file.model.max_reply_mib.as_ref(),
        )
    }

    /// Bytes a plugin file may have, from `[limits] plugin_file_mib`.
    pub(super) fn plugin_file(&mut self) -> Result<u64, ConfigError> {
        self.mib_limit(
            PLUGIN_FILE_KEY,
            "[limits]",
            DEFAULT_PLUGIN_FILE_LIMIT,
            |source| source.file.limits.plugin_file_mib.as_ref(),
        )
    }

    /// How many plugins an untrusted workspace ships one start loads, from
    /// `[limits] shipped_plugins`.
    pub(super) fn shipped_plugins(&mut self) -> Result<u64, ConfigError> {
        self.scaled_limit(
            SHIPPED_PLUGINS_KEY,
            "[limits]",
            DEFAULT_SHIPPED_PLUGINS,
            1,
            |source| source.file.limits.shipped_plugins.as_ref(),
        )
    }

    /// One limit of the whole process written in MiB as `key` under
    /// `section`: the default, then each file's in turn; an untrusted
    /// workspace's may only lower what the user's own config and the
    /// default give (clamped, with a notice). Zero is an error.
    fn mib_limit(
        &mut self,
        key: &'static str,
        section: &str,
        default: u64,
        written: impl Fn(&'a Source) -> Option<&'a Spanned<u64>>,
    ) -> Result<u64, ConfigError> {
        self.scaled_limit(key, section, default, 1 << 20, written)
    }

    /// [`LimitChain::mib_limit`] of a value written in units of `unit`.
    fn scaled_limit(
        &mut self,
        key: &'static str,
        section: &str,
        default: u64,
        unit: u64,
        written: impl Fn(&'a Source) -> Option<&'a Spanned<u64>>,
    ) -> Result<u64, ConfigError> {
        let mut ceiling = default;
        let mut limit = default;
        for source in self.sources {
            let Some(value) = written(source) else {
                continue;
            };
            let asked = *value.get_ref();
            if asked == 0 {
                return Err(ConfigError::ZeroLimit {
                    key,
                    origin: format!("{} {section}", source.display()),
                });
            }
            let bytes = asked.saturating_mul(unit);
            if source.kind == FileKind::User {
                ceiling = bytes;
            }
            limit = if source.kind == FileKind::Workspace && !self.trusted && bytes > ceiling {
                let clamped = Clamped {
                    key,
                    line: line_of(&source.text, value.span().start),
                    asked,
                    applied: ceiling / unit,
                };
                let notice = self.notice(source, section, &clamped);
                self.notices.push(notice);
                ceiling
            } else {
                bytes
            };
        }
        Ok(limit)
    }

    /// The notices, in the order the sections were resolved, each
    /// section's by line.
    /// A `[limits]` value clamped for every tool and again for a code
    /// tool says so once.
    pub(super) fn into_notices(self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.notices
            .into_iter()
            .filter(|n| seen.insert(n.clone()))
            .collect()
    }

    /// What the user's own config and the defaults give (`tool`'s, or
    /// every tool's): the most an untrusted workspace file may set.
    fn users_own(&self, tool: Option<&str>) -> Result<Limits, ConfigError> {
        let users = || self.sources.iter().filter(|s| s.kind == FileKind::User);
        let mut limits = tool.map_or_else(Limits::default, |tool| self.own_defaults(tool));
        for source in users() {
            limits = set_all(limits, source, &source.file.limits, "[limits]", None)?.0;
        }
        if let Some(tool) = tool {
            let name = format!("[tools.{tool}.limits]");
            for source in users() {
                if let Some(section) = source.file.tools.get(tool) {
                    limits = set_all(limits, source, &section.limits, &name, None)?.0;
                }
            }
        }
        Ok(limits)
    }

    /// `limits` with `section` of `source` applied; an untrusted workspace
    /// file's values at most `ceiling`.
    fn apply(
        &mut self,
        limits: Limits,
        source: &Source,
        section: &LimitsSection,
        name: &str,
        ceiling: &Limits,
    ) -> Result<Limits, ConfigError> {
        let clamp = (source.kind == FileKind::Workspace && !self.trusted).then_some(ceiling);
        let (limits, clamped) = set_all(limits, source, section, name, clamp)?;
        let notices: Vec<String> = clamped
            .iter()
            .map(|c| self.notice(source, name, c))
            .collect();
        self.notices.extend(notices);
        Ok(limits)
    }

    fn notice(&self, source: &Source, section: &str, clamped: &Clamped) -> String {
        let Clamped {
            key,
            line,
            asked,
            applied,
        } = clamped;
        let own = match &self.user_file {
            Some(file) => format!("`{}`", file.display()),
            None => format!("`{}`", super::user::CONFIG_FILE),
        };
        format!(
            "limit `{key} = {asked}` (from {}:{line} {section}) is over the {applied} your own \
             config and the defaults allow, and a workspace's own toolhost.toml may only lower \
             limits (it may have come with the repository), so `{key} = {applied}` applies. To \
             allow it, trust this workspace (`toolhost trust {}`), or set `{key} = {asked}` under \
             {section} in your own {own}",
            source.display(),
            self.workspace.display(),
        )
    }
}

/// A value an untrusted workspace file asked for over its ceiling, in the
/// file's unit.
#[derive(Debug)]
struct Clamped {
    /// The key as the file writes it.
    key: &'static str,
    line: usize,
    asked: u64,
    applied: u64,
}

/// `limits` with every key of `section` set; with `clamp`, no value goes
/// over it, and each that would is returned, by line.
fn set_all(
    mut limits: Limits,
    source: &Source,
    section: &LimitsSection,
    name: &str,
    clamp: Option<&Limits>,
) -> Result<(Limits, Vec<Clamped>), ConfigError> {
    let mut clamped = Vec::new();
    for key in Key::ALL {
        let Some(written) = key.written(section) else {
            continue;
        };
        let asked = *written.get_ref();
        if asked == 0 {
            return Err(ConfigError::ZeroLimit {
                key: key.name(),
                origin: format!("{} {name}", source.display()),
            });
        }
        let mut value = asked.saturating_mul(key.unit());
        if let Some(ceiling) = clamp
            && value > key.get(ceiling)
        {
            value = key.get(ceiling);
            clamped.push(Clamped {
                key: key.name(),
                line: line_of(&source.text, written.span().start),
                asked,
                applied: value / key.unit(),
            });
        }
        key.set(&mut limits, value);
    }
    clamped.sort_by_key(|c| c.line);
    Ok((limits, clamped))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(kind: FileKind, text: &str) -> Source {
        Source {
            kind,
            path: PathBuf::from(match kind {
                FileKind::User => "/home/me/.config/toolhost/config.toml",
                FileKind::Workspace => "/work/repo/toolhost.toml",
            }),
            text: text.into(),
            file: toml::from_str(text).expect("a valid config"),
        }
    }

    fn chain(sources: &[Source], trusted: bool) -> LimitChain<'_> {
        LimitChain::new(
            sources,
            trusted,
            Path::new("/work/repo"),
            Some("/home/me/.config/toolhost/config.toml".into()),
        )
    }

    #[test]
    fn an_untrusted_workspace_lowers_but_does_not_raise() {
        let sources = [
            source(
                FileKind::User,
                "[limits]\nmemory_mib = 16\n[tools.big.limits]\nmemory_mib = 64\n",
            ),
            source(
                FileKind::Workspace,
                "[limits]\nmemory_mib = 100000\nfuel = 7\n\
                 [tools.big.limits]\nmemory_mib = 48\n[tools.other.limits]\nmemory_mib = 32\n",
            ),
        ];
        let mut limits = chain(&sources, false);
        let defaults = limits.defaults().expect("ok");
        assert_eq!(defaults.memory, 16 << 20);
        assert_eq!(defaults.fuel, 7);
        let big = limits.for_tool(defaults, "big").expect("ok");
        assert_eq!((big.memory, big.fuel), (48 << 20, 7));
        let other = limits.for_tool(defaults, "other").expect("ok");
        assert_eq!(other.memory, 16 << 20);
        let notices = limits.into_notices();
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(
            notices[0].starts_with(
                "limit `memory_mib = 100000` (from /work/repo/toolhost.toml:2 [limits]) is over \
                 the 16 your own config"
            ),
            "{}",
            notices[0]
        );
        assert!(
            notices[1].starts_with(
                "limit `memory_mib = 32` (from /work/repo/toolhost.toml:7 [tools.other.limits]) \
                 is over the 16"
            ),
            "{}",
            notices[1]
        );
    }

    #[test]
    fn a_trusted_workspace_and_the_user_may_raise() {
        let sources = [
            source(
                FileKind::User,
                "[limits]\ntimeout_ms = 18446744073709551615\n",
            ),
            source(
                FileKind::Workspace,
                "[limits]\nfuel = 18446744073709551615\n",
            ),
        ];
        let mut limits = chain(&sources, true);
        let defaults = limits.defaults().expect("ok");
        assert_eq!(defaults.fuel, u64::MAX);
        assert_eq!(defaults.timeout, Duration::from_millis(u64::MAX));
        assert!(limits.into_notices().is_empty());
    }

    #[test]
    fn a_user_limit_sets_the_ceiling_for_a_tool_even_over_a_lower_workspace_default() {
        // The workspace lowers everyone's fuel, but the user gave `big`
        // more: the workspace may ask for up to that for `big`.
        let sources = [
            source(FileKind::User, "[tools.big.limits]\nfuel = 50000000000\n"),
            source(
                FileKind::Workspace,
                "[limits]\nfuel = 1000\n[tools.big.limits]\nfuel = 20000000000\n",
            ),
        ];
        let mut limits = chain(&sources, false);
        let defaults = limits.defaults().expect("ok");
        assert_eq!(defaults.fuel, 1000);
        let big = limits.for_tool(defaults, "big").expect("ok");
        assert_eq!(big.fuel, 20_000_000_000);
        assert!(limits.into_notices().is_empty());
    }

    #[test]
    fn the_reply_cap_is_a_limit_an_untrusted_workspace_may_only_lower() {
        let user = |text| source(FileKind::User, text);
        let workspace = |text| source(FileKind::Workspace, text);
        let resolve = |sources: &[Source], trusted| {
            let mut limits = chain(sources, trusted);
            let bytes = limits.max_reply_bytes().expect("ok");
            (bytes >> 20, limits.into_notices())
        };
        assert_eq!(resolve(&[], false), (8, vec![]));
        let lower = [workspace("[model]\nmax_reply_mib = 2\n")];
        assert_eq!(resolve(&lower, false), (2, vec![]));
        let raise = [
            user("[model]\nmax_reply_mib = 16\n"),
            workspace("[model]\nname = \"m\"\nmax_reply_mib = 1024\n"),
        ];
        assert_eq!(resolve(&raise, true), (1024, vec![]));
        let (mib, notices) = resolve(&raise, false);
        assert_eq!(mib, 16);
        assert_eq!(
            notices,
            [
                "limit `max_reply_mib = 1024` (from /work/repo/toolhost.toml:3 [model]) is over the \
              16 your own config and the defaults allow, and a workspace's own toolhost.toml may \
              only lower limits (it may have come with the repository), so `max_reply_mib = 16` \
              applies. To allow it, trust this workspace (`toolhost trust /work/repo`), or set \
              `max_reply_mib = 1024` under [model] in your own \
              `/home/me/.config/toolhost/config.toml`"
            ]
        );
        let zero = [user("[model]\nmax_reply_mib = 0\n")];
        let err = chain(&zero, false).max_reply_bytes().expect_err("zero");
        assert_eq!(
            err.to_string(),
            "limit `max_reply_mib` (from /home/me/.config/toolhost/config.toml [model]) must be \
             greater than zero"
        );
    }

    #[test]
    fn the_plugin_file_limit_is_raised_by_the_user_only_and_set_in_limits_only() {
        let sources = [
            source(FileKind::User, "[limits]\nplugin_file_mib = 1024\n"),
            source(FileKind::Workspace, "[limits]\nplugin_file_mib = 4096\n"),
        ];
        let mut untrusted = chain(&sources, false);
        assert_eq!(untrusted.plugin_file().expect("ok"), 1024 << 20);
        let notices = untrusted.into_notices();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].starts_with(
                "limit `plugin_file_mib = 4096` (from /work/repo/toolhost.toml:2 [limits]) is over \
                 the 1024 your own config"
            ),
            "{}",
            notices[0]
        );
        assert_eq!(chain(&sources, true).plugin_file().expect("ok"), 4096 << 20);
        assert_eq!(
            chain(&[], false).plugin_file().expect("ok"),
            DEFAULT_PLUGIN_FILE_LIMIT
        );

        let per_tool = [source(
            FileKind::User,
            "[tools.big.limits]\nplugin_file_mib = 9\n",
        )];
        let err = chain(&per_tool, true)
            .for_tool(Limits::default(), "big")
            .expect_err("not per tool")
            .to_string();
        assert_eq!(
            err,
            "invalid config file `/home/me/.config/toolhost/config.toml`: [tools.big.limits] \
             plugin_file_mib at line 2: the plugin file limit holds for every plugin, not one tool; \
             move it under [limits]"
        );
    }

    #[test]
    fn code_tools_start_from_their_own_defaults_under_every_file() {
        let fresh = chain(&[], false)
            .for_tool(Limits::default(), "python")
            .expect("ok");
        assert_eq!(fresh, Limits::defaults_for("python"));
        assert_eq!(fresh.fuel, 40_000_000_000);
        assert_eq!(fresh.output, 256 << 10);
        assert_eq!(fresh.memory, Limits::default().memory);

        // The user's [limits] holds for code tools too, and their own
        // section over it; an untrusted workspace may only lower, up to
        // the code tool's own default.
        let sources = [
            source(
                FileKind::User,
                "[limits]
output_kib = 512
",
            ),
            source(
                FileKind::Workspace,
                "[limits]
fuel = 90000000000
[tools.python.limits]
memory_mib = 64
",
            ),
        ];
        let mut limits = chain(&sources, false);
        let defaults = limits.defaults().expect("ok");
        let python = limits.for_tool(defaults, "python").expect("ok");
        assert_eq!(python.output, 512 << 10);
        assert_eq!(python.fuel, 40_000_000_000);
        assert_eq!(python.memory, 64 << 20);
        assert_eq!(defaults.fuel, Limits::default().fuel);
        let notices = limits.into_notices();
        assert_eq!(notices.len(), 2, "{notices:#?}");
        assert!(
            notices[1].contains("so `fuel = 40000000000` applies"),
            "{}",
            notices[1]
        );
    }

    #[test]
    fn zero_is_an_error_from_any_file() {
        let sources = [source(FileKind::Workspace, "[limits]\nwrite_mib = 0\n")];
        let err = chain(&sources, false)
            .defaults()
            .expect_err("zero")
            .to_string();
        assert_eq!(
            err,
            "limit `write_mib` (from /work/repo/toolhost.toml [limits]) must be greater than zero"
        );
    }
}
