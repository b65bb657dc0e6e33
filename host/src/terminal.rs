//! Text from outside toolhost made inert before it reaches a terminal.
//!
//! Plugins (descriptions, error texts, results), the model (its text, tool
//! names and arguments), a model server's error body and files a repository
//! may ship (session files, `toolhost.toml`, plugin file names) are untrusted.
//! A terminal acts on control characters in them: ESC starts sequences that
//! retitle the window, move the cursor or erase lines; CR returns to the
//! start of the line to overwrite it; a C1 control (U+009B is a whole CSI on
//! some terminals) does what ESC does; the bidirectional overrides reorder
//! what the reader sees ("Trojan Source", CVE-2021-42574). Every text
//! `cli/render` and `mcp/log` print passes through here, so the only control
//! sequences that reach a terminal are toolhost's own (none today but the
//! spinner's, drawn by indicatif on an interactive stderr only).
//!
//! Escaped, as Rust writes them, so the reader sees what was there:
//! C0 controls and DEL as `\r`, `\x1b`, `\x7f`; C1 controls and the nine
//! bidi embedding, override and isolate controls (the set rustc's
//! `text_direction_codepoint_in_literal` lint names) as `\u{9b}`, `\u{202e}`.
//! [`multiline`] keeps `\n` and `\t`, for text shown as lines (a reply, a
//! tool result, an error); [`one_line`] escapes them too, for a field of
//! one line (a tool line, a table row, an id, a prompt). The backslash
//! itself is not escaped: this is for reading, not a reversible encoding.
//!
//! Must not: decide where text goes, or print.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character but `\n` and `\t` escaped.
pub(crate) fn multiline(text: &str) -> Cow<'_, str> {
    escape(text, |c| matches!(c, '\n' | '\t'))
}

/// `text` with every control character escaped, `\n` and `\t` included.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// Serialized JSON with DEL, C1 and bidi controls written as `\u` escapes:
/// the same JSON value (the characters can only stand inside strings, where
/// the escape means the character), with no byte a terminal acts on.
/// serde_json already escapes the C0 controls inside strings.
pub(crate) fn json(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_json_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_json_escape(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a terminal may act on `c`.
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}') || is_bidi_control(c)
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn needs_json_escape(c: char) -> bool {
    matches!(c, '\x7f'..='\u{9f}') || is_bidi_control(c)
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let inert = |c: char| !is_control(c) || keep(c);
    if text.chars().all(inert) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if inert(c) {
            out.push(c);
            continue;
        }
        let _ = match c {
            '\n' => out.write_str("\\n"),
            '\t' => out.write_str("\\t"),
            '\r' => out.write_str("\\r"),
            '\0'..='\x7f' => write!(out, "\\x{:02x}", u32::from(c)),
            _ => write!(out, "\\u{{{:x}}}", u32::from(c)),
        };
    }
    Cow::Owned(out)
}

/// The last line of `text` that has any, for a one-line view of output
/// that keeps coming (a running tool's progress).
pub(crate) fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
}

/// `word` as one shell word: as it is when it holds nothing a shell reads
/// specially, else in single quotes. A command toolhost tells the user to
/// paste must mean what it says.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:@%+,-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// `text` cut to `max` characters with an ellipsis.
pub(crate) fn short(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// A call's arguments for its line: the path-like ones first, as they are
/// (`write_file notes/review.md`), then the rest as JSON cut to 60
/// characters, so a long `content` never hides where it goes.
pub(crate) fn call_summary(arguments: &serde_json::Value) -> String {
    let Some(object) = arguments.as_object() else {
        return short(&arguments.to_string(), 60);
    };
    let path_like = |key: &str| {
        matches!(key, "path" | "file" | "dir" | "directory" | "from" | "to")
            || key.ends_with("_path")
    };
    let mut words: Vec<String> = object
        .iter()
        .filter(|(key, value)| path_like(key) && value.is_string())
        .filter_map(|(_, value)| value.as_str().map(str::to_string))
        .collect();
    let rest: serde_json::Map<String, serde_json::Value> = object
        .iter()
        .filter(|(key, value)| !(path_like(key) && value.is_string()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if !rest.is_empty() || words.is_empty() {
        words.push(short(&serde_json::Value::Object(rest).to_string(), 60));
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_a_terminal_acts_on_is_escaped() {
        assert_eq!(
            multiline("a\x1b]0;t\x07\r\x1b[2Kb\x7f\u{85}\u{9b}2J\u{202e}c\u{2066}"),
            "a\\x1b]0;t\\x07\\r\\x1b[2Kb\\x7f\\u{85}\\u{9b}2J\\u{202e}c\\u{2066}"
        );
        assert_eq!(multiline("\0\x08\x0b\x0c\x1f"), "\\x00\\x08\\x0b\\x0c\\x1f");
        for c in (0..=0x9f).chain(0x202a..=0x202e).chain(0x2066..=0x2069) {
            let c = char::from_u32(c).expect("a char");
            let escaped = one_line(&c.to_string()).into_owned();
            let is_printable = (' '..='~').contains(&c);
            assert_eq!(escaped == c.to_string(), is_printable, "{c:?} -> {escaped}");
            assert!(escaped.chars().all(|e| !is_control(e)), "{c:?}");
        }
    }

    #[test]
    fn lines_and_tabs_stay_in_multiline_text_only() {
        assert_eq!(multiline("a\tb\nc"), "a\tb\nc");
        assert_eq!(one_line("a\tb\nc\r\n"), "a\\tb\\nc\\r\\n");
    }

    #[test]
    fn plain_text_is_borrowed_not_copied() {
        for text in ["", "plain `text`, é ✔ 漢字 \\x1b", "C:\\path"] {
            assert!(matches!(one_line(text), Cow::Borrowed(t) if t == text));
            assert!(matches!(json(text), Cow::Borrowed(t) if t == text));
        }
        // Unicode beyond the listed controls passes: zero-width joiners,
        // right-to-left script, emoji.
        let text = "\u{200d}שלום 👩\u{200d}💻";
        assert_eq!(one_line(text), text);
    }

    #[test]
    fn json_keeps_its_value_and_loses_the_raw_controls() {
        let value = serde_json::json!({"t": "\x1b]0;t\x07\u{7f}\u{9b}2J\u{202e}\u{2069}\n"});
        let text = serde_json::to_string_pretty(&value).expect("json");
        let escaped = json(&text);
        assert!(
            escaped.chars().all(|c| c == '\n' || !is_control(c)),
            "{escaped}"
        );
        assert!(escaped.contains(r"\u001b]0;t\u0007\u007f\u009b2J\u202e\u2069\n"));
        let back: serde_json::Value = serde_json::from_str(&escaped).expect("still json");
        assert_eq!(back, value);
    }
}
