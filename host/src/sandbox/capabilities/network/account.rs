//! One call's use of the network: the budget its requests draw on
//! (requests, connections open at once, response bytes), the record of
//! every request it made, and the first refusal, which the model reads
//! when the call fails after it.
//!
//! The account lives as long as the call: when the call ends (returns,
//! times out, is cancelled) [`NetAccount::close`] ends every connection it
//! still has open, wherever wasmtime keeps the response.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::grant::NetGrant;

/// Bytes of one request's body.
pub const MAX_REQUEST_BYTES: u64 = 16 << 20;

/// What one call's requests may spend together: the `net_*` limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NetBudget {
    /// Requests, refused ones too.
    pub(crate) requests: u64,
    /// Connections open at once (a lookup in flight holds one).
    pub(crate) connections: u64,
    /// Bytes of response bodies, over all requests.
    pub(crate) response_bytes: u64,
}

impl NetBudget {
    pub(crate) fn of(limits: &crate::sandbox::Limits) -> NetBudget {
        NetBudget {
            requests: limits.net_requests,
            connections: limits.net_connections,
            response_bytes: limits.net_bytes,
        }
    }
}

/// One request as the call's record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetRequest {
    pub method: String,
    /// The URL without its query or fragment (they may carry secrets).
    pub url: String,
    /// The response's status, once its head arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why it was not sent, or failed: a refusal or a network error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the host refused it (no connection was made).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// The address connected to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<SocketAddr>,
    /// Bytes of the response body the tool read.
    #[serde(default)]
    pub bytes: u64,
    /// Milliseconds from the request to its response's head (or error).
    #[serde(default)]
    pub ms: u64,
}

/// Why the host refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetRefusal {
    /// No grant of the tool matches the scheme, host and port.
    NotGranted,
    /// The name resolved to an address that is not public, which no grant
    /// names.
    Private { address: std::net::IpAddr },
    /// Not a URL toolhost sends (a user name in it, another scheme).
    Malformed(String),
    /// The call made its `net_requests` requests already.
    Requests { limit: u64 },
    /// The call had its `net_connections` connections open.
    Connections { limit: u64 },
    /// The call read its `net_mib` of responses.
    ResponseBytes { limit: u64 },
    /// The request's body was over [`MAX_REQUEST_BYTES`].
    RequestBytes { limit: u64 },
}

/// A refused request with what the tool may reach, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetDenial {
    pub method: String,
    /// Without query or fragment.
    pub url: String,
    pub refusal: NetRefusal,
    /// The tool's network grants, to say what it may reach.
    pub grants: Vec<NetGrant>,
}

/// One call's network budget and record.
pub(crate) struct NetAccount {
    grants: Arc<[NetGrant]>,
    budget: NetBudget,
    requests: AtomicU64,
    open: Arc<AtomicU64>,
    response_bytes: AtomicU64,
    log: Mutex<Vec<NetRequest>>,
    denial: Mutex<Option<NetDenial>>,
    closed: CancellationToken,
}

/// An open connection, counted until dropped.
pub(crate) struct Connection(Arc<AtomicU64>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The record of one request in the account's log.
#[derive(Clone, Copy)]
pub(crate) struct Entry(usize);

impl NetAccount {
    pub(crate) fn new(grants: Arc<[NetGrant]>, budget: NetBudget) -> NetAccount {
        NetAccount {
            grants,
            budget,
            requests: AtomicU64::new(0),
            open: Arc::new(AtomicU64::new(0)),
            response_bytes: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
            denial: Mutex::new(None),
            closed: CancellationToken::new(),
        }
    }

    pub(crate) fn grants(&self) -> &Arc<[NetGrant]> {
        &self.grants
    }

    /// Counts a new request and records it: `Err` when the call has made
    /// its budget of requests (the request is then refused, and only the
    /// first such is recorded: the log stays bounded).
    pub(crate) fn begin(&self, method: &str, url: &str) -> Result<Entry, NetRefusal> {
        let made = self
            .requests
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_add(1))
            })
            .unwrap_or(u64::MAX);
        let limit = self.budget.requests;
        let refusal = NetRefusal::Requests { limit };
        if made > limit {
            return Err(refusal);
        }
        let mut log = lock(&self.log);
        log.push(NetRequest {
            method: method.to_owned(),
            url: url.to_owned(),
            status: None,
            error: None,
            refused: false,
            address: None,
            bytes: 0,
            ms: 0,
        });
        let entry = Entry(log.len() - 1);
        drop(log);
        if made == limit {
            self.refuse(entry, refusal.clone());
            return Err(refusal);
        }
        Ok(entry)
    }

    /// Records that the host refused `entry` before sending it, and keeps
    /// the first refusal for the model.
    pub(crate) fn refuse(&self, entry: Entry, refusal: NetRefusal) {
        self.deny(entry, refusal, true);
    }

    /// Records that the host cut `entry` off after sending it (its
    /// response went over the budget), and keeps the first refusal.
    pub(crate) fn cut(&self, entry: Entry, refusal: NetRefusal) {
        self.deny(entry, refusal, false);
    }

    fn deny(&self, entry: Entry, refusal: NetRefusal, before_sending: bool) {
        let (method, url) = {
            let mut log = lock(&self.log);
            let Some(request) = log.get_mut(entry.0) else {
                return;
            };
            request.refused = before_sending;
            request.error = Some(refusal.to_string());
            (request.method.clone(), request.url.clone())
        };
        let mut denial = lock(&self.denial);
        if denial.is_none() {
            *denial = Some(NetDenial {
                method,
                url,
                refusal,
                grants: self.grants.to_vec(),
            });
        }
    }

    /// Opens a connection for the count, or refuses the request when the
    /// call has its budget of connections open.
    pub(crate) fn connection(&self) -> Result<Connection, NetRefusal> {
        let open = self.open.fetch_add(1, Ordering::AcqRel);
        let connection = Connection(Arc::clone(&self.open));
        if open >= self.budget.connections {
            return Err(NetRefusal::Connections {
                limit: self.budget.connections,
            });
        }
        Ok(connection)
    }

    /// Counts `bytes` more of response bodies: `Err` past the budget.
    pub(crate) fn read(&self, entry: Entry, bytes: u64) -> Result<(), NetRefusal> {
        let before = self.response_bytes.fetch_add(bytes, Ordering::AcqRel);
        self.with(entry, |request| request.bytes += bytes);
        if before.saturating_add(bytes) > self.budget.response_bytes {
            return Err(NetRefusal::ResponseBytes {
                limit: self.budget.response_bytes,
            });
        }
        Ok(())
    }

    /// Records where `entry` connected.
    pub(crate) fn connected(&self, entry: Entry, address: SocketAddr) {
        self.with(entry, |request| request.address = Some(address));
    }

    /// Records how `entry`'s request ended: a status or an error.
    pub(crate) fn answered(&self, entry: Entry, started: Instant, outcome: Result<u16, String>) {
        self.with(entry, |request| {
            request.ms = millis(started.elapsed());
            match outcome {
                Ok(status) => request.status = Some(status),
                Err(error) => request.error = Some(error),
            }
        });
    }

    /// Records a failure while the body was read.
    pub(crate) fn failed(&self, entry: Entry, error: String) {
        self.with(entry, |request| {
            request.error.get_or_insert(error);
        });
    }

    /// Changes `entry`'s record.
    fn with(&self, entry: Entry, change: impl FnOnce(&mut NetRequest)) {
        if let Some(request) = lock(&self.log).get_mut(entry.0) {
            change(request);
        }
    }

    /// Cancelled when the call ends: every connection closes.
    pub(crate) fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    /// Ends the call's connections and hands over a copy of its record and
    /// its first refusal. The record stays: a request task wasmtime has not
    /// dropped yet may still write to it.
    pub(crate) fn close(&self) -> (Vec<NetRequest>, Option<NetDenial>) {
        self.closed.cancel();
        (lock(&self.log).clone(), lock(&self.denial).clone())
    }
}

impl NetRefusal {
    /// What the guest's `wasi:http` call fails with for this refusal.
    pub(crate) fn error(&self) -> wasmtime_wasi_http::Error {
        use wasmtime_wasi_http::Error;
        match self {
            NetRefusal::NotGranted => Error::HttpRequestDenied,
            NetRefusal::Private { .. } => Error::DestinationIpProhibited,
            NetRefusal::Malformed(_) => Error::HttpRequestUriInvalid,
            NetRefusal::Requests { .. } | NetRefusal::Connections { .. } => {
                Error::ConnectionLimitReached
            }
            NetRefusal::ResponseBytes { limit } => Error::HttpResponseBodySize(Some(*limit)),
            NetRefusal::RequestBytes { limit } => Error::HttpRequestBodySize(Some(*limit)),
        }
    }
}

impl std::fmt::Display for NetRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetRefusal::NotGranted => f.write_str("not granted"),
            NetRefusal::Private { address } => {
                write!(f, "the host resolved to {address}, which is not public")
            }
            NetRefusal::Malformed(why) => f.write_str(why),
            NetRefusal::Requests { limit } => write!(f, "over {limit} requests in one call"),
            NetRefusal::Connections { limit } => {
                write!(f, "over {limit} connections open at once")
            }
            NetRefusal::ResponseBytes { limit } => {
                write!(f, "over {} of responses in one call", human(*limit))
            }
            NetRefusal::RequestBytes { limit } => {
                write!(f, "a request body over {}", human(*limit))
            }
        }
    }
}

fn human(bytes: u64) -> String {
    crate::units::bytes(bytes)
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// A poisoned lock still holds a usable record: a panic elsewhere must
/// not lose the requests already made.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: NetBudget = NetBudget {
        requests: 64,
        connections: 8,
        response_bytes: 16 << 20,
    };
    const MAX_REQUESTS: u64 = BUDGET.requests;
    const MAX_CONNECTIONS: u64 = BUDGET.connections;
    const MAX_RESPONSE_BYTES: u64 = BUDGET.response_bytes;

    #[test]
    fn requests_past_the_budget_are_refused_and_logged_once() {
        let account = NetAccount::new(Arc::from(Vec::new()), BUDGET);
        for _ in 0..MAX_REQUESTS {
            account
                .begin("GET", "http://a.test/")
                .expect("within budget");
        }
        for _ in 0..10 {
            assert_eq!(
                account.begin("GET", "http://a.test/").err(),
                Some(NetRefusal::Requests {
                    limit: MAX_REQUESTS
                })
            );
        }
        let (log, denial) = account.close();
        assert_eq!(log.len(), MAX_REQUESTS as usize + 1);
        assert!(log.last().is_some_and(|r| r.refused));
        assert_eq!(
            denial.map(|d| d.refusal),
            Some(NetRefusal::Requests {
                limit: MAX_REQUESTS
            })
        );
        assert!(account.closed().is_cancelled());
    }

    #[test]
    fn connections_are_counted_until_dropped() {
        let account = NetAccount::new(Arc::from(Vec::new()), BUDGET);
        let open: Vec<Connection> = (0..MAX_CONNECTIONS)
            .map(|_| account.connection().expect("within budget"))
            .collect();
        assert!(account.connection().is_err());
        drop(open);
        assert!(account.connection().is_ok());
    }

    #[test]
    fn response_bytes_are_counted_over_every_request() {
        let account = NetAccount::new(Arc::from(Vec::new()), BUDGET);
        let first = account.begin("GET", "http://a.test/").expect("first");
        let second = account.begin("GET", "http://b.test/").expect("second");
        assert!(account.read(first, MAX_RESPONSE_BYTES - 10).is_ok());
        assert!(account.read(second, 10).is_ok());
        assert!(account.read(second, 1).is_err());
        let (log, _) = account.close();
        assert_eq!(log[0].bytes + log[1].bytes, MAX_RESPONSE_BYTES + 1);
    }
}
