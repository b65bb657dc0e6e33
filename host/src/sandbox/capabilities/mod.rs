//! What a tool may touch, one capability per room, each keeping the
//! [`contract`]: the file system ([`filesystem`]: directory grants, lifts,
//! the guard), the network ([`network`]: `wasi:http` through host grants),
//! the environment ([`env`]: the host variables the user names), native
//! programs ([`exec`]: run inside walls the kernel builds from the same
//! grants).
//! The list below gives each tool and each call one slot per capability.
//!
//! Beside them, what every call gets alike: a deny-by-default `WasiCtx`
//! (no sockets, no name lookup, no stdin; clocks, random numbers and
//! captured stdout and stderr), and the WASI interfaces it answers. The
//! path check ([`check_path`]) only makes refusals readable before any wasm
//! runs; the preopens and the guard are what enforce them.

mod beneath;
pub(crate) mod contract;
pub(crate) mod env;
pub(crate) mod exec;
pub(crate) mod filesystem;
pub(crate) mod git_config;
mod grants;
pub(crate) mod held;
mod listing;
pub(crate) mod network;
pub(crate) mod protect;

use std::sync::Arc;

use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiView};

use super::limits::MemoryAccount;
use super::output::CapturedOutput;
use super::policy::ToolPolicy;
use super::reach::Reach;
use contract::{CallBounds, CallView, Capability, HasCall, Start};
pub use grants::{Access, Grant, simplify};
pub(crate) use grants::{BLOCKING_CURRENT_THREAD, PathCheck, check_path};
use held::TableCharge;

/// The parts of a call's store every capability shares, with the
/// capabilities' own call states.
pub(crate) struct StoreParts<'a> {
    pub(crate) calls: &'a mut CallCapabilities,
    pub(crate) wasi: &'a mut WasiCtx,
    pub(crate) table: &'a mut ResourceTable,
    pub(crate) memory: &'a Arc<MemoryAccount>,
    pub(crate) table_charge: &'a mut TableCharge,
}

/// A call's store: it holds every capability's call state
/// ([`CallCapabilities`]) and answers the WASI interfaces no capability
/// owns (`WasiView`).
pub(crate) trait CapabilityStore: WasiView + 'static {
    fn parts(&mut self) -> StoreParts<'_>;
}

/// Declares the capabilities, each with its field in
/// [`ToolPolicy`] and its type: one slot per capability in what the
/// sandbox shares, what a tool holds, what a call holds and what it leaves.
macro_rules! capabilities {
    ($($field:ident: $capability:ty),+ $(,)?) => {
        /// What every capability shares across the sandbox's tools.
        pub(crate) struct SharedCapabilities {
            $($field: <$capability as Capability>::Shared,)+
        }

        impl SharedCapabilities {
            pub(crate) fn start(start: &Start<'_>) -> Self {
                SharedCapabilities {
                    $($field: <$capability>::start(start),)+
                }
            }
        }

        /// What a loaded tool holds of each capability.
        pub(crate) struct ToolCapabilities {
            $(pub(crate) $field: <$capability as Capability>::ForTool,)+
        }

        impl ToolCapabilities {
            /// Each capability's part of `policy`, configured.
            pub(crate) fn configure(policy: &ToolPolicy, shared: &mut SharedCapabilities) -> Self {
                ToolCapabilities {
                    $($field: <$capability>::configure(
                        &policy.$field,
                        &policy.fs.file_grants(),
                        &mut shared.$field,
                    ),)+
                }
            }

            /// One call's state of each, or why the call cannot run.
            pub(crate) fn prepare(
                &self,
                bounds: &CallBounds<'_>,
            ) -> Result<CallCapabilities, String> {
                Ok(CallCapabilities {
                    $($field: <$capability>::prepare(&self.$field, bounds)?,)+
                })
            }
        }

        /// One call's state of each capability.
        pub(crate) struct CallCapabilities {
            $(pub(crate) $field: <$capability as Capability>::InCall,)+
        }

        impl CallCapabilities {
            /// Ends the call for each: what each leaves, and what each refused.
            pub(crate) fn close(&mut self) -> (Records, Refusals) {
                $(let $field = <$capability>::close(&mut self.$field);)+
                (
                    Records { $($field: $field.0,)+ },
                    Refusals { $($field: $field.1,)+ },
                )
            }
        }

        /// What a call left, per capability.
        #[derive(Default)]
        #[allow(dead_code, reason = "a capability that keeps nothing has a unit slot no one reads")]
        pub(crate) struct Records {
            $(pub(crate) $field: <$capability as Capability>::Record,)+
        }

        /// The first thing each capability refused the call.
        #[derive(Default)]
        pub(crate) struct Refusals {
            $(pub(crate) $field: Option<<$capability as Capability>::Refusal>,)+
        }

        impl Refusals {
            /// The first refusal, in the list's order, as `F`.
            #[allow(
                unreachable_code,
                reason = "a capability that never refuses has an uninhabited refusal"
            )]
            pub(crate) fn first<F>(&self) -> Option<F>
            where
                $(<$capability as Capability>::Refusal: Into<F>,)+
            {
                $(if let Some(refusal) = &self.$field {
                    return Some(refusal.clone().into());
                })+
                None
            }
        }

        $(impl<T: CapabilityStore> HasCall<$capability> for T {
            fn call_view(&mut self) -> CallView<'_, <$capability as Capability>::InCall> {
                let StoreParts { calls, wasi, table, memory, table_charge } = self.parts();
                CallView { own: &mut calls.$field, wasi, table, memory, table_charge }
            }
        })+

        /// Links what each capability answers.
        fn link_capabilities<T: CapabilityStore>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
            $(<$capability>::link(linker)?;)+
            Ok(())
        }

        /// What the tool of a plugin an untrusted workspace ships keeps of
        /// `full` ([`Capability::shipped`]), limits aside, and what it
        /// does not.
        pub(crate) fn shipped(
            full: &ToolPolicy,
            every_tool: &ToolPolicy,
            workspace: &std::path::Path,
        ) -> (ToolPolicy, Vec<&'static str>) {
            let mut withheld = Vec::new();
            $(let $field = {
                let (kept, held) =
                    <$capability>::shipped(&full.$field, &every_tool.$field, workspace);
                withheld.extend(held);
                kept
            };)+
            let policy = ToolPolicy { $($field,)+ limits: full.limits };
            (policy, withheld)
        }

        /// What `policy` lets a tool reach, each capability saying its part.
        pub(crate) fn describe<'a>(policy: &'a ToolPolicy, reach: &mut Reach<'a>) {
            $(<$capability>::describe(&policy.$field, reach);)+
        }
    };
}

capabilities! {
    fs: filesystem::Filesystem,
    net: network::Network,
    env: env::Env,
    exec: exec::Exec,
}

/// The resource table alone, for `wasi:io`.
struct Io;

impl HasData for Io {
    type Data<'a> = &'a mut ResourceTable;
}

/// Links WASI p2 interface by interface: what wasmtime-wasi's
/// `add_to_linker_async` links, except that each capability links what it
/// answers (`wasi:filesystem` through the guard, `wasi:http` through the
/// host's grants). What the others may do is decided by the per-call
/// `WasiCtx` ([`wasi_ctx`]): sockets and name lookup are linked (so
/// components that import them load) and denied there.
pub(crate) fn add_wasi_to_linker<T: CapabilityStore>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView as _};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
    use wasmtime_wasi::p2::bindings::{cli, clocks, io, random, sockets};
    use wasmtime_wasi::random::{WasiRandom, WasiRandomView as _};
    use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView as _};

    let l = linker;
    io::error::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    io::poll::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    io::streams::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(l, T::random)?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, T::random)?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, T::random)?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
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
    link_capabilities(l)
}

/// Builds the guest's WASI context: stdout and stderr into bounded
/// buffers, everything else denied. Its grants are not in it: the
/// capabilities hand them out from the call's [`CallCapabilities`].
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
