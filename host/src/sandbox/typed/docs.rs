//! Doc comments of a component's functions, from its `package-docs` custom
//! section: the WIT docs that wit-component writes (a version byte, then
//! JSON) when a toolchain keeps them. Many toolchains drop the section; then
//! there are no docs and a description is built from the signature.

use serde_json::Value;

use crate::json_budget::JsonBudget;

/// The section's name, as wit-component writes it.
const SECTION: &str = "package-docs";

/// What the docs section may make toolhost parse: far more than the doc
/// comments of any plugin's functions.
const DOCS: JsonBudget = JsonBudget {
    max_bytes: usize::MAX,
    max_depth: 64,
    max_values: 100_000,
};

/// The docs found in a component (possibly none).
#[derive(Debug, Default)]
pub(crate) struct Docs(Option<Value>);

impl Docs {
    /// Reads the top-level `package-docs` section of `bytes`. A missing,
    /// unknown-version or malformed section gives no docs: descriptions are
    /// a courtesy and never stop a plugin from loading.
    pub(crate) fn of_component(bytes: &[u8]) -> Docs {
        let mut depth = 0usize;
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            let Ok(payload) = payload else {
                return Docs(None);
            };
            match payload {
                wasmparser::Payload::Version { .. } => depth += 1,
                wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
                wasmparser::Payload::CustomSection(section)
                    if depth == 1 && section.name() == SECTION =>
                {
                    return Docs::from_section(section.data());
                }
                _ => {}
            }
        }
        Docs(None)
    }

    /// Version 0 and 1 of the format share the JSON this reads.
    pub(crate) fn from_section(data: &[u8]) -> Docs {
        match data.split_first() {
            // A plugin's section, maybe a repository's: bounded before
            // it is parsed, as any JSON toolhost did not write.
            Some((0 | 1, json)) => Docs(DOCS.parse(json).ok()),
            _ => Docs(None),
        }
    }

    /// The doc comment of function `func`, exported by the world or by
    /// `interface` (`pkg:ns/files@1.0.0`, looked up by its short name).
    pub(crate) fn function(&self, interface: Option<&str>, func: &str) -> Option<&str> {
        let root = self.0.as_ref()?;
        let entry = match interface {
            Some(interface) => {
                let short = short_interface(interface);
                root.get("interfaces")?
                    .get(short)?
                    .get("funcs")?
                    .get(func)?
            }
            None => root
                .get("worlds")?
                .as_object()?
                .values()
                .find_map(|world| {
                    ["func_exports", "funcs"]
                        .iter()
                        .find_map(|key| world.get(key)?.get(func))
                })?,
        };
        // v0 spells a function's docs as a bare string, v1 as an object.
        let text = entry
            .as_str()
            .or_else(|| entry.get("docs")?.as_str())?
            .trim();
        (!text.is_empty()).then_some(text)
    }
}

/// `pkg:ns/files@1.0.0` -> `files`.
pub(super) fn short_interface(name: &str) -> &str {
    let name = name.rsplit_once('/').map_or(name, |(_, n)| n);
    name.split_once('@').map_or(name, |(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_world_and_interface_function_docs_in_both_versions() {
        let v1 = br#"{"worlds":{"fs":{"func_exports":{"read-file":{"docs":"Read the complete contents of a file."}}}},"interfaces":{"files":{"funcs":{"stat":{"docs":"  Size of a file.  "}}}}}"#;
        let docs = Docs::from_section(&[&[1u8][..], v1].concat());
        assert_eq!(
            docs.function(None, "read-file"),
            Some("Read the complete contents of a file.")
        );
        assert_eq!(
            docs.function(Some("example:fs/files@1.0.0"), "stat"),
            Some("Size of a file.")
        );
        assert_eq!(docs.function(None, "stat"), None);

        let v0 = br#"{"worlds":{"fs":{"funcs":{"read-file":"Reads."}}}}"#;
        let docs = Docs::from_section(&[&[0u8][..], v0].concat());
        assert_eq!(docs.function(None, "read-file"), Some("Reads."));
    }

    #[test]
    fn a_bad_section_gives_no_docs() {
        for data in [&b""[..], b"\x02{}", b"\x01not json"] {
            assert_eq!(Docs::from_section(data).function(None, "f"), None);
        }
        assert_eq!(Docs::of_component(b"not wasm").function(None, "f"), None);
    }
}
