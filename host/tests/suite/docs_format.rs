//! The documentation against the code: every field the session writer
//! emits is named in docs/reference/session-format.md, and every relative
//! link in the Markdown files (README.md, the other top-level files and
//! docs/) leads to a file that exists, and to a heading that exists when it
//! names one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::{Workspace, copy_dir, stdout_of};

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// Fields whose values are not the format's own: the model's tool input,
/// and the server's usage object as it sent it. Their keys are not listed.
const OPAQUE: [&str; 2] = ["arguments", "raw"];

/// Every key path below `value`, as `parent.key`; an array's elements
/// count as the array itself (`tools.grants.path`).
fn key_paths(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                if !OPAQUE.contains(&key.as_str()) {
                    key_paths(child, &path, out);
                }
                out.insert(path);
            }
        }
        Value::Array(items) => {
            for item in items {
                key_paths(item, prefix, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_the_session_writer_emits_is_in_the_format_reference() {
    let ws = Workspace::new();
    copy_dir(&repo().join("examples/demo"), ws.path());
    stdout_of(
        ws.toolhost()
            .arg("--workspace")
            .arg(ws.path())
            .args(["run", "--script"])
            .arg(repo().join("examples/scripts/demo.json"))
            .arg("Review this project"),
    );
    let sessions: Vec<PathBuf> = std::fs::read_dir(ws.path().join(".toolhost/sessions"))
        .expect("the sessions directory")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let text = std::fs::read_to_string(&sessions[0]).expect("read the session file");

    // Record type -> the key paths its records hold.
    let mut records: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON line");
        let kind = record["type"].as_str().expect("a type").to_owned();
        key_paths(&record, "", records.entry(kind).or_default());
    }
    for kind in [
        "session_start",
        "message",
        "tool_execution_start",
        "tool_execution_end",
        "stop",
    ] {
        assert!(records.contains_key(kind), "the demo wrote no `{kind}`");
    }

    let page = std::fs::read_to_string(repo().join("docs/reference/session-format.md"))
        .expect("read docs/reference/session-format.md");
    let named = |name: &str| page.contains(&format!("`{name}`"));
    let mut missing = Vec::new();
    for (kind, paths) in &records {
        if !named(kind) {
            missing.push(format!("the record type `{kind}`"));
        }
        for path in paths {
            let key = path.rsplit('.').next().expect("a key");
            if !named(key) {
                missing.push(format!("`{kind}` record's `{path}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/reference/session-format.md does not name (in backticks) what the session \
         writer emits:\n{}",
        missing.join("\n")
    );
}

/// The Markdown files whose links are checked: the top-level ones and
/// everything under docs/.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read docs dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo())
        .expect("read the repository root")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    walk(&repo().join("docs"), &mut files);
    files.sort();
    files
}

/// The lines of `text` outside fenced code blocks, with their numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m && trimmed.trim_end() == m => fence = None,
            (None, None) => lines.push((n + 1, line)),
            _ => {}
        }
    }
    lines
}

/// `line` without its code spans (`` `...` ``), which hold no links.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let fence = &rest[start..start + ticks];
        let after = &rest[start + ticks..];
        match after.find(fence) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links (`[text](target)`, images too) and the
/// reference definitions (`[label]: target`) of one line.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut targets = Vec::new();
    if let Some(rest) = line.trim_start().strip_prefix('[')
        && let Some(end) = rest.find("]:")
        && !rest[..end].contains(']')
    {
        targets.push(rest[end + 2..].trim().to_owned());
    }
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let mut depth = 0usize;
        let end = after
            .char_indices()
            .find(|&(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' if depth == 0 => true,
                ')' => {
                    depth -= 1;
                    false
                }
                _ => false,
            })
            .map_or(after.len(), |(i, _)| i);
        targets.push(after[..end].to_owned());
        rest = &after[end..];
    }
    targets
        .into_iter()
        .map(|target| {
            // `<path with spaces>`, or a path and maybe a `"title"`.
            let target = target.trim();
            match target.strip_prefix('<') {
                Some(inner) => inner.split('>').next().unwrap_or_default().to_owned(),
                None => target
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            }
        })
        .collect()
}

/// A heading's anchor as GitHub makes it: the text as rendered (links as
/// their text, no code or emphasis marks), lowercased, spaces to `-`, and
/// every other character but letters, digits, `-` and `_` dropped.
fn slug(heading: &str) -> String {
    let mut rendered = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        rendered.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(paren)) if close < paren => {
                rendered.push_str(&after[..close]);
                rest = &after[paren + 1..];
            }
            _ => {
                rendered.push('[');
                rest = after;
            }
        }
    }
    rendered.push_str(rest);
    rendered
        .chars()
        .filter(|c| *c != '`' && *c != '*')
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// Every heading anchor of a Markdown file; a repeated heading gets `-1`,
/// `-2`, ... as on GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(text);
        let count = seen.entry(base.clone()).or_insert(0);
        anchors.insert(if *count == 0 {
            base
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    anchors
}

/// Why `target`, linked from `file`, does not resolve; `None` when it does
/// or is not a relative link.
fn broken(file: &Path, target: &str) -> Option<String> {
    let external = ["http://", "https://", "mailto:", "//"];
    if target.is_empty() || external.iter().any(|scheme| target.starts_with(scheme)) {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().expect("a file's directory").join(path)
    };
    if !resolved.exists() {
        return Some(format!("`{}` does not exist", resolved.display()));
    }
    let anchor = anchor?;
    if resolved.extension().is_none_or(|e| e != "md") {
        return Some(format!("`#{anchor}` is not a heading of a Markdown file"));
    }
    let text = std::fs::read_to_string(&resolved).expect("read a linked file");
    let known = anchors(&text);
    (!known.contains(anchor)).then(|| {
        format!(
            "`{}` has no heading `#{anchor}` (it has: {})",
            resolved.display(),
            known.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = repo();
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("read a Markdown file");
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                checked += 1;
                if let Some(why) = broken(&file, &target) {
                    let shown = file.strip_prefix(&root).unwrap_or(&file);
                    problems.push(format!("{}:{n}: ({target}) {why}", shown.display()));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} links found: is the parser broken?"
    );
    assert!(
        problems.is_empty(),
        "{} broken link(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn slugs_follow_githubs_rules() {
    let cases = [
        (
            "Trust: what a workspace's own config may do",
            "trust-what-a-workspaces-own-config-may-do",
        ),
        (
            "`search_text` against `grep -rn`",
            "search_text-against-grep--rn",
        ),
        ("`[plugins.STEM]`", "pluginsstem"),
        (
            "MCP: a tool call over stdio, and start-to-ready (2026-12-01)",
            "mcp-a-tool-call-over-stdio-and-start-to-ready-2026-12-01",
        ),
        (
            "Thrown errors become `failed` in the plugin",
            "thrown-errors-become-failed-in-the-plugin",
        ),
        ("See [the reference](x.md) **now**", "see-the-reference-now"),
    ];
    for (heading, anchor) in cases {
        assert_eq!(slug(heading), anchor, "{heading}");
    }
    let repeated = anchors("# A\n\n```\n# not a heading\n```\n## A\n### B #\n");
    assert_eq!(
        repeated,
        BTreeSet::from(["a".to_owned(), "a-1".to_owned(), "b".to_owned()])
    );
    assert_eq!(
        link_targets("see [a](x.md#y), `[no](code.md)` and ![i](img.png \"t\")"),
        ["x.md#y", "img.png"]
    );
    assert_eq!(link_targets("[ref]: <docs/a b.md>"), ["docs/a b.md"]);
    assert_eq!(
        link_targets("[a](x.md) and [b]: not a definition"),
        ["x.md"]
    );
}
