//! What a tool may touch: directory grants, turned into a deny-by-default
//! `WasiCtx`; the WASI interfaces a plugin is linked against; and the
//! host-side check of path arguments.
//!
//! A tool gets exactly its grants as preopened directories (each opened
//! once and shared by the tools that have it: [`GrantDirs`]) and nothing else:
//! no environment variables, no arguments, no sockets, no name lookup, no
//! stdin. Clocks and random numbers are allowed. `wasi:filesystem/types` is
//! linked through [`filesystem`], which adds the rules a grant cannot say
//! (protected paths, links, the write budget); `wasi:http` through
//! [`network`], which refuses every request. The path check here only
//! makes refusals readable before any wasm runs; the preopens and the guard
//! are what enforce them.

mod beneath;
pub(crate) mod filesystem;
pub(crate) mod held;
mod listing;
pub(crate) mod network;
pub(crate) mod protect;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::filesystem::{Descriptor, Dir};
use wasmtime_wasi::{FsPerms, OpenMode, WasiCtx, WasiCtxBuilder, WasiView};
use wasmtime_wasi_http::WasiHttpView;

use super::limits;
use super::output::CapturedOutput;
use filesystem::{Guarded, GuardedFilesystem};

/// A store's state that can hand out the guarded file system view and the
/// `wasi:http` view whose hooks are the [`network::NetworkPolicy`].
pub(crate) trait SandboxView: WasiView + WasiHttpView {
    fn guarded_filesystem(&mut self) -> Guarded<'_>;
    /// The call's granted directories ([`GrantDirs`]).
    fn preopens(&mut self) -> PreopensView<'_>;
}

/// The resource table alone, for `wasi:io`.
struct Io;

impl HasData for Io {
    type Data<'a> = &'a mut ResourceTable;
}

/// Links WASI p2 interface by interface: what wasmtime-wasi's
/// `add_to_linker_async` links, except that `wasi:filesystem/types` goes
/// through the guard. What each interface may do is decided by the
/// per-call `WasiCtx` ([`wasi_ctx`]): sockets and name lookup are linked
/// (so components that import them load) and denied there; `wasi:http` is
/// linked and every request refused by [`network::NetworkPolicy`].
pub(crate) fn add_wasi_to_linker<T: SandboxView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView as _};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
    use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, io, random, sockets};
    use wasmtime_wasi::random::{WasiRandom, WasiRandomView as _};
    use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView as _};

    let l = linker;
    io::error::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    io::poll::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    io::streams::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    filesystem::preopens::add_to_linker::<T, GrantedDirs>(l, T::preopens)?;
    filesystem::types::add_to_linker::<T, GuardedFilesystem>(l, T::guarded_filesystem)?;
    random::random::add_to_linker::<T, WasiRandom>(l, T::random)?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, T::random)?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, T::random)?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    sockets::tcp_create_socket::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    sockets::instance_network::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    sockets::network::add_to_linker::<T, WasiSockets>(l, &Default::default(), T::sockets)?;
    sockets::ip_name_lookup::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    sockets::tcp::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    sockets::udp::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    sockets::udp_create_socket::add_to_linker::<T, WasiSockets>(l, T::sockets)?;
    network::add_to_linker(l)?;
    Ok(())
}

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

/// Each granted directory, opened once per host path and access when the
/// first tool with that grant loads, and shared by every tool that has it:
/// a plugin with thousands of tools would otherwise hold a descriptor per
/// tool and grant, and leave none for the calls. A handle stays on its
/// directory if that is renamed; a directory deleted while toolhost runs
/// stays unusable until the next start.
#[derive(Default)]
pub(crate) struct GrantDirs(BTreeMap<(PathBuf, Access), Result<Dir, String>>);

impl GrantDirs {
    /// `grants` as preopens, each directory opened only if no earlier tool
    /// had it.
    pub(crate) fn preopens(&mut self, grants: &[Grant]) -> Preopens {
        let mut dirs = Vec::with_capacity(grants.len());
        for grant in grants {
            let opened = self
                .0
                .entry((grant.host_path.clone(), grant.access))
                .or_insert_with(|| open_grant(grant));
            match opened {
                Ok(dir) => dirs.push((dir.clone(), grant.guest_path.clone())),
                Err(e) => return Preopens(Err(e.clone())),
            }
        }
        Preopens(Ok(Arc::from(dirs)))
    }
}

/// Opens `grant`'s directory as wasmtime-wasi's `preopened_dir` does
/// (`O_PATH | O_DIRECTORY`), read-only or read-write as granted.
fn open_grant(grant: &Grant) -> Result<Dir, String> {
    let file =
        cap_primitives::fs::open_ambient_dir(&grant.host_path, cap_primitives::ambient_authority())
            .map_err(|e| {
                format!(
                    "cannot open the granted directory `{}`: {}",
                    grant.host_path.display(),
                    limits::open_error(&e)
                )
            })?;
    let (perms, mode) = match grant.access {
        Access::Write => (FsPerms::ReadWrite, OpenMode::READ | OpenMode::WRITE),
        Access::Read => (FsPerms::ReadOnly, OpenMode::READ),
    };
    Ok(Dir::new(file, perms, mode, BLOCKING_CURRENT_THREAD))
}

/// A tool's granted directories, as shared handles ([`GrantDirs`]) and the
/// names the guest sees them by; each call's table gets clones of the
/// handles, not new descriptors.
pub(crate) struct Preopens(Result<Arc<[(Dir, String)]>, String>);

impl Preopens {
    /// No directories at all (`list-tools` at load).
    pub(crate) fn none() -> Self {
        Preopens(Ok(Arc::from(Vec::new())))
    }

    /// The shared handles for one call's store, or why a directory could
    /// not be opened.
    pub(crate) fn dirs(&self) -> Result<OpenDirs, String> {
        self.0.clone()
    }
}

/// A call's preopened directories, as `wasi:filesystem/preopens` hands
/// them out.
pub(crate) type OpenDirs = Arc<[(Dir, String)]>;

/// `wasi:filesystem/preopens` from a call's [`OpenDirs`].
struct GrantedDirs;

impl HasData for GrantedDirs {
    type Data<'a> = PreopensView<'a>;
}

/// What `get-directories` needs: the call's directories and its table.
pub(crate) struct PreopensView<'a> {
    pub(crate) dirs: &'a OpenDirs,
    pub(crate) table: &'a mut ResourceTable,
}

impl wasmtime_wasi::p2::bindings::filesystem::preopens::Host for PreopensView<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let mut handed = Vec::with_capacity(self.dirs.len());
        for (dir, name) in self.dirs.iter() {
            handed.push((self.table.push(Descriptor::Dir(dir.clone()))?, name.clone()));
        }
        Ok(handed)
    }
}

/// Builds the guest's WASI context: stdout and stderr into bounded
/// buffers, everything else denied. Its grants are not in it:
/// `wasi:filesystem/preopens` hands them out from the store's
/// [`OpenDirs`].
pub(crate) fn wasi_ctx(stdout: CapturedOutput, stderr: CapturedOutput) -> WasiCtx {
    let mut builder = WasiCtxBuilder::new();
    builder
        .allow_blocking_current_thread(BLOCKING_CURRENT_THREAD)
        .stdout(stdout)
        .stderr(stderr)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    builder.build()
}

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
            None => (normal.map(|n| n.to_string_lossy().into_owned()), None),
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
