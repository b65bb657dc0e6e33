//! The environment capability through the real binary: a tool sees the
//! host variables the user names for it, and nothing else; a workspace's
//! own file may not name one until the user trusts it; a plugin a
//! workspace ships gets none.

use super::common::{Workspace, assert_text, stderr_of_failure, stdout_of, test_plugins};

/// `toolhost` with a variable the user may grant and a secret, both set
/// in its environment, and a third name unset.
fn toolhost(ws: &Workspace) -> assert_cmd::Command {
    let mut cmd = ws.toolhost();
    cmd.env("TOOLHOST_TEST_GRANTED", "visible")
        .env("TOOLHOST_TEST_SECRET", "sk-not-for-tools")
        .env_remove("TOOLHOST_TEST_UNSET");
    cmd
}

/// The hostile fixture's `env` tool prints every variable it sees.
fn env_seen(ws: &Workspace, flags: &[&str]) -> String {
    stdout_of(toolhost(ws).args(flags).args(["call", "env", "{}"]))
}

const GRANTED: [&str; 4] = [
    "--allow-env",
    "env=TOOLHOST_TEST_GRANTED",
    "--allow-env",
    "env=TOOLHOST_TEST_UNSET",
];

#[test]
fn a_tool_sees_only_the_variables_named_for_it() {
    let ws = Workspace::new();
    ws.add_plugin(test_plugins::HOSTILE, "hostile.wasm");
    // None by default, whatever toolhost's own environment holds.
    assert_eq!(env_seen(&ws, &[]), "0 vars: \n");
    // The named ones that are set, and nothing else.
    assert_eq!(
        env_seen(&ws, &GRANTED),
        "1 vars: TOOLHOST_TEST_GRANTED=visible\n"
    );
    // A variable named for another tool does not reach this one.
    assert_eq!(
        env_seen(&ws, &["--allow-env", "read_path=TOOLHOST_TEST_GRANTED"]),
        "0 vars: \n"
    );
    // The user's own config names them as the flag does.
    std::fs::write(
        ws.user_config().join("config.toml"),
        "[tools.env]\nenv = [\"TOOLHOST_TEST_GRANTED\"]\n",
    )
    .expect("user config");
    assert_eq!(
        env_seen(&ws, &[]),
        "1 vars: TOOLHOST_TEST_GRANTED=visible\n"
    );
}

#[test]
fn what_a_tool_may_read_of_the_environment_is_listed_with_its_reach() {
    let ws = Workspace::new();
    ws.add_plugin(test_plugins::HOSTILE, "hostile.wasm");
    let listed = stdout_of(toolhost(&ws).args(GRANTED).arg("tools"));
    let env = listed
        .split("\nenv  (")
        .nth(1)
        .expect("the env tool is listed");
    assert!(
        env.contains("\n    environment: TOOLHOST_TEST_GRANTED, TOOLHOST_TEST_UNSET\n"),
        "{listed}"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout_of(
        toolhost(&ws).args(GRANTED).args(["tools", "--json"]),
    ))
    .expect("json");
    let tool = doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "env")
        .expect("env listed");
    assert_eq!(
        tool["more"],
        serde_json::json!(["environment: TOOLHOST_TEST_GRANTED, TOOLHOST_TEST_UNSET"])
    );
}

#[test]
fn a_workspace_file_may_not_name_a_variable_until_trusted() {
    let ws = Workspace::new();
    ws.add_plugin(test_plugins::HOSTILE, "hostile.wasm");
    ws.write(
        "toolhost.toml",
        "[tools.env]\nenv = [\"TOOLHOST_TEST_SECRET\"]\n",
    );
    assert_text(
        &stderr_of_failure(toolhost(&ws).args(["call", "env", "{}"]), 1),
        &ws.expand(
            "error: environment grant `TOOLHOST_TEST_SECRET` (from {ws}/toolhost.toml:2 \
             [tools.env] env) is refused: a workspace's own toolhost.toml may not give tools \
             your environment variables (it may have come with the repository, and a variable \
             can hold a secret, such as an API key). To allow it, pass the grant yourself \
             (`--allow-env env=TOOLHOST_TEST_SECRET`), or trust this workspace (`toolhost trust \
             {ws}`)\n",
        ),
    );
    // Trusted, it applies.
    stdout_of(toolhost(&ws).arg("trust"));
    assert_eq!(
        env_seen(&ws, &[]),
        "1 vars: TOOLHOST_TEST_SECRET=sk-not-for-tools\n"
    );
}

#[test]
fn a_plugin_the_workspace_ships_gets_no_variable_and_the_notice_says_so() {
    let ws = Workspace::new();
    // Not added by the user: the workspace shipped it.
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    let output = toolhost(&ws)
        .args(GRANTED)
        .args(["call", "env", "{}"])
        .output()
        .expect("run");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "0 vars: \n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&ws.expand(
            "`env` gets none of what your configuration gives it by name (environment \
             variables): its plugin came with this workspace, and what a repository ships gets \
             those only once you trust it (`toolhost trust {ws}`)"
        )),
        "{stderr}"
    );
}

#[test]
fn an_environment_grant_names_a_tool_and_a_variable() {
    let ws = Workspace::new();
    for (value, problem) in [
        (
            "TOOLHOST_TEST_GRANTED",
            "names no tool: a variable goes to one tool at a time, as `--allow-env TOOL=NAME` \
             (for example `--allow-env python=HOME`)",
        ),
        (
            "env=",
            "is not a variable's name: write it as the environment has it, without `=` \
             (`--allow-env python=HOME`)",
        ),
    ] {
        assert_text(
            &stderr_of_failure(toolhost(&ws).args(["--allow-env", value, "tools"]), 1),
            &format!("error: environment grant `{value}` (from --allow-env {value}) {problem}\n"),
        );
    }
}
