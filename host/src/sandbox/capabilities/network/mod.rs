//! `wasi:http`: linked so components whose toolchain imports it load
//! (componentize-js links `fetch` to it by default), and each outgoing
//! request decided in the host.
//!
//! wasmtime-wasi-http builds and checks the request (scheme, headers,
//! body); the one place it would reach the network is
//! [`WasiHttpHooks::send_request`], where [`NetworkPolicy`] clears the
//! request against the tool's grants (module `clearance`: `grant` matches
//! the destination, `address` says what a name may resolve to). It must
//! never fall back to wasmtime-wasi-http's default sender (that crate
//! feature is off, so nothing here can open a connection by itself). No
//! grant can be given yet, so every request is refused inside the guest:
//! `HTTP-request-denied` before any name is looked up.

mod address;
mod clearance;
pub(crate) mod grant;

use std::sync::Arc;

use wasmtime::component::Linker;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks, WasiHttpView};

use clearance::SystemResolver;
use grant::NetGrant;

/// What a tool may send over `wasi:http`: what its grants match, to
/// addresses they may reach ([`clearance`]). No flag or setting gives a
/// grant yet, so every request is refused before any name is looked up.
#[derive(Debug, Default)]
pub(crate) struct NetworkPolicy {
    grants: Arc<[NetGrant]>,
}

type ResponseFuture = Box<
    dyn Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<WasiBody>,
                Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
            )>,
        > + Send,
>;

impl WasiHttpHooks for NetworkPolicy {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> ResponseFuture {
        let grants = Arc::clone(&self.grants);
        let url = request.uri().to_string();
        Box::new(async move {
            Err(
                match clearance::clear(&grants, &url, &SystemResolver).await {
                    Err(refusal) => refusal.error(),
                    // Sending a cleared request is the next step of the
                    // network work; until it lands no grant can be given, so
                    // no request gets here.
                    Ok(_) => Error::HttpRequestDenied,
                },
            )
        })
    }
}

/// Links `wasi:http/types` and `wasi:http/outgoing-handler` (0.2.x; the
/// linker matches any semver-compatible 0.2 import).
pub(crate) fn add_to_linker<T: WasiHttpView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
}
