//! The default system prompt: who the model is working for, where, and
//! exactly what each tool may touch, so it does not waste turns discovering
//! its grants by trial and error.

use crate::sandbox::Sandbox;

/// The system prompt used when the user gives none: the workspace, the tools
/// and each tool's directories.
pub fn default_system_prompt(sandbox: &Sandbox) -> String {
    format!(
        "You are an agent working in the workspace `{}`. You act only through the tools below. \
         Each tool runs in a sandbox: it may use only the directories listed for it, given relative \
         to the workspace root (`.` is the root), and reach only the hosts listed for it (none \
         unless listed); paths you pass are relative to the root too. \
         A tool result marked as an error says what went wrong and what to do instead; read it and \
         change your approach rather than repeating the same call. When the task is done, answer \
         with a short summary and no tool calls.\n\n{}",
        sandbox.workspace().display(),
        sandbox.describe_reach()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{
        Access, FsPolicy, Grant, Policy, ProtectedPath, SandboxOptions, ToolPolicy,
    };

    #[tokio::test]
    async fn the_prompt_names_each_tools_directories_and_the_protected_paths() {
        let dir = tempfile::tempdir().expect("temp dir");
        let workspace = dir.path().canonicalize().expect("canonical workspace");
        let sandbox = Sandbox::load(SandboxOptions {
            workspace: workspace.clone(),
            plugin_dirs: Vec::new(),
            plugin_files: Vec::new(),
            standard_tools: true,
            cache_dir: Some(std::path::Path::new(env!("OUT_DIR")).join("agent-test-cache")),
            tiering: Default::default(),
            policy: Policy {
                defaults: ToolPolicy {
                    fs: FsPolicy {
                        grants: vec![Grant {
                            host_path: workspace,
                            guest_path: ".".into(),
                            access: Access::Write,
                        }],
                        ..FsPolicy::default()
                    },
                    ..ToolPolicy::default()
                },
                ..Policy::default()
            },
            records: Vec::new(),
            protected: vec![
                ProtectedPath {
                    relative: "toolhost.toml".into(),
                    why: String::new(),
                    at_any_depth: false,
                    toolhosts_own: true,
                },
                ProtectedPath {
                    relative: ".git".into(),
                    why: String::new(),
                    at_any_depth: true,
                    toolhosts_own: false,
                },
            ],
            every_repository: Default::default(),
            typed: Default::default(),
            plugin_file_limit: crate::sandbox::DEFAULT_PLUGIN_FILE_LIMIT,
            ca_file: None,
            shipped_plugins: None,
        })
        .await
        .expect("sandbox loads");
        let prompt = default_system_prompt(&sandbox);
        assert!(
            prompt.contains("- write_file: reads .; writes .\n"),
            "{prompt}"
        );
        assert!(
            prompt.ends_with(
                "\nNo tool may change these paths, even inside a directory it may write: \
                 `toolhost.toml`, and anything named `.git` at any depth. Read them if you need \
                 to, but make your changes elsewhere.\n"
            ),
            "{prompt}"
        );
    }
}
