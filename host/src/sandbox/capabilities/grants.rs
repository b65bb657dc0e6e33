//! What a tool may reach in the file system, as grants: the access a
//! path needs or a grant gives, the directories granted, and the check of a
//! path the model named against them (before any wasm runs).

use std::path::{Component, Path, PathBuf};

/// The kind of access a path argument needs, or a grant gives. `Write`
/// implies `Read`: a writable grant may also be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
}

impl Access {
    /// True when a grant of this access allows `needed`.
    pub fn allows(self, needed: Access) -> bool {
        self >= needed
    }

    /// The verb, as in "may not `read` `x`".
    pub fn verb(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }

    /// A grant's access as users read it: `read-only` or `read-write`.
    pub fn grant_label(self) -> &'static str {
        match self {
            Access::Read => "read-only",
            Access::Write => "read-write",
        }
    }
}

/// One directory a tool may use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Grant {
    /// The directory on the host, canonical.
    pub host_path: PathBuf,
    /// Where the guest sees it: the path as the user wrote it relative to
    /// the workspace (`.`, `src`), or the absolute path they wrote.
    pub guest_path: String,
    /// `Read` is read-only, `Write` read-write.
    pub access: Access,
}

/// Drops grants that add nothing: a directory inside a writable grant, or a
/// read-only directory inside another grant. What remains has the property
/// the guest's path resolution relies on: the longest matching grant is
/// writable exactly when any matching grant is.
pub fn simplify(mut grants: Vec<Grant>) -> Vec<Grant> {
    grants.sort_by(|a, b| {
        a.guest_path
            .cmp(&b.guest_path)
            .then(b.access.cmp(&a.access))
    });
    grants.dedup_by(|later, earlier| later.guest_path == earlier.guest_path);
    let all = grants.clone();
    grants.retain(|g| {
        !all.iter().any(|h| {
            h.guest_path != g.guest_path
                && guest_contains(&h.guest_path, &g.guest_path)
                && h.access.allows(g.access)
        })
    });
    grants
}

/// File operations run on the calling thread instead of tokio's blocking
/// pool: a tool call is a handful of small local reads, and the hop to
/// another thread and back cost more than the reads. The preopens and the
/// guard's own descriptors ([`filesystem`]) share the setting.
pub(crate) const BLOCKING_CURRENT_THREAD: bool = true;

/// Where a path argument lands, or why it may not be used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PathCheck {
    /// Inside a grant; pass the argument on unchanged.
    Allowed,
    /// Inside a grant once rewritten: an absolute path inside the
    /// workspace, which the guest only knows by its relative name.
    Rewrite(String),
    /// Outside every grant that allows `access`.
    Denied,
}

/// Checks one path argument against a tool's grants.
pub(crate) fn check_path(
    path: &str,
    access: Access,
    grants: &[Grant],
    workspace: &Path,
) -> PathCheck {
    let as_path = Path::new(path);
    // A relative path that climbs out of the workspace (`../lib/x`) is
    // where it lands, which only a grant outside the workspace names (by
    // its absolute path): checked, and passed on, as that.
    let climbed;
    let (as_path, climbs) = if as_path.is_relative() && normalize(as_path).is_none() {
        climbed = workspace.join(as_path);
        (climbed.as_path(), true)
    } else {
        (as_path, false)
    };
    let (guest, rewritten) = if as_path.is_absolute() {
        let normal = normalize(as_path);
        match normal
            .as_deref()
            .and_then(|n| n.strip_prefix(workspace).ok())
        {
            Some(inside) => {
                let relative = if inside.as_os_str().is_empty() {
                    ".".to_string()
                } else {
                    inside.to_string_lossy().into_owned()
                };
                (Some(relative.clone()), Some(relative))
            }
            None => {
                let guest = normal.map(|n| n.to_string_lossy().into_owned());
                let rewritten = guest.clone().filter(|_| climbs);
                (guest, rewritten)
            }
        }
    } else {
        (
            normalize(as_path).map(|n| {
                if n.as_os_str().is_empty() {
                    ".".into()
                } else {
                    n.to_string_lossy().into_owned()
                }
            }),
            None,
        )
    };
    let Some(guest) = guest else {
        return PathCheck::Denied;
    };
    let best = grants
        .iter()
        .filter(|g| guest_contains(&g.guest_path, &guest))
        .max_by_key(|g| g.guest_path.len());
    match best {
        Some(g) if g.access.allows(access) => match rewritten {
            Some(relative) => PathCheck::Rewrite(relative),
            None => PathCheck::Allowed,
        },
        _ => PathCheck::Denied,
    }
}

/// Resolves `.` and `..` without touching the disk. `None` when a relative
/// path climbs above its start (out of the workspace).
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    if path.is_absolute() {
                        continue; // `/..` is `/`
                    }
                    return None;
                }
                out.pop();
                depth -= 1;
            }
            Component::Normal(name) => {
                out.push(name);
                depth += 1;
            }
        }
    }
    Some(out)
}

/// True when guest path `inner` is `outer` or lies inside it.
fn guest_contains(outer: &str, inner: &str) -> bool {
    let outer_abs = outer.starts_with('/');
    let inner_abs = inner.starts_with('/');
    if outer_abs != inner_abs {
        return false;
    }
    if outer == "." {
        return !inner_abs;
    }
    Path::new(inner).starts_with(Path::new(outer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(guest: &str, access: Access) -> Grant {
        Grant {
            host_path: Path::new("/ws").join(guest),
            guest_path: guest.into(),
            access,
        }
    }

    fn check(path: &str, access: Access, grants: &[Grant]) -> PathCheck {
        check_path(path, access, grants, Path::new("/ws"))
    }

    #[test]
    fn workspace_grant_allows_relative_paths_inside_it() {
        let grants = [grant(".", Access::Read)];
        assert_eq!(
            check("src/main.rs", Access::Read, &grants),
            PathCheck::Allowed
        );
        assert_eq!(
            check("./a/../b.txt", Access::Read, &grants),
            PathCheck::Allowed
        );
        assert_eq!(check(".", Access::Read, &grants), PathCheck::Allowed);
    }

    #[test]
    fn rejects_escape_attempts() {
        let grants = [grant(".", Access::Write)];
        for path in [
            "..",
            "../secret",
            "a/../../secret",
            "/etc/passwd",
            "/ws/../etc/passwd",
            "/wsx/file",
        ] {
            assert_eq!(
                check(path, Access::Read, &grants),
                PathCheck::Denied,
                "{path}"
            );
            assert_eq!(
                check(path, Access::Write, &grants),
                PathCheck::Denied,
                "{path}"
            );
        }
    }

    #[test]
    fn absolute_paths_inside_the_workspace_are_rewritten_to_guest_paths() {
        let grants = [grant(".", Access::Read)];
        assert_eq!(
            check("/ws/src/lib.rs", Access::Read, &grants),
            PathCheck::Rewrite("src/lib.rs".into())
        );
        assert_eq!(
            check("/ws", Access::Read, &grants),
            PathCheck::Rewrite(".".into())
        );
    }

    #[test]
    fn write_needs_a_writable_grant() {
        let grants = [grant(".", Access::Read), grant("out", Access::Write)];
        assert_eq!(
            check("out/report.md", Access::Write, &grants),
            PathCheck::Allowed
        );
        assert_eq!(
            check("src/lib.rs", Access::Write, &grants),
            PathCheck::Denied
        );
        assert_eq!(
            check("outside.md", Access::Write, &grants),
            PathCheck::Denied
        );
        assert_eq!(
            check("src/lib.rs", Access::Read, &grants),
            PathCheck::Allowed
        );
    }

    #[test]
    fn a_subdirectory_grant_does_not_open_its_siblings() {
        let grants = [grant("src", Access::Read)];
        assert_eq!(check("src/a.rs", Access::Read, &grants), PathCheck::Allowed);
        assert_eq!(check("srcx/a.rs", Access::Read, &grants), PathCheck::Denied);
        assert_eq!(check("docs/a.md", Access::Read, &grants), PathCheck::Denied);
        assert_eq!(check(".", Access::Read, &grants), PathCheck::Denied);
    }

    #[test]
    fn absolute_grants_match_absolute_paths() {
        let grants = [Grant {
            host_path: "/data".into(),
            guest_path: "/data".into(),
            access: Access::Read,
        }];
        assert_eq!(
            check("/data/x.csv", Access::Read, &grants),
            PathCheck::Allowed
        );
        assert_eq!(check("/database", Access::Read, &grants), PathCheck::Denied);
        assert_eq!(
            check("data/x.csv", Access::Read, &grants),
            PathCheck::Denied
        );
    }

    #[test]
    fn a_relative_path_out_of_the_workspace_is_where_it_lands() {
        let grants = [
            grant(".", Access::Read),
            Grant {
                host_path: "/lib".into(),
                guest_path: "/lib".into(),
                access: Access::Read,
            },
        ];
        // Granted outside: passed on by the name the guest knows it by.
        assert_eq!(
            check("../lib/x.rs", Access::Read, &grants),
            PathCheck::Rewrite("/lib/x.rs".into())
        );
        // Back into the workspace: the relative name.
        assert_eq!(
            check("../ws/src/a.rs", Access::Read, &grants),
            PathCheck::Rewrite("src/a.rs".into())
        );
        // Nowhere granted: denied as before.
        assert_eq!(
            check("../etc/passwd", Access::Read, &grants),
            PathCheck::Denied
        );
        assert_eq!(
            check("../lib/x.rs", Access::Write, &grants),
            PathCheck::Denied
        );
    }

    #[test]
    fn simplify_drops_grants_that_add_nothing() {
        let grants = simplify(vec![
            grant(".", Access::Write),
            grant("src", Access::Read),
            grant("out", Access::Write),
            grant(".", Access::Read),
        ]);
        assert_eq!(grants, vec![grant(".", Access::Write)]);
        let grants = simplify(vec![
            grant(".", Access::Read),
            grant("out", Access::Write),
            grant("src", Access::Read),
        ]);
        assert_eq!(
            grants,
            vec![grant(".", Access::Read), grant("out", Access::Write)]
        );
    }
}
