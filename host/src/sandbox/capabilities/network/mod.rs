//! `wasi:http`: linked so components whose toolchain imports it load
//! (componentize-js links `fetch` to it by default), and every outgoing
//! request refused.
//!
//! wasmtime-wasi-http builds and checks the request (scheme, headers,
//! body); the one place it would reach the network is
//! [`WasiHttpHooks::send_request`], which [`NetworkPolicy`] answers with
//! `HTTP-request-denied` inside the guest. A per-tool network grant belongs
//! in that method and nowhere else; it must not fall back to
//! wasmtime-wasi-http's default sender (that crate feature is off, so
//! nothing here can open a connection).

mod address;
pub(crate) mod grant;

use wasmtime::component::Linker;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks, WasiHttpView};

/// What a tool may send over `wasi:http`. Today: nothing, for every tool.
#[derive(Debug, Default)]
pub(crate) struct NetworkPolicy;

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
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> ResponseFuture {
        Box::new(std::future::ready(Err(Error::HttpRequestDenied)))
    }
}

/// Links `wasi:http/types` and `wasi:http/outgoing-handler` (0.2.x; the
/// linker matches any semver-compatible 0.2 import).
pub(crate) fn add_to_linker<T: WasiHttpView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
}
