//! A deterministic corpus of source-like text for `search_text`'s speed
//! checks, shared by the `search_speed` tests and `benches/search_text.rs`
//! (which includes this file by path).
//!
//! Many files in nested directories, most of them text that looks like Rust,
//! plus what `search_text` must skip: a `.gitignore`d `target/` tree and
//! `*.log` files, a hidden directory and hidden files, binary files (a NUL in
//! their first bytes). Some text files end without a newline, use CRLF, have
//! a line of invalid UTF-8 or a very long line. Every skipped file contains
//! the search patterns too, so a wrong skip shows. Nothing that `grep -rnI`
//! with [`GREP_EXCLUDES`] would treat differently (such as a NUL past the
//! first 8 KiB of a text file) is generated, so the two can be compared.

use std::fs;
use std::path::{Path, PathBuf};

/// A literal that occurs on a few thousand lines of the 100 MB corpus.
pub const LITERAL: &str = "unwrap_or_default";
/// A regex whose literal prefix is common and whose matches are rare.
pub const RARE_REGEX: &str = "fn [a-z_]+_unchecked";
/// A word on most lines of code.
pub const COMMON_WORD: &str = "self";

/// What `grep -rn` needs to skip what `search_text` skips here.
#[allow(dead_code)] // only the bench runs grep
pub const GREP_EXCLUDES: &[&str] = &[
    "-I",
    "--exclude-dir=target",
    "--exclude-dir=.hidden",
    "--exclude=*.log",
    "--exclude=.*",
];

/// Bumped whenever the generator's output changes, so a stale corpus left
/// in the target directory is not reused.
const VERSION: u32 = 1;

/// A generated corpus.
pub struct Corpus {
    pub root: PathBuf,
    /// Bytes of the files `search_text` searches through (text files that are
    /// neither hidden nor ignored).
    pub text_bytes: u64,
    /// Lines of those files containing [`LITERAL`].
    pub literal_lines: u64,
}

/// The corpus of about `text_bytes` bytes of text under `parent`, generated
/// unless a complete one with the same size and seed is already there.
///
/// Safe to call from parallel tests and from a bench running beside them:
/// each caller that finds no complete corpus generates its own under a
/// private name and renames it into place; the first rename wins and the
/// others drop theirs.
pub fn corpus(parent: &Path, text_bytes: u64, seed: u64) -> Corpus {
    let root = parent.join(format!("search-corpus-v{VERSION}-{text_bytes}-{seed}"));
    if let Some(corpus) = complete(&root) {
        return corpus;
    }
    // One generator per process at a time; the others wait and reuse it.
    static GENERATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = GENERATING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(corpus) = complete(&root) {
        return corpus;
    }
    let scratch = parent.join(format!(
        "search-corpus-v{VERSION}-{text_bytes}-{seed}.partial-{}",
        std::process::id()
    ));
    if scratch.exists() {
        fs::remove_dir_all(&scratch).expect("remove a stale partial corpus");
    }
    let corpus = Generator::new(&scratch, seed).run(text_bytes);
    fs::write(
        scratch.join(".complete"),
        format!(
            "text_bytes={}\nliteral_lines={}\n",
            corpus.text_bytes, corpus.literal_lines
        ),
    )
    .expect("write the corpus marker");
    if root.exists() && complete(&root).is_none() {
        // Left half-made by an older generator that wrote in place.
        fs::remove_dir_all(&root).expect("remove the incomplete corpus");
    }
    if fs::rename(&scratch, &root).is_err() {
        // Another process renamed its copy first; it is the same corpus.
        fs::remove_dir_all(&scratch).expect("remove the duplicate corpus");
    }
    complete(&root).expect("a complete corpus after generating it")
}

fn complete(root: &Path) -> Option<Corpus> {
    let text = fs::read_to_string(root.join(".complete")).ok()?;
    parse_marker(root, &text)
}

fn parse_marker(root: &Path, text: &str) -> Option<Corpus> {
    let mut text_bytes = None;
    let mut literal_lines = None;
    for line in text.lines() {
        match line.split_once('=') {
            Some(("text_bytes", n)) => text_bytes = n.parse().ok(),
            Some(("literal_lines", n)) => literal_lines = n.parse().ok(),
            _ => {}
        }
    }
    Some(Corpus {
        root: root.to_path_buf(),
        text_bytes: text_bytes?,
        literal_lines: literal_lines?,
    })
}

/// splitmix64: tiny, seedable and the same on every platform and version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "buffer", "cache", "config", "count", "cursor", "data", "entry", "event", "field", "file",
    "frame", "handle", "header", "index", "input", "item", "key", "len", "limit", "line", "map",
    "node", "offset", "output", "parser", "path", "queue", "reader", "record", "request", "result",
    "row", "scope", "slot", "span", "state", "stream", "table", "token", "value", "view", "window",
    "writer", "checked", "total", "next", "prev", "start", "end", "size",
];
const TYPES: &[&str] = &[
    "Buffer",
    "Config",
    "Entry",
    "Event",
    "Frame",
    "Handle",
    "Header",
    "Index",
    "Node",
    "Parser",
    "Record",
    "Request",
    "Span",
    "State",
    "Stream",
    "Table",
    "Token",
    "Value",
    "Vec<u8>",
    "usize",
    "String",
    "Option<usize>",
    "Result<(), Error>",
    "u64",
    "bool",
];
const COMMENT: &[&str] = &[
    "the", "a", "of", "to", "is", "when", "this", "not", "every", "so", "that", "we", "it",
    "keeps", "returns", "reads", "writes", "checks", "before", "after", "once", "only", "never",
];

struct Generator {
    root: PathBuf,
    rng: Rng,
    text_bytes: u64,
    literal_lines: u64,
}

impl Generator {
    fn new(root: &Path, seed: u64) -> Self {
        Generator {
            root: root.to_path_buf(),
            rng: Rng(seed),
            text_bytes: 0,
            literal_lines: 0,
        }
    }

    fn run(mut self, target: u64) -> Corpus {
        self.write(".gitignore", b"target/\n*.log\n");
        let mut n = 0u64;
        while self.text_bytes < target {
            let krate = n % 16;
            // About ten files per directory, up to three levels of modules.
            let depth = [0, 1, 1, 2, 2, 3][self.rng.below(6) as usize];
            let mut dir = format!("crate_{krate:02}/src");
            for _ in 0..depth {
                dir.push('/');
                dir.push_str(self.rng.pick(&WORDS[..3]));
            }
            // File sizes spread from 384 B to 96 KiB, like a source tree.
            let size = 384u64 << self.rng.below(8);
            let size = size + self.rng.below(size);
            let content = self.text_file(size as usize);
            let path = format!("{dir}/{}_{n}.rs", self.rng.pick(WORDS));
            self.text_bytes += content.len() as u64;
            self.literal_lines += count_lines_with(&content, LITERAL.as_bytes());
            self.write(&path, &content);

            // What search_text skips, at a rate that makes it matter.
            if n % 50 == 7 {
                let content = self.text_file(size as usize);
                self.write(&format!("crate_{krate:02}/target/debug/{n}.rs"), &content);
                self.write(&format!("{dir}/build_{n}.log"), &content);
            }
            if n % 97 == 11 {
                let content = self.text_file(4096);
                self.write(&format!(".hidden/cache_{n}.rs"), &content);
                self.write(&format!("{dir}/.hidden_{n}.rs"), &content);
            }
            if n % 61 == 5 {
                let mut content = b"\x7fELF\x02\x01\x01\0\0\0".to_vec();
                content.extend(self.text_file(size as usize));
                self.write(&format!("crate_{krate:02}/assets/blob_{n}.bin"), &content);
            }
            n += 1;
        }
        Corpus {
            root: self.root,
            text_bytes: self.text_bytes,
            literal_lines: self.literal_lines,
        }
    }

    fn write(&self, relative: &str, content: &[u8]) {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create corpus dir");
        }
        fs::write(&path, content).expect("write corpus file");
    }

    /// One file of about `size` bytes of Rust-like lines, with the edges:
    /// CRLF, no final newline, a line of Latin-1 (invalid UTF-8), a very
    /// long line.
    fn text_file(&mut self, size: usize) -> Vec<u8> {
        let crlf = self.rng.one_in(20);
        let latin1 = self.rng.one_in(50);
        let long_line = self.rng.one_in(100);
        let mut out = Vec::with_capacity(size + 200);
        let mut line = String::new();
        while out.len() < size {
            line.clear();
            self.line(&mut line);
            out.extend_from_slice(line.as_bytes());
            if latin1 && self.rng.one_in(40) {
                out.extend_from_slice(b" // caf\xe9 cr\xe8me, na\xefve self");
            }
            if long_line && self.rng.one_in(30) {
                for _ in 0..400 {
                    line.clear();
                    self.line(&mut line);
                    out.extend_from_slice(line.trim().as_bytes());
                    out.push(b' ');
                }
            }
            if crlf {
                out.push(b'\r');
            }
            out.push(b'\n');
        }
        if self.rng.one_in(10) {
            while out.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                out.pop();
            }
        }
        out
    }

    fn line(&mut self, out: &mut String) {
        let rng = &mut self.rng;
        let (a, b, c) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
        let t = rng.pick(TYPES);
        let indent = "    ".repeat(rng.below(4) as usize);
        out.push_str(&indent);
        match rng.below(100) {
            0..=19 => out.push_str(&format!("let {a}_{b} = self.{c}.{a}({b});")),
            20..=29 => out.push_str(&format!("pub fn {a}_{b}(&self, {c}: {t}) -> {t} {{")),
            30..=34 => out.push_str(&format!(
                "fn {a}_checked(&mut self, {b}: usize) -> Option<{t}> {{"
            )),
            35..=44 => {
                out.push_str("// ");
                for _ in 0..rng.below(10) + 3 {
                    out.push_str(rng.pick(COMMENT));
                    out.push(' ');
                }
                out.push_str(a);
                if rng.one_in(8) {
                    out.push_str(" \u{2192} caf\u{e9}");
                }
            }
            45..=54 => out.push('}'),
            55..=59 => {}
            60..=64 => out.push_str(&format!("use crate::{a}::{{{t}, {}}};", rng.pick(TYPES))),
            65..=74 => out.push_str(&format!(
                "if {a}.{b} > {} {{ return Err(Error::{c}); }}",
                rng.below(1000)
            )),
            75..=84 => out.push_str(&format!("self.{a} += {b}.len() as {t};")),
            85..=89 => out.push_str(&format!("#[derive(Debug, Clone)] struct {t}{a};")),
            _ => out.push_str(&format!("match {a} {{ Some({b}) => {b}, None => {c} }},")),
        }
        if rng.one_in(600) {
            out.push_str(&format!(" let {a} = {b}.{LITERAL}();"));
        }
        if rng.one_in(40_000) {
            out.push_str(&format!(" fn {a}_{b}_unchecked(&self) {{}}"));
        }
    }
}

fn count_lines_with(content: &[u8], needle: &[u8]) -> u64 {
    content
        .split(|b| *b == b'\n')
        .filter(|line| line.windows(needle.len()).any(|w| w == needle))
        .count() as u64
}
