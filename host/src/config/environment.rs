//! The environment variables resolving reads, read once, each by name, so
//! that what follows is a function of what was read.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// What the environment says, as toolhost started.
#[derive(Clone, Default)]
pub(super) struct Environment {
    /// `$TOOLHOST_BASELINE_MIN_BYTES`, as written (checked when derived).
    pub(super) baseline_min_bytes: Option<String>,
    /// `$TOOLHOST_BACKGROUND_COMPILE`, as written.
    pub(super) background_compile: Option<String>,
    /// `$TOOLHOST_CACHE_DIR`, unless unset or empty.
    pub(super) toolhost_cache_dir: Option<PathBuf>,
    /// `$XDG_CACHE_HOME`, unless unset or empty.
    pub(super) xdg_cache_home: Option<PathBuf>,
    /// `$HOME`, unless unset or empty.
    pub(super) home: Option<PathBuf>,
    /// The variables the config files' `headers` name (`${NAME}`), those
    /// that are set: credentials, so [`fmt::Debug`] shows only the names.
    pub(super) header_variables: BTreeMap<String, String>,
    /// `$PATH` and where the Rust toolchain is, for exec grants.
    pub(super) programs: crate::sandbox::ProgramLookup,
}

impl Environment {
    /// Reads the fixed variables and the header variables `names`.
    pub(super) fn read<'a>(names: impl Iterator<Item = &'a str>) -> Self {
        Environment {
            baseline_min_bytes: std::env::var("TOOLHOST_BASELINE_MIN_BYTES").ok(),
            background_compile: std::env::var("TOOLHOST_BACKGROUND_COMPILE").ok(),
            toolhost_cache_dir: env_path("TOOLHOST_CACHE_DIR"),
            xdg_cache_home: env_path("XDG_CACHE_HOME"),
            home: env_path("HOME"),
            header_variables: names
                .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
                .collect(),
            programs: crate::sandbox::ProgramLookup::from_env(),
        }
    }

    /// A header variable's value, as `std::env::var` would give it.
    pub(super) fn header_variable(&self, name: &str) -> Option<String> {
        self.header_variables.get(name).cloned()
    }

    /// `$TOOLHOST_CACHE_DIR`, else `$XDG_CACHE_HOME/toolhost`, else
    /// `~/.cache/toolhost`.
    pub(super) fn default_cache_dir(&self) -> Option<PathBuf> {
        self.toolhost_cache_dir
            .clone()
            .or_else(|| self.xdg_cache_home.as_ref().map(|p| p.join("toolhost")))
            .or_else(|| self.home.as_ref().map(|p| p.join(".cache/toolhost")))
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Environment")
            .field("baseline_min_bytes", &self.baseline_min_bytes)
            .field("background_compile", &self.background_compile)
            .field("toolhost_cache_dir", &self.toolhost_cache_dir)
            .field("xdg_cache_home", &self.xdg_cache_home)
            .field("home", &self.home)
            .field("header_variables", &self.header_variables.keys())
            .finish()
    }
}

/// The path in environment variable `var`, unless it is unset or empty.
pub(super) fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
