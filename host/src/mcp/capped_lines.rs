//! Lines from stdin with a cap: a line longer than [`MAX_LINE`] is never
//! held whole. Its first [`MAX_LINE`] bytes are kept, then the rest is
//! read and dropped up to the newline, so a client that sends 1 GB on one
//! line costs the server a few megabytes, and the next line is served.
//!
//! Knows bytes and newlines only; what a line means is `stdio`'s.

use std::io;

use rmcp::model::RequestId;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

use crate::json_budget::JsonBudget;

/// The longest line read, newline excluded: 4 MiB, the same as rmcp's cap
/// on an HTTP request's body (`http.rs` sets it from this one).
pub(super) const MAX_LINE: usize = 4 * 1024 * 1024;

/// What one message may make the server parse, on stdio and over HTTP:
/// no more than [`MAX_LINE`] bytes, 100,000 values, 64 deep. A tool's
/// arguments far past that belong in a file; without it, 4 MiB of `0,`
/// cost about 400 MB while parsed.
pub(super) const MESSAGE: JsonBudget = JsonBudget {
    max_bytes: MAX_LINE,
    max_depth: 64,
    max_values: 100_000,
};

/// How much of stdin is read at once.
const CHUNK: usize = 64 * 1024;

/// One line of input.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    /// The line's bytes, without the newline.
    Whole(Vec<u8>),
    /// A line over the cap, skipped: its length and, when the line is a
    /// JSON object with a top-level `id`, that id, so the client hears
    /// which request failed.
    TooLong { bytes: u64, id: Option<RequestId> },
}

/// Lines of `R`, at most `cap` bytes each.
pub(super) struct CappedLines<R> {
    reader: BufReader<R>,
    cap: usize,
    /// The current line while it is under the cap.
    line: Vec<u8>,
    /// Bytes of the current line so far.
    read: u64,
    /// Set once the current line is over the cap: from then on its bytes
    /// only pass through the scanner.
    over: Option<IdScanner>,
}

impl<R: AsyncRead + Unpin> CappedLines<R> {
    pub(super) fn new(read: R, cap: usize) -> Self {
        CappedLines {
            reader: BufReader::with_capacity(CHUNK, read),
            cap,
            line: Vec::new(),
            read: 0,
            over: None,
        }
    }

    /// The next line; `None` at the end of input. A last line without a
    /// newline counts. Cancel safe: every byte consumed is already in
    /// `self`, so a dropped call loses nothing.
    pub(super) async fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                if self.read == 0 && self.line.is_empty() && self.over.is_none() {
                    return Ok(None);
                }
                return Ok(Some(self.finish()));
            }
            let newline = memchr::memchr(b'\n', chunk);
            let part = &chunk[..newline.unwrap_or(chunk.len())];
            self.read += part.len() as u64;
            match &mut self.over {
                Some(scanner) => scanner.feed(part),
                None if self.read > self.cap as u64 => {
                    let mut scanner = IdScanner::default();
                    scanner.feed(&std::mem::take(&mut self.line));
                    scanner.feed(part);
                    self.over = Some(scanner);
                }
                None => self.line.extend_from_slice(part),
            }
            let consumed = newline.map_or(chunk.len(), |at| at + 1);
            self.reader.consume(consumed);
            if newline.is_some() {
                return Ok(Some(self.finish()));
            }
        }
    }

    fn finish(&mut self) -> Line {
        let bytes = std::mem::take(&mut self.read);
        match self.over.take() {
            Some(scanner) => Line::TooLong {
                bytes,
                id: scanner.id(),
            },
            None => Line::Whole(std::mem::take(&mut self.line)),
        }
    }
}

/// The top-level `"id"` of the JSON object `bytes`, read without parsing
/// them (they may be over [`MESSAGE`]).
pub(super) fn top_level_id(bytes: &[u8]) -> Option<RequestId> {
    let mut scanner = IdScanner::default();
    scanner.feed(bytes);
    scanner.id()
}

/// Finds the top-level `"id"` of a JSON object fed to it in pieces, in
/// constant memory: a JSON-RPC client may put the id after a huge
/// `params` (the TypeScript SDK does).
#[derive(Debug, Default)]
struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The key being read (its first 3 bytes are enough to tell `id`).
    key: Option<Vec<u8>>,
    /// The last key read was `id`.
    after_id_key: bool,
    /// The id's value as it is read.
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

/// The longest id value kept; a longer one is not a usable id.
const MAX_ID: usize = 256;

impl IdScanner {
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.found.is_none() {
            // The bulk of a huge line is inside strings: skip to the next
            // quote or backslash at once.
            if self.in_string && !self.escaped && self.key.is_none() && self.value.is_none() {
                match memchr::memchr2(b'"', b'\\', bytes) {
                    Some(at) => bytes = &bytes[at..],
                    None => return,
                }
            }
            self.byte(bytes[0]);
            bytes = &bytes[1..];
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            let ends = !self.escaped && b == b'"';
            self.escaped = !self.escaped && b == b'\\';
            if self.value.is_some() {
                self.push_value(b);
            } else if let Some(key) = &mut self.key
                && !ends
                && key.len() < 3
            {
                key.push(b);
            }
            if ends {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    self.after_id_key = key == b"id";
                }
            }
            return;
        }
        if self.depth == 1 && self.value.is_some() && (b == b',' || b == b'}') {
            self.found = self.value.take();
            return;
        }
        if self.value.is_some() && !b.is_ascii_whitespace() {
            self.push_value(b);
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.expect_key = false;
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 && self.after_id_key => {
                self.after_id_key = false;
                self.value = Some(Vec::new());
            }
            _ => {}
        }
    }

    /// Adds `b` to the id's value, or gives it up past [`MAX_ID`].
    fn push_value(&mut self, b: u8) {
        match &mut self.value {
            Some(value) if value.len() < MAX_ID => value.push(b),
            _ => self.value = None,
        }
    }

    /// The id, when one was read whole and is a number or a string.
    fn id(self) -> Option<RequestId> {
        serde_json::from_slice(&self.found?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], cap: usize) -> Vec<Line> {
        let mut lines = CappedLines::new(input, cap);
        let mut all = Vec::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            all.push(line);
        }
        all
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_skipped_and_the_next_one_is_read() {
        let long = format!(r#"{{"jsonrpc":"2.0","id":7,"p":"{}"}}"#, "x".repeat(100));
        let input = format!("short\n{long}\nnext\nlast without newline");
        assert_eq!(
            lines(input.as_bytes(), 40).await,
            [
                Line::Whole(b"short".to_vec()),
                Line::TooLong {
                    bytes: long.len() as u64,
                    id: Some(RequestId::Number(7))
                },
                Line::Whole(b"next".to_vec()),
                Line::Whole(b"last without newline".to_vec()),
            ]
        );
        // Exactly at the cap is whole.
        assert_eq!(lines(b"12345\n", 5).await, [Line::Whole(b"12345".to_vec())]);
    }

    fn id_of(text: &str) -> Option<RequestId> {
        let mut scanner = IdScanner::default();
        // Fed in small pieces, as a pipe delivers them.
        for piece in text.as_bytes().chunks(3) {
            scanner.feed(piece);
        }
        scanner.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        assert_eq!(
            id_of(r#"{"id": 12, "params": {"id": 1}}"#),
            Some(RequestId::Number(12))
        );
        assert_eq!(
            id_of(r#"{"params":{"id":1,"a":["id",{"id":2}]},"s":"\"id\":3","id":"r-9"}"#),
            Some(RequestId::String("r-9".into()))
        );
        assert_eq!(id_of(r#"{"jsonrpc":"2.0","idx":5,"method":"ping"}"#), None);
        assert_eq!(id_of(r#"{"id":{"no":1}}"#), None);
        // The line was cut before the id ended.
        assert_eq!(id_of(r#"{"p":"x","id":4"#), None);
        assert_eq!(id_of(r#"["id", 1]"#), None);
    }
}
