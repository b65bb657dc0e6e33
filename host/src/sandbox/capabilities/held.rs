//! Host memory held for a guest, charged to its call's memory limit
//! ([`MemoryAccount`]) whatever resource holds it: a file's read stream by
//! the read-ahead it may hold ([`ChargedInput`]), and everything in the
//! call's resource table, `wasi:http` fields above all, by measuring the
//! table ([`TableCharge`]).
//!
//! Without this, a plugin with `memory_mib = 16` held ~1.2 GB per 10,000
//! `wasi:http` fields of ~120 KiB (65,536 table entries allowed), or ~2 GB
//! through 30,000 read streams of one file, each holding a 64 KiB
//! read-ahead. Must never let a guest hold host memory it is not charged
//! for; it need not be exact, only never under what is held.

use std::any::Any;
use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::async_trait;
use wasmtime_wasi::p2::{DynInputStream, InputStream, Pollable, StreamError, StreamResult};
use wasmtime_wasi_http::FieldMap;
use wasmtime_wasi_http::p2::types::{
    HostIncomingResponse, HostOutgoingRequest, HostOutgoingResponse,
};

use crate::sandbox::limits::{HostCharge, MemoryAccount};

/// What every resource in a call's table is charged at least: the entry,
/// its box and the small state behind it (a descriptor, a pollable).
pub(crate) const ENTRY_BYTES: u64 = 256;

/// The most a read stream of a file holds: wasmtime-wasi reads ahead up to
/// 64 KiB (`MAX_READ_SIZE_ALLOC`), and 4 KiB when polled before a read.
const READ_AHEAD_MAX: u64 = 64 << 10;
const READ_AHEAD_POLLED: u64 = 4 << 10;

/// The most one `wasi:http` call can add to what the table holds: one
/// fields resource of wasmtime-wasi-http's field size limit (128 KiB,
/// `DEFAULT_FIELD_SIZE_LIMIT`), made (`from-list`) or grown (`append`,
/// `set`, the copy a `clone` makes when changed), plus its entry.
pub(crate) const HTTP_CALL_MAX: u64 = (128 << 10) + ENTRY_BYTES;

/// The trap of a call whose host memory would go over its limit; the call
/// is then reported by the limit ([`MemoryAccount::hit`]).
fn over(what: &str, limit: u64) -> wasmtime::Error {
    wasmtime::Error::msg(format!(
        "{what} would take the tool over its memory limit of {}",
        crate::units::bytes(limit)
    ))
}

/// A file's read stream charged for its entry and the most it may read
/// ahead; given back when the guest drops it (or the call ends).
pub(crate) struct ChargedInput {
    inner: DynInputStream,
    charge: HostCharge,
}

impl ChargedInput {
    /// `inner` charged for its entry, or the trap when the call has no room.
    pub(crate) fn new(
        inner: DynInputStream,
        account: &Arc<MemoryAccount>,
    ) -> Result<ChargedInput, wasmtime::Error> {
        let mut charge = account.host_charge();
        if !charge.set(ENTRY_BYTES) {
            return Err(over("another read stream", charge.limit()));
        }
        Ok(ChargedInput { inner, charge })
    }

    /// Raises the charge to cover a read-ahead of `size` bytes.
    fn cover(&mut self, size: u64) -> StreamResult<()> {
        let needed = ENTRY_BYTES + size.min(READ_AHEAD_MAX);
        if needed <= self.charge.bytes() || self.charge.set(needed) {
            Ok(())
        } else {
            Err(StreamError::Trap(over(
                "a read stream's read-ahead",
                self.charge.limit(),
            )))
        }
    }
}

#[async_trait]
impl InputStream for ChargedInput {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.cover(size as u64)?;
        self.inner.read(size)
    }

    async fn blocking_read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.cover((size as u64).max(READ_AHEAD_POLLED))?;
        self.inner.blocking_read(size).await
    }

    fn skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.cover(nelem as u64)?;
        self.inner.skip(nelem)
    }

    async fn blocking_skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.cover((nelem as u64).max(READ_AHEAD_POLLED))?;
        self.inner.blocking_skip(nelem).await
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

#[async_trait]
impl Pollable for ChargedInput {
    async fn ready(&mut self) {
        // Polled before any read, the stream reads ahead 4 KiB. A call
        // without room for it is stopped at its next read.
        if self.cover(READ_AHEAD_POLLED).is_ok() {
            self.inner.ready().await;
        }
    }
}

/// The call's resource table, charged by what it was last measured to
/// hold plus the most the `wasi:http` calls made since can have added; it
/// is measured again only when that bound would not fit the call's room,
/// so a table of n entries is walked at most once per room / 128 KiB calls.
pub(crate) struct TableCharge {
    charge: HostCharge,
    /// What the table held when last measured.
    measured: u64,
    /// `wasi:http` calls since then.
    calls: u64,
    /// Set when the table would hold more than the call's limit: the call
    /// is stopped ([`TableCharge::is_over`]).
    over: bool,
}

impl TableCharge {
    pub(crate) fn new(account: &Arc<MemoryAccount>) -> TableCharge {
        TableCharge {
            charge: account.host_charge(),
            measured: 0,
            calls: 0,
            over: false,
        }
    }

    /// Before a `wasi:http` call: charges what it may add, measuring the
    /// table when the bound does not fit. Once the table is over the
    /// limit, `table` refuses new entries and the call stops at its next
    /// epoch tick ([`TableCharge::is_over`]).
    pub(crate) fn before_http_call(&mut self, table: &mut ResourceTable) {
        if self.over {
            return;
        }
        self.calls += 1;
        let bound = self
            .measured
            .saturating_add(self.calls.saturating_mul(HTTP_CALL_MAX));
        if self.charge.try_set(bound) {
            return;
        }
        self.measured = measure(table);
        self.calls = 1;
        if !self.charge.set(self.measured.saturating_add(HTTP_CALL_MAX)) {
            self.over = true;
            // No new entry from here on (a freed slot may still be reused
            // until the call is stopped, at most one epoch tick later).
            table.set_max_capacity(0);
        }
    }

    /// Whether the table went over the call's limit: the call must stop.
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }

    /// The trap that stops a call whose table went over its limit.
    pub(crate) fn trap(&self) -> wasmtime::Error {
        over(
            "the resources it holds in the host (wasi:http fields, streams)",
            self.charge.limit(),
        )
    }
}

/// Bytes `table` holds: [`ENTRY_BYTES`] for every entry, plus the names and
/// values of every header map, each map once however many entries share it.
pub(crate) fn measure(table: &mut ResourceTable) -> u64 {
    let mut maps: HashSet<*const http::HeaderMap> = HashSet::new();
    let mut bytes = 0u64;
    for entry in table.iter_mut() {
        bytes += ENTRY_BYTES;
        let entry: &dyn Any = &*entry;
        let fields = if let Some(fields) = entry.downcast_ref::<FieldMap>() {
            fields
        } else if let Some(request) = entry.downcast_ref::<HostOutgoingRequest>() {
            &request.headers
        } else if let Some(response) = entry.downcast_ref::<HostOutgoingResponse>() {
            &response.headers
        } else if let Some(response) = entry.downcast_ref::<HostIncomingResponse>() {
            &response.headers
        } else {
            continue;
        };
        let map: &http::HeaderMap = fields;
        if maps.insert(std::ptr::from_ref(map)) {
            bytes += map_bytes(map);
        }
    }
    bytes
}

/// What a header map holds, as wasmtime-wasi-http counts it against its
/// field size limit: each name and value with its struct.
fn map_bytes(map: &http::HeaderMap) -> u64 {
    let names: usize = map
        .keys()
        .map(|name| name.as_str().len() + size_of::<http::HeaderName>())
        .sum();
    let values: usize = map
        .values()
        .map(|value| value.len() + size_of::<http::HeaderValue>())
        .sum();
    (names + values) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::capabilities::network::account::NetAccount;
    use crate::sandbox::capabilities::network::{NetAccess, NetworkPolicy};

    /// Hooks that refuse every request, as a call with no grant has.
    fn no_network() -> (NetworkPolicy, Arc<NetAccount>) {
        let limits = crate::sandbox::Limits::default();
        NetworkPolicy::for_call(&NetAccess::default(), std::time::Instant::now(), &limits)
    }

    #[test]
    fn a_table_is_measured_by_its_entries_and_each_header_map_once() {
        let mut table = ResourceTable::new();
        assert_eq!(measure(&mut table), 0);
        let mut map = http::HeaderMap::new();
        map.append("x-big", http::HeaderValue::from_static("0123456789"));
        let one = map_bytes(&map);
        assert_eq!(
            one,
            (5 + size_of::<http::HeaderName>() + 10 + size_of::<http::HeaderValue>()) as u64
        );
        let (mut hooks, _account) = no_network();
        let fields = FieldMap::new_immutable(&mut hooks, map);
        table.push(fields.clone()).expect("push");
        // A clone shares its map: counted once.
        table.push(fields).expect("push");
        table.push(42u32).expect("push");
        assert_eq!(measure(&mut table), 3 * ENTRY_BYTES + one);
    }

    #[test]
    fn the_table_is_measured_only_when_its_bound_does_not_fit_and_over_it_stops() {
        let account = MemoryAccount::new(4 * HTTP_CALL_MAX);
        let mut table = ResourceTable::new();
        let mut charge = TableCharge::new(&account);
        // Four calls fit the bound without a measure.
        for _ in 0..4 {
            charge.before_http_call(&mut table);
        }
        assert_eq!(charge.measured, 0);
        assert_eq!(account.room(), 0);
        // The fifth measures (the table is empty) and starts again.
        charge.before_http_call(&mut table);
        assert_eq!((charge.measured, charge.calls), (0, 1));
        assert!(!charge.is_over());
        assert!(!account.hit(), "a bound that did not fit is no hit");
        // A table that holds more than the limit stops the call.
        let mut map = http::HeaderMap::new();
        let value = http::HeaderValue::from_bytes(&vec![b'a'; 100 << 10]).expect("value");
        for name in ["a", "b", "c", "d", "e"] {
            map.insert(name, value.clone());
        }
        let (mut hooks, _account) = no_network();
        table
            .push(FieldMap::new_immutable(&mut hooks, map))
            .expect("push");
        for _ in 0..4 {
            charge.before_http_call(&mut table);
        }
        assert!(charge.is_over());
        assert!(account.hit());
        assert!(table.push(1u8).is_err(), "a table over the limit took more");
    }
}
