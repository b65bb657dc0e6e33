//! Plugin loading through the real binary: drop-in, broken plugins,
//! duplicates, `plugin check`, and the compile cache.

use std::fs;
use std::path::Path;

use super::common::{
    Workspace, assert_text, fixture, mask_between, stderr_of_failure, stdout_of, test_plugins,
    warm_cache,
};

#[test]
fn a_dropped_in_plugin_is_listed_and_callable_and_a_corrupt_one_is_skipped() {
    let ws = Workspace::new();
    ws.mkdir(".toolhost/plugins");
    let before = stdout_of(ws.toolhost().arg("tools"));
    assert!(!before.contains("echo"), "{before}");

    let echo = ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let corrupt = ws.write(
        ".toolhost/plugins/corrupt.wasm",
        b"\0asm this is not a component",
    );
    let output = ws.toolhost().arg("tools").output().expect("run");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains(&format!("echo  (read-only, {})", echo.display())),
        "{stdout}"
    );
    assert_text(
        &stderr,
        &format!(
            "warning: skipped plugin `{}`: not a valid WebAssembly component: unknown binary \
             version: 0x69687420 (at offset 0x4); build it for wasm32-wasip2 or wrap a core \
             module with `wasm-tools component new`\n",
            corrupt.display()
        ),
    );

    let out = stdout_of(&mut ws.call("echo", r#"{"text":"hi there"}"#, &[]));
    assert_eq!(out, "hi there\n");
}

#[test]
fn duplicate_tool_names_name_both_plugins() {
    let ws = Workspace::new();
    let first = ws.install_plugin(test_plugins::ECHO, "a-echo.wasm");
    let second = ws.install_plugin(test_plugins::ECHO, "b-echo.wasm");
    let output = ws.toolhost().arg("tools").output().expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_text(
        &stderr,
        &format!(
            "warning: skipped plugin `{}`: tool `echo` is already offered by `{}`; rename one of \
             them or remove one plugin\n",
            second.display(),
            first.display()
        ),
    );
}

#[test]
fn plugin_check_prints_the_tools_of_a_good_plugin() {
    let ws = Workspace::new();
    let out = stdout_of(
        ws.toolhost()
            .args(["plugin", "check"])
            .arg(fixture(test_plugins::ECHO)),
    );
    assert_eq!(
        out,
        format!(
            "ok: `{}` is a toolhost plugin with 1 tool(s):\n  echo (read-only): Return `text` unchanged.\n    \
             input schema: {{\"properties\":{{\"text\":{{\"type\":\"string\"}}}},\"required\":[\"text\"],\"type\":\"object\"}}\n  \
             checked: each input schema expands to at most 100000 subschemas with its `$ref`s followed\n  \
             file: {} KiB, within the limit of 512 MiB on a plugin file (`plugin_file_mib` under [limits])\n",
            fixture(test_plugins::ECHO).display(),
            fs::metadata(fixture(test_plugins::ECHO))
                .expect("echo")
                .len()
                .div_ceil(1024)
        )
    );
}

#[test]
fn plugin_check_explains_each_broken_plugin() {
    let ws = Workspace::new();
    let check =
        |plugin: &str| stderr_of_failure(ws.toolhost().args(["plugin", "check"]).arg(plugin), 1);
    assert_text(
        &check(test_plugins::BAD_SCHEMA),
        &ws.expand(
            "error: plugin `{fixtures}/bad-schema.wasm`: tool `bad_schema`: `input-schema` is not \
             a valid JSON Schema: 12 is not valid under any of the schemas listed in the 'anyOf' \
             keyword\n",
        ),
    );
    // Where in the fixture's source it panicked is the fixture's business.
    assert_text(
        &mask_between(
            &check(test_plugins::LIST_TOOLS_TRAP),
            "src/lib.rs:",
            ":\n",
            "LINE:COL",
        ),
        &ws.expand(
            "error: plugin `{fixtures}/list-tools-trap.wasm`: `list-tools` crashed: wasm trap: \
             wasm `unreachable` instruction executed; its stderr ended with:\n\
             thread '<unnamed>' (1) panicked at tests/plugins/list-tools-trap/src/lib.rs:LINE:COL:\n\
             list-tools exploded on purpose\n",
        ),
    );
    assert_text(
        &check(test_plugins::WRONG_WORLD),
        &ws.expand(
            "error: plugin `{fixtures}/wrong-world.wasm`: it does not implement the \
             toolhost:plugin/plugin world and exports no functions to offer as tools (it exports \
             only wasi:cli/run@0.2.0: an entry point for other hosts, such as a WASI command's \
             `run`); export `list-tools` and `call-tool` as defined in wit/plugin.wit, or \
             functions with typed parameters\n",
        ),
    );

    ws.write("notes.wasm", "not wasm at all");
    assert_text(
        &check("notes.wasm"),
        "error: plugin `notes.wasm`: not a WebAssembly file (it does not start with the `\\0asm` \
         magic bytes)\n",
    );
    let err = stderr_of_failure(ws.toolhost().args(["plugin", "check", "missing.wasm"]), 1);
    assert_text(
        &err,
        "error: plugin file `missing.wasm` does not exist or is not a file\n",
    );
}

#[test]
fn the_second_start_loads_every_plugin_from_the_compile_cache() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let cache = ws.mkdir("cache");
    let statuses = || -> Vec<String> {
        let out = stdout_of(
            ws.toolhost()
                .env("TOOLHOST_CACHE_DIR", &cache)
                .args(["tools", "--json"]),
        );
        let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
        doc["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["compile_cache"].as_str().expect("status").to_string())
            .collect()
    };
    // The standard plugins and echo, one tool each; one cache entry each.
    let plugins = toolhost::sandbox::STANDARD_PLUGINS.len() + 1;
    let first = statuses();
    assert_eq!(first.len(), plugins);
    assert!(first.iter().all(|s| s == "miss"), "{first:?}");
    let second = statuses();
    assert!(second.iter().all(|s| s == "hit"), "{second:?}");
    assert_eq!(compiled_entries(&cache), plugins);

    let out = stdout_of(ws.toolhost().env("TOOLHOST_CACHE_DIR", &cache).args([
        "--no-cache",
        "tools",
        "--json",
    ]));
    assert!(out.contains("\"compile_cache\": \"uncached\""), "{out}");
}

#[test]
fn a_runaway_or_crashing_tool_is_an_error_result_from_the_command_line() {
    let ws = Workspace::new();
    // The user's own plugin: what their config gives `spin` by name is
    // not given to a plugin an untrusted workspace ships.
    ws.install_users_plugin(test_plugins::HOSTILE, "hostile.wasm");
    // In the user's own config: a workspace's toolhost.toml may only lower
    // limits, and this fuel is over the default.
    fs::write(
        ws.user_config().join("config.toml"),
        "[tools.spin.limits]\ntimeout_ms = 300\nfuel = 9_000_000_000_000_000_000\n",
    )
    .expect("user config");
    let err = stderr_of_failure(&mut ws.call("spin", "{}", &[]), 1);
    assert_text(
        &err,
        "error: `spin` did not finish within its time limit of 300 ms and was stopped. \
         Ask for less work in one call, or do not call it again with the same arguments.\n",
    );
    let err = stderr_of_failure(&mut ws.call("panic", "{}", &[]), 1);
    // Where in the fixture's source it panicked is the fixture's business.
    assert_text(
        &mask_between(&err, "src/lib.rs:", ":\n", "LINE:COL"),
        "error: `panic` crashed: wasm trap: wasm `unreachable` instruction executed; its stderr \
         ended with:\n\
         thread '<unnamed>' (1) panicked at tests/plugins/hostile/src/lib.rs:LINE:COL:\n\
         hostile plugin panicked on purpose\n\
         This is a bug in the tool, not in your arguments; calling it the same way will likely \
         crash again.\n",
    );
}

/// World `plugin-fs` (what componentize-js builds against) loads like world
/// `plugin`, and its own `wasi:filesystem` bindings see exactly the grants.
#[test]
fn a_plugin_fs_world_plugin_sees_only_its_grants() {
    let ws = Workspace::new();
    ws.write("src/lib.rs", "fn main() {}\n");
    ws.write("notes.md", "hello\n");
    ws.install_plugin(test_plugins::PLUGIN_FS, "plugin-fs.wasm");

    let out = stdout_of(&mut ws.call("preopens", "{}", &[]));
    assert_eq!(out, ".\n");
    let out = stdout_of(&mut ws.call("cat", r#"{"path":"notes.md"}"#, &[]));
    assert_eq!(out, "hello\n");

    let out = stdout_of(&mut ws.call("preopens", "{}", &["--allow-read", "preopens=src"]));
    assert_eq!(out, "src\n");
    let err = stderr_of_failure(&mut ws.call("cat", r#"{"path":"../outside.txt"}"#, &[]), 1);
    assert_text(
        &err,
        "error: `cat` failed: open `../outside.txt`: not-permitted\n",
    );
}

/// A plugin that imports what toolhost does not provide is refused before
/// it is compiled: one message names every missing import and the fix, and
/// nothing of it reaches the compile cache.
#[test]
fn a_plugin_importing_what_toolhost_lacks_is_refused_before_compiling() {
    let ws = Workspace::new();
    let cache = ws.mkdir("cache");
    let plugin = fixture(test_plugins::MISSING_IMPORTS);
    let err = stderr_of_failure(
        ws.toolhost()
            .env("TOOLHOST_CACHE_DIR", &cache)
            .args(["plugin", "check"])
            .arg(&plugin),
        1,
    );
    assert_text(
        &err,
        &format!(
            "error: plugin `{}`: it needs 2 imports toolhost does not provide: \
             `fixture:missing/vault`, `wasi:keyvalue/store@0.2.0-draft`. Plugins may import \
             WASI 0.2 (io, clocks, filesystem, random, cli, sockets, http) and \
             toolhost:plugin/host@0.1.0; build against toolhost's wit/plugin.wit (world \
             `plugin`, or `plugin-fs` for componentize-js) and remove the other imports from \
             the world you build\n",
            plugin.display()
        ),
    );
    // Only the standard plugins were compiled.
    assert_eq!(
        compiled_entries(&cache),
        toolhost::sandbox::STANDARD_PLUGINS.len()
    );
}

/// Each compile is reported to the load observer (the CLI's spinner names
/// the plugin from it), with the plugin it is for; a cache hit is not.
#[tokio::test(flavor = "multi_thread")]
async fn loading_reports_each_compile_and_no_cache_hit() {
    use std::sync::Mutex;
    use toolhost::sandbox::{LoadEvent, PluginOrigin, Sandbox, SandboxOptions};

    let ws = Workspace::new();
    let echo = ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let options = SandboxOptions {
        workspace: ws.path().to_path_buf(),
        plugin_dirs: vec![echo.parent().expect("plugins dir").to_path_buf()],
        plugin_files: Vec::new(),
        standard_tools: false,
        cache_dir: Some(ws.mkdir("cache")),
        tiering: Default::default(),
        protected: Vec::new(),
        records: toolhost::sandbox::RecordPath::of_workspace(),
        every_repository: Default::default(),
        typed: Default::default(),
        plugin_file_limit: toolhost::sandbox::DEFAULT_PLUGIN_FILE_LIMIT,
        ca_file: None,
        shipped_plugins: None,
        policy: Default::default(),
    };
    let load = |options: SandboxOptions| async move {
        let events = Mutex::new(Vec::new());
        let record = |event: &LoadEvent<'_>| {
            let text = match event {
                LoadEvent::CompileStart { origin, bytes } => {
                    assert!(*bytes > 0);
                    format!("start {origin}")
                }
                LoadEvent::CompileEnd { origin } => format!("end {origin}"),
            };
            events.lock().expect("events").push(text);
        };
        let sandbox = Sandbox::load_with_progress(options, &record)
            .await
            .expect("loads");
        assert!(sandbox.load_errors().is_empty());
        events.into_inner().expect("events")
    };
    let origin = PluginOrigin::File(echo.clone());
    assert_eq!(
        load(options.clone()).await,
        vec![format!("start {origin}"), format!("end {origin}")]
    );
    assert!(load(options).await.is_empty());
}

/// The compiled components in a cache directory (beside them, `files/`
/// remembers each plugin file's hash).
fn compiled_entries(cache: &Path) -> usize {
    fs::read_dir(cache)
        .expect("cache dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        })
        .count()
}

/// The `tools --json` fields of tool `name`.
fn tool_fields(
    ws: &Workspace,
    cache: &Path,
    name: &str,
    extra_env: &[(&str, &str)],
) -> (String, String) {
    let mut cmd = ws.toolhost();
    cmd.env("TOOLHOST_CACHE_DIR", cache)
        .args(["tools", "--json"]);
    for (key, value) in extra_env {
        cmd.env(key, value);
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout_of(&mut cmd)).expect("json");
    let tool = doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {doc}"))
        .clone();
    (
        tool["compile_cache"].as_str().expect("status").to_string(),
        tool["compiled"].as_str().expect("tier").to_string(),
    )
}

#[test]
fn a_big_new_plugin_runs_baseline_code_first_and_the_threshold_is_the_users() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let cache = ws.mkdir("cache");
    warm_cache(&cache, &[]);
    // The default threshold (4 MiB) leaves a small plugin to Cranelift.
    assert_eq!(
        tool_fields(&ws, &cache, "echo", &[]),
        ("miss".to_string(), "optimized".to_string())
    );
    let fresh = ws.mkdir("fresh-cache");
    warm_cache(&fresh, &[]);
    let all_baseline = [("TOOLHOST_BASELINE_MIN_BYTES", "0")];
    assert_eq!(
        tool_fields(&ws, &fresh, "echo", &all_baseline),
        ("miss".to_string(), "baseline".to_string())
    );
    let err = stderr_of_failure(
        ws.toolhost()
            .env("TOOLHOST_BASELINE_MIN_BYTES", "4MB")
            .arg("tools"),
        1,
    );
    assert_text(
        &err,
        "error: `TOOLHOST_BASELINE_MIN_BYTES` is `4MB`; set it to a number of bytes (0 compiles \
         every new plugin with the baseline compiler first) or to `off` (always wait for the \
         optimized compile)\n",
    );
}

/// `toolhost call` exits long before Cranelift would finish a big plugin:
/// it leaves that compile to a background `toolhost`, and the next start
/// loads optimized code instead of baseline code at every start after.
#[test]
fn a_command_on_baseline_code_leaves_the_optimized_compile_to_a_background_process() {
    let ws = Workspace::new();
    let cache = ws.mkdir("cache");
    // The standard plugins optimized first, so only echo is left after.
    warm_cache(&cache, &[]);
    let standard = toolhost::sandbox::STANDARD_PLUGINS.len();
    assert_eq!(compiled_entries(&cache), standard);

    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let out = stdout_of(
        ws.toolhost()
            .env("TOOLHOST_CACHE_DIR", &cache)
            .env("TOOLHOST_BASELINE_MIN_BYTES", "0")
            .env("TOOLHOST_BACKGROUND_COMPILE", "on")
            .args(["call", "echo", r#"{"text":"hi"}"#]),
    );
    assert_eq!(out, "hi\n");
    // The background compile stores echo's optimized code and removes its
    // baseline entry (at low priority, beside the rest of the suite).
    await_optimized(&cache, standard + 1);
    assert_eq!(
        tool_fields(&ws, &cache, "echo", &[("TOOLHOST_BASELINE_MIN_BYTES", "0")]),
        ("hit".to_string(), "optimized".to_string())
    );
}

/// A client's short session: `toolhost mcp` stopped before its own
/// optimized compile of a big plugin finished leaves that compile to a
/// background process too, instead of baseline code at the next start.
#[test]
fn an_mcp_server_stopped_early_leaves_the_optimized_compile_to_a_background_process() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;

    let ws = Workspace::new();
    let cache = ws.mkdir("cache");
    // Every standard plugin but the big one already optimized: the server
    // starts search_text on baseline code and compiles only that.
    warm_cache(&cache, &["search_text"]);
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
    server
        .current_dir(ws.path())
        .env("TOOLHOST_CACHE_DIR", &cache)
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .env_remove("TOOLHOST_BASELINE_MIN_BYTES")
        .env("TOOLHOST_BACKGROUND_COMPILE", "on")
        .args(["mcp", "--no-session"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = server.spawn().expect("start toolhost mcp");
    let mut stdin = server.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .expect("write");
    let mut answer = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut answer)
        .expect("read");
    assert!(answer.contains("protocolVersion"), "{answer}");
    drop(stdin);
    assert!(server.wait().expect("wait").success());
    // search_text started on baseline code, and the server's own optimized
    // compile of it (seconds) had not finished when stdin closed.
    assert!(
        baseline_entries(&cache) > 0,
        "nothing was left on baseline code"
    );
    await_optimized(&cache, toolhost::sandbox::STANDARD_PLUGINS.len());
    assert_eq!(
        tool_fields(&ws, &cache, "search_text", &[]),
        ("hit".to_string(), "optimized".to_string())
    );
}

/// The compile cache's entries of baseline code.
fn baseline_entries(cache: &Path) -> usize {
    fs::read_dir(cache)
        .expect("cache dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().contains("-baseline-"))
        })
        .count()
}

/// Waits (up to 2 minutes: the background compile runs at low priority,
/// beside the rest of the suite) until `cache` holds `entries` entries, none
/// of them baseline code.
fn await_optimized(cache: &Path, entries: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while (baseline_entries(cache) > 0 || compiled_entries(cache) != entries)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        baseline_entries(cache),
        0,
        "the baseline entry is still there"
    );
    assert_eq!(compiled_entries(cache), entries);
}

#[test]
fn plugin_add_user_installs_into_your_own_plugins_which_every_workspace_loads() {
    let ws = Workspace::new();
    let echo = fixture(test_plugins::ECHO);
    let out = stdout_of(ws.toolhost().args(["plugin", "add", "--user"]).arg(&echo));
    assert_eq!(
        out,
        ws.expand(
            "installed: `{config}/plugins/echo.wasm`, compiled into the cache; 1 tool(s): echo\n"
        )
    );
    assert!(
        !ws.path().join(".toolhost").exists(),
        "nothing in the workspace"
    );
    // Another workspace of the same user loads it, beside its own plugins.
    let other = Workspace::new();
    other.install_plugin(test_plugins::CHATTY, "chatty.wasm");
    let listed = stdout_of(
        other
            .toolhost()
            .env("TOOLHOST_CONFIG_DIR", ws.user_config())
            .args(["tools", "--json"]),
    );
    let listed: serde_json::Value = serde_json::from_str(&listed).expect("json");
    let plugins: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| !t["plugin"].as_str().unwrap_or("").starts_with("builtin:"))
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    // Yours load first: a plugin the (untrusted) workspace ships cannot
    // take a tool name of yours.
    assert_eq!(plugins, ["echo", "chatter"]);
    // `--plugins DIR` names every plugins directory there is.
    let err = stderr_of_failure(
        other
            .toolhost()
            .env("TOOLHOST_CONFIG_DIR", ws.user_config())
            .arg("--plugins")
            .arg(other.path().join(".toolhost/plugins"))
            .args(["call", "echo", r#"{"text":"hi"}"#]),
        1,
    );
    assert_eq!(
        err,
        "error: there is no tool named `echo`. Available tools: `bash`, `edit_file`, `fetch`, \
         `list_files`, `read_file`, `search_text`, `write_file`, `chatter`.\n"
    );
}

#[test]
fn plugin_add_installs_a_checked_plugin_already_compiled_for_the_next_start() {
    let ws = Workspace::new();
    let cache = ws.mkdir("cache");
    warm_cache(&cache, &[]);
    let add = |file: &Path, extra: &[&str]| {
        let mut cmd = ws.toolhost();
        cmd.env("TOOLHOST_CACHE_DIR", &cache)
            .env("TOOLHOST_BASELINE_MIN_BYTES", "0")
            .args(["plugin", "add"])
            .arg(file)
            .args(extra);
        cmd
    };
    let echo = fixture(test_plugins::ECHO);
    let out = stdout_of(&mut add(&echo, &[]));
    let installed = ws.path().join(".toolhost/plugins/echo.wasm");
    assert_eq!(
        out,
        format!(
            "installed: `{}`, compiled into the cache; 1 tool(s): echo\n",
            installed.display()
        )
    );
    assert_eq!(
        fs::read(&installed).expect("test setup"),
        fs::read(&echo).expect("test setup")
    );
    // Compiled with Cranelift at install time: even a start that would send
    // every new plugin through the baseline compiler finds optimized code.
    assert_eq!(
        tool_fields(&ws, &cache, "echo", &[("TOOLHOST_BASELINE_MIN_BYTES", "0")]),
        ("hit".to_string(), "optimized".to_string())
    );

    // Again: nothing to do.
    let out = stdout_of(&mut add(&echo, &[]));
    assert_text(
        &out,
        &format!(
            "already installed (identical): `{}`, compiled into the cache; 1 tool(s): echo\n",
            installed.display()
        ),
    );

    // A different file under the same name needs --force.
    let other = ws.path().join("elsewhere/echo.wasm");
    fs::create_dir_all(other.parent().expect("test setup")).expect("test setup");
    fs::copy(fixture(test_plugins::CHATTY), &other).expect("test setup");
    let err = stderr_of_failure(&mut add(&other, &[]), 1);
    assert_text(
        &err,
        &format!(
            "error: `{}` already exists and differs from `{}`; pass --force to replace it\n",
            installed.display(),
            other.display()
        ),
    );
    assert_eq!(
        fs::read(&installed).expect("test setup"),
        fs::read(&echo).expect("test setup")
    );
    stdout_of(&mut add(&other, &["--force"]));
    assert_eq!(
        fs::read(&installed).expect("test setup"),
        fs::read(&other).expect("test setup")
    );

    // Refused plugins are not installed: missing imports, a tool name taken.
    let err = stderr_of_failure(&mut add(&fixture(test_plugins::MISSING_IMPORTS), &[]), 1);
    assert_text(
        &err,
        &ws.expand(
            "error: plugin `{fixtures}/missing-imports.wasm`: it needs 2 imports toolhost does not \
             provide: `fixture:missing/vault`, `wasi:keyvalue/store@0.2.0-draft`. Plugins may \
             import WASI 0.2 (io, clocks, filesystem, random, cli, sockets, http) and \
             toolhost:plugin/host@0.1.0; build against toolhost's wit/plugin.wit (world `plugin`, \
             or `plugin-fs` for componentize-js) and remove the other imports from the world you \
             build; nothing was installed\n",
        ),
    );
    let second = ws.path().join("elsewhere/echo-again.wasm");
    fs::copy(&other, &second).expect("test setup");
    let err = stderr_of_failure(&mut add(&second, &[]), 1);
    assert_text(
        &err,
        &format!(
            "error: plugin `{}`: tool `chatter` is already offered by `{}`; rename one of them or \
             remove one plugin; nothing was installed\n",
            second.display(),
            installed.display()
        ),
    );
    let names: Vec<_> = fs::read_dir(ws.path().join(".toolhost/plugins"))
        .expect("test setup")
        .map(|e| {
            e.expect("test setup")
                .file_name()
                .into_string()
                .expect("test setup")
        })
        .collect();
    assert_eq!(names, vec!["echo.wasm".to_string()]);
}

/// A user's build (`cargo build`, `cargo install`) compiles the standard
/// tools only: the host's build script neither builds nor watches the 18
/// test fixtures, which `host/test-plugins` (a dev-dependency) builds for
/// the tests. Before, every user's first build compiled them all.
#[test]
fn the_hosts_own_build_compiles_no_test_fixture() {
    let out_dir = std::path::Path::new(env!("OUT_DIR"));
    // Cargo keeps what the build script printed beside its OUT_DIR.
    let printed = std::fs::read_to_string(out_dir.parent().expect("build dir").join("output"))
        .expect("the host build script's output");
    assert!(printed.contains("plugins"), "{printed}");
    // What it watches is what it builds from: no fixture's sources.
    assert!(!printed.contains("tests/plugins"), "{printed}");
    // The fixtures are there for the tests all the same.
    assert!(std::path::Path::new(test_plugins::ECHO).is_file());
}
