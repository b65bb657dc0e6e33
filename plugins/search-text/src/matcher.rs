//! Which lines match: the user's regex, one line at a time (the definition),
//! and a looser regex over whole buffers of lines (the speed).
//!
//! A line matches when `pattern` matches its text as `search_text` has always
//! shown it: lossy UTF-8, without the `\n` and one trailing `\r`. Running
//! that regex on every line costs a call and a UTF-8 check per line, so the
//! search runs a *candidate* regex over a buffer of many lines instead and
//! checks only the lines it lands on. The candidate regex is built from the
//! pattern's syntax tree so that it matches somewhere in every line that the
//! pattern matches (it may match more; those lines fail the check):
//!
//! - no `\n` in any class or literal, so no candidate match spans two lines
//!   and the end of a match names its line;
//! - `^`/`$` (and `\A`/`\z`) become line anchors, `$` CRLF-aware, as the line's
//!   text stops before a `\r\n`;
//! - wherever the pattern can match U+FFFD (`.`, `[^x]`, `\W`, the character
//!   itself), the candidate also takes one to three bytes of `\x80-\xFF`, which
//!   is what a lossy conversion turns into U+FFFD; so no file needs a UTF-8 check;
//! - Unicode word boundaries are dropped: the lazy DFA cannot do them on
//!   non-ASCII text and would hand the whole buffer to a slow engine.
//!
//! When some part of the pattern other than its start has a longer literal
//! than its start (`fn [a-z_]+_unchecked`), the candidates are the lines
//! holding that literal, found with SIMD, as ripgrep does: the regex engine
//! would otherwise be started at every `fn `.

use regex::Regex;
use regex_automata::meta;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Input, MatchKind, Span};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use regex_syntax::hir::{
    Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look,
    Repetition,
};

/// The pattern, compiled both ways.
pub(crate) struct Matcher {
    line: Regex,
    candidates: Candidates,
}

/// What finds the lines worth checking.
enum Candidates {
    /// The candidate regex.
    Regex(meta::Regex),
    /// Literals one of which every match contains.
    Literals(Prefilter),
    /// Every line; when the candidate regex could not be built (it is bigger
    /// than the pattern).
    EveryLine,
}

impl Matcher {
    /// Compiles `pattern`; the error is `regex`'s, for the model.
    pub(crate) fn new(pattern: &str) -> Result<Matcher, regex::Error> {
        let line = Regex::new(pattern)?;
        let candidates = match regex_syntax::ParserBuilder::new().build().parse(pattern) {
            Ok(hir) => Candidates::new(for_buffers(hir)),
            Err(_) => Candidates::EveryLine,
        };
        Ok(Matcher { line, candidates })
    }

    /// Where the first line at or after `at` (a line start) that may match
    /// ends: an offset inside it or at its end, or `None` when no line of
    /// `haystack` from `at` on can match.
    pub(crate) fn next_candidate(&self, haystack: &[u8], at: usize) -> Option<usize> {
        match &self.candidates {
            Candidates::Regex(regex) => regex
                .search_half(&Input::new(haystack).range(at..).earliest(true))
                .map(|m| m.offset()),
            Candidates::Literals(literals) => literals
                .find(haystack, Span::from(at..haystack.len()))
                .map(|span| span.start),
            Candidates::EveryLine => (at < haystack.len()).then_some(at),
        }
    }

    /// Whether `text`, a line as shown (see [`line_text`]), matches.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.line.is_match(text)
    }
}

impl Candidates {
    fn new(hir: Hir) -> Candidates {
        if let Some(literals) = inner_literals(&hir) {
            return Candidates::Literals(literals);
        }
        match meta::Builder::new()
            .configure(
                meta::Config::new()
                    .match_kind(MatchKind::LeftmostFirst)
                    .utf8_empty(false),
            )
            .build_from_hir(&hir)
        {
            Ok(regex) => Candidates::Regex(regex),
            Err(_) => Candidates::EveryLine,
        }
    }
}

/// A prefilter for literals of some part of a concatenation that every match
/// contains, when they are longer than the literals the pattern starts with
/// (which the regex engine already searches for).
fn inner_literals(hir: &Hir) -> Option<Prefilter> {
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    // Each part's prefixes: every match of the part starts with one of them,
    // so every match of the whole contains one.
    let score = |seq: &Seq| match (seq.literals(), seq.min_literal_len()) {
        (Some(literals), Some(len)) if len > 0 && !literals.is_empty() => Some(len),
        _ => None,
    };
    let prefix = score(&extractor.extract(hir)).unwrap_or(0);
    let (best, len) = parts
        .iter()
        .skip(1)
        .map(|part| extractor.extract(part))
        .filter_map(|seq| score(&seq).map(|len| (seq, len)))
        .max_by_key(|(seq, len)| (*len, std::cmp::Reverse(seq.len())))?;
    if len <= prefix {
        return None;
    }
    let needles: Vec<&[u8]> = best.literals()?.iter().map(|l| l.as_bytes()).collect();
    Prefilter::new(MatchKind::LeftmostFirst, &needles)
}

/// A line's text as `search_text` shows and matches it: lossy UTF-8, one
/// trailing `\r` removed.
pub(crate) fn line_text(line: &[u8]) -> std::borrow::Cow<'_, str> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // `from_utf8` checks a word at a time; the lossy decoder a byte at a time.
    match std::str::from_utf8(line) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// The candidate regex of `hir`; see the module docs.
fn for_buffers(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => literal_for_buffers(&literal.0),
        HirKind::Class(Class::Unicode(class)) => {
            let mut class = class;
            class.difference(&ClassUnicode::new([ClassUnicodeRange::new('\n', '\n')]));
            let takes_replacement = class.ranges().iter().any(|r| {
                r.start() <= char::REPLACEMENT_CHARACTER && char::REPLACEMENT_CHARACTER <= r.end()
            });
            let class = Hir::class(Class::Unicode(class));
            if takes_replacement {
                Hir::alternation(vec![class, invalid_utf8()])
            } else {
                class
            }
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut class = class;
            class.difference(&ClassBytes::new([ClassBytesRange::new(b'\n', b'\n')]));
            Hir::class(Class::Bytes(class))
        }
        HirKind::Look(look) => match look {
            Look::Start | Look::StartLF => Hir::look(Look::StartLF),
            Look::End | Look::EndLF => Hir::look(Look::EndCRLF),
            Look::WordUnicode
            | Look::WordUnicodeNegate
            | Look::WordStartUnicode
            | Look::WordEndUnicode
            | Look::WordStartHalfUnicode
            | Look::WordEndHalfUnicode => Hir::empty(),
            other => Hir::look(other),
        },
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(for_buffers(*rep.sub)),
            ..rep
        }),
        // Capture groups mean nothing to a yes/no search.
        HirKind::Capture(capture) => for_buffers(*capture.sub),
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(for_buffers).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.into_iter().map(for_buffers).collect()),
    }
}

/// A literal with no `\n` (a line's text has none, so it cannot match) and
/// each U+FFFD also matching invalid UTF-8.
fn literal_for_buffers(bytes: &[u8]) -> Hir {
    if bytes.contains(&b'\n') {
        return Hir::fail();
    }
    const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();
    let mut parts = Vec::new();
    let mut rest = bytes;
    while let Some(at) = rest
        .windows(REPLACEMENT.len())
        .position(|w| w == REPLACEMENT)
    {
        parts.push(Hir::literal(&rest[..at]));
        parts.push(Hir::alternation(vec![
            Hir::literal(REPLACEMENT),
            invalid_utf8(),
        ]));
        rest = &rest[at + REPLACEMENT.len()..];
    }
    parts.push(Hir::literal(rest));
    Hir::concat(parts)
}

/// What one U+FFFD of a lossy conversion stands for: one to three bytes that
/// are not valid UTF-8 there (a superset: any bytes of `\x80-\xFF`).
fn invalid_utf8() -> Hir {
    Hir::repetition(Repetition {
        min: 1,
        max: Some(3),
        greedy: true,
        sub: Box::new(Hir::class(Class::Bytes(ClassBytes::new([
            ClassBytesRange::new(0x80, 0xFF),
        ])))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(pattern: &str) -> &'static str {
        match Matcher::new(pattern).expect("valid").candidates {
            Candidates::Regex(_) => "regex",
            Candidates::Literals(_) => "literals",
            Candidates::EveryLine => "every line",
        }
    }

    #[test]
    fn a_longer_inner_literal_beats_the_prefix() {
        assert_eq!(kind("fn [a-z_]+_unchecked"), "literals");
        assert_eq!(kind(r"\w+_unchecked"), "literals");
        assert_eq!(kind("unwrap_or_default"), "regex");
        assert_eq!(kind("self.[a-z]+"), "regex");
        assert_eq!(kind("(?i)self"), "regex");
    }

    #[test]
    fn candidates_never_span_lines() {
        let matcher = Matcher::new(r"a\s+b").expect("valid");
        assert_eq!(matcher.next_candidate(b"a\nb\n", 0), None);
        assert_eq!(matcher.next_candidate(b"a\nb a b\n", 0), Some(7));
    }

    #[test]
    fn line_text_drops_one_carriage_return_and_decodes_lossily() {
        assert_eq!(line_text(b"x\r\r"), "x\r");
        assert_eq!(line_text(b"caf\xe9"), "caf\u{FFFD}");
    }
}
