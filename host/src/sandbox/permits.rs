//! Grants the user gives while a session runs, when asked: the smallest
//! grant that would have let a refused call through ([`wanted`]), one the
//! user types by hand checked the same way ([`Sandbox::permit`]), and a
//! tool's policy with those given so far ([`widened`]). Each is one
//! directory, one protected path, one origin or one program, for one tool:
//! never "everything", never another tool.
//!
//! The sandbox keeps none of them: a front end keeps its session's (a
//! chat's, one MCP session's) and passes them with each call
//! ([`CallOptions::permits`](super::CallOptions)), so one MCP client's
//! answer never widens another's, and a new session starts with none.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::capabilities::exec::{Lookup, Program};
use super::capabilities::filesystem::Denial;
use super::capabilities::network::account::{NetDenial, NetRefusal};
use super::capabilities::network::grant::{Destination, NetGrant};
use super::capabilities::protect::{HEAD, Protection, lift_target};
use super::capabilities::{Access, Grant, simplify};
use super::outcome::ToolFault;
use super::policy::ToolPolicy;
use crate::terminal::shell_word;

/// What a permit lets its tool do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermitKind {
    /// Read a directory (`--allow-read`).
    Read,
    /// Read and write a directory (`--allow-write`).
    Write,
    /// Change one protected path, through a directory it may write
    /// (`--allow-write` naming the path).
    Lift,
    /// Reach one origin (`--allow-net`).
    Net,
    /// Run one native program (`--allow-exec`).
    Exec,
}

/// One grant to one tool, given in a session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Permit {
    pub tool: String,
    pub kind: PermitKind,
    /// A canonical host directory (read, write), a host path (lift),
    /// `scheme://host[:port]` (net) or a program's name (exec).
    pub target: String,
}

impl Permit {
    /// The target as the user types it: relative to the workspace inside
    /// it, else as it is.
    pub fn shown(&self, workspace: &Path) -> String {
        match self.kind {
            PermitKind::Read | PermitKind::Write | PermitKind::Lift => {
                match Path::new(&self.target).strip_prefix(workspace) {
                    Ok(inside) if inside.as_os_str().is_empty() => ".".into(),
                    Ok(inside) => inside.to_string_lossy().into_owned(),
                    Err(_) => self.target.clone(),
                }
            }
            PermitKind::Net | PermitKind::Exec => self.target.clone(),
        }
    }

    /// The flag that gives the same grant from the start, ready to paste.
    pub fn flag(&self, workspace: &Path) -> String {
        let flag = match self.kind {
            PermitKind::Read => "--allow-read",
            PermitKind::Write | PermitKind::Lift => "--allow-write",
            PermitKind::Net => "--allow-net",
            PermitKind::Exec => "--allow-exec",
        };
        let word = shell_word(&format!("{}={}", self.tool, self.shown(workspace)));
        format!("{flag} {word}")
    }

    /// What it lets the tool do, after the tool's name: "write in `src`".
    pub fn what(&self, workspace: &Path) -> String {
        let shown = self.shown(workspace);
        match self.kind {
            PermitKind::Read => format!("read in `{shown}`"),
            PermitKind::Write => format!("write in `{shown}`"),
            PermitKind::Lift if Path::new(&shown).file_name() == Some(OsStr::new(HEAD)) => {
                // A lift of a `HEAD` lifts the repository it marks.
                let dir = Path::new(&shown)
                    .parent()
                    .filter(|dir| !dir.as_os_str().is_empty())
                    .map_or(".".into(), Path::to_string_lossy);
                format!("change the repository `{dir}` (it holds a `{HEAD}`)")
            }
            PermitKind::Lift => format!("change the protected `{shown}`"),
            PermitKind::Net => format!("reach `{shown}`"),
            PermitKind::Exec => format!("run the program `{shown}` natively"),
        }
    }
}

/// The smallest grant that would have let `tool` past `fault`, when it is
/// one a session may offer: a directory outside its grants (the one the
/// path is in, not the workspace), a protected path a flag would lift that
/// is not toolhost's own, an origin without a grant. None for a refusal
/// no grant changes (a link out, a record, a limit), for a write by a tool
/// that declares itself read-only, and for what the tool already holds.
pub(crate) fn wanted(
    fault: &ToolFault,
    tool: &str,
    policy: &ToolPolicy,
    protection: &Protection,
) -> Option<Permit> {
    let workspace = protection.workspace();
    let writes = |access: Access| access == Access::Write;
    let read_only = policy.fs.declared_read_only;
    let dir_permit = |dir: PathBuf, access: Access| {
        let held = policy
            .fs
            .grants
            .iter()
            .any(|grant| dir.starts_with(&grant.host_path) && grant.access.allows(access));
        // A write grant naming a protected directory is a lift: asked as one.
        let protected = writes(access) && protection.names_protected(&dir);
        let refused = held || protected || (read_only && writes(access));
        (!refused).then(|| Permit {
            tool: tool.to_string(),
            kind: match access {
                Access::Read => PermitKind::Read,
                Access::Write => PermitKind::Write,
            },
            target: dir.to_string_lossy().into_owned(),
        })
    };
    match fault {
        ToolFault::Denied { path, access, .. } => {
            let host = lexical(workspace, Path::new(path))?;
            dir_permit(directory_of(&host)?, *access)
        }
        ToolFault::FsDenied(Denial::ReadOnly {
            path,
            declared: false,
            ..
        }) => {
            let host = lexical(workspace, Path::new(path))?;
            dir_permit(existing_dir(host.parent()?)?, Access::Write)
        }
        // Offered only where one flag lifts it, as that flag would.
        ToolFault::FsDenied(Denial::Protected { hit, .. }) if !read_only && hit.lift.len() == 1 => {
            let written = lexical(workspace, Path::new(&hit.lift[0]))?;
            let path = lift_target(&written)?;
            let lifted = policy.fs.lifted.iter().any(|l| path.starts_with(l));
            let offered =
                protection.lifted_by(&written, &path, &[]) && protection.lift_offered(&path);
            // Asked, shown and recorded in the user's words (`.vscode`, not
            // where its link leads): the flag shown is the one that lifts it.
            (!lifted && offered).then(|| Permit {
                tool: tool.to_string(),
                kind: PermitKind::Lift,
                target: written.to_string_lossy().into_owned(),
            })
        }
        ToolFault::ExecNotGranted { program } => Some(Permit {
            tool: tool.to_string(),
            kind: PermitKind::Exec,
            target: program.clone(),
        }),
        ToolFault::NetDenied(NetDenial {
            url,
            refusal: NetRefusal::NotGranted,
            ..
        }) => {
            // One host by its exact name or address: a `*` the URL parser
            // lets through in a name would read back as a pattern.
            let to = Destination::of_url(url).ok()?;
            let exact = match &to.host {
                url::Host::Domain(name) => !name.is_empty() && !name.contains('*'),
                url::Host::Ipv4(_) | url::Host::Ipv6(_) => true,
            };
            exact.then(|| Permit {
                tool: tool.to_string(),
                kind: PermitKind::Net,
                target: origin(&to),
            })
        }
        _ => None,
    }
}

/// A grant a refused call asks for, and whether the call may simply run
/// again with it: when it was refused before any of its code ran (a path
/// argument), or the tool declares itself read-only. Else it may have done
/// part of its work (a shell's first command), and running it again would
/// do that twice: the grant is for its next call, which the model makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub permit: Permit,
    pub rerun: bool,
    /// Why what a lift opens is protected (the refusal's reason), for the
    /// question: the user should know what they allow.
    pub why: Option<String>,
}

/// The [`Ask`] of a call refused with `fault`, when it wants a grant a
/// session may give ([`wanted`]); `rerun` as [`Ask`] says.
pub(crate) fn ask_for(
    fault: &ToolFault,
    tool: &str,
    policy: &ToolPolicy,
    protection: &Protection,
    rerun: bool,
) -> Option<Ask> {
    let permit = wanted(fault, tool, policy, protection)?;
    let why = match fault {
        ToolFault::FsDenied(Denial::Protected { hit, .. }) if permit.kind == PermitKind::Lift => {
            Some(hit.why.clone())
        }
        _ => None,
    };
    Some(Ask { permit, rerun, why })
}

/// `scheme://host[:port]`, the port left out when it is the scheme's own.
pub(crate) fn origin(to: &Destination) -> String {
    let default = matches!((to.scheme, to.port), ("https", 443) | ("http", 80));
    if default {
        format!("{}://{}", to.scheme, to.host)
    } else {
        format!("{}://{}:{}", to.scheme, to.host, to.port)
    }
}

/// `path` (absolute, or relative to the workspace) with `.` and `..`
/// taken away by name, as the guest's path check reads it.
fn lexical(workspace: &Path, path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in workspace.join(path).components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out.is_absolute().then_some(out)
}

/// The directory a path names, or the one it is in: itself when it is
/// one, else the nearest directory above it that is there. Canonical, so
/// the user is asked for where it really is.
fn directory_of(host: &Path) -> Option<PathBuf> {
    match host.canonicalize() {
        Ok(real) if real.is_dir() => Some(real),
        _ => existing_dir(host.parent()?),
    }
}

/// The nearest directory at or above `path` that is there, canonical.
fn existing_dir(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find_map(|dir| dir.canonicalize().ok().filter(|real| real.is_dir()))
}

/// `policy` with the permits of `tool` among `permits` added, or `None`
/// when there are none (the tool runs as loaded). A permit that no longer
/// applies (a program gone from `PATH`, a malformed origin) adds nothing.
pub(crate) fn widened(
    tool: &str,
    policy: &ToolPolicy,
    permits: &[Permit],
    protection: &Protection,
) -> Option<ToolPolicy> {
    let workspace = protection.workspace();
    let mut mine = permits
        .iter()
        .filter(|permit| permit.tool == tool)
        .peekable();
    mine.peek()?;
    let mut policy = policy.clone();
    let read_only = policy.fs.declared_read_only;
    for permit in mine {
        match permit.kind {
            PermitKind::Read | PermitKind::Write => {
                let access = if permit.kind == PermitKind::Write && !read_only {
                    Access::Write
                } else {
                    Access::Read
                };
                policy.fs.grants.push(Grant {
                    host_path: PathBuf::from(&permit.target),
                    guest_path: guest_path(workspace, &permit.target),
                    access,
                });
            }
            PermitKind::Lift if !read_only => {
                // Where the words lead now, and the words themselves (the
                // link on the way, which a change of its name reaches):
                // each only while the words still lift what is there. A
                // session's lift is found again at each call, and a link the
                // tool put at the words since must not carry it onto another
                // protection (`.vscode -> a-repository.git`).
                let words = PathBuf::from(&permit.target);
                let lifts = |lands: &Path| protection.lifted_by(&words, lands, &[]);
                if let Some(lands) = lift_target(&words).filter(|lands| lifts(lands)) {
                    policy.fs.lifted.push(lands);
                }
                if lifts(&words) && !policy.fs.lifted.contains(&words) {
                    policy.fs.lifted.push(words);
                }
            }
            PermitKind::Lift => {}
            PermitKind::Net => {
                if let Ok(grant) = NetGrant::parse(&permit.target) {
                    policy.net.grants.push(grant);
                }
            }
            PermitKind::Exec => {
                let known = policy.exec.programs.iter().any(|p| p.name == permit.target);
                if !known && let Ok(program) = Program::find(&permit.target, &Lookup::from_env()) {
                    policy.exec.programs.push(program);
                }
            }
        }
    }
    policy.fs.grants = simplify(std::mem::take(&mut policy.fs.grants));
    Some(policy)
}

/// Where the guest sees the directory `target`: relative to the
/// workspace inside it, else by its absolute path, as the config layer
/// names a grant.
fn guest_path(workspace: &Path, target: &str) -> String {
    match Path::new(target).strip_prefix(workspace) {
        Ok(inside) if inside.as_os_str().is_empty() => ".".into(),
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) => target.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::sandbox::capabilities::protect::{Hit, ProtectedPath, RecordPath};

    struct Fixture {
        _dir: tempfile::TempDir,
        root: PathBuf,
        protection: Arc<Protection>,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        for made in ["docs", "out", ".git"] {
            std::fs::create_dir_all(root.join(made)).expect("mkdir");
        }
        std::fs::write(root.join("docs/a.md"), "a").expect("write");
        let spec = |relative: &str, toolhosts_own| ProtectedPath {
            relative: relative.into(),
            why: "it matters".into(),
            at_any_depth: true,
            toolhosts_own,
        };
        let paths = vec![
            spec("toolhost.toml", true),
            spec(".toolhost", true),
            spec(".git", false),
            spec(".mcp.json", false),
        ];
        let protection = Arc::new(Protection::new(&root, paths, &RecordPath::of_workspace()));
        Fixture {
            _dir: dir,
            root,
            protection,
        }
    }

    fn denied(path: &str, access: Access) -> ToolFault {
        ToolFault::Denied {
            path: path.into(),
            access,
            grants: Vec::new(),
        }
    }

    fn protected(path: &str) -> ToolFault {
        ToolFault::FsDenied(Denial::Protected {
            path: path.into(),
            hit: Hit::new(path, "it matters"),
        })
    }

    fn net(url: &str, refusal: NetRefusal) -> ToolFault {
        ToolFault::NetDenied(NetDenial {
            method: "GET".into(),
            url: url.into(),
            refusal,
            grants: Vec::new(),
        })
    }

    /// What `t` would be asked for past `fault`, as `KIND TARGET` with the
    /// target shown as the user types it.
    fn asked(f: &Fixture, fault: &ToolFault, policy: &ToolPolicy) -> Option<String> {
        wanted(fault, "t", policy, &f.protection)
            .map(|permit| format!("{:?} {}", permit.kind, permit.shown(&f.root)))
    }

    #[test]
    fn the_smallest_grant_is_asked_for_and_never_toolhosts_own() {
        let f = fixture();
        let none = ToolPolicy::default();
        let cases = [
            (denied("docs/a.md", Access::Read), Some("Read docs")),
            (denied("docs", Access::Read), Some("Read docs")),
            (
                denied("out/new/deep/x.txt", Access::Write),
                Some("Write out"),
            ),
            (denied("./docs/../out/x", Access::Write), Some("Write out")),
            // A write grant naming a protected directory would be a lift.
            (denied(".git/x", Access::Write), None),
            (protected(".mcp.json"), Some("Lift .mcp.json")),
            (protected(".git"), Some("Lift .git")),
            (protected("toolhost.toml"), None),
            (protected(".toolhost/plugins"), None),
            (
                net("https://docs.rs/serde/1.0/x", NetRefusal::NotGranted),
                Some("Net https://docs.rs"),
            ),
            (
                net("http://127.0.0.1:8080/x", NetRefusal::NotGranted),
                Some("Net http://127.0.0.1:8080"),
            ),
            (
                net(
                    "https://evil.test/x",
                    NetRefusal::Private {
                        address: [127, 0, 0, 1].into(),
                    },
                ),
                None,
            ),
            // A name the URL parser lets through with a `*` is no host.
            (net("https://*/x", NetRefusal::NotGranted), None),
            (net("https://*.com/x", NetRefusal::NotGranted), None),
            (ToolFault::Cancelled, None),
        ];
        for (fault, expected) in cases {
            assert_eq!(asked(&f, &fault, &none).as_deref(), expected, "{fault:?}");
        }
    }

    #[test]
    fn a_read_only_tool_is_asked_for_no_write_and_what_it_holds_is_not_asked_again() {
        let f = fixture();
        let read_only = ToolPolicy::default().read_only();
        assert_eq!(asked(&f, &denied("out/x", Access::Write), &read_only), None);
        assert_eq!(asked(&f, &protected(".mcp.json"), &read_only), None);
        assert_eq!(
            asked(&f, &denied("docs/a.md", Access::Read), &read_only).as_deref(),
            Some("Read docs")
        );
        let mut holds = ToolPolicy::default();
        holds.fs.grants.push(Grant {
            host_path: f.root.join("out"),
            guest_path: "out".into(),
            access: Access::Write,
        });
        assert_eq!(asked(&f, &denied("out/x", Access::Write), &holds), None);
    }

    #[test]
    fn a_permit_widens_its_own_tool_only() {
        let f = fixture();
        let permits = [
            Permit {
                tool: "t".into(),
                kind: PermitKind::Write,
                target: f.root.join("out").display().to_string(),
            },
            Permit {
                tool: "other".into(),
                kind: PermitKind::Net,
                target: "https://docs.rs".into(),
            },
        ];
        let policy = ToolPolicy::default();
        assert_eq!(widened("nobody", &policy, &permits, &f.protection), None);
        let mine = widened("t", &policy, &permits, &f.protection).expect("widened");
        assert_eq!(
            mine.fs.grants,
            [Grant {
                host_path: f.root.join("out"),
                guest_path: "out".into(),
                access: Access::Write,
            }]
        );
        assert!(mine.net.grants.is_empty());
        // A tool that declares itself read-only reads what it is given.
        let read_only =
            widened("t", &policy.read_only(), &permits, &f.protection).expect("widened");
        assert_eq!(read_only.fs.grants[0].access, Access::Read);
    }

    /// Red team (fourth round): a lift given in a session is found again
    /// at each call, and the tool had replaced `.mcp.json` by a link to a
    /// repository the user had just refused: the next call could write its
    /// hooks. A lift applies only while its words lift what is there.
    #[test]
    fn a_sessions_lift_does_not_follow_a_link_made_since_onto_another_protection() {
        let f = fixture();
        let lift = Permit {
            tool: "t".into(),
            kind: PermitKind::Lift,
            target: f.root.join(".mcp.json").display().to_string(),
        };
        let policy = ToolPolicy::default();
        let mine =
            widened("t", &policy, std::slice::from_ref(&lift), &f.protection).expect("widened");
        assert_eq!(mine.fs.lifted, [f.root.join(".mcp.json")]);
        // The tool makes `.mcp.json` a link to a bare repository.
        for made in ["junk.git/objects", "junk.git/refs"] {
            std::fs::create_dir_all(f.root.join(made)).expect("mkdir");
        }
        std::fs::write(f.root.join("junk.git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        std::os::unix::fs::symlink("junk.git", f.root.join(".mcp.json")).expect("symlink");
        // Neither where it leads now nor the link itself (through which a
        // repository is now reached) is lifted.
        let mine = widened("t", &policy, &[lift], &f.protection).expect("widened");
        assert_eq!(mine.fs.lifted, Vec::<PathBuf>::new());
    }

    #[test]
    fn a_flag_is_quoted_for_a_shell_when_its_path_needs_it() {
        let permit = |target: &str| Permit {
            tool: "bash".into(),
            kind: PermitKind::Write,
            target: target.into(),
        };
        let ws = Path::new("/ws");
        assert_eq!(permit("/ws/src").flag(ws), "--allow-write bash=src");
        assert_eq!(permit("/ws").flag(ws), "--allow-write bash=.");
        assert_eq!(
            permit("/ws/my notes").flag(ws),
            "--allow-write 'bash=my notes'"
        );
        assert_eq!(
            permit("/data/it's").flag(ws),
            r"--allow-write 'bash=/data/it'\''s'"
        );
    }
}
