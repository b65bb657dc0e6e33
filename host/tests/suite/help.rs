//! Each command's `--help`: only the flags that command uses, and the
//! environment variables it reads; the sandbox flags still work before the
//! command (as the README and the resume hint write them) and after it.

use pretty_assertions::assert_eq;

use super::common::{Workspace, stderr_of_failure, stdout_of};

/// `toolhost ARGS`, whose stdout must be its help.
fn help(args: &[&str]) -> String {
    stdout_of(Workspace::new().toolhost().args(args))
}

/// The text from `Environment:` to the end.
fn environment(help: &str) -> &str {
    let at = help
        .find("\nEnvironment:\n")
        .unwrap_or_else(|| panic!("no environment section in:\n{help}"));
    &help[at + 1..]
}

#[test]
fn sessions_help_shows_only_its_own_flags() {
    assert_eq!(
        help(&["sessions", "--help"]),
        "\
List the recorded sessions, newest first, or show one

Usage: toolhost sessions [OPTIONS] [COMMAND]

Commands:
  show     Print one session: one line per model step and per tool call
  compact  Compact one session now, as `/compact` does in a chat
  help     Print this message or the help of the given subcommand(s)

Options:
  -w, --workspace <DIR>    The workspace: the directory tools see as `.` [default: .]
      --session-dir <DIR>  Where the session files are [default: <workspace>/.toolhost/sessions]
      --json               Print the list as JSON (an array of summaries)
  -h, --help               Print help
"
    );
}

#[test]
fn run_help_names_the_environment_variables_it_reads() {
    assert_eq!(
        environment(&help(&["run", "--help"])),
        "\
Environment:
  OPENAI_API_KEY                         The key for `--provider openai` (OpenAI's own API needs it; a server at --base-url may not)
  OPENAI_BASE_URL                        The API root for `--provider openai` when neither --base-url nor `[model] base_url` sets one
  ANTHROPIC_API_KEY                      The key for `--provider anthropic`
  TOOLHOST_RETRY_BACKOFF_MS              The wait before a model request's first retry, doubled for each further one [default: 500]
  TOOLHOST_RECORDS_MIB                   RUN,WORKSPACE in MiB: what a run's saved results and session file may take, and what the workspace's earlier ones may [default: 256,1024]
  TOOLHOST_CONFIG_DIR                    The user config directory (config.toml, the trust list) [default: $XDG_CONFIG_HOME/toolhost, else ~/.config/toolhost]
  TOOLHOST_CACHE_DIR                     The compile cache, under --cache-dir [default: $XDG_CACHE_HOME/toolhost, else ~/.cache/toolhost]
  HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME  Where the config and cache directories are when the two above do not say
  TOOLHOST_BASELINE_MIN_BYTES            A plugin not in the cache of at least this many bytes runs baseline code until its optimized compile is done; `off`: always wait for that compile [default: 1048576]
  TOOLHOST_BACKGROUND_COMPILE            `off`: leave no optimized compile to a background process at exit [default: on]
  PATH, CARGO_HOME, RUSTUP_HOME          Where --allow-exec finds a program, and a Rust toolchain's homes (read-only in its walls)
"
    );
    // The commands that read none say so by having no such section.
    for args in [&["sessions", "--help"][..], &["plugin", "new", "--help"]] {
        assert!(!help(args).contains("Environment:"), "{args:?}");
    }
}

/// The sandbox flags are taken before the command and after it; a flag a
/// command does not use is refused after it, as clap refuses any unknown
/// flag.
#[test]
fn sandbox_flags_work_before_and_after_the_command() {
    let ws = Workspace::new();
    ws.mkdir("docs");
    // Each tool's grants (the rest of the list says how each was compiled,
    // which other tests running at once may change).
    let tools = |args: &[&str]| -> Vec<(String, serde_json::Value)> {
        let doc: serde_json::Value =
            serde_json::from_str(&stdout_of(ws.toolhost().args(args))).expect("json");
        doc["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| (t["name"].to_string(), t["grants"].clone()))
            .collect()
    };
    let before = tools(&["--allow-read", "read_file=docs", "tools", "--json"]);
    let after = tools(&["tools", "--json", "--allow-read", "read_file=docs"]);
    assert_eq!(before, after);
    assert_ne!(before, tools(&["tools", "--json"]));

    let elsewhere = Workspace::new();
    let dir = elsewhere.path().to_str().expect("utf-8 path");
    for args in [
        &["--workspace", dir, "sessions"][..],
        &["sessions", "--workspace", dir],
    ] {
        let output = ws.toolhost().args(args).output().expect("sessions");
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!(
                "no sessions in `{dir}/.toolhost/sessions` yet: each `toolhost run` writes one \
                 there, and `toolhost mcp` at its first tool call\n"
            ),
            "{args:?}"
        );
    }
    let refused = stderr_of_failure(ws.toolhost().args(["sessions", "--allow-read", "docs"]), 2);
    assert!(
        refused.starts_with("error: unexpected argument '--allow-read' found"),
        "{refused}"
    );
}

/// No help text names a file of the repository, which a user of an
/// installed toolhost does not have; `run`'s options come under headings,
/// the common ones with short flags.
#[test]
fn help_names_no_repository_path_and_groups_runs_options() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["chat", "--help"],
        &["mcp", "--help"],
        &["tools", "--help"],
        &["sessions", "--help"],
        &["plugin", "new", "--help"],
        &["plugin", "install", "--help"],
    ] {
        let text = help(args);
        for path in ["docs/", "examples/", "host/src", "wit/"] {
            assert!(!text.contains(path), "{args:?} names `{path}`:\n{text}");
        }
    }
    let run = help(&["run", "--help"]);
    let headings: Vec<&str> = run
        .lines()
        .filter(|line| line.ends_with(':') && !line.starts_with(' '))
        .collect();
    assert_eq!(
        headings,
        [
            "Arguments:",
            "Options:",
            "Model:",
            "Limits:",
            "Prompt:",
            "Session:",
            "Input and output:",
            "Sandbox options:",
            "Environment:"
        ]
    );
    for short in [
        "  -p, --provider <PROVIDER>",
        "  -m, --model <MODEL>",
        "  -w, --workspace <DIR>",
    ] {
        assert!(run.contains(short), "{short}:\n{run}");
    }
}

/// `toolhost tools` writes limits as everything else does, and tells how
/// to give a tool that uses the network a host.
#[test]
fn tools_writes_limits_one_way_and_how_to_grant_the_network() {
    let listed = stdout_of(Workspace::new().toolhost().arg("tools"));
    let fetch: Vec<&str> = listed
        .lines()
        .skip_while(|line| !line.starts_with("fetch "))
        .take(5)
        .collect();
    assert_eq!(
        fetch,
        [
            "fetch  (read-only, builtin:fetch)",
            "    Fetch a URL (GET) and return its content: an HTML page as Markdown (its article, \
             without menus and scripts), or `text`, or `raw`; JSON and plain text as they came.",
            "    grants: none",
            "    network: none (grant with `--allow-net fetch=URL`)",
            "    limits: 10 G fuel, 30 s, 256 MiB memory, 1 MiB output, 256 MiB writes",
        ]
    );
    // A tool that uses no network says nothing of it.
    let read_file: Vec<&str> = listed
        .lines()
        .skip_while(|line| !line.starts_with("read_file "))
        .take(4)
        .collect();
    assert_eq!(
        read_file[2..],
        [
            "    grants: . (read-only)",
            "    limits: 10 G fuel, 30 s, 256 MiB memory, 1 MiB output, 256 MiB writes",
        ]
    );
}
