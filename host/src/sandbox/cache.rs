//! On-disk cache of compiled components.
//!
//! Compiling a component with Cranelift takes from tens of milliseconds
//! (a small Rust plugin) to seconds (Python or JavaScript components); loading
//! the compiled artifact takes about a millisecond. Entries are keyed by the
//! sha256 of the `.wasm` and the engine's compatibility hash, so a changed
//! plugin or a different wasmtime/Cranelift configuration never loads a stale
//! artifact.
//!
//! Safety: a cache entry is native code that wasmtime maps and runs without
//! verification, so the cache directory must be writable only by the user
//! (it is created with mode 0700).

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheStatus {
    /// Loaded from the compile cache: no compilation.
    Hit,
    /// Compiled now and stored for next time.
    Miss,
    /// Compiled now; the cache is turned off or not writable.
    Uncached,
}

/// The compile cache; `None` directory means compile every time.
#[derive(Debug, Clone)]
pub(crate) struct CompileCache {
    dir: Option<PathBuf>,
}

/// The sha256 of a plugin's bytes, hex-encoded: its identity in the cache,
/// in `toolhost tools --json` and in transcripts.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl CompileCache {
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        CompileCache { dir }
    }

    /// Loads the compiled form of `bytes` (whose hash is `sha256`), compiling
    /// and storing it when it is not cached yet.
    /// `compiling` is told when a compile starts (`true`) and ends
    /// (`false`), so the caller can show progress for the seconds it takes.
    pub(crate) fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
        compiling: &dyn Fn(bool),
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let compile = || {
            compiling(true);
            let component = Component::from_binary(engine, bytes);
            compiling(false);
            component
        };
        let Some(dir) = &self.dir else {
            return Ok((compile()?, CacheStatus::Uncached));
        };
        let entry = dir.join(format!("{sha256}-{}.cwasm", engine_key(engine)));
        if entry.is_file() {
            // SAFETY: entries are written only by `store` below, from
            // `Component::serialize` of this engine configuration (the key
            // includes its compatibility hash), in a directory only the
            // user can write. A truncated or foreign file fails to load
            // instead of running, and is then recompiled.
            if let Ok(component) = unsafe { Component::deserialize_file(engine, &entry) } {
                return Ok((component, CacheStatus::Hit));
            }
        }
        let component = compile()?;
        let status = match store(dir, &entry, &component) {
            Ok(()) => CacheStatus::Miss,
            Err(_) => CacheStatus::Uncached,
        };
        Ok((component, status))
    }
}

/// Writes the entry atomically: a reader sees the old state or the whole
/// new file, never half of one, even with two toolhosts starting at once.
fn store(dir: &Path, entry: &Path, component: &Component) -> std::io::Result<()> {
    create_private_dir(dir)?;
    let bytes = component.serialize().map_err(std::io::Error::other)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(&bytes)?;
    temp.persist(entry).map_err(|e| e.error)?;
    Ok(())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A short key of everything that makes a compiled artifact loadable: the
/// engine's compatibility hash (wasmtime version, Cranelift settings, target)
/// and this toolhost's version.
fn engine_key(engine: &Engine) -> String {
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}
