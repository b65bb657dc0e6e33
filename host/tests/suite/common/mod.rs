//! Shared helpers: temp workspaces, the binary, fixture plugins, and the
//! loopback model server ([`mock_model`]).

pub mod mock_model;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A fixture plugin built from `tests/plugins/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("TOOLHOST_TEST_PLUGINS")).join(format!("{name}.wasm"))
}

/// A compile cache shared by the tests, so each standard plugin is compiled
/// once per test run rather than once per test.
pub fn shared_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("toolhost-test-cache")
}

/// A temporary workspace with helpers to fill it and run toolhost in it.
pub struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Self {
        Workspace {
            dir: tempfile::tempdir().expect("create temp workspace"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent dirs");
        }
        fs::write(&path, content).expect("write workspace file");
        path
    }

    pub fn mkdir(&self, relative: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        fs::create_dir_all(&path).expect("create dir");
        path
    }

    pub fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.dir.path().join(relative)).expect("read workspace file")
    }

    /// Installs a fixture plugin into the workspace's default plugins dir.
    pub fn install_plugin(&self, fixture_name: &str, as_file: &str) -> PathBuf {
        let dest = self.mkdir(".toolhost/plugins").join(as_file);
        fs::copy(fixture(fixture_name), &dest).expect("copy plugin");
        dest
    }

    /// `toolhost` run in this workspace with the shared compile cache.
    pub fn toolhost(&self) -> Command {
        let mut cmd = Command::cargo_bin("toolhost").expect("the toolhost binary is built");
        cmd.current_dir(self.path())
            .env("TOOLHOST_CACHE_DIR", shared_cache())
            .env_remove("XDG_CACHE_HOME");
        cmd
    }

    /// `toolhost call TOOL INPUT` in this workspace, plus extra flags.
    pub fn call(&self, tool: &str, input: &str, flags: &[&str]) -> Command {
        let mut cmd = self.toolhost();
        cmd.args(flags).args(["call", tool, input]);
        cmd
    }
}

/// Copies the directory `from` into `to`, leaving out any `review.md` (the
/// demo's output).
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).expect("read demo dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != "review.md" {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Stdout of a command that must succeed.
pub fn stdout_of(cmd: &mut Command) -> String {
    let output = cmd.output().expect("run toolhost");
    assert!(
        output.status.success(),
        "toolhost failed ({}):\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 stdout")
}

/// Stderr of a command that must exit with `code`.
pub fn stderr_of_failure(cmd: &mut Command, code: i32) -> String {
    let output = cmd.output().expect("run toolhost");
    assert_eq!(
        output.status.code(),
        Some(code),
        "expected exit {code}:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stderr).expect("utf-8 stderr")
}
