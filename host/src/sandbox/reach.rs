//! What a tool may reach, said one way for every reader: the system
//! prompt, the MCP server's instructions and `toolhost tools`. The model
//! that knows a tool's directories and hosts does not discover them by
//! failing; the refusal texts (`outcome`, `network::refusal`) name the same
//! grants.

use super::{Access, Tool};

impl Tool {
    /// `write_file: reads .; writes out`, `read_file (read-only): reads .`,
    /// and for a tool with network grants `; reaches https://docs.rs`.
    pub fn reach(&self) -> String {
        let list = |items: Vec<&str>| {
            if items.is_empty() {
                "nothing".to_string()
            } else {
                items.join(", ")
            }
        };
        let grants = &self.policy.grants;
        let reads = list(grants.iter().map(|g| g.guest_path.as_str()).collect());
        let mut line = if self.read_only {
            format!("{} (read-only): reads {reads}", self.name)
        } else {
            let writes = list(
                grants
                    .iter()
                    .filter(|g| g.access == Access::Write)
                    .map(|g| g.guest_path.as_str())
                    .collect(),
            );
            format!("{}: reads {reads}; writes {writes}", self.name)
        };
        if !self.policy.net.is_empty() {
            line.push_str("; reaches ");
            line.push_str(&list(self.policy.net.iter().map(|g| g.as_str()).collect()));
        }
        line
    }

    /// Whether the tool may reach anything outside this machine's files:
    /// MCP's `openWorldHint`.
    pub fn open_world(&self) -> bool {
        !self.policy.net.is_empty()
    }
}
