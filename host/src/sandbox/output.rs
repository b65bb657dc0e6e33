//! Bounded capture of a guest's stdout and stderr.
//!
//! Keeps the first bytes up to a cap and counts, then discards, the rest,
//! while telling the guest every write succeeded: a chatty plugin must not
//! crash (Rust's `println!` panics on a failed write) nor grow the host's
//! memory. The captures go to the transcript, never to the model.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::async_trait;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// A cloneable handle on one captured stream.
#[derive(Debug, Clone)]
pub(crate) struct CapturedOutput {
    inner: Arc<Mutex<Buffer>>,
}

#[derive(Debug, Default)]
struct Buffer {
    kept: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl CapturedOutput {
    pub(crate) fn new(cap: usize) -> Self {
        CapturedOutput {
            inner: Arc::new(Mutex::new(Buffer {
                cap,
                ..Buffer::default()
            })),
        }
    }

    /// The bytes kept, and how many were discarded past the cap.
    pub(crate) fn contents(&self) -> (Vec<u8>, u64) {
        let captured = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        (captured.kept.clone(), captured.dropped)
    }

    fn push(&self, bytes: &[u8]) {
        let mut captured = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let room = captured.cap.saturating_sub(captured.kept.len());
        let keep = bytes.len().min(room);
        captured.kept.extend_from_slice(&bytes[..keep]);
        captured.dropped += (bytes.len() - keep) as u64;
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[async_trait]
impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 * 1024)
    }
}

#[async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CapturedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_counts_the_rest() {
        let mut out = CapturedOutput::new(4);
        OutputStream::write(&mut out, Bytes::from_static(b"abc")).expect("write");
        OutputStream::write(&mut out, Bytes::from_static(b"defg")).expect("write past the cap");
        assert_eq!(out.contents(), (b"abcd".to_vec(), 3));
        assert_eq!(out.check_write().expect("still writable"), 64 * 1024);
    }
}
