//! The standard tools, embedded in the binary by `build.rs` with their
//! sha256 computed at build time.

include!(concat!(env!("OUT_DIR"), "/standard_plugins.rs"));

/// A standard plugin embedded in the binary, with its sha256 computed at
/// build time.
#[derive(Clone, Copy)]
pub(crate) struct Builtin {
    pub(crate) bytes: &'static [u8],
    pub(crate) sha256: &'static str,
}

impl Builtin {
    /// Every standard plugin embedded in this binary, by name.
    pub(crate) fn all() -> impl Iterator<Item = (&'static str, Builtin)> {
        STANDARD_PLUGINS
            .iter()
            .zip(STANDARD_PLUGIN_SHA256)
            .map(|((name, bytes), sha256)| (*name, Builtin { bytes, sha256 }))
    }
}

/// Whether `name` is one of the standard tools' (each standard plugin
/// `read-file` offers the one tool `read_file`).
pub fn is_standard_tool(name: &str) -> bool {
    STANDARD_PLUGINS
        .iter()
        .any(|(plugin, _)| plugin.replace('-', "_") == name)
}
