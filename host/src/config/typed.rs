//! The `[tools.NAME]` keys for tools derived from typed exports (`paths`,
//! `read_only`) and the `[plugins.NAME] prefix`es.

use super::error::ConfigError;
use super::file::PathUse;
use super::origin::{FileKind, line_of};
use super::source::Source;
use crate::sandbox::{Access, TypedConfig, TypedToolConfig};

/// What the files say about tools derived from typed exports: the
/// workspace's keys over the user's. Path parameters only add checks (the
/// grants still hold); an untrusted workspace may make a tool read-only but
/// not undo that, and its prefixes name only its own plugins.
pub(super) fn typed_config(sources: &[Source], trusted: bool) -> Result<TypedConfig, ConfigError> {
    let mut typed = TypedConfig::default();
    for source in sources {
        for (tool, section) in &source.file.tools {
            if section.paths.is_none() && section.read_only.is_none() {
                continue;
            }
            let entry: &mut TypedToolConfig = typed.tools.entry(tool.clone()).or_default();
            for (param, use_) in section.paths.iter().flatten() {
                let access = match use_ {
                    PathUse::Read => Access::Read,
                    PathUse::Write => Access::Write,
                };
                entry.paths.insert(param.clone(), access);
            }
            // An untrusted workspace may make a tool read-only, never undo
            // that: `read_only = false` would give back the write access
            // your config took away.
            let untrusted = source.kind == FileKind::Workspace && !trusted;
            match section.read_only {
                Some(false) if untrusted => {}
                Some(read_only) => entry.read_only = Some(read_only),
                None => {}
            }
        }
        for (stem, section) in &source.file.plugins {
            let Some(prefix) = &section.prefix else {
                continue;
            };
            let text = prefix.get_ref();
            let valid = text.len() <= 32 && crate::sandbox::is_tool_name(text);
            if !valid {
                return Err(ConfigError::ParseFile {
                    path: source.path.clone(),
                    message: format!(
                        "[plugins.{stem}] prefix = {text:?} at line {}: a prefix is 1-32 characters of \
                         [a-zA-Z0-9_-], as tool names are",
                        line_of(&source.text, prefix.span().start)
                    ),
                });
            }
            // An untrusted workspace names its own plugins, not yours: a
            // prefix could move one of your plugins' tools to a name your
            // config gives more.
            let prefixes = if source.kind == FileKind::Workspace && !trusted {
                &mut typed.shipped_prefixes
            } else {
                &mut typed.prefixes
            };
            prefixes.insert(stem.clone(), text.clone());
        }
    }
    Ok(typed)
}
