//! `wasi:http`: linked so components whose toolchain imports it load
//! (componentize-js links `fetch` to it by default), and each outgoing
//! request decided and sent by the host.
//!
//! wasmtime-wasi-http builds and checks the request (scheme, headers,
//! body); the one place it would reach the network is
//! [`WasiHttpHooks::send_request`], where [`NetworkPolicy`] counts the
//! request against the call's budget (`account`), clears it against the
//! tool's grants (`clearance`: `grant` matches the destination, `address`
//! says what a name may resolve to) and sends it to the addresses it
//! checked (`send`), its body and its response's metered as they stream
//! (`bodies`). It must never fall back to wasmtime-wasi-http's
//! default sender (that crate feature is off, so nothing else here can
//! open a connection). A tool with no grant has every request refused
//! inside the guest with `HTTP-request-denied`, before any name is looked
//! up.

pub(crate) mod account;
mod address;
mod bodies;
mod clearance;
pub(crate) mod credentials;
pub(crate) mod grant;
pub(crate) mod refusal;
mod send;

use std::sync::Arc;
use std::time::Instant;

use http_body_util::BodyExt;
use wasmtime::component::Linker;
use wasmtime_wasi_http::p2::bindings::http::{outgoing_handler, types};
use wasmtime_wasi_http::{
    Error, RequestOptions, WasiBody, WasiHttp, WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks,
};

use super::contract::{CallBounds, CallView, Capability, FileGrants, HasCall, Start};
use crate::sandbox::reach::Reach;
use account::{NetAccount, NetDenial, NetRefusal, NetRequest};
use bodies::{Capped, Metered};
use clearance::{Refusal, SystemResolver};
use credentials::Credential;
use grant::NetGrant;
pub(crate) use send::Tls;

/// Where a tool's requests may go, and what the host adds to them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetPolicy {
    /// Where its `wasi:http` requests may go; none by default.
    pub grants: Vec<NetGrant>,
    /// Headers the host adds to its requests that match (credentials the
    /// guest never sees).
    pub credentials: Vec<Credential>,
}

/// The network capability.
pub(crate) struct Network;

/// What a tool may reach, shared by its calls: its grants, the headers
/// the host adds for it, and the TLS setup of every tool.
#[derive(Debug, Clone, Default)]
pub(crate) struct NetAccess {
    pub(crate) grants: Arc<[NetGrant]>,
    pub(crate) credentials: Arc<[Credential]>,
    pub(crate) tls: Arc<Tls>,
}

/// One call's `wasi:http` state: wasmtime-wasi-http's context, the hooks
/// every request goes through, and the account they record in.
pub(crate) struct NetCall {
    http: WasiHttpCtx,
    hooks: NetworkPolicy,
    account: Arc<NetAccount>,
}

impl Capability for Network {
    type Policy = NetPolicy;
    type Shared = Arc<Tls>;
    type ForTool = NetAccess;
    type InCall = NetCall;
    type Record = Vec<NetRequest>;
    type Refusal = NetDenial;

    fn start(start: &Start<'_>) -> Arc<Tls> {
        Arc::new(Tls::new(start.ca_file.map(std::path::Path::to_path_buf)))
    }

    fn configure(policy: &NetPolicy, _: &FileGrants<'_>, tls: &mut Arc<Tls>) -> NetAccess {
        NetAccess {
            grants: Arc::from(policy.grants.clone()),
            credentials: Arc::from(policy.credentials.clone()),
            tls: Arc::clone(tls),
        }
    }

    fn prepare(access: &NetAccess, bounds: &CallBounds<'_>) -> Result<NetCall, String> {
        let (hooks, account) = NetworkPolicy::for_call(access, bounds.deadline, bounds.limits);
        Ok(NetCall {
            http: WasiHttpCtx::new(),
            hooks,
            account,
        })
    }

    /// `wasi:http`, each call charging the table's growth to the call's
    /// memory first ([`super::held::TableCharge`]).
    fn link<T: HasCall<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        fn view<T: HasCall<Network>>(t: &mut T) -> WasiHttpCtxView<'_> {
            let CallView {
                own,
                table,
                table_charge,
                ..
            } = t.call_view();
            table_charge.before_http_call(table);
            WasiHttpCtxView {
                ctx: &mut own.http,
                table,
                hooks: &mut own.hooks,
            }
        }
        let options = wasmtime_wasi_http::p2::bindings::LinkOptions::default();
        outgoing_handler::add_to_linker::<T, WasiHttp>(linker, view::<T>)?;
        types::add_to_linker::<T, WasiHttp>(linker, &options.into(), view::<T>)
    }

    /// Ends the call's connections, whatever the guest left open.
    fn close(call: &mut NetCall) -> (Vec<NetRequest>, Option<NetDenial>) {
        call.account.close()
    }

    fn describe<'a>(policy: &'a NetPolicy, reach: &mut Reach<'a>) {
        reach.hosts = policy.grants.iter().map(NetGrant::as_str).collect();
    }

    /// None: what a repository ships reaches the network only once the
    /// user trusts it.
    fn shipped(
        full: &NetPolicy,
        _every_tool: &NetPolicy,
        _workspace: &std::path::Path,
    ) -> (NetPolicy, Vec<&'static str>) {
        let withheld = if full.grants.is_empty() && full.credentials.is_empty() {
            Vec::new()
        } else {
            vec!["network access"]
        };
        (NetPolicy::default(), withheld)
    }
}

/// One call's `wasi:http` hooks: the tool's access, the call's account
/// and its deadline. Cheap to clone: each request's task takes a copy.
#[derive(Clone)]
pub(crate) struct NetworkPolicy {
    tls: Arc<Tls>,
    credentials: Arc<[Credential]>,
    account: Arc<NetAccount>,
    deadline: Instant,
}

impl NetworkPolicy {
    /// The hooks of a call under `access` that ends at `deadline` and
    /// spends at most its `net_*` limits, and the account to close when it
    /// ends.
    pub(crate) fn for_call(
        access: &NetAccess,
        deadline: Instant,
        limits: &crate::sandbox::Limits,
    ) -> (Self, Arc<NetAccount>) {
        let budget = account::NetBudget::of(limits);
        let account = Arc::new(NetAccount::new(Arc::clone(&access.grants), budget));
        (
            NetworkPolicy {
                tls: Arc::clone(&access.tls),
                credentials: Arc::clone(&access.credentials),
                account: Arc::clone(&account),
                deadline,
            },
            account,
        )
    }
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
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> ResponseFuture {
        Box::new(send_checked(request, options, self.clone()))
    }
}

/// Counts, clears and sends one request; every refusal recorded in the
/// call's account.
///
/// Long: one request's steps in the order they must happen (count, clear, add
/// credentials, connect, send, meter the body), each recording its refusal in
/// the account.
async fn send_checked(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    policy: NetworkPolicy,
) -> wasmtime_wasi_http::Result<(
    http::Response<WasiBody>,
    Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)> {
    let NetworkPolicy {
        tls,
        credentials,
        account,
        deadline,
    } = policy;
    let method = request.method().to_string();
    let url = without_query(request.uri());
    let entry = account
        .begin(&method, &url)
        .map_err(|refusal| refusal.error())?;
    let started = Instant::now();
    let refuse = |refusal: NetRefusal| {
        let error = refusal.error();
        account.refuse(entry, refusal);
        error
    };
    let refused = |refusal: Refusal| match refusal {
        Refusal::NotGranted => refuse(NetRefusal::NotGranted),
        Refusal::Prohibited { address } => refuse(NetRefusal::Private { address }),
        Refusal::Malformed(why) => refuse(NetRefusal::Malformed(why)),
        dns @ Refusal::Dns(_) => {
            let error = dns.error();
            account.answered(entry, started, Err(describe(&error)));
            error
        }
    };
    // What is cleared is what is recorded: no user name (refused), no
    // query (never quoted back, it may hold a secret).
    if request
        .uri()
        .authority()
        .is_some_and(|a| a.as_str().contains('@'))
    {
        return Err(refuse(NetRefusal::Malformed(
            "a URL with a user name or password is refused".into(),
        )));
    }
    let destination = clearance::granted(account.grants(), &url).map_err(refused)?;
    let carries_credential = credentials.iter().any(|c| c.to.matches(&destination));
    clearance::echoes_no_credential(request.method(), carries_credential).map_err(refused)?;
    // The slot is taken before the lookup: a call has at most as many
    // lookups waiting as it may have connections open, each waits until
    // the call's deadline, and the process runs a bounded number at once
    // (`clearance::SystemResolver`).
    let connection = account.connection().map_err(refuse)?;
    let lookup = clearance::resolve(account.grants(), destination, &SystemResolver);
    let cleared = match tokio::time::timeout_at(deadline.into(), lookup).await {
        Ok(cleared) => cleared.map_err(refused)?,
        Err(_) => {
            account.answered(entry, started, Err("timed out resolving the name".into()));
            return Err(Error::DnsTimeout);
        }
    };
    credentials::add(&credentials, &cleared.destination, request.headers_mut());
    let request = request.map(|body| Capped::new(body, Arc::clone(&account), entry).boxed_unsync());
    let sent = match send::send(request, &cleared, &tls, options, deadline).await {
        Ok(sent) => sent,
        Err(error) => {
            account.answered(entry, started, Err(describe(&error)));
            return Err(error);
        }
    };
    account.connected(entry, sent.address);
    account.answered(entry, started, Ok(sent.response.status().as_u16()));
    let closed = account.closed().clone();
    let body_account = Arc::clone(&account);
    let response = sent
        .response
        .map(move |incoming| Metered::new(incoming, body_account, entry).boxed_unsync());
    let connection_driver = sent.connection;
    // Drives the connection until the body is read, the guest drops it or
    // the call ends; the connection counts against the call until then.
    let io = async move {
        let _counted = connection;
        tokio::select! {
            ended = connection_driver => ended.map_err(Error::from),
            () = closed.cancelled() => Ok(()),
        }
    };
    Ok((response, Box::new(io)))
}

/// A network error as the call's record shows it.
fn describe(error: &Error) -> String {
    match error {
        Error::DnsError { rcode, .. } => format!(
            "the name did not resolve ({})",
            rcode.as_deref().unwrap_or("no reason given")
        ),
        Error::ConnectionRefused => "connection refused".into(),
        Error::ConnectionTimeout => "timed out connecting".into(),
        Error::ConnectionReadTimeout => "timed out waiting for the response".into(),
        Error::TlsCertificateError => "the server's TLS certificate was not accepted".into(),
        Error::TlsProtocolError => "the TLS handshake failed".into(),
        other => format!("{other}"),
    }
}

/// `uri` without a user name, query or fragment, which may carry
/// secrets, for records and messages.
pub(crate) fn without_query(uri: &http::Uri) -> String {
    let mut shown = String::new();
    if let Some(scheme) = uri.scheme_str() {
        shown.push_str(scheme);
        shown.push_str("://");
    }
    if let Some(authority) = uri.authority() {
        let authority = authority.as_str();
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        shown.push_str(host);
    }
    shown.push_str(uri.path());
    shown
}
