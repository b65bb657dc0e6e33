//! Exec grants: the native programs a tool may start
//! (`--allow-exec [TOOL=]PROGRAM`, `exec = [...]`), each found on the
//! user's `PATH` when toolhost starts, with the toolchain it needs to run.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// What a tool may run natively.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecPolicy {
    pub programs: Vec<Program>,
}

/// One granted program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// As granted (`cargo`), the name a command runs it by.
    pub name: String,
    /// Where it is: the first match on `PATH`, absolute.
    pub path: PathBuf,
    /// Directories outside the grants it needs to run, read-only
    /// (`~/.cargo` and `~/.rustup` for a rustup-managed `cargo`).
    pub toolchain: Vec<PathBuf>,
    /// Variables it needs to find its toolchain (`CARGO_HOME`).
    pub env: Vec<(String, String)>,
    /// Files of its toolchain it never sees: the registry tokens of a
    /// Cargo home.
    pub secrets: Vec<PathBuf>,
}

/// The files of a Cargo home that hold registry tokens (`cargo login`).
const CARGO_SECRETS: &[&str] = &["credentials.toml", "credentials"];

/// The system's directories, read-only in every command's walls: a
/// program there needs no toolchain of its own.
pub(crate) const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64"];

/// The user's environment as finding a program reads it.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// `$PATH`.
    pub path: Option<std::ffi::OsString>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CARGO_HOME`, else `~/.cargo`.
    pub cargo_home: Option<PathBuf>,
    /// `$RUSTUP_HOME`, else `~/.rustup`.
    pub rustup_home: Option<PathBuf>,
}

impl Lookup {
    /// toolhost's own environment.
    pub fn from_env() -> Lookup {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let named = |name: &str, fallback: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(fallback)))
        };
        Lookup {
            path: std::env::var_os("PATH"),
            cargo_home: named("CARGO_HOME", ".cargo"),
            rustup_home: named("RUSTUP_HOME", ".rustup"),
            home,
        }
    }
}

impl Program {
    /// `name` found on `lookup`'s `PATH` (or as an absolute path), with
    /// its toolchain; why not, in words that follow "cannot grant
    /// `NAME`: ".
    pub fn find(name: &str, lookup: &Lookup) -> Result<Program, String> {
        if name.is_empty() || name.contains(['\0', '=']) {
            return Err("is not a program's name".into());
        }
        let path = if name.contains('/') {
            let path = PathBuf::from(name);
            if !path.is_absolute() {
                return Err(
                    "is a relative path: name a program on your PATH (`cargo`) or give its \
                     absolute path"
                        .into(),
                );
            }
            is_program(&path)
                .then_some(path)
                .ok_or_else(|| "is not an executable file".to_string())?
        } else {
            let search = lookup.path.as_deref().unwrap_or(OsStr::new(""));
            std::env::split_paths(search)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(name))
                .find(|candidate| is_program(candidate))
                .ok_or_else(|| "is no program on your PATH".to_string())?
        };
        let (toolchain, env) = toolchain(&path, lookup);
        let secrets = env
            .iter()
            .filter(|(name, _)| name == "CARGO_HOME")
            .flat_map(|(_, home)| {
                CARGO_SECRETS
                    .iter()
                    .map(move |file| Path::new(home).join(file))
            })
            .collect();
        Ok(Program {
            name: name.rsplit('/').next().unwrap_or(name).to_string(),
            path,
            toolchain,
            env,
            secrets,
        })
    }
}

/// An executable regular file (or a link to one).
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What `path` needs besides the system's directories: a program in a
/// Cargo home (`$CARGO_HOME/bin`, or any `.cargo/bin`) that home and the
/// rustup home beside it (the proxies read the toolchains there, cargo its
/// registry), named by variables since `HOME` inside the walls is an
/// empty one; any other program outside the system's directories the
/// directory it is in (where it really is, through links).
fn toolchain(path: &Path, lookup: &Lookup) -> (Vec<PathBuf>, Vec<(String, String)>) {
    let named = lookup
        .cargo_home
        .as_ref()
        .filter(|home| path.starts_with(home.join("bin")))
        .cloned();
    let dot_cargo = || {
        let bin = path.parent().filter(|dir| dir.ends_with("bin"))?;
        bin.parent()
            .filter(|home| home.file_name() == Some(OsStr::new(".cargo")))
            .map(Path::to_path_buf)
    };
    if let Some(cargo_home) = named.or_else(dot_cargo) {
        let mut dirs = vec![cargo_home.clone()];
        let mut env = vec![("CARGO_HOME".to_string(), cargo_home.display().to_string())];
        let beside = cargo_home.parent().map(|p| p.join(".rustup"));
        let rustup = lookup
            .rustup_home
            .iter()
            .chain(beside.iter())
            .find(|r| r.is_dir())
            .cloned();
        if let Some(rustup) = rustup {
            env.push(("RUSTUP_HOME".to_string(), rustup.display().to_string()));
            dirs.push(rustup);
        }
        return (dirs, env);
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let in_system = |p: &Path| SYSTEM.iter().any(|dir| p.starts_with(dir));
    let mut dirs = Vec::new();
    for at in [path, real.as_path()] {
        if let Some(dir) = at.parent().filter(|dir| !in_system(dir))
            && !dirs.iter().any(|d: &PathBuf| d == dir)
        {
            dirs.push(dir.to_path_buf());
        }
    }
    (dirs, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(path: &str) -> Lookup {
        Lookup {
            path: Some(path.into()),
            home: Some("/home/u".into()),
            cargo_home: Some("/home/u/.cargo".into()),
            rustup_home: Some("/nonexistent/.rustup".into()),
        }
    }

    #[test]
    fn a_program_is_found_on_path_and_a_system_one_needs_no_toolchain() {
        let sh = Program::find("sh", &lookup("relative:/nonexistent:/bin:/usr/bin"))
            .expect("sh is on every Linux");
        assert_eq!(sh.name, "sh");
        assert_eq!(sh.path, Path::new("/bin/sh"));
        assert_eq!((sh.toolchain, sh.env), (Vec::new(), Vec::new()));
    }

    #[test]
    fn what_is_not_a_program_on_path_is_refused_in_words() {
        let nowhere = lookup("/nonexistent");
        assert_eq!(
            Program::find("sh", &nowhere),
            Err("is no program on your PATH".into())
        );
        assert_eq!(
            Program::find("bin/sh", &nowhere),
            Err(
                "is a relative path: name a program on your PATH (`cargo`) or give its absolute \
                 path"
                    .into()
            )
        );
        assert_eq!(
            Program::find("/etc/passwd", &nowhere),
            Err("is not an executable file".into())
        );
        assert_eq!(
            Program::find("", &nowhere),
            Err("is not a program's name".into())
        );
    }

    #[test]
    fn a_program_in_cargo_home_brings_its_toolchain_and_names_it() {
        let (dirs, env) = toolchain(Path::new("/home/u/.cargo/bin/cargo"), &lookup("/x"));
        assert_eq!(dirs, vec![PathBuf::from("/home/u/.cargo")]);
        assert_eq!(
            env,
            vec![("CARGO_HOME".to_string(), "/home/u/.cargo".to_string())]
        );
        let (dirs, _) = toolchain(Path::new("/opt/tool/bin/tool"), &lookup("/x"));
        assert_eq!(dirs, vec![PathBuf::from("/opt/tool/bin")]);
        // `HOME` elsewhere and no `CARGO_HOME`: a `.cargo/bin` is one.
        let (dirs, env) = toolchain(Path::new("/srv/me/.cargo/bin/cargo"), &lookup("/x"));
        assert_eq!(dirs, vec![PathBuf::from("/srv/me/.cargo")]);
        assert_eq!(
            env,
            vec![("CARGO_HOME".to_string(), "/srv/me/.cargo".to_string())]
        );
    }
}
