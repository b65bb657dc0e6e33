//! toolhost's standard `bash` tool: a bash-compatible shell (bashkit) with
//! its utilities built in, run as a WebAssembly component whose files are
//! the tool's grants. The parts below that are plain Rust ([`paths`],
//! [`result`], [`missing`]) are unit-tested natively; the shell and its
//! file system exist only in the component (`cargo test` does not compile
//! the interpreter for the host).

pub mod missing;
pub mod paths;
pub mod result;

#[cfg(target_family = "wasm")]
mod guest_fs;
#[cfg(target_family = "wasm")]
mod shell;

/// The tool's input.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub command: String,
    /// Milliseconds the command may run, under the tool's own deadline.
    pub timeout_ms: Option<u64>,
}

/// What the model reads about the tool.
pub const DESCRIPTION: &str = "Run a bash command in a sandboxed shell whose working directory \
    is the workspace. Pipes, `;` `&&` `||`, redirections, quoting, variables, `$(...)`, globs, \
    if/for/while/case, functions, here-documents, `set -e` and `-o pipefail` work. The utilities \
    are built in: ls, cat, head, tail, wc, grep, find, sed, awk, sort, uniq, cut, tr, diff, xargs, \
    jq, tar, patch, sha256sum, base64 and more. It reaches only the directories this tool was \
    granted (writes fail where it may not write) and has no network. Programs of the machine \
    (cargo, git, npm, python3, curl) do not run here, but for those the user granted this tool \
    (its `native programs`): each of those runs natively, held by the kernel to the same \
    directories, without network, until the call's deadline. Each call is a fresh shell: `cd`, variables \
    and functions do not carry over, and `/tmp` is in memory for the call. The result is stdout, \
    then `--- stderr ---` and stderr if any, then `exit code N` if not 0. To search a large \
    tree, `search_text` is about ten times faster than `grep -r` here.";

/// The tool's input schema.
pub fn input_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "The bash command or script to run."
            },
            "timeout_ms": {
                "type": "integer",
                "minimum": 1,
                "description": "Stop the command after this many milliseconds (the tool's own deadline still applies)."
            }
        },
        "required": ["command"],
        "additionalProperties": false
    })
}

#[cfg(target_family = "wasm")]
mod component {
    use super::*;

    wit_bindgen::generate!({ world: "plugin-exec", path: "../../wit" });

    struct Component;

    impl Guest for Component {
        fn list_tools() -> Vec<ToolSpec> {
            vec![ToolSpec {
                name: "bash".into(),
                description: DESCRIPTION.into(),
                input_schema: input_schema().to_string(),
                read_only: false,
            }]
        }

        fn call_tool(name: String, input: String) -> Result<String, CallError> {
            if name != "bash" {
                return Err(CallError::InvalidInput(format!(
                    "this plugin has no tool `{name}`; it offers `bash`"
                )));
            }
            let input: Input = serde_json::from_str(&input)
                .map_err(|error| CallError::InvalidInput(error.to_string()))?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .map_err(|error| CallError::Failed(format!("cannot start the shell: {error}")))?;
            let workspace = wasip2::cli::environment::initial_cwd();
            let timeout = input.timeout_ms.map(std::time::Duration::from_millis);
            Ok(runtime.block_on(shell::run(&input.command, timeout, workspace.as_deref())))
        }
    }

    /// Sends one line of live output to the host.
    pub(crate) fn progress(line: &str) {
        toolhost::plugin::host::progress(line);
    }

    /// The host's native programs (`toolhost:plugin/exec`).
    pub(crate) use toolhost::plugin::exec;

    export!(Component);
}

#[cfg(target_family = "wasm")]
use component::{exec, progress};
