//! A plugin's bytes and where they came from: embedded in the binary or a
//! `.wasm` file, opened and size-checked before anything reads it, read at
//! most once, hashed only when the compile cache does not know the file.

use std::fmt;
use std::fs::{self, File};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cache::{CompileCache, sha256_hex};
use super::standard::Builtin;

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginOrigin {
    /// One of the standard tools embedded in the binary.
    Builtin(String),
    /// A `.wasm` file.
    File(PathBuf),
}

impl fmt::Display for PluginOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginOrigin::Builtin(name) => write!(f, "builtin:{name}"),
            PluginOrigin::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl serde::Serialize for PluginOrigin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl PluginOrigin {
    /// The file's stem (`fs` for `fs.wasm`), or the standard tool's name.
    pub(crate) fn stem(&self) -> String {
        match self {
            PluginOrigin::Builtin(name) => name.clone(),
            PluginOrigin::File(path) => path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// A plugin's bytes: embedded in the binary or read from its file.
#[derive(Clone)]
pub(crate) enum Bytes {
    Static(&'static [u8]),
    Read(Arc<[u8]>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Static(bytes) => bytes,
            Bytes::Read(bytes) => bytes,
        }
    }
}

/// A plugin's bytes as loading needs them: a file is opened at once (so an
/// unreadable one is refused) but read only when its compiled code is not
/// in the cache or its contents are needed.
pub(crate) enum Source {
    /// A standard plugin: its bytes, and their sha256 known without
    /// hashing.
    Embedded(Bytes, &'static str),
    /// A `.wasm` file, opened and size-checked; its bytes once read.
    File {
        path: PathBuf,
        file: File,
        meta: fs::Metadata,
        bytes: Option<Bytes>,
        /// Bytes the file may have.
        limit: u64,
    },
}

impl Source {
    /// Opens the plugin's file and checks its size against `limit` before
    /// anything reads it.
    pub(crate) fn open(
        origin: &PluginOrigin,
        builtin: Option<Builtin>,
        limit: u64,
    ) -> Result<Source, String> {
        if let Some(builtin) = builtin {
            return Ok(Source::Embedded(
                Bytes::Static(builtin.bytes),
                builtin.sha256,
            ));
        }
        let PluginOrigin::File(path) = origin else {
            return Err(
                "no bytes for this standard tool; please report this as a toolhost bug".into(),
            );
        };
        let (file, meta) = open_within(path, limit)?;
        Ok(Source::File {
            path: path.clone(),
            file,
            meta,
            bytes: None,
            limit,
        })
    }

    /// The plugin's size in bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            Source::Embedded(bytes, _)
            | Source::File {
                bytes: Some(bytes), ..
            } => bytes.len(),
            Source::File { meta, .. } => usize::try_from(meta.len()).unwrap_or(usize::MAX),
        }
    }

    pub(crate) fn bytes(&mut self) -> Result<Bytes, String> {
        match self {
            Source::Embedded(bytes, _)
            | Source::File {
                bytes: Some(bytes), ..
            } => Ok(bytes.clone()),
            Source::File {
                file,
                meta,
                bytes,
                limit,
                ..
            } => {
                let read = Bytes::Read(Arc::from(read_within(file, meta.len(), *limit)?));
                *bytes = Some(read.clone());
                Ok(read)
            }
        }
    }

    /// The sha256 of the bytes: known for a standard plugin, remembered
    /// for an unchanged file, else hashed (and remembered).
    pub(crate) fn sha256(&mut self, cache: &CompileCache) -> Result<String, String> {
        if let Source::Embedded(_, known) = self {
            return Ok(known.to_string());
        }
        if let Source::File { path, meta, .. } = &*self
            && let Some(known) = cache.known_sha256(path, meta)
        {
            return Ok(known);
        }
        let sha256 = sha256_hex(&self.bytes()?);
        if let Source::File { path, meta, .. } = &*self {
            cache.remember_sha256(path, meta, &sha256);
        }
        Ok(sha256)
    }
}

/// Opens the plugin file at `path` and checks its size against `limit`
/// before anything reads it.
fn open_within(path: &Path, limit: u64) -> Result<(File, fs::Metadata), String> {
    let file = File::open(path)
        .map_err(|e| format!("cannot read it: {}", super::limits::open_error(&e)))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if meta.len() > limit {
        return Err(super::limits::plugin_file_refusal(meta.len(), limit));
    }
    Ok((file, meta))
}

/// Reads `file`, `len` bytes when its size was checked, never more than
/// `limit`: a file that grew past the limit since is refused as well.
fn read_within(file: &mut File, len: u64, limit: u64) -> Result<Vec<u8>, String> {
    let mut read = Vec::with_capacity(usize::try_from(len.min(limit)).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut read)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let read_len = read.len() as u64;
    if read_len > limit {
        return Err(super::limits::plugin_file_refusal(read_len.max(len), limit));
    }
    Ok(read)
}

/// The whole plugin file at `path`, if it is within `limit` bytes.
pub(crate) fn read_plugin_file(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let (mut file, meta) = open_within(path, limit)?;
    read_within(&mut file, meta.len(), limit)
}
