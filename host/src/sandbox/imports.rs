//! The import pre-check: reads a component's imports before it is compiled
//! and refuses one that imports anything the sandbox's linker does not
//! provide, naming every such import at once.
//!
//! A 13-18 MB Python or JavaScript component takes 10-25 s to compile; the
//! linker only finds a missing import afterwards, and names the first one.
//! Reading the import names takes milliseconds. This compares names only
//! (with the linker's semver rule); `instantiate_pre` still checks every
//! type after the compile, and stays the enforcement.

use wasmparser::{Chunk, ComponentTypeRef, Encoding, Parser, Payload, TypeBounds};

/// The interfaces the sandbox links (`capabilities::add_wasi_to_linker`,
/// `capabilities::network`, `capabilities::exec`, and the `host` and
/// `tool-types` interfaces of the bindings), at the versions linked. Keep in step with those; the unit
/// test below checks each name against the real linker.
pub(crate) const PROVIDED: &[&str] = &[
    "wasi:io/error@0.2.12",
    "wasi:io/poll@0.2.12",
    "wasi:io/streams@0.2.12",
    "wasi:clocks/wall-clock@0.2.12",
    "wasi:clocks/monotonic-clock@0.2.12",
    "wasi:filesystem/types@0.2.12",
    "wasi:filesystem/preopens@0.2.12",
    "wasi:random/random@0.2.12",
    "wasi:random/insecure@0.2.12",
    "wasi:random/insecure-seed@0.2.12",
    "wasi:cli/exit@0.2.12",
    "wasi:cli/environment@0.2.12",
    "wasi:cli/stdin@0.2.12",
    "wasi:cli/stdout@0.2.12",
    "wasi:cli/stderr@0.2.12",
    "wasi:cli/terminal-input@0.2.12",
    "wasi:cli/terminal-output@0.2.12",
    "wasi:cli/terminal-stdin@0.2.12",
    "wasi:cli/terminal-stdout@0.2.12",
    "wasi:cli/terminal-stderr@0.2.12",
    "wasi:sockets/network@0.2.12",
    "wasi:sockets/instance-network@0.2.12",
    "wasi:sockets/tcp@0.2.12",
    "wasi:sockets/tcp-create-socket@0.2.12",
    "wasi:sockets/udp@0.2.12",
    "wasi:sockets/udp-create-socket@0.2.12",
    "wasi:sockets/ip-name-lookup@0.2.12",
    "wasi:http/types@0.2.12",
    "wasi:http/outgoing-handler@0.2.12",
    "toolhost:plugin/tool-types@0.1.0",
    "toolhost:plugin/host@0.1.0",
    "toolhost:plugin/exec@0.1.0",
];

/// Why a component was refused before it was compiled.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The bytes are not a well-formed component.
    NotAComponent(String),
    /// It imports what toolhost does not provide; every such name, in the
    /// component's order.
    Missing(Vec<String>),
}

impl Refusal {
    /// The text a user reads after "plugin `FILE`: ".
    pub(crate) fn message(&self) -> String {
        match self {
            Refusal::NotAComponent(why) => format!(
                "not a valid WebAssembly component: {why}; build it for wasm32-wasip2 or wrap a core \
                 module with `wasm-tools component new`"
            ),
            Refusal::Missing(names) => {
                let listed: Vec<String> = names
                    .iter()
                    .map(|name| match hint(name) {
                        Some(hint) => format!("`{name}` ({hint})"),
                        None => format!("`{name}`"),
                    })
                    .collect();
                let what = if names.len() == 1 {
                    "an import".to_string()
                } else {
                    format!("{} imports", names.len())
                };
                format!(
                    "it needs {what} toolhost does not provide: {}. Plugins may import WASI 0.2 \
                     (io, clocks, filesystem, random, cli, sockets, http) and \
                     toolhost:plugin/host@0.1.0; build against toolhost's wit/plugin.wit (world \
                     `plugin`, or `plugin-fs` for componentize-js) and remove the other imports \
                     from the world you build",
                    listed.join(", ")
                )
            }
        }
    }
}

/// Refuses `bytes` unless it is a component whose every top-level import
/// is in [`PROVIDED`]. Nested modules and components are skipped unread:
/// only the outer component's imports reach the linker.
pub(crate) fn check(bytes: &[u8]) -> Result<(), Refusal> {
    let not_a_component = |e: wasmparser::BinaryReaderError| Refusal::NotAComponent(e.to_string());
    let mut parser = Parser::new(0);
    let mut rest = bytes;
    let mut missing = Vec::new();
    loop {
        let (consumed, payload) = match parser.parse(rest, true).map_err(not_a_component)? {
            Chunk::Parsed { consumed, payload } => (consumed, payload),
            Chunk::NeedMoreData(_) => {
                return Err(Refusal::NotAComponent("the file is truncated".into()));
            }
        };
        let mut skip = 0;
        match payload {
            Payload::Version {
                encoding: Encoding::Module,
                ..
            } => {
                return Err(Refusal::NotAComponent(
                    "it is a core WebAssembly module".into(),
                ));
            }
            Payload::ComponentImportSection(reader) => {
                for import in reader {
                    let import = import.map_err(not_a_component)?;
                    // A type equal to one the component already has (the
                    // world's `use tool-types.{tool-spec}`) needs nothing
                    // from the linker.
                    let needs_linker =
                        !matches!(import.ty, ComponentTypeRef::Type(TypeBounds::Eq(_)));
                    if needs_linker && !provided(import.name.name) {
                        missing.push(import.name.name.to_string());
                    }
                }
            }
            Payload::ModuleSection {
                unchecked_range, ..
            }
            | Payload::ComponentSection {
                unchecked_range, ..
            } => skip = unchecked_range.len(),
            Payload::End(_) => break,
            _ => {}
        }
        rest = rest
            .get(consumed + skip..)
            .ok_or_else(|| Refusal::NotAComponent("a nested module runs past the end".into()))?;
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Refusal::Missing(missing))
    }
}

/// True when the linker resolves `name`: the same name, or one at a
/// semver-compatible version (wasmtime's rule: `@1.2.3` matches `@1.x`,
/// `@0.2.3` matches `@0.2.x`; `@0.0.x` and pre-releases only themselves).
fn provided(name: &str) -> bool {
    PROVIDED.iter().any(|p| {
        *p == name || compatibility_key(p).is_some_and(|k| compatibility_key(name) == Some(k))
    })
}

/// The part of a versioned name that compatible versions share, as
/// wasmtime's `alternate_lookup_key` computes it.
fn compatibility_key(name: &str) -> Option<&str> {
    let (base, version) = name.split_once('@')?;
    let core = version
        .split_once('+')
        .map_or(version, |(core, _build)| core);
    if core.contains('-') {
        return None;
    }
    let numbers: Vec<u64> = core
        .split('.')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [major, minor, _patch] = numbers[..] else {
        return None;
    };
    let kept = if major != 0 {
        major.to_string().len()
    } else if minor != 0 {
        2 + minor.to_string().len()
    } else {
        return None;
    };
    Some(&name[..base.len() + 1 + kept])
}

/// What to do about one missing import, when there is more to say than
/// "remove it".
fn hint(name: &str) -> Option<&'static str> {
    let (package, version) = name.split_once('@').unwrap_or((name, ""));
    if package.starts_with("toolhost:plugin/") {
        return Some(
            "toolhost:plugin@0.1.0 offers only `host`, `tool-types` and `exec`: rebuild against \
             toolhost's wit/plugin.wit",
        );
    }
    if package.starts_with("wasi:") && version.starts_with("0.3") {
        return Some("WASI 0.3 is not supported yet: build for WASI 0.2");
    }
    if package.starts_with("wasi:") && version.is_empty() {
        return Some(
            "an unversioned WASI import: build with a toolchain that names WASI 0.2 versions",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatible_versions_share_a_key_as_in_wasmtime() {
        assert_eq!(
            compatibility_key("wasi:http/types@0.2.10"),
            Some("wasi:http/types@0.2")
        );
        assert_eq!(compatibility_key("x:y/z@1.4.0+build"), Some("x:y/z@1"));
        assert_eq!(compatibility_key("x:y/z@0.0.1"), None);
        assert_eq!(compatibility_key("wasi:keyvalue/store@0.2.0-draft"), None);
        assert_eq!(compatibility_key("wasi:io/error"), None);
        assert!(provided("wasi:http/types@0.2.10"));
        assert!(provided("wasi:io/poll@0.2.0"));
        assert!(!provided("wasi:io/poll@0.3.0"));
        assert!(!provided("wasi:io/poll"));
        assert!(!provided("toolhost:plugin/host@0.2.0"));
        assert!(!provided("wasi:keyvalue/store@0.2.0-draft"));
    }

    #[test]
    fn garbage_and_core_modules_are_not_components() {
        assert!(matches!(
            check(b"\0asm this is not a component"),
            Err(Refusal::NotAComponent(_))
        ));
        let core_module = b"\0asm\x01\0\0\0";
        assert_eq!(
            check(core_module),
            Err(Refusal::NotAComponent(
                "it is a core WebAssembly module".into()
            ))
        );
    }

    #[test]
    fn every_standard_plugin_passes() {
        for (name, bytes) in crate::sandbox::standard::STANDARD_PLUGINS {
            assert_eq!(check(bytes), Ok(()), "{name}");
        }
    }

    #[test]
    fn one_message_names_every_missing_import_and_the_fix() {
        let refusal = Refusal::Missing(vec![
            "fixture:missing/vault".into(),
            "wasi:http/types@0.3.0".into(),
        ]);
        assert_eq!(
            refusal.message(),
            "it needs 2 imports toolhost does not provide: `fixture:missing/vault`, \
             `wasi:http/types@0.3.0` (WASI 0.3 is not supported yet: build for WASI 0.2). Plugins \
             may import WASI 0.2 (io, clocks, filesystem, random, cli, sockets, http) and \
             toolhost:plugin/host@0.1.0; build against toolhost's wit/plugin.wit (world `plugin`, \
             or `plugin-fs` for componentize-js) and remove the other imports from the world you \
             build"
        );
    }

    #[test]
    fn hints_say_what_to_rebuild() {
        assert!(hint("toolhost:plugin/vault@0.1.0").is_some_and(|h| h.contains("only `host`")));
        assert!(hint("wasi:io/poll").is_some_and(|h| h.contains("unversioned")));
        assert_eq!(hint("acme:secrets/vault@1.0.0"), None);
    }

    /// Each name in [`PROVIDED`] is defined in the real linker: defining it
    /// again fails, as the linker refuses to shadow a name.
    #[test]
    fn every_provided_name_is_in_the_linker() {
        let engine =
            crate::sandbox::engine::engine(crate::sandbox::Tier::Optimized).expect("engine");
        let mut linker = crate::sandbox::call::linker(&engine).expect("linker");
        for name in PROVIDED {
            let defined_again = linker.root().func_wrap(name, |_, (): ()| Ok(()));
            assert!(defined_again.is_err(), "`{name}` is not linked");
        }
        assert!(
            linker
                .root()
                .func_wrap("wasi:keyvalue/store@0.2.0-draft", |_, (): ()| Ok(()))
                .is_ok(),
            "the probe must tell a missing name from a linked one"
        );
    }
}
