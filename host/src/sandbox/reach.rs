//! What a tool may reach (its directories and their access, its network
//! grants), said one way for every reader: the system prompt, the MCP
//! server's instructions, `toolhost tools`, chat's `/tools`, the refusal
//! texts (`outcome`, `network::refusal`) and the session record. The model
//! that knows a tool's directories and hosts does not discover them by
//! failing, and the refusal it reads names the same grants in the same
//! words.
//!
//! A [`Reach`] borrows its parts, so a loaded [`Tool`], a tool recorded in
//! a session file and a fault that carries only the grants it was refused
//! under all describe themselves through it.

use super::capabilities::network::grant::NetGrant;
use super::capabilities::protect::ProtectedPath;
use super::capabilities::{Access, Grant};

/// One tool's directories and hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach<'a> {
    pub tool: &'a str,
    /// The tool declared it never writes: its directories are all
    /// read-only, and the line says so once instead of "writes nothing".
    pub read_only: bool,
    /// Each directory as the tool sees it, with its access.
    pub dirs: Vec<(&'a str, Access)>,
    /// Each network grant as the user wrote it (`https://docs.rs`).
    pub hosts: Vec<&'a str>,
    /// What each other capability gives it, as `name: what`
    /// (`environment: HOME, LANG`).
    pub more: Vec<String>,
}

impl<'a> Reach<'a> {
    /// The reach of `tool` as far as `grants` tell: what a filesystem
    /// refusal knows.
    pub(crate) fn of_dirs(tool: &'a str, grants: &'a [Grant]) -> Self {
        Reach {
            tool,
            read_only: false,
            dirs: dirs_of(grants),
            hosts: Vec::new(),
            more: Vec::new(),
        }
    }

    /// The reach of `tool` as far as its network grants tell: what a
    /// network refusal knows.
    pub(crate) fn of_hosts(tool: &'a str, grants: &'a [NetGrant]) -> Self {
        Reach {
            tool,
            read_only: false,
            dirs: Vec::new(),
            hosts: grants.iter().map(NetGrant::as_str).collect(),
            more: Vec::new(),
        }
    }

    /// `write_file: reads .; writes out`, `read_file (read-only): reads .`,
    /// and for a tool with network grants `; reaches https://docs.rs`: the
    /// line each tool gets in the system prompt, the MCP instructions and
    /// chat's `/tools`.
    pub fn line(&self) -> String {
        let list = |items: Vec<&str>| {
            if items.is_empty() {
                "nothing".to_string()
            } else {
                items.join(", ")
            }
        };
        let reads = list(self.dirs.iter().map(|(path, _)| *path).collect());
        let mut line = if self.read_only {
            format!("{} (read-only): reads {reads}", self.tool)
        } else {
            let writes = list(self.paths_allowing(Access::Write).collect());
            format!("{}: reads {reads}; writes {writes}", self.tool)
        };
        if !self.hosts.is_empty() {
            line.push_str("; reaches ");
            line.push_str(&self.hosts.join(", "));
        }
        for more in &self.more {
            line.push_str("; ");
            line.push_str(more);
        }
        line
    }

    /// "`.` (read-only), `out` (read-write)": the directories that allow
    /// `need`, for a text that tells the model where to go instead.
    pub fn dir_list(&self, need: Access) -> String {
        self.dirs
            .iter()
            .filter(|(_, access)| access.allows(need))
            .map(|(path, access)| format!("`{path}` ({})", access.grant_label()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether any directory allows `need`.
    pub fn may(&self, need: Access) -> bool {
        self.paths_allowing(need).next().is_some()
    }

    /// ". (read-only), out (read-write)", or "none": `toolhost tools`,
    /// which makes the whole line inert for the terminal itself.
    pub fn dirs_plain(&self) -> String {
        if self.dirs.is_empty() {
            return "none".into();
        }
        self.dirs
            .iter()
            .map(|(path, access)| format!("{path} ({})", access.grant_label()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// "This tool may reach only `https://docs.rs`." or that it has no
    /// network access.
    pub fn host_sentence(&self) -> String {
        if self.hosts.is_empty() {
            return "This tool has no network access.".into();
        }
        let quoted: Vec<String> = self.hosts.iter().map(|h| format!("`{h}`")).collect();
        format!("This tool may reach only {}.", quoted.join(", "))
    }

    fn paths_allowing(&self, need: Access) -> impl Iterator<Item = &'a str> + '_ {
        self.dirs
            .iter()
            .filter(move |(_, access)| access.allows(need))
            .map(|(path, _)| *path)
    }
}

pub(crate) fn dirs_of(grants: &[Grant]) -> Vec<(&str, Access)> {
    grants
        .iter()
        .map(|g| (g.guest_path.as_str(), g.access))
        .collect()
}

/// "No tool may change these paths ...": the sentence after the tools'
/// lines in the system prompt and the MCP instructions, or `None` when
/// nothing is protected.
pub fn protected_sentence(protected: &[&ProtectedPath]) -> Option<String> {
    let quoted = |any_depth: bool| -> Vec<String> {
        protected
            .iter()
            .filter(|p| p.at_any_depth == any_depth)
            .map(|p| format!("`{}`", p.relative))
            .collect()
    };
    let (exact, named) = (quoted(false), quoted(true));
    let mut parts = Vec::new();
    if !exact.is_empty() {
        parts.push(exact.join(", "));
    }
    if !named.is_empty() {
        parts.push(format!("anything named {} at any depth", named.join(", ")));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "No tool may change these paths, even inside a directory it may write: {}. \
         Read them if you need to, but make your changes elsewhere.",
        parts.join(", and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach<'a>(read_only: bool, dirs: Vec<(&'a str, Access)>, hosts: Vec<&'a str>) -> Reach<'a> {
        Reach {
            tool: "t",
            read_only,
            dirs,
            hosts,
            more: Vec::new(),
        }
    }

    #[test]
    fn the_line_names_reads_writes_and_hosts() {
        let dirs = vec![(".", Access::Read), ("out", Access::Write)];
        assert_eq!(
            reach(false, dirs.clone(), vec![]).line(),
            "t: reads ., out; writes out"
        );
        assert_eq!(
            reach(
                false,
                vec![],
                vec!["https://docs.rs", "http://localhost:8080"]
            )
            .line(),
            "t: reads nothing; writes nothing; reaches https://docs.rs, http://localhost:8080"
        );
        assert_eq!(
            reach(true, vec![(".", Access::Read)], vec![]).line(),
            "t (read-only): reads ."
        );
    }

    #[test]
    fn lists_name_only_the_directories_that_allow_what_is_needed() {
        let r = reach(
            false,
            vec![(".", Access::Read), ("out", Access::Write)],
            vec![],
        );
        assert_eq!(
            r.dir_list(Access::Read),
            "`.` (read-only), `out` (read-write)"
        );
        assert_eq!(r.dir_list(Access::Write), "`out` (read-write)");
        assert!(r.may(Access::Write));
        assert!(!reach(false, vec![(".", Access::Read)], vec![]).may(Access::Write));
        assert_eq!(r.dirs_plain(), ". (read-only), out (read-write)");
        assert_eq!(reach(false, vec![], vec![]).dirs_plain(), "none");
    }

    #[test]
    fn the_host_sentence_quotes_each_grant_or_says_there_is_none() {
        assert_eq!(
            reach(false, vec![], vec![]).host_sentence(),
            "This tool has no network access."
        );
        assert_eq!(
            reach(
                false,
                vec![],
                vec!["https://docs.rs", "http://10.0.0.5:8080"]
            )
            .host_sentence(),
            "This tool may reach only `https://docs.rs`, `http://10.0.0.5:8080`."
        );
    }

    #[test]
    fn the_protected_sentence_splits_exact_paths_from_names() {
        let path = |relative: &str, at_any_depth| ProtectedPath {
            relative: relative.into(),
            why: String::new(),
            at_any_depth,
            toolhosts_own: false,
        };
        assert_eq!(protected_sentence(&[]), None);
        assert_eq!(
            protected_sentence(&[&path("toolhost.toml", false), &path(".git", true)]).as_deref(),
            Some(
                "No tool may change these paths, even inside a directory it may write: \
                 `toolhost.toml`, and anything named `.git` at any depth. Read them if you need \
                 to, but make your changes elsewhere."
            )
        );
    }
}
