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
pub(crate) mod git_config;
mod grants;
pub(crate) mod held;
mod listing;
pub(crate) mod network;
pub(crate) mod protect;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::filesystem::{Descriptor, Dir};
use wasmtime_wasi::{FsPerms, OpenMode, WasiCtx, WasiCtxBuilder, WasiView};
use wasmtime_wasi_http::WasiHttpView;

use super::limits;
use super::output::CapturedOutput;
use filesystem::{Guarded, GuardedFilesystem};
pub use grants::{Access, Grant, simplify};
pub(crate) use grants::{BLOCKING_CURRENT_THREAD, PathCheck, check_path};

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
