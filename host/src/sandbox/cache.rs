//! On-disk cache of compiled components, and of which bytes a plugin file
//! holds.
//!
//! Compiling a component with Cranelift takes from tens of milliseconds
//! (a small Rust plugin) to seconds (Python or JavaScript components); loading
//! the compiled artifact takes about a millisecond. Entries are keyed by the
//! sha256 of the `.wasm`, the compiler tier and the engine's compatibility
//! hash, so a changed plugin or a different wasmtime/Cranelift configuration
//! never loads a stale artifact.
//!
//! Hashing a 19 MB Python component takes longer than the rest of a warm
//! start, so the sha256 of each plugin file is remembered with the file's
//! identity (device, inode, size, modification and change times): while
//! those are unchanged the file is not read at all. The change time cannot
//! be set back by any program short of changing the system clock, so a file
//! rewritten in place is hashed again.
//!
//! Safety: a cache entry is native code that wasmtime maps and runs without
//! verification, so the cache directory must be writable only by the user
//! (it is created with mode 0700).

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::engine::Tier;

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

    /// The cached code of the component whose bytes hash to `sha256`, for
    /// `engine` (of `tier`), if there is a loadable entry.
    pub(crate) fn load(&self, engine: &Engine, tier: Tier, sha256: &str) -> Option<Component> {
        let entry = self.entry(engine, tier, sha256)?;
        if !entry.is_file() {
            return None;
        }
        // SAFETY: entries are written only by `store` below, from
        // `Component::serialize` of this engine configuration (the key
        // includes its compatibility hash), in a directory only the user
        // can write. A truncated or foreign file fails to load instead of
        // running, and is then recompiled.
        unsafe { Component::deserialize_file(engine, &entry) }.ok()
    }

    /// Whether there is an entry for `sha256` of `tier` (without loading
    /// it).
    pub(crate) fn has(&self, engine: &Engine, tier: Tier, sha256: &str) -> bool {
        self.entry(engine, tier, sha256)
            .is_some_and(|entry| entry.is_file())
    }

    /// Compiles `bytes` (whose hash is `sha256`) with `engine` and stores
    /// the result. `compiling` is told when the compile starts (`true`) and
    /// ends (`false`), so the caller can show progress for the seconds it
    /// takes.
    pub(crate) fn compile(
        &self,
        engine: &Engine,
        tier: Tier,
        bytes: &[u8],
        sha256: &str,
        compiling: &dyn Fn(bool),
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        compiling(true);
        let component = Component::from_binary(engine, bytes);
        compiling(false);
        let component = component?;
        let status = match (&self.dir, self.entry(engine, tier, sha256)) {
            (Some(dir), Some(entry)) => match store(dir, &entry, &component) {
                Ok(()) => CacheStatus::Miss,
                Err(_) => CacheStatus::Uncached,
            },
            _ => CacheStatus::Uncached,
        };
        Ok((component, status))
    }

    /// Removes the entry of `tier` (the baseline code, once the optimized
    /// code is stored).
    pub(crate) fn remove(&self, engine: &Engine, tier: Tier, sha256: &str) {
        if let Some(entry) = self.entry(engine, tier, sha256) {
            let _ = fs::remove_file(entry);
        }
    }

    fn entry(&self, engine: &Engine, tier: Tier, sha256: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!(
            "{sha256}-{}-{}.cwasm",
            tier.name(),
            engine_key(engine)
        )))
    }

    /// The sha256 remembered for the file at `path` (`meta` its metadata,
    /// from the open file), if the file has not changed since.
    pub(crate) fn known_sha256(&self, path: &Path, meta: &fs::Metadata) -> Option<String> {
        let record = fs::read_to_string(self.identity_entry(path)?).ok()?;
        let (identity, sha256) = record.trim_end().rsplit_once(' ')?;
        let valid = sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit());
        (valid && identity == file_identity(meta)?).then(|| sha256.to_string())
    }

    /// Remembers that the file at `path` (`meta` its metadata) hashes to
    /// `sha256`.
    pub(crate) fn remember_sha256(&self, path: &Path, meta: &fs::Metadata, sha256: &str) {
        self.remember_sha256_at(path, meta, sha256, SystemTime::now());
    }

    /// [`Self::remember_sha256`] as of `now`. A file changed in the second
    /// before is not remembered: a second change within a coarse file
    /// system's time granularity could keep every field the same.
    fn remember_sha256_at(&self, path: &Path, meta: &fs::Metadata, sha256: &str, now: SystemTime) {
        let (Some(entry), Some(identity)) = (self.identity_entry(path), file_identity(meta)) else {
            return;
        };
        let settled = changed_at(meta)
            .and_then(|changed| now.duration_since(changed).ok())
            .is_some_and(|age| age > Duration::from_secs(1));
        if !settled {
            return;
        }
        if let Some(dir) = entry.parent() {
            let _ = write_atomically(dir, &entry, format!("{identity} {sha256}\n").as_bytes());
        }
    }

    fn identity_entry(&self, path: &Path) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let path = std::path::absolute(path).ok()?;
        let key = sha256_hex(path.as_os_str().as_encoded_bytes());
        Some(dir.join("files").join(key))
    }
}

/// Device, inode, size and times of a file, as one line; `None` where the
/// platform does not give them all.
fn file_identity(meta: &fs::Metadata) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some(format!(
            "{} {} {} {}.{} {}.{}",
            meta.dev(),
            meta.ino(),
            meta.size(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec()
        ))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// When the file's inode last changed (its contents or metadata).
fn changed_at(meta: &fs::Metadata) -> Option<SystemTime> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let secs = u64::try_from(meta.ctime()).ok()?;
        let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
    }
    #[cfg(not(unix))]
    {
        meta.modified().ok()
    }
}

/// Writes the entry atomically: a reader sees the old state or the whole
/// new file, never half of one, even with two toolhosts starting at once.
fn store(dir: &Path, entry: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component.serialize().map_err(std::io::Error::other)?;
    write_atomically(dir, entry, &bytes)
}

fn write_atomically(dir: &Path, entry: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_private_dir(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
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
/// engine's compatibility hash (wasmtime version, compiler and its
/// settings, target) and this toolhost's version.
fn engine_key(engine: &Engine) -> String {
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    #[test]
    fn a_remembered_hash_holds_until_the_file_changes() {
        let dir = tempfile::tempdir().expect("test setup");
        let cache = CompileCache::new(Some(dir.path().join("cache")));
        let path = dir.path().join("p.wasm");
        fs::write(&path, b"one").expect("test setup");
        let meta = fs::metadata(&path).expect("test setup");
        assert_eq!(cache.known_sha256(&path, &meta), None);
        cache.remember_sha256_at(&path, &meta, &sha256_hex(b"one"), later());
        assert_eq!(cache.known_sha256(&path, &meta), Some(sha256_hex(b"one")));

        // Same size, modification time put back: the change time moved.
        std::thread::sleep(Duration::from_millis(20));
        fs::write(&path, b"two").expect("test setup");
        fs::File::options()
            .write(true)
            .open(&path)
            .expect("test setup")
            .set_modified(meta.modified().expect("test setup"))
            .expect("test setup");
        let changed = fs::metadata(&path).expect("test setup");
        assert_eq!(changed.len(), meta.len());
        assert_eq!(
            changed.modified().expect("test setup"),
            meta.modified().expect("test setup")
        );
        assert_eq!(cache.known_sha256(&path, &changed), None);
    }

    #[test]
    fn a_file_changed_just_now_is_not_remembered() {
        let dir = tempfile::tempdir().expect("test setup");
        let cache = CompileCache::new(Some(dir.path().join("cache")));
        let path = dir.path().join("fresh.wasm");
        fs::write(&path, b"fresh").expect("test setup");
        let meta = fs::metadata(&path).expect("test setup");
        cache.remember_sha256(&path, &meta, &sha256_hex(b"fresh"));
        assert_eq!(cache.known_sha256(&path, &meta), None);
    }

    #[test]
    fn a_damaged_record_is_ignored() {
        let dir = tempfile::tempdir().expect("test setup");
        let cache = CompileCache::new(Some(dir.path().join("cache")));
        let path = dir.path().join("p.wasm");
        fs::write(&path, b"one").expect("test setup");
        let meta = fs::metadata(&path).expect("test setup");
        cache.remember_sha256_at(&path, &meta, &sha256_hex(b"one"), later());
        let record = cache.identity_entry(&path).expect("test setup");
        let text = fs::read_to_string(&record).expect("test setup");
        fs::write(&record, text.replace(&sha256_hex(b"one")[..8], "zzzzzzzz")).expect("test setup");
        assert_eq!(cache.known_sha256(&path, &meta), None);
    }
}
