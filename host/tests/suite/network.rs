//! The network: a hostile plugin (`tests/plugins/network`) makes raw
//! `wasi:http` requests at local servers, and the host alone decides which
//! go. Each refusal the issue names is tried through the real binary, and
//! each is followed by a granted request that works; the bounds on one
//! call (response bytes, requests, connections, its deadline) are tried
//! against servers that never stop.

use std::time::{Duration, Instant};

use toolhost::sandbox::{CallOptions, NetGrant, Sandbox, SandboxOptions};

use super::common::web::{WebServer, ca_file};
use super::common::{Workspace, assert_text, stderr_of_failure, stdout_of, test_plugins};
use super::mcp::{RawServer, call as mcp_call};

const TOOL: &str = "http_request";

/// A workspace and, outside it, a plugins directory with the hostile
/// network plugin, passed with `--plugins` (a workspace's own
/// `.toolhost/plugins` gets no network until it is trusted:
/// `a_plugin_a_repository_ships_gets_no_network_until_trusted`).
fn workspace() -> Workspace {
    let ws = Workspace::new();
    let dir = ws.user_config().join("plugins");
    std::fs::create_dir_all(&dir).expect("plugins dir");
    std::fs::copy(test_plugins::NETWORK, dir.join("network.wasm")).expect("copy plugin");
    ws
}

/// `--plugins=DIR` of [`workspace`]'s plugin.
fn plugins(ws: &Workspace) -> String {
    format!("--plugins={}", ws.user_config().join("plugins").display())
}

/// `toolhost` in `ws` with the network plugin loaded.
fn toolhost(ws: &Workspace) -> assert_cmd::Command {
    let mut cmd = ws.toolhost();
    cmd.arg(plugins(ws));
    cmd
}

/// The plugins flag, then `--allow-net http_request=GRANT` for each grant.
fn grant_flags(ws: &Workspace, grants: &[String]) -> Vec<String> {
    std::iter::once(plugins(ws))
        .chain(grants.iter().map(|g| format!("--allow-net={TOOL}={g}")))
        .collect()
}

/// The plugin's answer to `input` under `grants`; the call must succeed.
fn answer(ws: &Workspace, grants: &[String], input: &str) -> String {
    let flags = grant_flags(ws, grants);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    stdout_of(&mut ws.call(TOOL, input, &flags))
}

/// What `toolhost call` prints for a refused request under `grants`.
fn refusal(ws: &Workspace, grants: &[String], input: &str) -> String {
    let flags = grant_flags(ws, grants);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    stderr_of_failure(&mut ws.call(TOOL, input, &flags), 1)
}

fn get(url: &str) -> String {
    serde_json::json!({ "url": url }).to_string()
}

/// The model's text for a request no grant matches.
fn not_granted(url: &str, grants: &[String], allow: &str) -> String {
    let reach = if grants.is_empty() {
        "This tool has no network access.".to_string()
    } else {
        format!(
            "This tool may reach only {}.",
            grants
                .iter()
                .map(|g| format!("`{g}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "error: `{TOOL}` may not reach `GET {url}`: no network grant of this tool matches it. \
         {reach} If this request is needed, ask the user, who can allow it with \
         `--allow-net {TOOL}={allow}`.\n"
    )
}

#[test]
fn without_a_grant_every_request_is_refused_before_anything_is_sent() {
    let ws = workspace();
    let server = WebServer::http();
    let port = server.port();
    let url = format!("http://127.0.0.1:{port}/upload");
    let post = serde_json::json!({ "url": url, "method": "POST", "body": "secret" }).to_string();
    assert_text(
        &refusal(&ws, &[], &post),
        &not_granted(&url, &[], &format!("http://127.0.0.1:{port}")).replace("`GET ", "`POST "),
    );
    let url = "http://example.com/";
    assert_text(
        &refusal(&ws, &[], &get(url)),
        &not_granted(url, &[], "http://example.com"),
    );
    assert_eq!(server.seen(), Vec::new(), "nothing may reach the server");
}

#[test]
fn each_request_outside_the_grants_is_refused_and_a_granted_one_then_works() {
    let ws = workspace();
    let server = WebServer::http();
    let other = WebServer::http();
    let port = server.port();
    let by_name = vec![format!("http://localhost:{port}")];
    let by_address = vec![format!("http://127.0.0.1:{port}")];
    let below = vec![
        format!("http://*.example.test:{port}"),
        format!("http://127.0.0.1:{port}"),
    ];
    let cases: Vec<(&str, &[String], String, String)> = vec![
        // A host not granted.
        (
            "a host not granted",
            &by_address,
            format!("http://localhost:{port}/"),
            format!("http://localhost:{port}"),
        ),
        // A port not granted.
        (
            "a port not granted",
            &by_address,
            format!("http://127.0.0.1:{}/", other.port()),
            format!("http://127.0.0.1:{}", other.port()),
        ),
        // Every other spelling of loopback, when only the name is granted.
        (
            "decimal",
            &by_name,
            format!("http://2130706433:{port}/"),
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "hex",
            &by_name,
            format!("http://0x7f.1:{port}/"),
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "octal",
            &by_name,
            format!("http://0177.0.0.1:{port}/"),
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "short",
            &by_name,
            format!("http://127.1:{port}/"),
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "dotted",
            &by_name,
            format!("http://127.0.0.1:{port}/"),
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "IPv6",
            &by_name,
            format!("http://[::1]:{port}/"),
            format!("http://[::1]:{port}"),
        ),
        (
            "IPv4-mapped IPv6",
            &by_name,
            format!("http://[::ffff:127.0.0.1]:{port}/"),
            format!("http://[::ffff:7f00:1]:{port}"),
        ),
        // `*.example.test` is the names below it, not it or its look-alikes.
        (
            "the apex",
            &below,
            format!("http://example.test:{port}/"),
            format!("http://example.test:{port}"),
        ),
        (
            "a longer name",
            &below,
            format!("http://example.test.evil:{port}/"),
            format!("http://example.test.evil:{port}"),
        ),
        (
            "a name ending alike",
            &below,
            format!("http://notexample.test:{port}/"),
            format!("http://notexample.test:{port}"),
        ),
    ];
    for (what, grants, url, allow) in &cases {
        // The model reads the URL as the tool wrote it, and the grant that
        // would allow it in the host's one canonical form.
        assert_text(
            &refusal(&ws, grants, &get(url)),
            &not_granted(url, grants, allow),
        );
        assert!(server.seen().is_empty(), "{what}: the request went out");
        assert!(other.seen().is_empty(), "{what}: the request went out");
        let granted = grants.last().expect("a grant");
        let works = format!("{granted}/after");
        assert_eq!(
            answer(&ws, grants, &get(&works)),
            "status 200, 17 bytes: hello from /after\n",
            "{what}: the granted request after the refusal"
        );
        assert_eq!(server.seen().len(), 1, "{what}");
        server.clear_seen();
    }
    // Spelt otherwise under a grant of the address, the request goes, and
    // the server reads the host the grant matched.
    assert_eq!(
        answer(
            &ws,
            &by_address,
            &get(&format!("http://0x7f.1:{port}/spelt"))
        ),
        "status 200, 17 bytes: hello from /spelt\n"
    );
    assert_eq!(server.seen()[0].host, format!("127.0.0.1:{port}"));
}

#[test]
fn http_is_refused_when_only_https_is_granted_and_https_is_verified() {
    let ws = workspace();
    std::fs::write(
        ws.user_config().join("config.toml"),
        format!("[network]\nca_file = \"{}\"\n", ca_file().display()),
    )
    .expect("user config");
    let server = WebServer::https();
    let port = server.port();
    let grants = vec![format!("https://localhost:{port}")];
    let url = format!("http://localhost:{port}/");
    assert_text(
        &refusal(&ws, &grants, &get(&url)),
        &not_granted(&url, &grants, &format!("http://localhost:{port}")),
    );
    assert_eq!(
        answer(
            &ws,
            &grants,
            &get(&format!("https://localhost:{port}/secure"))
        ),
        "status 200, 18 bytes: hello from /secure\n"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].host, format!("localhost:{port}"));

    // Without the test CA the certificate is not trusted: no request goes.
    let plain = workspace();
    let refused = refusal(&plain, &grants, &get(&format!("https://localhost:{port}/")));
    assert_text(
        &refused,
        &format!("error: `{TOOL}` failed: wasi:http error: ErrorCode::TlsCertificateError\n"),
    );
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn user_names_and_other_schemes_are_refused() {
    let ws = workspace();
    let server = WebServer::http();
    let port = server.port();
    let grants = vec![format!("http://127.0.0.1:{port}")];
    for authority in [
        format!("u:p@127.0.0.1:{port}"),
        format!("127.0.0.1:{port}@127.0.0.1:{port}"),
    ] {
        let refused = refusal(&ws, &grants, &get(&format!("http://{authority}/")));
        assert!(
            refused.starts_with(&format!("error: `{TOOL}` may not send `GET http://"))
                || refused.contains("HttpRequestUriInvalid"),
            "{authority}: {refused}"
        );
    }
    assert!(server.seen().is_empty());
    assert_eq!(
        answer(&ws, &grants, &get(&format!("http://127.0.0.1:{port}/ok"))),
        "status 200, 14 bytes: hello from /ok\n"
    );
}

#[test]
fn a_redirect_is_a_new_request_the_host_clears_again() {
    let ws = workspace();
    let server = WebServer::http();
    let elsewhere = WebServer::http();
    let port = server.port();
    let grants = vec![format!("http://127.0.0.1:{port}")];
    let follow = |to: &str| {
        serde_json::json!({
            "url": format!("http://127.0.0.1:{port}/redirect?to={to}"),
            "follow": true
        })
        .to_string()
    };
    let away = format!("http://127.0.0.1:{}/secret", elsewhere.port());
    assert_text(
        &refusal(&ws, &grants, &follow(&away)),
        &not_granted(
            &away,
            &grants,
            &format!("http://127.0.0.1:{}", elsewhere.port()),
        ),
    );
    assert!(elsewhere.seen().is_empty(), "the redirect was followed");
    // Within the grants, the plugin follows it.
    assert_eq!(
        answer(
            &ws,
            &grants,
            &follow(&format!("http://127.0.0.1:{port}/landing"))
        ),
        "status 200, 19 bytes: hello from /landing\n"
    );
    // Without `follow`, the host hands the 302 itself to the plugin.
    assert_eq!(
        answer(
            &ws,
            &grants,
            &get(&format!("http://127.0.0.1:{port}/redirect?to={away}"))
        ),
        "status 302, 0 bytes: \n"
    );
}

#[test]
fn one_call_is_bounded_in_bytes_requests_and_connections() {
    let ws = workspace();
    let server = WebServer::http();
    let port = server.port();
    let grants = vec![format!("http://127.0.0.1:{port}")];

    let started = Instant::now();
    let endless = format!("http://127.0.0.1:{port}/endless");
    assert_text(
        &refusal(&ws, &grants, &get(&endless)),
        &format!(
            "error: `{TOOL}` read more than 16 MiB of responses in one call and was cut off at \
             `GET {endless}`. Ask for a smaller part of it (a page, a range) in one call.\n"
        ),
    );
    assert!(started.elapsed() < Duration::from_secs(20));

    let many = serde_json::json!({ "url": format!("http://127.0.0.1:{port}/n"), "repeat": 100 })
        .to_string();
    assert_text(
        &refusal(&ws, &grants, &many),
        &format!(
            "error: `{TOOL}` tried more than 64 requests in one call and was refused the rest \
             (the last was `GET http://127.0.0.1:{port}/n`). Ask for less in one call.\n"
        ),
    );
    let sent = server.seen().iter().filter(|s| s.target == "/n").count();
    assert_eq!(sent, 64, "requests that reached the server");
    // The budgets are limits: a repository's file may lower them.
    ws.write(
        "toolhost.toml",
        format!("[tools.{TOOL}.limits]\nnet_requests = 3\nnet_mib = 1\n"),
    );
    assert_text(
        &refusal(&ws, &grants, &many),
        &format!(
            "error: `{TOOL}` tried more than 3 requests in one call and was refused the rest \
             (the last was `GET http://127.0.0.1:{port}/n`). Ask for less in one call.\n"
        ),
    );
    assert_text(
        &refusal(&ws, &grants, &get(&endless)),
        &format!(
            "error: `{TOOL}` read more than 1 MiB of responses in one call and was cut off at \
             `GET {endless}`. Ask for a smaller part of it (a page, a range) in one call.\n"
        ),
    );
    // ... and may not raise them: the value is clamped, with a warning.
    ws.write(
        "toolhost.toml",
        format!("[tools.{TOOL}.limits]\nnet_requests = 1000\n"),
    );
    let raised = refusal(&ws, &grants, &many);
    assert!(
        raised.starts_with("warning: ")
            && raised.contains("net_requests")
            && raised.ends_with(&format!(
                "error: `{TOOL}` tried more than 64 requests in one call and was refused the rest \
                 (the last was `GET http://127.0.0.1:{port}/n`). Ask for less in one call.\n"
            )),
        "{raised}"
    );
    std::fs::remove_file(ws.path().join("toolhost.toml")).expect("remove");

    // Responses whose bodies are still coming hold their connections open.
    let hold = |n: u64| {
        serde_json::json!({ "url": format!("http://127.0.0.1:{port}/slow"), "hold": n }).to_string()
    };
    assert_text(
        &refusal(&ws, &grants, &hold(9)),
        &format!(
            "error: `{TOOL}` tried to open more than 8 connections at once and was refused \
             `GET http://127.0.0.1:{port}/slow`. Read each response before sending the next, or \
             ask for less in one call.\n"
        ),
    );
    let sent = server.seen().iter().filter(|s| s.target == "/slow").count();
    assert_eq!(sent, 8, "connections that reached the server");
    assert_eq!(answer(&ws, &grants, &hold(8)), "8 responses held at once\n");
    assert!(
        server.wait_all_closed(Duration::from_secs(5)),
        "the call ended with its connections open"
    );
}

#[test]
fn a_slow_body_ends_at_the_call_deadline_and_its_connection_closes() {
    let ws = workspace();
    ws.write(
        "toolhost.toml",
        format!("[tools.{TOOL}.limits]\ntimeout_ms = 1500\n"),
    );
    let server = WebServer::http();
    let port = server.port();
    let grants = vec![format!("http://127.0.0.1:{port}")];
    let started = Instant::now();
    assert_text(
        &refusal(&ws, &grants, &get(&format!("http://127.0.0.1:{port}/slow"))),
        &format!(
            "error: `{TOOL}` did not finish within its time limit of 1500 ms and was stopped. \
             Ask for less work in one call, or do not call it again with the same arguments.\n"
        ),
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(server.wait_all_closed(Duration::from_secs(5)));
}

#[test]
fn a_proxy_in_the_environment_is_not_used() {
    let ws = workspace();
    let server = WebServer::http();
    let port = server.port();
    let grants = vec![format!("http://127.0.0.1:{port}")];
    let flags = grant_flags(&ws, &grants);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut call = ws.call(
        TOOL,
        &get(&format!("http://127.0.0.1:{port}/direct")),
        &flags,
    );
    for proxy in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] {
        call.env(proxy, "http://127.0.0.1:9");
    }
    assert_eq!(
        stdout_of(&mut call),
        "status 200, 18 bytes: hello from /direct\n"
    );
}

/// A sandbox in this process with the network plugin, its calls limited to
/// `timeout` and granted `grant`: the host lives on after each call, so a
/// test sees what a finished call left open.
async fn sandbox_with(grant: &str, timeout: Duration) -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().expect("workspace");
    let workspace = dir.path().canonicalize().expect("canonical");
    let mut options = SandboxOptions::read_only(workspace);
    options.standard_tools = false;
    options.cache_dir = Some(super::common::shared_cache());
    options.plugin_files = vec![super::common::fixture(test_plugins::NETWORK)];
    options.policy.defaults.net.grants = vec![NetGrant::parse(grant).expect("grant")];
    options.policy.defaults.limits.timeout = timeout;
    let sandbox = Sandbox::load(options).await.expect("sandbox loads");
    assert!(
        sandbox.load_errors().is_empty(),
        "{:?}",
        sandbox.load_errors()
    );
    (dir, sandbox)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_call_closes_its_connections_while_the_host_lives_on() {
    let server = WebServer::http();
    let port = server.port();
    let (_dir, sandbox) =
        sandbox_with(&format!("http://127.0.0.1:{port}"), Duration::from_secs(1)).await;
    let slow = serde_json::json!({
        "url": format!("http://127.0.0.1:{port}/slow"),
        "hold": 3,
        "read": true
    })
    .to_string();

    // Past its deadline: the responses are still coming.
    let report = sandbox.call(TOOL, &slow, &CallOptions::default()).await;
    assert_eq!(super::common::fault(&report).kind(), "timeout");
    assert!(
        server.wait_all_closed(Duration::from_secs(2)),
        "{} connections outlived the call",
        server.open_connections()
    );

    // Cancelled by the user.
    let options = CallOptions::default();
    let cancel = options.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let report = sandbox.call(TOOL, &slow, &options).await;
    assert_eq!(super::common::fault(&report).kind(), "cancelled");
    assert!(
        server.wait_all_closed(Duration::from_secs(2)),
        "{} connections outlived the call",
        server.open_connections()
    );

    // The record of a call: every request, refused ones too, no query.
    let input = serde_json::json!({
        "url": format!("http://127.0.0.1:{port}/redirect?to=http://localhost:{port}/x?token=1"),
        "follow": true
    })
    .to_string();
    let report = sandbox.call(TOOL, &input, &CallOptions::default()).await;
    assert_eq!(super::common::fault(&report).kind(), "net_denied");
    let record: Vec<serde_json::Value> = report
        .requests
        .iter()
        .map(|r| {
            let mut value = serde_json::to_value(r).expect("json");
            value["ms"] = 0.into();
            value
        })
        .collect();
    assert_eq!(
        record,
        vec![
            serde_json::json!({
                "method": "GET",
                "url": format!("http://127.0.0.1:{port}/redirect"),
                "status": 302,
                "address": format!("127.0.0.1:{port}"),
                "bytes": 0,
                "ms": 0
            }),
            serde_json::json!({
                "method": "GET",
                "url": format!("http://localhost:{port}/x"),
                "error": "not granted",
                "refused": true,
                "bytes": 0,
                "ms": 0
            }),
        ]
    );
}

#[test]
fn over_mcp_a_granted_tool_is_open_world_and_its_requests_are_audited() {
    let ws = workspace();
    let web = WebServer::http();
    let port = web.port();
    let grant = format!("http://127.0.0.1:{port}");
    let flag = format!("--allow-net={TOOL}={grant}");
    let mut server = RawServer::start(&ws, &[&flag, &plugins(&ws)]);
    let instructions = server.init["result"]["instructions"]
        .as_str()
        .expect("instructions");
    assert!(
        instructions.contains(&format!(
            "\n- {TOOL} (read-only): reads .; reaches {grant}\n"
        )),
        "{instructions}"
    );
    server.send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let tools = server.response()["result"]["tools"].clone();
    let open_world = |name: &str| {
        tools
            .as_array()
            .and_then(|all| all.iter().find(|t| t["name"] == name))
            .map(|t| t["annotations"]["openWorldHint"].clone())
    };
    assert_eq!(open_world(TOOL), Some(serde_json::json!(true)));
    assert_eq!(open_world("read_file"), Some(serde_json::json!(false)));

    server.send(mcp_call(
        2,
        TOOL,
        serde_json::json!({"url": format!("{grant}/page?key=secret")}),
    ));
    let answered = server.response();
    assert_eq!(
        answered["result"]["content"][0]["text"],
        "status 200, 27 bytes: hello from /page?key=secret"
    );
    let away = format!("http://localhost:{port}/x");
    server.send(mcp_call(3, TOOL, serde_json::json!({"url": away})));
    let refused = server.response();
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(
        refused["result"]["content"][0]["text"].as_str(),
        Some(
            not_granted(
                &away,
                std::slice::from_ref(&grant),
                &format!("http://localhost:{port}")
            )
            .trim_end()
        )
    );
    server.kill();

    let dir = ws.path().join(".toolhost/sessions");
    let file = std::fs::read_dir(&dir)
        .expect("sessions")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("an audit file");
    let requests: Vec<serde_json::Value> = std::fs::read_to_string(file)
        .expect("audit")
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("json"))
        .filter(|record| record["type"] == "tool_execution_end")
        .flat_map(|record| {
            record["execution"]["requests"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|mut request| {
            request["ms"] = 0.into();
            request
        })
        .collect();
    assert_eq!(
        requests,
        vec![
            serde_json::json!({
                "method": "GET",
                "url": format!("{grant}/page"),
                "status": 200,
                "address": format!("127.0.0.1:{port}"),
                "bytes": 27,
                "ms": 0
            }),
            serde_json::json!({
                "method": "GET",
                "url": away,
                "error": "not granted",
                "refused": true,
                "bytes": 0,
                "ms": 0
            }),
        ]
    );
}

#[test]
fn a_repositorys_toolhost_toml_may_not_give_tools_the_network() {
    let ws = workspace();
    ws.write(
        "toolhost.toml",
        format!("[limits]\nfuel = 1000000\n\n[tools.{TOOL}]\nnet = [\"https://docs.rs\"]\n"),
    );
    assert_text(
        &stderr_of_failure(ws.toolhost().arg("tools"), 1),
        &ws.expand(&format!(
            "error: network grant `https://docs.rs` (from {{ws}}/toolhost.toml:5 [tools.{TOOL}] \
             net) is refused: a workspace's own toolhost.toml may not give tools the network (it \
             may have come with the repository, and a grant would let the model send your files \
             where its author chose). To allow it, pass the grant yourself (`--allow-net \
             {TOOL}=https://docs.rs`), or trust this workspace (`toolhost trust {{ws}}`)\n"
        )),
    );
    // Either fix, pasted, works.
    let listed =
        stdout_of(toolhost(&ws).args(["--allow-net", &format!("{TOOL}=https://docs.rs"), "tools"]));
    assert!(
        listed.contains(
            "\n    network: https://docs.rs (64 requests, 8 connections at once, 16 MiB of responses a call)\n"
        ),
        "{listed}"
    );
    stdout_of(ws.toolhost().arg("trust"));
    let listed = stdout_of(toolhost(&ws).arg("tools"));
    assert!(
        listed.contains(
            "\n    network: https://docs.rs (64 requests, 8 connections at once, 16 MiB of responses a call)\n"
        ),
        "{listed}"
    );

    // A certificate authority too is the user's to add.
    let other = workspace();
    other.write("toolhost.toml", "[network]\nca_file = \"ca.pem\"\n");
    assert_text(
        &stderr_of_failure(other.toolhost().arg("tools"), 1),
        &other.expand(
            "error: `{ws}/toolhost.toml:2` sets [network] ca_file, a certificate authority every \
             tool's https request would trust, and a workspace's own toolhost.toml is not trusted \
             to choose that (it may have come with the repository). Set it in your own \
             config.toml, or trust this workspace (`toolhost trust {ws}`)\n",
        ),
    );
    // And a bad pattern names itself, where it was written and the form.
    assert_text(
        &stderr_of_failure(
            other
                .toolhost()
                .args(["--allow-net", "docs.rs", "--config", "/dev/null", "tools"]),
            1,
        ),
        "error: network grant `docs.rs`: it names no scheme (https://, http:// or *://); write \
         it as scheme://host[:port], e.g. `https://api.example.com`, `https://*.example.com`, \
         `http://127.0.0.1:8080` (from --allow-net docs.rs)\n",
    );
}

/// Whether `unshare -rm` can give a process its own `/etc/hosts`; if not,
/// says why.
fn private_hosts_file() -> bool {
    let probe = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount --bind /dev/null /etc/hosts"])
        .output();
    match probe {
        Ok(output) if output.status.success() => true,
        Ok(output) => {
            eprintln!(
                "note: skipping the name-resolution part of this test: `unshare -rm` with a bind \
                 mount failed here ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
            false
        }
        Err(e) => {
            eprintln!(
                "note: skipping the name-resolution part of this test: cannot run `unshare` \
                 ({e}); install util-linux"
            );
            false
        }
    }
}

#[test]
fn a_granted_name_that_resolves_to_this_machine_is_refused() {
    let ws = workspace();
    let server = WebServer::http();
    let port = server.port();
    if !private_hosts_file() {
        return;
    }
    // The system's resolver, given a hosts file in a mount namespace of the
    // call's own: `api.test` and `a.example.test` are this machine.
    let hosts_file = tempfile::NamedTempFile::new().expect("hosts file");
    std::fs::write(hosts_file.path(), "127.0.0.1 api.test a.example.test\n").expect("hosts");
    let hosts = hosts_file.path();
    let resolve_call = |grants: &[String], input: &str| {
        let mut script = format!(
            "mount --bind '{}' /etc/hosts && exec \"$TOOLHOST\" '{}'",
            hosts.display(),
            plugins(&ws)
        );
        for grant in grants {
            script.push_str(&format!(" '--allow-net={TOOL}={grant}'"));
        }
        script.push_str(&format!(" call {TOOL} '{input}'"));
        let mut cmd = assert_cmd::Command::new("unshare");
        let process = ws.toolhost_process();
        for (key, value) in process.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.current_dir(ws.path())
            .env("TOOLHOST", assert_cmd::cargo::cargo_bin("toolhost"))
            .args(["-rm", "sh", "-c", &script]);
        cmd.output().expect("unshare")
    };
    let by_name = vec![format!("http://api.test:{port}")];
    let url = format!("http://api.test:{port}/");
    let refused = resolve_call(&by_name, &get(&url));
    assert_eq!(refused.status.code(), Some(1));
    assert_text(
        &String::from_utf8_lossy(&refused.stderr),
        &format!(
            "error: `{TOOL}` may not reach `GET {url}`: its host resolved to 127.0.0.1, which is \
             not a public address (this machine, a private network or a cloud metadata service), \
             and no grant of this tool names that address. This tool may reach only \
             `http://api.test:{port}`. If this server is meant, ask the user, who can allow its \
             address with `--allow-net {TOOL}=http://127.0.0.1:{port}`.\n"
        ),
    );
    // `*.example.test` reaches a name below it, but not this machine either.
    let below = vec![format!("http://*.example.test:{port}")];
    let refused = resolve_call(&below, &get(&format!("http://a.example.test:{port}/")));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("resolved to 127.0.0.1"),
        "{refused:?}"
    );
    assert!(server.seen().is_empty(), "a request reached this machine");
    // The address granted too, the same name goes, with its own Host.
    let both = vec![by_name[0].clone(), format!("http://127.0.0.1:{port}")];
    let works = resolve_call(&both, &get(&format!("http://api.test:{port}/named")));
    assert_eq!(
        String::from_utf8_lossy(&works.stdout),
        "status 200, 17 bytes: hello from /named\n",
        "{works:?}"
    );
    assert_eq!(server.seen()[0].host, format!("api.test:{port}"));
}

#[test]
fn a_credential_goes_only_to_its_host_and_is_in_no_record() {
    let ws = workspace();
    let api = WebServer::http();
    let other = WebServer::http();
    let (api_origin, other_origin) = (
        format!("http://127.0.0.1:{}", api.port()),
        format!("http://localhost:{}", other.port()),
    );
    std::fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[tools.{TOOL}]\nnet = [\"{api_origin}\", \"{other_origin}\"]\n\n\
             [tools.{TOOL}.headers.\"{api_origin}\"]\nAuthorization = \"Bearer ${{TOOLHOST_TEST_TOKEN}}\"\n"
        ),
    )
    .expect("user config");
    let call = |input: String| {
        let mut cmd = toolhost(&ws);
        cmd.env("TOOLHOST_TEST_TOKEN", "s3cret")
            .args(["run", "--provider", "scripted", "--script"])
            .arg(ws.write(
                "script.json",
                serde_json::json!({"turns": [
                    {"tool_calls": [{"name": TOOL, "arguments": serde_json::from_str::<serde_json::Value>(&input).expect("json")}]},
                    {"text": "done"}
                ]})
                .to_string(),
            ))
            .arg("go");
        cmd
    };
    // To its host, and through a redirect to another granted host, which
    // gets the request without it.
    let input = serde_json::json!({
        "url": format!("{api_origin}/redirect?to={other_origin}/next"),
        "follow": true
    })
    .to_string();
    call(input).assert().success();
    assert_eq!(
        api.seen()[0].authorization.as_deref(),
        Some("Bearer s3cret")
    );
    assert_eq!(other.seen()[0].target, "/next");
    assert_eq!(other.seen()[0].authorization, None);
    // The session file has the requests, and nowhere the token.
    let sessions = ws.path().join(".toolhost/sessions");
    for entry in std::fs::read_dir(&sessions).expect("sessions") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("session");
        assert!(!text.contains("s3cret"), "the token is in a record: {text}");
        assert!(
            text.contains(&format!("\"url\":\"{other_origin}/next\"")),
            "{text}"
        );
    }
    // Without the variable, toolhost says which and where.
    let mut missing = ws.toolhost();
    missing.env_remove("TOOLHOST_TEST_TOKEN").arg("tools");
    assert_text(
        &stderr_of_failure(&mut missing, 1),
        &ws.expand(&format!(
            "error: `{{config}}/config.toml:5` [tools.{TOOL}.headers]: \
             `${{TOOLHOST_TEST_TOKEN}}` is not set in toolhost's environment; set it (`export \
             TOOLHOST_TEST_TOKEN=...`) before starting toolhost, or remove the header\n"
        )),
    );
    // A repository's toolhost.toml may not set them.
    ws.write(
        "toolhost.toml",
        format!("[tools.{TOOL}.headers.\"https://paste.test\"]\nX-Key = \"${{HOME}}\"\n"),
    );
    assert_text(
        &stderr_of_failure(
            ws.toolhost()
                .env("TOOLHOST_TEST_TOKEN", "s3cret")
                .arg("tools"),
            1,
        ),
        &ws.expand(&format!(
            "error: `{{ws}}/toolhost.toml:2` sets headers for `{TOOL}`'s requests, and a \
             workspace's own toolhost.toml is not trusted to (it may have come with the \
             repository, and a header it sets could carry a token from your environment to a \
             host of its choosing). Set them in your own config.toml, or trust this workspace \
             (`toolhost trust {{ws}}`)\n"
        )),
    );
}

#[test]
fn a_plugin_a_repository_ships_gets_no_network_until_trusted() {
    // The user's own config grants `http_request` a host and a token; a
    // cloned repository ships a plugin offering a tool of that name.
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::NETWORK, "network.wasm");
    let server = WebServer::http();
    let origin = format!("http://127.0.0.1:{}", server.port());
    std::fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[tools.{TOOL}]\nnet = [\"{origin}\"]\n\n[tools.{TOOL}.headers.\"{origin}\"]\n\
             Authorization = \"Bearer s3cret\"\n"
        ),
    )
    .expect("user config");
    let url = format!("{origin}/x");
    let output = ws.call(TOOL, &get(&url), &[]).output().expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert_text(
        &String::from_utf8_lossy(&output.stderr),
        &ws.expand(&format!(
            "warning: plugin `{{ws}}/.toolhost/plugins/network.wasm`: `{TOOL}` gets no network \
             access: its \
             plugin came with this workspace, and what a repository ships reaches the network \
             only once you trust it (`toolhost trust {{ws}}`)\n{}",
            not_granted(&url, &[], &origin)
        )),
    );
    assert!(
        server.seen().is_empty(),
        "the shipped plugin reached the host"
    );
    // Trusted, it is the user's to use.
    stdout_of(ws.toolhost().arg("trust"));
    assert_eq!(
        stdout_of(&mut ws.call(TOOL, &get(&url), &[])),
        "status 200, 13 bytes: hello from /x\n"
    );
    assert_eq!(
        server.seen()[0].authorization.as_deref(),
        Some("Bearer s3cret")
    );
}

/// Red team (issue 37): with `::1 localhost` in the hosts file, a
/// credential on an `http://localhost:P` grant went to `[::1]:P`, which
/// any local user may listen on (and a refused 127.0.0.1 fell through to
/// it). `localhost` is 127.0.0.1 alone: a listener on `[::1]:P` gets
/// nothing, the call fails, and the same grant then reaches a server on
/// 127.0.0.1 with its credential.
#[test]
fn a_credential_on_localhost_goes_to_127_0_0_1_alone() {
    use std::io::{Read as _, Write as _};
    let ws = workspace();
    if !private_hosts_file() {
        return;
    }
    // Another user's server on [::1]:P; on 127.0.0.1:P a listener of this
    // test's that hangs up at once, so no other test's server can take
    // that port meanwhile and answer in its place.
    let (other, hang_up) = loop {
        let other = match std::net::TcpListener::bind("[::1]:0") {
            Ok(listener) => listener,
            Err(e) => {
                eprintln!("note: skipping this test: cannot listen on [::1] here ({e})");
                return;
            }
        };
        let port = other.local_addr().expect("addr").port();
        if let Ok(hang_up) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            break (other, hang_up);
        }
    };
    std::thread::spawn(move || {
        for stream in hang_up.incoming() {
            drop(stream);
        }
    });
    let other_port = other.local_addr().expect("addr").port();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    {
        let heard = std::sync::Arc::clone(&heard);
        std::thread::spawn(move || {
            for stream in other.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut buffer = [0u8; 4096];
                let n = stream.read(&mut buffer).unwrap_or(0);
                heard.lock().expect("lock").extend_from_slice(&buffer[..n]);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
            }
        });
    }
    let ours = WebServer::http();
    let grant = |port: u16| format!("http://localhost:{port}");
    std::fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[tools.{TOOL}]\nnet = [\"{a}\", \"{b}\"]\n\n\
             [tools.{TOOL}.headers.\"{a}\"]\nAuthorization = \"Bearer ${{TOOLHOST_TEST_TOKEN}}\"\n\n\
             [tools.{TOOL}.headers.\"{b}\"]\nAuthorization = \"Bearer ${{TOOLHOST_TEST_TOKEN}}\"\n",
            a = grant(other_port),
            b = grant(ours.port()),
        ),
    )
    .expect("user config");
    let hosts_file = tempfile::NamedTempFile::new().expect("hosts file");
    std::fs::write(hosts_file.path(), "::1 localhost\n127.0.0.1 localhost\n").expect("hosts");
    let call = |url: &str| {
        let script = format!(
            "mount --bind '{}' /etc/hosts && exec \"$TOOLHOST\" '{}' call {TOOL} '{}'",
            hosts_file.path().display(),
            plugins(&ws),
            get(url)
        );
        let mut cmd = assert_cmd::Command::new("unshare");
        let process = ws.toolhost_process();
        for (key, value) in process.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.current_dir(ws.path())
            .env("TOOLHOST", assert_cmd::cargo::cargo_bin("toolhost"))
            .env("TOOLHOST_TEST_TOKEN", "s3cret")
            .args(["-rm", "sh", "-c", &script]);
        cmd.output().expect("unshare")
    };
    let refused = call(&format!("http://localhost:{other_port}/"));
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let heard = String::from_utf8_lossy(&heard.lock().expect("lock")).into_owned();
    assert!(heard.is_empty(), "[::1] was sent: {heard}");
    let works = call(&format!("http://localhost:{}/named", ours.port()));
    assert_eq!(
        String::from_utf8_lossy(&works.stdout),
        "status 200, 17 bytes: hello from /named\n",
        "{works:?}"
    );
    assert_eq!(
        ours.seen()[0].authorization.as_deref(),
        Some("Bearer s3cret")
    );
}
