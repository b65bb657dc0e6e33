//! Reads a file in large chunks and finds its matching lines, ripgrep-style:
//! the candidate regex runs over a chunk of whole lines, line boundaries are
//! found only around its hits, and line numbers are counted (with SIMD) only
//! up to a hit. Nothing is allocated per line, and lines without a hit are
//! never decoded. A file that one read from the host gives whole is searched
//! in the buffer that read returned, not copied into the searcher's first.

use std::io::{self, Read};

use crate::matcher::{Matcher, line_text};

/// Bytes read at once. A line longer than this grows the buffer, as it had
/// to be held whole anyway.
const CHUNK: usize = 64 << 10;

/// The first bytes of a file that decide whether it is binary (a NUL among
/// them), as `toolhost_plugin_support::looks_binary` decides.
const BINARY_HEAD: usize = 8192;

/// What the sink says after a matching line.
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// How a file's search ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Searched {
    /// Every line was searched.
    All,
    /// Skipped as binary.
    Binary,
    /// The sink stopped it.
    Stopped,
    /// A read failed: unreadable from the start, or the lines after the
    /// failure are not searched.
    ReadError,
}

/// What the searcher reads: any reader, and where it can, the first bytes
/// in a buffer of their own.
pub(crate) trait Source: Read {
    /// The first bytes (at most `max`, read once) and whether they are all
    /// there is; `None` where the source has no buffer to hand over, or is
    /// not at its start.
    fn first_bytes(&mut self, _max: usize) -> Option<io::Result<(Vec<u8>, bool)>> {
        None
    }
}

/// One buffer, reused for every file of a search.
pub(crate) struct Searcher {
    buf: Vec<u8>,
}

impl Searcher {
    pub(crate) fn new() -> Self {
        Self::with_chunk(CHUNK)
    }

    /// A searcher reading `chunk` bytes at once (at least the binary check's
    /// head); small ones let tests cross many chunk boundaries.
    fn with_chunk(chunk: usize) -> Self {
        Searcher {
            buf: vec![0; chunk.max(BINARY_HEAD)],
        }
    }

    /// Searches `file`, calling `sink` with the number (from 1) and the text
    /// of every matching line, in order.
    pub(crate) fn search(
        &mut self,
        file: &mut impl Source,
        matcher: &Matcher,
        mut sink: impl FnMut(u64, &str) -> Flow,
    ) -> Searched {
        let mut filled = 0;
        let mut eof = false;
        match file.first_bytes(self.buf.len()) {
            None => {}
            Some(Err(_)) => return Searched::ReadError,
            Some(Ok((whole, true))) => return search_whole(&whole, matcher, &mut sink),
            // No more than asked for, so it fits.
            Some(Ok((first, false))) => {
                self.buf[..first.len()].copy_from_slice(&first);
                filled = first.len();
            }
        }
        // The binary check needs the whole head, even from short reads.
        while filled < BINARY_HEAD && !eof {
            match read_into(file, &mut self.buf[filled..]) {
                Ok(0) => eof = true,
                Ok(n) => filled += n,
                Err(_) => return Searched::ReadError,
            }
        }
        if memchr::memchr(0, &self.buf[..filled.min(BINARY_HEAD)]).is_some() {
            return Searched::Binary;
        }

        // Lines before `self.buf[0]`.
        let mut lines_before = 0u64;
        let mut failed = false;
        loop {
            while !eof && !failed && filled < self.buf.len() {
                match read_into(file, &mut self.buf[filled..]) {
                    Ok(0) => eof = true,
                    Ok(n) => filled += n,
                    Err(_) => failed = true,
                }
            }
            // Search whole lines only; the last, incomplete one waits for
            // the next chunk (or, after a failed read, is dropped).
            let end = if eof {
                filled
            } else {
                match memchr::memrchr(b'\n', &self.buf[..filled]) {
                    Some(at) => at + 1,
                    None if failed => return Searched::ReadError,
                    None => {
                        let grown = self.buf.len() * 2;
                        self.buf.resize(grown, 0);
                        continue;
                    }
                }
            };
            // The last chunk's lines need no count: no line follows them.
            let count = !eof;
            match search_lines(&self.buf[..end], lines_before, count, matcher, &mut sink) {
                Some(lines) => lines_before += lines,
                None => return Searched::Stopped,
            }
            if eof {
                return Searched::All;
            }
            if failed {
                return Searched::ReadError;
            }
            self.buf.copy_within(end..filled, 0);
            filled -= end;
        }
    }
}

/// Searches the whole of a file, held in one buffer.
fn search_whole(
    content: &[u8],
    matcher: &Matcher,
    sink: &mut impl FnMut(u64, &str) -> Flow,
) -> Searched {
    if memchr::memchr(0, &content[..content.len().min(BINARY_HEAD)]).is_some() {
        return Searched::Binary;
    }
    match search_lines(content, 0, false, matcher, sink) {
        Some(_) => Searched::All,
        None => Searched::Stopped,
    }
}

/// Reads once, retrying interruptions.
fn read_into(file: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Searches `lines` (whole lines, the last one possibly without `\n`), whose
/// first line is number `lines_before + 1`. Returns how many lines ended in
/// it (only counted past the last hit when `count` asks for it, as another
/// chunk follows), or `None` when the sink stopped.
fn search_lines(
    lines: &[u8],
    lines_before: u64,
    count: bool,
    matcher: &Matcher,
    sink: &mut impl FnMut(u64, &str) -> Flow,
) -> Option<u64> {
    let mut at = 0;
    // Newlines are counted up to `counted`.
    let mut counted = 0;
    let mut number = lines_before;
    while at < lines.len() {
        let Some(hit) = matcher.next_candidate(lines, at) else {
            break;
        };
        let start = memchr::memrchr(b'\n', &lines[..hit]).map_or(0, |i| i + 1);
        if start == lines.len() {
            // An empty match after the final `\n`: that is no line.
            break;
        }
        let end = memchr::memchr(b'\n', &lines[hit..]).map_or(lines.len(), |i| hit + i);
        number += memchr::memchr_iter(b'\n', &lines[counted..start]).count() as u64;
        counted = start;
        let text = line_text(&lines[start..end]);
        if matcher.is_match(&text) && matches!(sink(number + 1, &text), Flow::Stop) {
            return None;
        }
        at = end + 1;
    }
    if count {
        number += memchr::memchr_iter(b'\n', &lines[counted..]).count() as u64;
    }
    Some(number - lines_before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, Cursor};

    /// The line-at-a-time search this module replaced, kept as the
    /// definition: `None` for a binary file, else (number, text) per match.
    fn reference(content: &[u8], pattern: &str) -> Option<Vec<(u64, String)>> {
        let regex = regex::Regex::new(pattern).expect("valid pattern");
        if content[..content.len().min(8192)].contains(&0) {
            return None;
        }
        let mut found = Vec::new();
        for (number, line) in Cursor::new(content).split(b'\n').enumerate() {
            let line = line.expect("in memory");
            let text = String::from_utf8_lossy(&line);
            let text = text.strip_suffix('\r').unwrap_or(&text);
            if regex.is_match(text) {
                found.push((number as u64 + 1, text.to_string()));
            }
        }
        Some(found)
    }

    /// Hands out at most `step` bytes per read, as a pipe or a slow disk may;
    /// with `hand_over`, the first read in a buffer of its own, as a read
    /// from the host does.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        hand_over: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    impl Source for &[u8] {}

    impl Source for Trickle<'_> {
        fn first_bytes(&mut self, max: usize) -> Option<io::Result<(Vec<u8>, bool)>> {
            if !std::mem::take(&mut self.hand_over) {
                return None;
            }
            let mut first = vec![0; max];
            let n = self.read(&mut first).expect("in memory");
            first.truncate(n);
            Some(Ok((first, self.data.is_empty())))
        }
    }

    fn run(
        searcher: &mut Searcher,
        content: &[u8],
        step: usize,
        pattern: &str,
    ) -> Option<Vec<(u64, String)>> {
        run_from(searcher, content, step, false, pattern)
    }

    fn run_from(
        searcher: &mut Searcher,
        content: &[u8],
        step: usize,
        hand_over: bool,
        pattern: &str,
    ) -> Option<Vec<(u64, String)>> {
        let matcher = Matcher::new(pattern).expect("valid pattern");
        let mut found = Vec::new();
        let mut file = Trickle {
            data: content,
            step,
            hand_over,
        };
        let searched = searcher.search(&mut file, &matcher, |number, text| {
            found.push((number, text.to_string()));
            Flow::Continue
        });
        match searched {
            Searched::All => Some(found),
            Searched::Binary => None,
            other => panic!("unexpected {other:?}"),
        }
    }

    /// splitmix64, so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    /// Text made of the pieces that matter at line edges and in lossy UTF-8.
    fn content(rng: &mut Rng) -> Vec<u8> {
        const PIECES: &[&[u8]] = &[
            b"a",
            b"b",
            b"ab",
            b"ba ",
            b" ",
            b"\r",
            b"\n",
            b"\n",
            b"\r\n",
            b"\r\n",
            b"\xff",
            b"\xe9",
            "é".as_bytes(),
            "\u{FFFD}".as_bytes(),
            b"_",
            b"x1",
            b"self",
            b"\xe2\x82",
            b"\t",
            b"\0",
        ];
        let len = [0, 3, 40, 2000, 20_000][rng.below(5)];
        let long_line = rng.below(8) == 0;
        let nul_ok = rng.below(4) == 0;
        let mut out = Vec::new();
        while out.len() < len {
            let piece = PIECES[rng.below(PIECES.len())];
            if piece == b"\0" && !nul_ok {
                continue;
            }
            if long_line && piece.contains(&b'\n') && rng.below(4) != 0 {
                continue;
            }
            out.extend_from_slice(piece);
        }
        out
    }

    const PATTERNS: &[&str] = &[
        "a",
        "ab",
        "^a",
        "a$",
        "^$",
        "^",
        "$",
        r"\Aa",
        r"a\z",
        "(?m)^a$",
        "(?m)b$",
        ".",
        "a.b",
        "[^a]",
        r"\W",
        r"\bab\b",
        r"\Bb",
        r"\r",
        r"a\r",
        r"\r$",
        r"\n",
        r"a\sb",
        r"\s",
        "x*",
        r"\x{FFFD}",
        "é",
        "(?i)É",
        "a|b$",
        r"(?-u:\b)a",
        r"\w+$",
        "(?s).",
        "(?R)^b",
        "(?R)a$",
        r"[\s\S]",
        r"\p{So}",
        "b{2,}",
        "(?i)AB",
        "(a)(b)?",
        r"^\s*$",
        "a.{3}b",
        r"\b{start}b",
        "self",
        r"\d",
        "_.",
        r"^[^\r]*$",
        r"\t",
        "b.self",
        r"\w+self",
        "[^a]ab",
        r"(?i)a.SELF",
        r"\s+x1",
        r"^.*ab$",
        r"a\x{FFFD}b",
        r"x1|\s",
        r"b[^a]{0,3}self\b",
    ];

    #[test]
    fn matches_the_line_at_a_time_search() {
        let mut rng = Rng(10);
        let mut small = Searcher::with_chunk(0);
        let mut large = Searcher::new();
        for pattern in PATTERNS {
            for round in 0..60 {
                let content = content(&mut rng);
                let expected = reference(&content, pattern);
                let step = [1, 7, 4096, usize::MAX][round % 4];
                // Every other round, the first read is handed over: whole
                // when it holds the file, else carried on from.
                let hand_over = round % 8 >= 4;
                for searcher in [&mut small, &mut large] {
                    let got = run_from(searcher, &content, step, hand_over, pattern);
                    if got != expected {
                        panic!(
                            "pattern {pattern:?}, step {step}, {} bytes: got {:?}, expected {:?}",
                            content.len(),
                            got.map(|g| g.into_iter().take(5).collect::<Vec<_>>()),
                            expected.map(|e| e.into_iter().take(5).collect::<Vec<_>>()),
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_line_longer_than_the_buffer_grows_it() {
        let mut searcher = Searcher::with_chunk(0);
        let mut content = "x".repeat(100_000);
        content.push_str("needle\nsecond needle\n");
        let found = run(&mut searcher, content.as_bytes(), usize::MAX, "needle").expect("text");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].0, 1);
        assert!(found[0].1.ends_with("xneedle"));
        assert_eq!(found[1], (2, "second needle".to_string()));
    }

    #[test]
    fn the_sink_can_stop_the_search() {
        let matcher = Matcher::new("a").expect("valid");
        let mut calls = 0;
        let searched = Searcher::new().search(&mut &b"a\na\na\n"[..], &matcher, |_, _| {
            calls += 1;
            if calls == 2 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
        assert_eq!(searched, Searched::Stopped);
        assert_eq!(calls, 2);
    }

    #[test]
    fn a_failed_read_keeps_the_lines_before_it() {
        struct FailsLater(bool);
        impl Read for FailsLater {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    return Err(io::Error::other("disk on fire"));
                }
                // Past the binary check's head: a failure inside the head
                // skips the file, as before.
                let data = format!("{}\none a\ntwo a\nthree a", "-".repeat(BINARY_HEAD));
                buf[..data.len()].copy_from_slice(data.as_bytes());
                Ok(data.len())
            }
        }
        impl Source for FailsLater {}
        let matcher = Matcher::new("a").expect("valid");
        let mut found = Vec::new();
        let searched = Searcher::new().search(&mut FailsLater(false), &matcher, |n, _| {
            found.push(n);
            Flow::Continue
        });
        assert_eq!(searched, Searched::ReadError);
        assert_eq!(found, [2, 3]);
    }
}
