//! The paths no tool may change, as the config layer lists them for the
//! sandbox's [`Protection`](crate::sandbox::Protection): toolhost's own, git's,
//! what other programs run without asking, the files and directories the user
//! named (`--config`, `--plugins`, toolhost's user config and cache), and each
//! config file's `[sandbox] protect`. SECURITY.md says why each is there.

use std::path::{Path, PathBuf};

use super::source::Source;
use crate::sandbox::git_config as git;
use crate::sandbox::{ProtectedPath, Record, RecordPath};
use crate::workspace;

/// Files and directories other programs run code from, without asking,
/// when they open a project or run git there. Protected at any depth: a
/// subdirectory can be opened as a project of its own. A path of more than
/// one component (`.github/hooks`) is matched as those components anywhere,
/// and the directories above it may not be moved or replaced as a whole.
const RUN_ON_OPEN: &[(&str, &str)] = &[
    (
        ".claude",
        "Claude Code runs the hooks, commands and MCP servers its settings there name",
    ),
    (
        ".mcp.json",
        "Claude Code and other MCP clients start the servers it names",
    ),
    (
        ".cursor",
        "Cursor runs the hooks and MCP servers its files there name",
    ),
    (
        ".gemini",
        "Gemini CLI runs the hooks, commands and MCP servers its settings there name",
    ),
    (
        ".codex",
        "Codex reads its project config, with MCP servers and commands, from there",
    ),
    (
        ".opencode",
        "opencode loads plugins and MCP servers from there",
    ),
    (
        "opencode.json",
        "opencode starts the MCP servers and commands it names",
    ),
    (
        "opencode.jsonc",
        "opencode starts the MCP servers and commands it names",
    ),
    (".pi", "pi loads extensions from there"),
    (
        ".windsurf",
        "Windsurf runs the hooks and workflows its files there name",
    ),
    (
        ".kiro",
        "Kiro runs the hooks and MCP servers its files there name",
    ),
    (
        ".amazonq",
        "Amazon Q starts the MCP servers its files there name",
    ),
    (
        ".roo",
        "Roo Code starts the MCP servers its files there name",
    ),
    (
        ".continue",
        "Continue starts the MCP servers its files there name",
    ),
    (
        ".aider.conf.yml",
        "aider runs the lint and test commands it names after every change",
    ),
    (
        ".github/hooks",
        "GitHub Copilot CLI and VS Code's agent run the commands its hook files there name at \
         session start",
    ),
    (
        ".augment",
        "Augment's CLI runs the hooks its project settings there name",
    ),
    (
        ".clinerules",
        "Cline runs the hook scripts in its `hooks` directory there",
    ),
    (
        ".qwen",
        "Qwen Code starts the MCP servers its `settings.json` there names",
    ),
    (
        ".kilocode",
        "Kilo Code starts the MCP servers its `mcp.json` there names",
    ),
    (
        "kilo.json",
        "Kilo starts the MCP servers and commands it names",
    ),
    (
        "kilo.jsonc",
        "Kilo starts the MCP servers and commands it names",
    ),
    (
        ".kilo",
        "Kilo loads its config, with MCP servers, from there",
    ),
    (
        "crush.json",
        "Crush starts the MCP servers and language servers it names",
    ),
    (
        ".crush.json",
        "Crush starts the MCP servers and language servers it names",
    ),
    (
        ".openhands",
        "OpenHands runs its `setup.sh` there at every session start",
    ),
    (
        ".vscode",
        "VS Code runs its tasks when the folder opens, and its settings name programs to run",
    ),
    (
        ".idea",
        "JetBrains IDEs run the configurations and startup tasks there",
    ),
    (
        ".zed",
        "Zed runs the tasks and language servers its settings there name",
    ),
    (
        ".helix",
        "Helix starts the language servers its config there names",
    ),
    (
        ".devcontainer",
        "dev container tools run its `initializeCommand` on this machine",
    ),
    (
        ".devcontainer.json",
        "dev container tools run its `initializeCommand` on this machine",
    ),
    (".nvim.lua", "Neovim runs it when it starts there (exrc)"),
    (".nvimrc", "Neovim runs it when it starts there (exrc)"),
    (
        ".exrc",
        "Vim and Neovim run it when they start there (exrc)",
    ),
    (".envrc", "direnv runs it when a shell enters the directory"),
    ("mise.toml", "mise runs the hooks and tasks it defines"),
    (".mise.toml", "mise runs the hooks and tasks it defines"),
    (
        "mise.local.toml",
        "mise runs the hooks and tasks it defines",
    ),
    (
        ".mise.local.toml",
        "mise runs the hooks and tasks it defines",
    ),
    (
        ".mise",
        "mise runs the hooks and tasks its files there define",
    ),
    (
        "mise/config.toml",
        "mise runs the hooks and tasks it defines",
    ),
    (
        ".config/mise",
        "mise runs the hooks and tasks its files there define",
    ),
    (
        ".config/mise.toml",
        "mise runs the hooks and tasks it defines",
    ),
    (".hg", "Mercurial runs the hooks its `hgrc` there names"),
    (
        ".jj",
        "Jujutsu reads its repository config, with programs to run, from there",
    ),
    (".sl", "Sapling runs the hooks its `config` there names"),
    (
        ".pijul",
        "Pijul runs the hooks its `config` there names at every record",
    ),
    (
        "_darcs",
        "darcs runs the pre- and posthooks its `prefs/defaults` there names",
    ),
    (
        ".bzr",
        "Breezy and Bazaar read the branch configuration there, which names code to run \
         (`post_commit`), and the history `bzr diff` compares with",
    ),
    (
        ".svn",
        "Subversion keeps the pristine copies there that `svn diff` and `svn status` compare \
         with, so a change there hides a change from them",
    ),
    (
        ".fslckout",
        "Fossil's checkout names the repository whose hooks `fossil commit` runs",
    ),
    (
        "_FOSSIL_",
        "Fossil's checkout names the repository whose hooks `fossil commit` runs",
    ),
    (".husky", "git runs the hook scripts there at every commit"),
    (
        ".pre-commit-config.yaml",
        "pre-commit runs the commands it names at every commit",
    ),
    (
        "captainhook.json",
        "CaptainHook runs the commands it names at every commit",
    ),
    (
        ".rusty-hook.toml",
        "rusty-hook runs the commands it names at every commit",
    ),
    (
        ".overcommit.yml",
        "Overcommit runs the hooks it names at every commit",
    ),
    (
        ".venv",
        "VS Code's Python extension runs its interpreter when the folder opens, and every `.pth` \
         file in its site-packages runs at each Python start; `git diff` does not show it",
    ),
    (
        "node_modules",
        "VS Code's ESLint and Prettier extensions load the workspace's copies from there when the \
         folder opens; `git diff` does not show it",
    ),
];

/// lefthook's config files: `[.]lefthook[-local].{yml,yaml,toml,json}`.
fn lefthook_files() -> impl Iterator<Item = String> {
    ["lefthook", "lefthook-local"].into_iter().flat_map(|stem| {
        ["", "."].into_iter().flat_map(move |dot| {
            ["yml", "yaml", "toml", "json"]
                .into_iter()
                .map(move |ext| format!("{dot}{stem}.{ext}"))
        })
    })
}

/// Where the protected paths come from besides the config files.
pub(super) struct Protect<'a> {
    pub(super) workspace: &'a Path,
    /// The `--config FILE` in use.
    pub(super) config_file: Option<&'a Path>,
    /// Where the user told toolhost to write (`--session-dir`,
    /// `--http-token-file`).
    pub(super) host_writes: &'a [PathBuf],
    /// toolhost's own directories: the user config directory (trust list,
    /// config), the compile cache (native code toolhost runs) and the
    /// plugin directories the user named.
    pub(super) own_dirs: Vec<PathBuf>,
    /// What git's configuration says ([`git::seen`]).
    pub(super) git: &'a git::Seen,
    /// The user's config directory, which holds toolhost's secrets.
    pub(super) user_config_dir: Option<&'a Path>,
}

/// The paths no tool may change: toolhost's and git's, what other programs
/// run without asking, toolhost's own files outside the workspace, then
/// each config file's `[sandbox] protect` list. Nothing removes the
/// built-in ones.
pub(super) fn protected_paths(sources: &[Source], protect: &Protect<'_>) -> Vec<ProtectedPath> {
    let mut paths = built_in();
    paths.extend(named(protect));
    paths.extend(from_files(sources));
    paths
}

/// toolhost's and git's paths, and what other programs run without
/// asking: protected at any depth.
fn built_in() -> Vec<ProtectedPath> {
    let any_depth = |name: &str, why: &str| ProtectedPath {
        relative: name.into(),
        why: why.into(),
        at_any_depth: true,
        toolhosts_own: name == workspace::CONFIG_FILE || name == workspace::STATE_DIR,
    };
    let mut paths = vec![
        any_depth(
            workspace::CONFIG_FILE,
            "it is toolhost's configuration of a workspace, which decides what every tool may do",
        ),
        any_depth(
            workspace::STATE_DIR,
            "toolhost keeps a workspace's plugins, sessions and saved results there",
        ),
        any_depth(
            workspace::GIT_DIR,
            "git runs hooks and reads its configuration from there, so a change could run code \
             outside the sandbox",
        ),
        any_depth(
            "HEAD",
            "git takes a directory holding a `HEAD` for a repository and runs what its config says",
        ),
    ];
    paths.extend(RUN_ON_OPEN.iter().map(|(name, why)| any_depth(name, why)));
    paths.extend(
        lefthook_files()
            .map(|name| any_depth(&name, "lefthook runs the commands it names at every commit")),
    );
    paths
}

/// The paths named outside the files: `--config`, where toolhost writes,
/// git's hooks and configuration files, toolhost's own directories.
fn named(protect: &Protect<'_>) -> Vec<ProtectedPath> {
    let mut paths = Vec::new();
    // The path as named (absolute): `Protection` adds the path through each
    // link on the way and where they lead, so a link on the way is
    // protected as well as what it leads to.
    let exact = |path: &Path, why: String, toolhosts_own: bool| {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        ProtectedPath {
            relative: path
                .strip_prefix(protect.workspace)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned(),
            why,
            at_any_depth: false,
            toolhosts_own,
        }
    };
    if let Some(file) = protect.config_file {
        paths.push(exact(
            file,
            "it is the toolhost configuration in use (`--config`), which decides what every tool \
             may do"
                .into(),
            true,
        ));
    }
    for path in protect.host_writes {
        paths.push(exact(
            path,
            "toolhost writes there (a path its command line names), so a change could redirect \
             what it writes"
                .into(),
            true,
        ));
    }
    for hooks in &protect.git.hooks {
        paths.push(exact(
            hooks,
            "git's `core.hooksPath` names it, and git runs the hooks there".into(),
            false,
        ));
    }
    // An included file (a committed `.gitconfig`), or the user's own in a
    // workspace that holds it: what git reads as its configuration.
    for file in protect
        .git
        .config_files
        .iter()
        .filter(|file| file.starts_with(protect.workspace))
    {
        paths.push(exact(
            file,
            "git reads it as its configuration, which can name programs to run \
             (`core.fsmonitor`, `core.hooksPath`)"
                .into(),
            false,
        ));
    }
    // A `commondir` (a `.git` lift could write one) moves what git reads
    // and runs: the directory it names is the repository's.
    if let Some(common) = &protect.git.common {
        paths.push(exact(
            common,
            "the repository's `commondir` names it: git reads its config and runs its hooks \
             from there"
                .into(),
            false,
        ));
    }
    for dir in &protect.own_dirs {
        paths.push(exact(
            dir,
            "it is toolhost's own (trust list, configuration, plugins or compiled plugin code)"
                .into(),
            true,
        ));
    }
    paths
}

/// Each config file's `[sandbox] protect` list.
fn from_files(sources: &[Source]) -> Vec<ProtectedPath> {
    let mut paths = Vec::new();
    for source in sources {
        paths.extend(
            source
                .file
                .sandbox
                .protect
                .iter()
                .map(|relative| ProtectedPath {
                    relative: relative.trim_end_matches('/').into(),
                    why: format!(
                        "the user protected it in `{}` [sandbox] protect",
                        source.display()
                    ),
                    at_any_depth: false,
                    toolhosts_own: false,
                }),
        );
    }
    paths
}

/// Where toolhost keeps what tools read, which no tool reads: the
/// workspace's session files and saved results, the paths the command
/// line names for it to write (`--session-dir`: sessions; `--http-token-file`:
/// the MCP token), and its secrets in the user's config directory (the
/// token, the key that seals grants).
pub(super) fn records(protect: &Protect<'_>) -> Vec<RecordPath> {
    let mut records = RecordPath::of_workspace();
    records.extend(protect.host_writes.iter().map(|path| RecordPath {
        path: std::path::absolute(path).unwrap_or_else(|_| path.clone()),
        kind: Record::Named,
    }));
    if let Some(dir) = protect.user_config_dir {
        for secret in [super::user::MCP_TOKEN_FILE, super::user::GRANT_KEY_FILE] {
            records.push(RecordPath {
                path: dir.join(secret),
                kind: Record::Secret,
            });
        }
    }
    records
}
