//! The bodies of a tool's requests and responses, each counted against
//! the call's account as it streams: a request body is cut past
//! [`MAX_REQUEST_BYTES`], a response body past the call's response budget
//! (`net_mib`), each cut recorded as the request's refusal.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use wasmtime_wasi_http::Error;

use super::account::{Entry, MAX_REQUEST_BYTES, NetAccount, NetRefusal};

/// The guest's request body, cut off past [`MAX_REQUEST_BYTES`].
pub(super) struct Capped<B> {
    inner: B,
    sent: u64,
    account: Arc<NetAccount>,
    entry: Entry,
}

impl<B> Capped<B> {
    /// `inner`, the body of the request `entry` of `account`.
    pub(super) fn new(inner: B, account: Arc<NetAccount>, entry: Entry) -> Self {
        Capped {
            inner,
            sent: 0,
            account,
            entry,
        }
    }
}

impl<B: Body<Data = Bytes, Error = Error> + Unpin> Body for Capped<B> {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(data)) = frame.as_ref().map(|f| f.as_ref().map(Frame::data_ref)) {
            self.sent += data.map_or(0, |d| d.len() as u64);
            if self.sent > MAX_REQUEST_BYTES {
                let refusal = NetRefusal::RequestBytes {
                    limit: MAX_REQUEST_BYTES,
                };
                let error = refusal.error();
                // Part of it went: a cut, not a refusal before sending.
                self.account.cut(self.entry, refusal);
                return Poll::Ready(Some(Err(error)));
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body whose bytes count against the call's budget.
pub(super) struct Metered {
    inner: Incoming,
    account: Arc<NetAccount>,
    entry: Entry,
    over: bool,
}

impl Metered {
    /// `inner`, the response to the request `entry` of `account`.
    pub(super) fn new(inner: Incoming, account: Arc<NetAccount>, entry: Entry) -> Self {
        Metered {
            inner,
            account,
            entry,
            over: false,
        }
    }
}

impl Body for Metered {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if self.over {
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
            None => Poll::Ready(None),
            Some(Err(e)) => {
                self.account.failed(self.entry, e.to_string());
                Poll::Ready(Some(Err(Error::from(e))))
            }
            Some(Ok(frame)) => {
                let bytes = frame.data_ref().map_or(0, |d| d.len() as u64);
                if let Err(refusal) = self.account.read(self.entry, bytes) {
                    self.over = true;
                    let error = refusal.error();
                    self.account.cut(self.entry, refusal);
                    return Poll::Ready(Some(Err(error)));
                }
                Poll::Ready(Some(Ok(frame)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.over || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::{BodyExt, StreamBody};
    use hyper::body::Frame;

    use super::*;
    use crate::sandbox::Limits;
    use crate::sandbox::capabilities::network::account::NetBudget;
    use crate::sandbox::capabilities::network::grant::NetGrant;

    /// A request body of `chunks` bytes each, through the cap.
    fn send(chunks: &[usize]) -> (Vec<Result<usize, String>>, Arc<NetAccount>) {
        let grants: Arc<[NetGrant]> = Arc::from(vec![NetGrant::parse("https://*").expect("grant")]);
        let account = Arc::new(NetAccount::new(grants, NetBudget::of(&Limits::default())));
        let entry = account
            .begin("POST", "https://example.test/")
            .expect("entry");
        let frames: Vec<Result<Frame<Bytes>, Error>> = chunks
            .iter()
            .map(|&len| Ok(Frame::data(Bytes::from(vec![0u8; len]))))
            .collect();
        let body = StreamBody::new(futures_util::stream::iter(frames));
        let mut capped = Capped::new(body, Arc::clone(&account), entry);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let seen = runtime.block_on(async {
            let mut seen = Vec::new();
            while let Some(frame) = capped.frame().await {
                seen.push(
                    frame
                        .map(|f| f.data_ref().map_or(0, Bytes::len))
                        .map_err(|e| e.to_string()),
                );
            }
            seen
        });
        (seen, account)
    }

    #[test]
    fn a_request_body_over_the_cap_is_cut_and_recorded() {
        let half = usize::try_from(MAX_REQUEST_BYTES / 2).expect("fits");
        // Up to the cap, it all goes.
        let (seen, account) = send(&[half, half]);
        assert_eq!(seen, [Ok(half), Ok(half)]);
        assert_eq!(account.close().1, None);
        // One byte over, the frame that passes it fails, and the request's
        // record says why.
        let (seen, account) = send(&[half, half, 1]);
        assert_eq!(seen.len(), 3);
        assert!(seen[2].is_err(), "{seen:?}");
        let (requests, denial) = account.close();
        let over = NetRefusal::RequestBytes {
            limit: MAX_REQUEST_BYTES,
        };
        // Part of it went: a cut, not a refusal before sending.
        assert!(!requests[0].refused);
        assert_eq!(requests[0].error, Some(over.to_string()));
        assert_eq!(denial.map(|d| d.refusal), Some(over));
    }
}
