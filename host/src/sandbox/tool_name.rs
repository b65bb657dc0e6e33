//! What toolhost accepts as a tool's name, from a plugin, a typed export
//! or the user's config. A leaf.

/// A name toolhost accepts for a tool: 1-64 characters of `[a-zA-Z0-9_-]`,
/// what every model API allows.
pub fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
