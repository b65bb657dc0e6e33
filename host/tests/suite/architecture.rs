//! The shape of the code, checked: the modules of `host/src` import one
//! another without a cycle, and no room imports a room on a higher floor
//! (ARCHITECTURE.md draws the floors). Read off the source as a reader
//! would: every `use` and every `crate::`/`super::` path outside the test
//! modules, each resolved to the file that defines what it names (through
//! the `pub use` re-exports of a `mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The floors, bottom up: a room imports only rooms on its own floor or
/// below, and rooms on one floor import each other in one direction only
/// (the cycle check).
const FLOORS: &[&[&str]] = &[
    &[
        "provider",
        "terminal",
        "instructions",
        "workspace",
        "json_budget",
        "text_file",
        "units",
    ],
    &["sandbox"],
    &["agent", "config"],
    &["transcript"],
    &["mcp", "chat"],
    &["cli"],
];

/// Cycles still to break, each as its files (sorted): none are left, and
/// a new one is broken rather than listed. The usual one is a `mod.rs`
/// that holds logic its children import (`super::load_resolved`) while it
/// calls them by bare path (`run::run_agent`): the fix is to move that
/// logic into a child of its own, leaving `mod.rs` re-exports and wiring.
const KNOWN_CYCLES: &[&[&str]] = &[];

type Module = Vec<String>;

/// Every module file under `src` (not `main.rs`, the binary's root), by
/// module path, with its code before its first `#[cfg(test)]`, comments
/// removed.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("below src");
            if relative == Path::new("main.rs") {
                continue;
            }
            let mut module: Module = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).expect("read module");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            out.insert(module, code_only(code));
        }
    }
    out
}

/// `text` without its comments and the contents of its string and
/// character literals, which may hold `use ` or `crate::` as words. Line
/// ends stay where they were, so lines can be counted.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // The line ends of what is dropped, kept.
    let drop = |out: &mut String, dropped: &[char]| {
        out.extend(dropped.iter().filter(|&&c| c == '\n'));
    };
    let mut i = 0;
    while i < chars.len() {
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        let start = i;
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            drop(&mut out, &chars[start..i]);
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            chars.get(i + 1 + hashes) == Some(&'"')
        } {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            i += hashes + 2;
            while i < chars.len() {
                if chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|&h| h == '#') {
                    i += hashes + 1;
                    break;
                }
                i += 1;
            }
            i = i.min(chars.len());
            out.push_str("\"\"");
            drop(&mut out, &chars[start..i]);
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            out.push_str("\"\"");
            drop(&mut out, &chars[start..i]);
        } else if c == '\'' && next == Some('\\') {
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The paths a `use` tree names: `a::{b, c::{self, D}}` is `a::b`,
/// `a::c::self`, `a::c::D`.
fn leaves(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let leaf = tree.split_whitespace().next().unwrap_or_default();
        return vec![leaf.to_string()];
    };
    let prefix: String = tree[..open].split_whitespace().collect();
    let close = tree
        .rfind('}')
        .filter(|&close| close > open)
        .unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .flat_map(leaves)
        .map(|leaf| format!("{prefix}{leaf}"))
        .collect()
}

/// Each path `code` imports, and whether it is re-exported (`pub use`).
fn imports(code: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut statements = Vec::new();
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    while let Some(found) = code[at..].find("use ") {
        let start = at + found;
        at = start + 4;
        if start > 0 && (ident(bytes[start - 1]) || bytes[start - 1] == b':') {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            break;
        };
        let before = code[..start].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        for leaf in leaves(&code[at..at + end]) {
            out.push((public, leaf));
        }
        statements.push(start..at + end);
        at += end;
    }
    // Paths in the code, the `use` statements read above left out, and
    // visibilities (`pub(in crate::cli)`), which import nothing.
    let mut rest = code.to_string();
    for range in statements {
        rest.replace_range(range.clone(), &" ".repeat(range.len()));
    }
    while let Some(start) = rest.find("pub(in ") {
        let end = rest[start..]
            .find(')')
            .map_or(rest.len(), |n| start + n + 1);
        rest.replace_range(start..end, &" ".repeat(end - start));
    }
    let (code, bytes) = (rest.as_str(), rest.as_bytes());
    for root in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(found) = code[at..].find(root) {
            let start = at + found;
            at = start + root.len();
            if start > 0 && (ident(bytes[start - 1]) || bytes[start - 1] == b':') {
                continue;
            }
            let end = code[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |n| start + n);
            out.push((false, code[start..end].trim_end_matches(':').to_string()));
        }
    }
    // A bare path (`network::for_tool(..)`), which names a child module
    // when its first segment is one ([`absolute`] keeps only those).
    let mut at = 0;
    while let Some(found) = code[at..].find("::") {
        let colons = at + found;
        at = colons + 2;
        let start = code[..colons]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |n| n + 1);
        let first = &code[start..colons];
        let bare = start == 0 || !matches!(bytes[start - 1], b':' | b'\'' | b'#');
        if bare
            && first.starts_with(|c: char| c.is_ascii_lowercase())
            && !matches!(first, "crate" | "super" | "self")
        {
            let end = code[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |n| start + n);
            out.push((false, code[start..end].trim_end_matches(':').to_string()));
        }
    }
    out
}

/// `path` as written in `module`, from the crate's root; `None` for an
/// outside crate's path.
fn absolute(modules: &BTreeMap<Module, String>, module: &Module, path: &str) -> Option<Module> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base = module.clone();
    match segments.first().copied() {
        Some("crate") => {
            base.clear();
            segments.remove(0);
        }
        Some("super" | "self") => {
            while let Some(first @ ("super" | "self")) = segments.first().copied() {
                if first == "super" {
                    base.pop();
                }
                segments.remove(0);
            }
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    base.extend(segments.into_iter().map(str::to_string));
    Some(base)
}

/// The module file that defines what `path` names: the deepest module on
/// the way, through re-exports (`pub use`) of the item it stops at.
fn resolve(
    modules: &BTreeMap<Module, String>,
    reexports: &BTreeMap<(Module, String), Module>,
    path: &[String],
    depth: usize,
) -> Module {
    let mut current: Module = Vec::new();
    for segment in path {
        if segment == "self" {
            continue;
        }
        let mut child = current.clone();
        child.push(segment.clone());
        if modules.contains_key(&child) {
            current = child;
            continue;
        }
        if depth < 8
            && let Some(target) = reexports.get(&(current.clone(), segment.clone()))
            && *target != child
        {
            return resolve(modules, reexports, target, depth + 1);
        }
        return current;
    }
    current
}

/// Every module's imports of other modules; a `mod.rs` re-exporting what
/// lies below it imports nothing by that.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules(src);
    let imported: BTreeMap<&Module, Vec<(bool, String)>> = modules
        .iter()
        .map(|(module, code)| (module, imports(code)))
        .collect();
    let mut reexports = BTreeMap::new();
    for (module, paths) in &imported {
        for (_, path) in paths.iter().filter(|(public, _)| *public) {
            if let Some(target) = absolute(&modules, module, path)
                && let Some(name) = target.last()
            {
                reexports.insert(((*module).clone(), name.clone()), target);
            }
        }
    }
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, paths) in &imported {
        let out = edges.entry((*module).clone()).or_default();
        for (public, path) in paths {
            let Some(target) = absolute(&modules, module, path) else {
                continue;
            };
            let to = resolve(&modules, &reexports, &target, 0);
            let below = to.len() > module.len() && to.starts_with(module);
            if to != **module && !(*public && below) {
                out.insert(to);
            }
        }
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan's).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let Some((w, _)) = self.edges.get_key_value(w) else {
                    continue;
                };
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.join("/"));
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn modules_import_one_another_without_a_cycle() {
    let edges = graph(&src());
    let found = cycles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|cycle| {
            let inside: BTreeSet<&str> = cycle.iter().map(String::as_str).collect();
            let arrows: Vec<String> = edges
                .iter()
                .filter(|(from, _)| inside.contains(from.join("/").as_str()))
                .flat_map(|(from, to)| {
                    to.iter()
                        .filter(|to| inside.contains(to.join("/").as_str()))
                        .map(move |to| format!("  {} -> {}", from.join("/"), to.join("/")))
                })
                .collect();
            format!("{cycle:?}\n{}", arrows.join("\n"))
        })
        .collect();
    let known: Vec<Vec<String>> = KNOWN_CYCLES
        .iter()
        .map(|cycle| cycle.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        found,
        known,
        "the import cycles changed: break a new one (move what both need into a module of \
         its own, below both), or take a broken one off KNOWN_CYCLES:\n{}",
        shown.join("\n")
    );
}

#[test]
fn no_room_imports_a_room_on_a_higher_floor() {
    let floor = |module: &Module| {
        let room = module.first()?;
        FLOORS
            .iter()
            .position(|rooms| rooms.contains(&room.as_str()))
    };
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (from, targets) in graph(&src()) {
        let Some(first) = from.first() else {
            continue;
        };
        let Some(here) = floor(&from) else {
            unplaced.insert(first.clone());
            continue;
        };
        for to in targets.iter().filter(|to| !to.is_empty()) {
            if floor(to).is_some_and(|there| there > here) {
                upward.push(format!("{} -> {}", from.join("/"), to.join("/")));
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "rooms on no floor (add them to FLOORS and to ARCHITECTURE.md): {unplaced:?}"
    );
    assert!(
        upward.is_empty(),
        "imports up a floor:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_reader_resolves_uses_as_rust_does() {
    assert_eq!(
        code_only(
            "a(\"use x; crate::y\", '\\'', '\"', r#\"crate::z\"#) // use q;\n/* crate::w */b"
        ),
        "a(\"\", , , \"\") \nb"
    );
    assert_eq!(
        leaves("super::{context::{self, X}, events::AgentEvent, Y as Z}"),
        [
            "super::context::self",
            "super::context::X",
            "super::events::AgentEvent",
            "super::Y"
        ]
    );
    let code = "pub use a::b;\nuse crate::x::{y, z};\nfn f() { crate::q::r(); super::s::t; }";
    assert_eq!(
        imports(code),
        [
            (true, "a::b".to_string()),
            (false, "crate::x::y".to_string()),
            (false, "crate::x::z".to_string()),
            (false, "crate::q::r".to_string()),
            (false, "super::s::t".to_string()),
        ]
    );
    assert!(imports("pub(in crate::cli) const X: u8 = 1;").is_empty());
    assert_eq!(
        imports("fn g() { network::for_tool(x); Access::Read; }"),
        [(false, "network::for_tool".to_string()),]
    );
}

/// The most lines a function outside the tests has, unless its doc says
/// why it is longer in a line that starts `Long:`.
const MOST_LINES: usize = 100;

/// Each function of `text` (outside its tests) longer than [`MOST_LINES`]
/// whose doc has no `Long:` line, as `name (N lines)`.
fn long_functions(text: &str) -> Vec<String> {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    let code: Vec<String> = code_only(text).lines().map(str::to_string).collect();
    let source: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (at, line) in code.iter().enumerate() {
        let mut rest = line.trim_start();
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let Some(name) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened, mut end) = (0i64, false, None);
        for (n, body) in code.iter().enumerate().skip(at) {
            if !opened && body.contains(';') && !body.contains('{') {
                break;
            }
            for c in body.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                end = Some(n);
                break;
            }
        }
        let Some(end) = end else {
            continue;
        };
        let lines = end - at + 1;
        if lines <= MOST_LINES {
            continue;
        }
        let says_why = source[..at]
            .iter()
            .rev()
            .map(|line| line.trim_start())
            .take_while(|line| line.starts_with("///") || line.starts_with("#["))
            .any(|line| line.starts_with("/// Long:"));
        if !says_why {
            out.push(format!("{name} ({lines} lines)"));
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_a_screenful_without_saying_why() {
    let mut found = Vec::new();
    for (module, _) in modules(&src()) {
        let file = ["", "/mod.rs", ".rs"]
            .iter()
            .map(|end| src().join(format!("{}{end}", module.join("/"))))
            .find(|path| path.is_file() && !module.is_empty())
            .unwrap_or_else(|| src().join("lib.rs"));
        let text = std::fs::read_to_string(&file).expect("read module");
        for long in long_functions(&text) {
            found.push(format!("{}: {long}", module.join("/")));
        }
    }
    assert!(
        found.is_empty(),
        "functions over {MOST_LINES} lines (split one, or say why in a `/// Long:` line of \
         its doc):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_long_function_is_found_and_one_that_says_why_is_not() {
    let body = "    x();\n".repeat(MOST_LINES);
    let long = format!("/// Does x.\npub fn a() {{\n{body}}}\n");
    assert_eq!(long_functions(&long), ["a (102 lines)"]);
    let said = format!("/// Does x.\n///\n/// Long: one arm per x.\nfn a() {{\n{body}}}\n");
    assert!(long_functions(&said).is_empty());
    let short = "fn b() {\n    let s = \"{\n{\n\";\n}\n";
    assert!(long_functions(short).is_empty());
}
