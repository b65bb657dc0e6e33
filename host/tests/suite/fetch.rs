//! The `fetch` standard tool against local servers: an article-sized page
//! as readable Markdown, fast; a 5 MB page a window at a time; redirects
//! followed within the grants and refused past them; and no network, nor
//! any file, until the user grants it.

use std::time::Duration;

use toolhost::sandbox::{CallOptions, NetGrant, Sandbox, SandboxOptions};

use super::common::web::{WebServer, numbered_lines};
use super::common::{Workspace, assert_text, stderr_of_failure, stdout_of};

/// What `fetch` prints under `--allow-net fetch=GRANT` for `input`.
fn fetch(ws: &Workspace, grant: &str, input: serde_json::Value) -> String {
    stdout_of(&mut ws.call(
        "fetch",
        &input.to_string(),
        &["--allow-net", &format!("fetch={grant}")],
    ))
}

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/web")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn an_article_comes_back_as_readable_markdown() {
    let ws = Workspace::new();
    let server = WebServer::http();
    let origin = format!("http://127.0.0.1:{}", server.port());
    let url = format!("{origin}/page/article.html");
    let got = fetch(&ws, &origin, serde_json::json!({ "url": url }));
    let expected = format!(
        "URL: {url}\nStatus: 200\nContent-Type: text/html; charset=utf-8\n\n{}",
        fixture("article.md").replace("{origin}", &origin)
    );
    assert_text(&got, &expected);
}

#[test]
fn a_redirect_chain_within_the_grants_is_followed_and_one_past_them_is_refused() {
    let ws = Workspace::new();
    let server = WebServer::http();
    let other = WebServer::http();
    let origin = format!("http://127.0.0.1:{}", server.port());
    let chain = format!("{origin}/redirect?to=/redirect?to={origin}/landing");
    assert_eq!(
        fetch(&ws, &origin, serde_json::json!({ "url": chain })),
        format!(
            "URL: {origin}/landing\nStatus: 200\nContent-Type: (none given)\n\nhello from /landing\n"
        )
    );
    let away = format!("http://127.0.0.1:{}/secret", other.port());
    let refused = stderr_of_failure(
        &mut ws.call(
            "fetch",
            &serde_json::json!({ "url": format!("{origin}/redirect?to={away}") }).to_string(),
            &["--allow-net", &format!("fetch={origin}")],
        ),
        1,
    );
    assert_text(
        &refused,
        &format!(
            "error: `fetch` may not reach `GET {away}`: no network grant of this tool matches \
             it. This tool may reach only `{origin}`. If this request is needed, ask the user, \
             who can allow it with `--allow-net fetch=http://127.0.0.1:{}`.\n",
            other.port()
        ),
    );
    assert!(other.seen().is_empty());
}

#[test]
fn without_a_grant_the_model_reads_why_and_fetch_has_no_files() {
    let ws = Workspace::new();
    let server = WebServer::http();
    let url = format!("http://127.0.0.1:{}/page/article.html", server.port());
    assert_text(
        &stderr_of_failure(
            &mut ws.call("fetch", &serde_json::json!({ "url": url }).to_string(), &[]),
            1,
        ),
        &format!(
            "error: `fetch` may not reach `GET {url}`: no network grant of this tool matches it. \
             This tool has no network access. If this request is needed, ask the user, who can \
             allow it with `--allow-net fetch=http://127.0.0.1:{}`.\n",
            server.port()
        ),
    );
    assert!(server.seen().is_empty());
    // No directory either, even with a grant every other tool gets.
    let listed: serde_json::Value = serde_json::from_str(&stdout_of(ws.toolhost().args([
        "--allow-read",
        ".",
        "tools",
        "--json",
    ])))
    .expect("json");
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    let of = |name: &str| tools.iter().find(|t| t["name"] == name).cloned();
    let fetch = of("fetch").expect("fetch listed");
    assert_eq!(
        (&fetch["grants"], &fetch["net"]),
        (&serde_json::json!([]), &serde_json::json!([]))
    );
    assert_eq!(
        of("read_file").expect("read_file")["grants"][0]["path"],
        "."
    );
}

#[test]
fn an_error_status_is_an_error_the_model_can_read() {
    let ws = Workspace::new();
    let server = WebServer::http();
    let origin = format!("http://127.0.0.1:{}", server.port());
    let url = format!("{origin}/status/404");
    assert_text(
        &stderr_of_failure(
            &mut ws.call(
                "fetch",
                &serde_json::json!({ "url": url }).to_string(),
                &["--allow-net", &format!("fetch={origin}")],
            ),
            1,
        ),
        &format!(
            "error: `fetch` failed: URL: {url}\nStatus: 404\nContent-Type: text/plain\n\nno page \
             here (404)\n"
        ),
    );
}

/// A sandbox in this process with the standard tools, `fetch` granted
/// `grant`.
async fn sandbox(grant: &str) -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().expect("workspace");
    let mut options = SandboxOptions::read_only(dir.path().canonicalize().expect("canonical"));
    options.cache_dir = Some(super::common::shared_cache());
    let mut policy = options.policy.defaults.clone();
    policy.fs.grants.clear();
    policy.net.grants = vec![NetGrant::parse(grant).expect("grant")];
    options.policy.per_tool.insert("fetch".into(), policy);
    let sandbox = Sandbox::load(options).await.expect("sandbox");
    (dir, sandbox)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5_mb_page_is_read_a_window_at_a_time_and_an_article_takes_little_guest_time() {
    let server = WebServer::http();
    let origin = format!("http://127.0.0.1:{}", server.port());
    let (_dir, sandbox) = sandbox(&origin).await;
    let size = 5_000_000;
    let url = format!("{origin}/text/{size}");
    let whole = String::from_utf8(numbered_lines(size)).expect("ascii");
    let head = format!("URL: {url}\nStatus: 200\nContent-Type: text/plain\n\n");
    let call = |input: serde_json::Value| {
        let sandbox = &sandbox;
        async move {
            let report = sandbox
                .call("fetch", &input.to_string(), &CallOptions::default())
                .await;
            match report.outcome {
                toolhost::sandbox::ToolOutcome::Ok(text) => text,
                other => panic!("{input}: {other:?}"),
            }
        }
    };
    assert_eq!(
        call(serde_json::json!({ "url": url })).await,
        format!(
            "{head}{}\n\n[Cut at character 20000 of {size}. Call fetch again with \
             start_index=20000 to read on.]",
            &whole[..20_000]
        )
    );
    assert_eq!(
        call(serde_json::json!({ "url": url, "start_index": 20_000, "max_length": 100 })).await,
        format!(
            "{head}{}\n\n[Cut at character 20100 of {size}. Call fetch again with \
             start_index=20100 to read on.]",
            &whole[20_000..20_100]
        )
    );
    let last = size - 30;
    assert_eq!(
        call(serde_json::json!({ "url": url, "start_index": last })).await,
        format!("{head}{}", &whole[last..])
    );

    // The article, warm: the guest's whole call, fetch and conversion.
    let article = serde_json::json!({ "url": format!("{origin}/page/article.html") }).to_string();
    let mut times = Vec::new();
    for _ in 0..5 {
        let report = sandbox
            .call("fetch", &article, &CallOptions::default())
            .await;
        assert!(!report.is_error(), "{:?}", report.outcome);
        times.push(report.stats.duration);
    }
    times.sort();
    let median = times[times.len() / 2];
    eprintln!("fetch of the article: median {median:?} of {times:?}");
    assert!(
        median < Duration::from_millis(100),
        "the article took {median:?} of guest time"
    );
}
