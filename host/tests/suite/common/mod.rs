//! Shared helpers: temp workspaces, the binary, fixture plugins, the
//! outside toolchains some tests need ([`toolchains`]), and the loopback
//! model server ([`mock_model`]).

pub mod components;
pub mod measure;
pub mod mock_model;
pub mod pty;
pub mod toolchains;
pub mod web;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The fixture plugins of `tests/plugins/`, built: one path constant each
/// (`test_plugins::ECHO`), from `host/test-plugins`.
pub use toolhost_test_plugins as test_plugins;

/// A fixture plugin, as a path (`fixture(test_plugins::ECHO)`).
pub fn fixture(plugin: &str) -> PathBuf {
    PathBuf::from(plugin)
}

/// A compile cache shared by the tests, so each standard plugin is compiled
/// once per test run rather than once per test.
pub fn shared_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("toolhost-test-cache")
}

/// The standard tools (name, plugin sha256), read once per test binary
/// from `toolhost tools --json` run with every plugin compiled by
/// Cranelift at once into the [`shared_cache`]: after it, no run of a test
/// compiles a standard plugin again (the 11 MB `bash` takes about 20 s of
/// CPU; each short run would otherwise compile its baseline code anew and
/// exit before the optimized code was done).
fn standard_tools() -> &'static [(String, String)] {
    static STANDARD: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    STANDARD.get_or_init(|| {
        let config = tempfile::tempdir().expect("a config dir");
        let ws = tempfile::tempdir().expect("a workspace");
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
            .current_dir(ws.path())
            .env("TOOLHOST_CACHE_DIR", shared_cache())
            .env("TOOLHOST_CONFIG_DIR", config.path())
            .env("TOOLHOST_BACKGROUND_COMPILE", "off")
            .env("TOOLHOST_BASELINE_MIN_BYTES", "off")
            .env_remove("XDG_CACHE_HOME")
            .args(["tools", "--json"])
            .output()
            .expect("toolhost tools");
        assert!(out.status.success(), "{out:?}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("tools json");
        doc["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter(|tool| {
                tool["plugin"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("builtin:"))
            })
            .map(|tool| {
                let field = |key: &str| tool[key].as_str().expect(key).to_string();
                (field("name"), field("plugin_sha256"))
            })
            .collect()
    })
}

/// Fills the compile cache `cache` with the standard plugins' optimized
/// code (compiled once per test run, into the shared cache), but for the
/// plugins of the tools in `except`: a test of a cache of its own then
/// compiles only the plugins it is about, not every standard one again.
pub fn warm_cache(cache: &Path, except: &[&str]) {
    let standard = standard_tools();
    let wanted: Vec<String> = standard
        .iter()
        .filter(|(name, _)| !except.contains(&name.as_str()))
        .map(|(_, sha256)| format!("{sha256}-optimized-"))
        .collect();
    for entry in std::fs::read_dir(shared_cache()).expect("shared cache") {
        let entry = entry.expect("shared cache entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".cwasm") && wanted.iter().any(|prefix| name.starts_with(prefix)) {
            std::fs::copy(entry.path(), cache.join(&name)).expect("copy a cache entry");
        }
    }
}

/// A temporary workspace with helpers to fill it and run toolhost in it.
pub struct Workspace {
    dir: tempfile::TempDir,
    /// The user config directory the runs see (`TOOLHOST_CONFIG_DIR`),
    /// outside the workspace, so no test reads the developer's own.
    user_config: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Self {
        Workspace {
            dir: tempfile::tempdir().expect("create temp workspace"),
            user_config: tempfile::tempdir().expect("create temp user config dir"),
        }
    }

    /// The user config directory of this workspace's runs.
    pub fn user_config(&self) -> &Path {
        self.user_config.path()
    }

    /// `template` with its placeholders filled in, so an expected message
    /// can be written whole and still read like the message:
    /// `{ws}` the canonical workspace path (what toolhost prints), `{config}`
    /// the user config dir, `{fixtures}` the directory of the built fixture
    /// plugins, and `{not_found}` this OS's text for a missing file (the
    /// one part of an `io::Error` message that differs by platform).
    pub fn expand(&self, template: &str) -> String {
        let ws = self.path().canonicalize().expect("canonical workspace");
        let fixtures = Path::new(test_plugins::ECHO)
            .parent()
            .expect("the fixtures' directory");
        template
            .replace("{ws}", &ws.display().to_string())
            .replace("{config}", &self.user_config().display().to_string())
            .replace("{fixtures}", &fixtures.display().to_string())
            .replace("{not_found}", &not_found_text())
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

    /// Installs a fixture plugin (`test_plugins::ECHO`) into the
    /// workspace's default plugins dir.
    pub fn install_plugin(&self, plugin: &str, as_file: &str) -> PathBuf {
        let dest = self.mkdir(".toolhost/plugins").join(as_file);
        fs::copy(plugin, &dest).expect("copy plugin");
        dest
    }

    /// Installs a fixture plugin into the workspace's default plugins dir
    /// as `toolhost plugin add` does: recorded as the user's (its sha256
    /// in the user config's `added-plugins/`), so an untrusted workspace's
    /// copy still gets what the user's config gives its tools by name.
    pub fn add_plugin(&self, plugin: &str, as_file: &str) -> PathBuf {
        use sha2::Digest as _;
        let dest = self.install_plugin(plugin, as_file);
        let bytes = fs::read(&dest).expect("read plugin");
        let sha: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let added = self.user_config().join("added-plugins");
        fs::create_dir_all(&added).expect("mkdir");
        fs::write(added.join(sha), "").expect("record");
        dest
    }

    /// Installs a fixture plugin into the user's own plugins directory
    /// (`<config dir>/plugins`), which every workspace loads.
    pub fn install_users_plugin(&self, plugin: &str, as_file: &str) -> PathBuf {
        let dir = self.user_config().join("plugins");
        fs::create_dir_all(&dir).expect("mkdir");
        let dest = dir.join(as_file);
        fs::copy(plugin, &dest).expect("copy plugin");
        dest
    }

    /// `toolhost` run in this workspace with the shared compile cache, no
    /// background compile after it exits (which would change a cache a
    /// test counts while it counts; `plugins.rs` tests it on its own), and
    /// short retry waits.
    pub fn toolhost(&self) -> Command {
        Command::from_std(self.toolhost_process())
    }

    /// [`Self::toolhost`] as a `std` command, for a test that talks to the
    /// process while it runs (pipes, signals).
    pub fn toolhost_process(&self) -> std::process::Command {
        standard_tools();
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
        cmd.current_dir(self.path())
            .env("TOOLHOST_CACHE_DIR", shared_cache())
            .env("TOOLHOST_CONFIG_DIR", self.user_config.path())
            .env("TOOLHOST_BACKGROUND_COMPILE", "off")
            // A model request's retries wait 10 ms, not half a second and
            // more: what a test of retries asserts is what they say, and
            // the backoff's own rule has its unit test.
            .env("TOOLHOST_RETRY_BACKOFF_MS", "10")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("TOOLHOST_BASELINE_MIN_BYTES")
            // `toolhost` on PATH, as for a user who installed it: the
            // hints it prints say `toolhost ...`.
            .env("PATH", path_with_toolhost());
        cmd
    }

    /// `toolhost call TOOL INPUT` in this workspace, plus extra flags.
    pub fn call(&self, tool: &str, input: &str, flags: &[&str]) -> Command {
        let mut cmd = self.toolhost();
        cmd.args(flags).args(["call", tool, input]);
        cmd
    }
}

/// The events of `toolhost run --output-format stream-json --script
/// SCRIPT go` in `ws`, one JSON value per line it printed.
pub fn stream_json_run(ws: &Workspace, script: &str) -> Vec<serde_json::Value> {
    let out = stdout_of(ws.toolhost().args([
        "run",
        "--output-format",
        "stream-json",
        "--script",
        script,
        "go",
    ]));
    out.lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

/// What the official MCP Python SDK saw (`tests/mcp/client.py calls`)
/// calling each of `calls` (a JSON list of `[tool, arguments]`) in order on
/// `toolhost mcp --no-session` started in `ws` with `flags`.
pub fn mcp_calls(ws: &Workspace, flags: &[&str], calls: &serde_json::Value) -> serde_json::Value {
    let mut server = ws.toolhost_process();
    server.args(flags).args(["mcp", "--no-session"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let output = std::process::Command::new(toolchains::MCP_PYTHON.path())
        .arg(script)
        .args(["calls", "legacy"])
        .arg(server.get_program())
        .args(server.get_args())
        .envs(server.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("MCP_CALLS", calls.to_string())
        .current_dir(ws.path())
        .output()
        .expect("run the Python client");
    client_json(&output)
}

/// What `tests/mcp/client.py` printed: one JSON object. A failed client
/// or output that is not JSON fails the test with the client's stderr.
pub fn client_json(output: &std::process::Output) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client failed ({}):\n{stderr}",
        output.status
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("client output is not JSON ({e}):\n{stderr}"))
}

/// This OS's text for a missing file, as `io::Error` displays it
/// ("No such file or directory (os error 2)" on Linux).
pub fn not_found_text() -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::metadata(dir.path().join("missing"))
        .expect_err("a fresh directory is empty")
        .to_string()
}

/// Panics unless `actual` is exactly `expected`, showing both texts and a
/// line diff with the first differing line marked: user-visible texts are
/// compared whole, so a wrong line number or a lost fix hint fails a test.
#[track_caller]
pub fn assert_text(actual: &str, expected: &str) {
    if actual != expected {
        panic!("{}", text_mismatch(actual, expected));
    }
}

/// `text` with what lies between the first `start` and the next `end`
/// (both kept) replaced by `with`: the explicit way to leave one genuinely
/// variable part (a source location, a duration) out of a whole-text
/// comparison. Panics if either marker is missing, so nothing hides.
#[track_caller]
pub fn mask_between(text: &str, start: &str, end: &str, with: &str) -> String {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` to mask after in:\n{text}"))
        + start.len();
    let to = from
        + text[from..]
            .find(end)
            .unwrap_or_else(|| panic!("no `{end}` after `{start}` in:\n{text}"));
    format!("{}{with}{}", &text[..from], &text[to..])
}

/// `text` with the time of each prompt's summary line (`2 turn(s) · 10 in
/// / 5 out tokens · 0.3 s`) masked as `_`.
pub fn mask_prompt_times(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| match line.contains(" out tokens · ") {
            true => mask_between(line, " out tokens · ", " s", "_"),
            false => line.to_string(),
        })
        .collect()
}

/// The panic message of [`assert_text`]: where the texts first differ, both
/// texts, and a line diff (`-` expected, `+` actual, `>` the first change).
fn text_mismatch(actual: &str, expected: &str) -> String {
    let (line, column) = first_difference(actual, expected);
    let mut out = format!(
        "the text differs from the expected one at line {line}, column {column}\n\
         --- expected\n{expected}\n--- actual\n{actual}\n\
         --- diff (- expected, + actual, > first difference)\n"
    );
    let mut marked = false;
    for (sign, text) in line_diff(expected, actual) {
        let mark = if sign != ' ' && !marked {
            marked = true;
            '>'
        } else {
            ' '
        };
        out.push_str(&format!("{mark}{sign} {text}\n"));
    }
    out
}

/// The 1-based line and column (in characters) of the first difference.
fn first_difference(actual: &str, expected: &str) -> (usize, usize) {
    let (mut line, mut column) = (1, 1);
    for (a, e) in actual.chars().zip(expected.chars()) {
        if a != e {
            return (line, column);
        }
        if a == '\n' {
            (line, column) = (line + 1, 1);
        } else {
            column += 1;
        }
    }
    (line, column)
}

/// A longest-common-subsequence diff of the lines of two texts (split on
/// `\n`, so a missing final newline shows as a removed empty line).
fn line_diff<'a>(expected: &'a str, actual: &'a str) -> Vec<(char, &'a str)> {
    let old: Vec<&str> = expected.split('\n').collect();
    let new: Vec<&str> = actual.split('\n').collect();
    // common[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut diff) = (0, 0, Vec::new());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            diff.push((' ', old[i]));
            (i, j) = (i + 1, j + 1);
        } else if j == new.len() || (i < old.len() && common[i + 1][j] >= common[i][j + 1]) {
            diff.push(('-', old[i]));
            i += 1;
        } else {
            diff.push(('+', new[j]));
            j += 1;
        }
    }
    diff
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

/// The fault of an `isError` report; panics with the text on a success.
pub fn fault(report: &toolhost::sandbox::CallReport) -> &toolhost::sandbox::ToolFault {
    match &report.outcome {
        toolhost::sandbox::ToolOutcome::Fault(fault) => fault,
        toolhost::sandbox::ToolOutcome::Ok(text) => {
            panic!("expected an isError outcome, got ok: {text}")
        }
    }
}

/// The default limits with `edit` applied.
pub fn limits(edit: impl FnOnce(&mut toolhost::sandbox::Limits)) -> toolhost::sandbox::Limits {
    let mut limits = toolhost::sandbox::Limits::default();
    edit(&mut limits);
    limits
}

/// `$PATH` with the directory of the `toolhost` under test first.
pub fn path_with_toolhost() -> std::ffi::OsString {
    let bin = assert_cmd::cargo::cargo_bin("toolhost");
    let dir = bin.parent().expect("the binary's directory").to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).expect("a PATH")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_shows_both_texts_and_marks_the_first_differing_line() {
        let message = text_mismatch("a\nb: line 3\nc\n", "a\nb: line 2\nc\n");
        assert_eq!(
            message,
            "the text differs from the expected one at line 2, column 9\n\
             --- expected\na\nb: line 2\nc\n\n\
             --- actual\na\nb: line 3\nc\n\n\
             --- diff (- expected, + actual, > first difference)\n\
             \x20  a\n\
             >- b: line 2\n\
             \x20+ b: line 3\n\
             \x20  c\n\
             \x20  \n"
        );
        assert!(std::panic::catch_unwind(|| assert_text("x\n", "x")).is_err());
        assert_text("same\n", "same\n");
    }

    #[test]
    fn a_lost_line_or_newline_is_a_removed_line() {
        assert_eq!(
            line_diff("a\nb\n", "a"),
            vec![(' ', "a"), ('-', "b"), ('-', "")]
        );
    }

    #[test]
    fn placeholders_and_masks_are_explicit() {
        let ws = Workspace::new();
        let root = ws.path().canonicalize().expect("canonical");
        assert_eq!(
            ws.expand("`{ws}/docs` in `{config}`: {not_found}"),
            format!(
                "`{}/docs` in `{}`: {}",
                root.display(),
                ws.user_config().display(),
                not_found_text()
            )
        );
        assert_eq!(
            mask_between(
                "panicked at src/lib.rs:10:9:\nboom",
                "lib.rs:",
                ":\n",
                "L:C"
            ),
            "panicked at src/lib.rs:L:C:\nboom"
        );
        assert!(std::panic::catch_unwind(|| mask_between("x", "y", "z", "w")).is_err());
    }
}
