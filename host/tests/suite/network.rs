//! The network: a plugin that sends raw `wasi:http` requests (what a
//! JavaScript tool's `fetch` turns into) loads, and every request fails
//! inside the guest with `HTTP-request-denied` without a connection being
//! made.

use std::net::TcpListener;

use super::common::{Workspace, stderr_of_failure, test_plugins};

#[test]
fn every_outgoing_http_request_is_denied_inside_the_guest() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::NETWORK, "network.wasm");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let authority = listener.local_addr().expect("addr").to_string();

    for input in [
        format!(r#"{{"authority":"{authority}"}}"#),
        format!(
            r#"{{"method":"POST","authority":"{authority}","path":"/upload","body":"secret"}}"#
        ),
        r#"{"authority":"example.com:80"}"#.to_string(),
    ] {
        let err = stderr_of_failure(&mut ws.call("http_request", &input, &[]), 1);
        assert_eq!(
            err, "error: `http_request` failed: wasi:http error: ErrorCode::HttpRequestDenied\n",
            "{input}"
        );
    }
    assert!(
        listener.accept().is_err(),
        "no request may reach the listener"
    );
}
