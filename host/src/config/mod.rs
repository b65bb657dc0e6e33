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
//!
//! Resolving is two steps: [`gather`] reads every input once (the
//! workspace, the files, the trust list, the environment, git's
//! configuration); then one resolver per section derives its part from
//! what was read. Nothing on disk changes: the directories the command
//! line's write grants ask for are returned ([`Resolved::new_dirs`]) for
//! the command to make.

mod dirs;
mod env_grants;
mod environment;
mod error;
mod exec_grants;
pub(crate) mod file;
mod file_grants;
mod flags;
mod gather;
mod grants;
mod inputs;
mod limits;
mod model;
mod model_section;
mod network;
mod new_dirs;
mod origin;
mod protected;
mod resolved;
mod run_settings;
mod shipped;
mod source;
mod tiering;
mod tool_policy;
mod typed;
pub mod user;

use std::collections::BTreeSet;

use crate::sandbox::{Policy, Protection, SandboxOptions};
pub use error::ConfigError;
pub use file::{ChatSection, DeliverySetting, ModelSection, ProviderKind, UntrustedChoice};
use file_grants::FileGrants;
use flags::FlagGrants;
pub use inputs::ConfigInputs;
pub use model::{ModelChoiceError, ModelFlags, RecordedModel, resolve_model};
pub use new_dirs::NewDirs;
pub use origin::GrantOrigin;
use protected::{Protect, protected_paths, records};
pub use resolved::Resolved;
pub use user::TrustList;

/// Reads the config files and the environment, and merges them with the
/// flags. Changes nothing on disk: see [`Resolved::new_dirs`].
pub fn resolve(inputs: &ConfigInputs) -> Result<Resolved, ConfigError> {
    let gathered = gather::gather(inputs)?;
    let (workspace, sources, trusted) = (&gathered.workspace, &gathered.sources, gathered.trusted);
    let model = model_section::merged_model(sources, workspace, trusted)?;
    let mut limits = limits::LimitChain::new(sources, trusted, workspace, gathered.user_file());
    let defaults_limits = limits.defaults()?;
    let max_reply_bytes = limits.max_reply_bytes()?;
    let flags = FlagGrants::of(inputs);
    let cache_dir = dirs::cache_dir(inputs, &gathered);
    let protect = protect(inputs, &gathered, &cache_dir);
    let protected = protected_paths(sources, &protect);
    let records = records(&protect);
    let protection = Protection::new(workspace, protected.clone(), &records);
    let (new_dirs, created) = flags.new_dirs(workspace, &protection);
    let file_grants = FileGrants::new(&gathered, &flags, &protection, &new_dirs);
    let withheld_writes = file_grants.withheld_writes()?;
    let (policy, net_notices) = tool_policy::policy(
        &gathered,
        &flags,
        &file_grants,
        &mut limits,
        defaults_limits,
    )?;
    let plugin_file_limit = limits.plugin_file()?;
    let shipped_plugins_limit = limits.shipped_plugins()?;
    let notices = [limits.into_notices(), withheld_writes, created, net_notices].concat();
    let ca_file = network::ca_file(sources, trusted, workspace)?;
    let plugins_flag = !inputs.plugin_dirs.is_empty();
    let shipped_plugins =
        shipped::shipped_plugins(&gathered, plugins_flag, &policy, shipped_plugins_limit)?;
    let sandbox = SandboxOptions {
        workspace: workspace.clone(),
        plugin_dirs: dirs::plugin_dirs(inputs, &gathered),
        plugin_files: Vec::new(),
        standard_tools: true,
        cache_dir,
        tiering: tiering::tiering(&gathered.env)?,
        policy,
        protected,
        records,
        every_repository: gathered.git.every_repository.clone(),
        typed: typed::typed_config(sources, trusted)?,
        plugin_file_limit,
        ca_file,
        shipped_plugins,
    };
    Ok(Resolved {
        sandbox,
        config_file: gathered.config_file.clone(),
        model,
        trusted,
        max_reply_bytes,
        chat: run_settings::merged_chat(sources),
        max_tokens_total: run_settings::max_tokens_total(sources),
        max_cost: run_settings::max_cost(sources),
        prices_from_you: model_section::prices_from_you(sources, trusted),
        notices,
        new_dirs,
    })
}

/// Where the protected paths come from besides the files: the workspace,
/// the paths toolhost writes, and its own directories (`--plugins DIR`: a
/// `.wasm` dropped there loads at the next start).
fn protect<'a>(
    inputs: &'a ConfigInputs,
    gathered: &'a gather::Gathered,
    cache_dir: &Option<std::path::PathBuf>,
) -> Protect<'a> {
    Protect {
        workspace: &gathered.workspace,
        config_file: inputs.config_file.as_deref(),
        host_writes: &inputs.host_writes,
        own_dirs: gathered
            .user_config_dir
            .iter()
            .chain(cache_dir.iter())
            .chain(inputs.plugin_dirs.iter())
            .cloned()
            .collect(),
        git: &gathered.git,
        user_config_dir: gathered.user_config_dir.as_deref(),
    }
}

/// Names in `[tools.*]` or `TOOL=` flags that no loaded plugin offers:
/// almost always a typo that leaves a tool with other access than meant.
/// The compile cache a command without sandbox flags uses:
/// `$TOOLHOST_CACHE_DIR`, else `$XDG_CACHE_HOME/toolhost`, else
/// `~/.cache/toolhost`.
pub fn default_cache_dir() -> Option<std::path::PathBuf> {
    environment::Environment::read(std::iter::empty()).default_cache_dir()
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Access, ToolPolicy};
    use std::fs;
    use std::time::Duration;

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
            .fs
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
        assert!(own.fs.grants.iter().any(|g| g.host_path == outside));
    }

    #[test]
    fn a_missing_write_grant_is_planned_not_made() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_write = vec![
            "write_file=new/notes".into(),
            "edit_file=new".into(),
            "new/notes/deep".into(),
        ];
        let resolved = resolve(&inputs).expect("the grants count as there");
        let root = dir.path().canonicalize().expect("canonical");
        assert!(!root.join("new").exists(), "resolving changes nothing");
        // Grants for every tool come first; the directories it makes hold
        // the others', so nothing more is made for them.
        assert_eq!(
            resolved.new_dirs.paths().collect::<Vec<_>>(),
            [root.join("new/notes/deep")]
        );
        assert_eq!(
            resolved.notices,
            ["created the directory `new/notes/deep` for `--allow-write new/notes/deep`"]
        );
        assert!(
            guest(resolved.sandbox.policy.for_tool("edit_file"))
                .contains(&("new".into(), Access::Write))
        );
        resolved.new_dirs.create().expect("made");
        assert!(root.join("new/notes/deep").is_dir());
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
