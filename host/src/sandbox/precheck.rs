//! The shape pre-check: what a component declares (tables, their sizes,
//! memories, core instances) against what every call may hold, read before
//! any compile.
//!
//! The pools ([`super::engine`]) and the limiter ([`super::limits`]) are
//! the enforcement, on both compiler tiers; their refusal comes as
//! wasmtime's text after a compile, or as a trap at the first call. This
//! says the same thing at once, naming the module and the limit.

use wasmparser::{Instance, Parser, Payload};

use super::limits::{MEMORIES_PER_MODULE, TABLE_ELEMENTS, TABLES_PER_MODULE, TOTAL_CORE_INSTANCES};

/// Refuses a component that declares more than one call may hold: the
/// text after "plugin `FILE`: ". Malformed bytes pass (the import
/// pre-check and the compile say what is wrong with them).
pub(crate) fn check(bytes: &[u8]) -> Result<(), String> {
    let refuse = |what: String| {
        Err(format!(
            "it needs more than toolhost allows one plugin: {what}; a call may hold at most \
             {TABLES_PER_MODULE} table of {TABLE_ELEMENTS} elements and {MEMORIES_PER_MODULE} \
             memory per core module, and {TOTAL_CORE_INSTANCES} core instances"
        ))
    };
    // Core modules by their order in the file, counting nested ones.
    let mut module = 0usize;
    let mut depth_of_module = None;
    let mut depth = 0usize;
    let mut instances = 0u64;
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(payload) = payload else {
            return Ok(());
        };
        match payload {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => {
                if depth_of_module == Some(depth) {
                    depth_of_module = None;
                }
                depth = depth.saturating_sub(1);
            }
            Payload::ModuleSection { .. } => {
                module += 1;
                depth_of_module = Some(depth + 1);
            }
            Payload::TableSection(reader) if depth_of_module == Some(depth) => {
                if reader.count() > TABLES_PER_MODULE {
                    return refuse(format!(
                        "core module {module} declares {} tables",
                        reader.count()
                    ));
                }
                for table in reader.into_iter().flatten() {
                    if table.ty.initial > TABLE_ELEMENTS as u64 {
                        return refuse(format!(
                            "core module {module} declares a table of {} elements",
                            table.ty.initial
                        ));
                    }
                }
            }
            Payload::MemorySection(reader)
                if depth_of_module == Some(depth) && reader.count() > MEMORIES_PER_MODULE =>
            {
                return refuse(format!(
                    "core module {module} declares {} memories",
                    reader.count()
                ));
            }
            Payload::InstanceSection(reader) => {
                instances += reader
                    .into_iter()
                    .flatten()
                    .filter(|i| matches!(i, Instance::Instantiate { .. }))
                    .count() as u64;
                if instances > u64::from(TOTAL_CORE_INSTANCES) {
                    return refuse(format!("it instantiates {instances} core modules"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What is checked before any compile, so a refused plugin costs no
/// compile time: the wasm magic, imports toolhost can provide, and no more
/// tables, memories or instances than a call may hold.
pub(crate) fn precheck(bytes: &[u8]) -> Result<(), String> {
    if !bytes.starts_with(b"\0asm") {
        return Err(
            "not a WebAssembly file (it does not start with the `\\0asm` magic bytes)".into(),
        );
    }
    super::imports::check(bytes).map_err(|refusal| refusal.message())?;
    check(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_standard_plugin_fits() {
        for (name, bytes) in crate::sandbox::standard::STANDARD_PLUGINS {
            assert_eq!(check(bytes), Ok(()), "{name}");
        }
    }
}
