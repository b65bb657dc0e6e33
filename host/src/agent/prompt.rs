//! The default system prompt: who the model is working for, where, and
//! exactly what each tool may touch, so it does not waste turns discovering
//! its grants by trial and error.

use std::fmt::Write as _;

use crate::sandbox::{Access, Sandbox};

/// The system prompt used when the user gives none: the workspace, the tools
/// and each tool's directories.
pub fn default_system_prompt(sandbox: &Sandbox) -> String {
    let mut prompt = format!(
        "You are an agent working in the workspace `{}`. You act only through the tools below. \
         Each tool runs in a sandbox: it may use only the directories listed for it, given relative \
         to the workspace root (`.` is the root), and paths you pass are relative to the root too. \
         A tool result marked as an error says what went wrong and what to do instead; read it and \
         change your approach rather than repeating the same call. When the task is done, answer \
         with a short summary and no tool calls.\n\nTools and their directories:\n",
        sandbox.workspace().display()
    );
    for tool in sandbox.tools() {
        let reads: Vec<&str> = tool
            .policy
            .grants
            .iter()
            .map(|g| g.guest_path.as_str())
            .collect();
        let writes: Vec<&str> = tool
            .policy
            .grants
            .iter()
            .filter(|g| g.access == Access::Write)
            .map(|g| g.guest_path.as_str())
            .collect();
        let _ = write!(
            prompt,
            "- {}{}: ",
            tool.name,
            if tool.read_only { " (read-only)" } else { "" }
        );
        let _ = write!(
            prompt,
            "reads {}",
            if reads.is_empty() {
                "nothing".into()
            } else {
                reads.join(", ")
            }
        );
        if !tool.read_only {
            let _ = write!(
                prompt,
                "; writes {}",
                if writes.is_empty() {
                    "nothing".into()
                } else {
                    writes.join(", ")
                }
            );
        }
        prompt.push('\n');
    }
    prompt
}
