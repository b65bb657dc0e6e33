//! GET over `wasi:http`, redirects followed here: each hop is a request of
//! its own, which the host clears against this tool's grants like the
//! first (the host itself never follows one).

use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, IncomingResponse, Method, OutgoingBody, OutgoingRequest,
    Scheme,
};
use wasi::io::streams::StreamError;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// The last response of a GET: where it came from, and what it said.
pub struct Fetched {
    pub url: url::Url,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// GETs `url`, following up to [`MAX_REDIRECTS`] redirects.
pub fn get(url: url::Url) -> Result<Fetched, String> {
    let mut url = url;
    for _ in 0..=MAX_REDIRECTS {
        let response = send(&url).map_err(|code| failure(&url, &code))?;
        let status = response.status();
        let location = header(&response, "location");
        if matches!(status, 301 | 302 | 303 | 307 | 308)
            && let Some(location) = location
        {
            drop(response);
            url = url.join(&location).map_err(|e| {
                format!("{url} redirected to `{location}`, which is not a URL: {e}")
            })?;
            continue;
        }
        let content_type = header(&response, "content-type");
        let body = read_body(response).map_err(|code| failure(&url, &code))?;
        return Ok(Fetched {
            url,
            status,
            content_type,
            body,
        });
    }
    Err(format!(
        "stopped after {MAX_REDIRECTS} redirects; the last pointed to {url}"
    ))
}

/// Why a request to `url` failed, for the model.
fn failure(url: &url::Url, code: &ErrorCode) -> String {
    let why = match code {
        ErrorCode::DnsError(_) => "its host name did not resolve".to_string(),
        ErrorCode::ConnectionRefused => "the server refused the connection".to_string(),
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => {
            "the server did not answer in time".to_string()
        }
        ErrorCode::TlsCertificateError => "the server's TLS certificate was not accepted".into(),
        ErrorCode::TlsProtocolError => "the TLS handshake failed".into(),
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => {
            "toolhost refused the request".into()
        }
        other => format!("{other:?}"),
    };
    format!("cannot fetch {url}: {why}")
}

/// Sends one GET to `url` and waits for its response's head.
fn send(url: &url::Url) -> Result<IncomingResponse, ErrorCode> {
    let internal = |what: &str| ErrorCode::InternalError(Some(what.to_string()));
    let set = |ok: Result<(), ()>, what: &str| ok.map_err(|()| internal(what));
    let headers = Fields::new();
    for (name, value) in [
        (
            "user-agent",
            "toolhost-fetch/1 (+https://github.com/toolhost)",
        ),
        (
            "accept",
            "text/html, application/xhtml+xml, text/plain, application/json;q=0.9, */*;q=0.5",
        ),
    ] {
        headers
            .append(name, value.as_bytes())
            .map_err(|e| internal(&format!("header {name}: {e:?}")))?;
    }
    let request = OutgoingRequest::new(headers);
    set(request.set_method(&Method::Get), "the host refused GET")?;
    let scheme = match url.scheme() {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => return Err(internal(&format!("`{other}` URLs cannot be fetched"))),
    };
    set(
        request.set_scheme(Some(&scheme)),
        "the host refused the scheme",
    )?;
    let authority = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => return Err(internal("the URL has no host")),
    };
    set(
        request.set_authority(Some(&authority)),
        "the host refused the host name",
    )?;
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    };
    set(
        request.set_path_with_query(Some(&path)),
        "the host refused the path",
    )?;
    let body = request.body().map_err(|()| internal("no request body"))?;
    let future = outgoing_handler::handle(request, None)?;
    OutgoingBody::finish(body, None)?;
    future.subscribe().block();
    future
        .get()
        .ok_or_else(|| internal("no response after it was ready"))?
        .map_err(|()| internal("the response was taken twice"))?
}

/// The first value of header `name`, as text.
fn header(response: &IncomingResponse, name: &str) -> Option<String> {
    let values = response.headers().get(name);
    values
        .first()
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// Reads the whole body (the host bounds what one call may read).
fn read_body(response: IncomingResponse) -> Result<Vec<u8>, ErrorCode> {
    let internal = |what: &str| ErrorCode::InternalError(Some(what.to_string()));
    let body = response.consume().map_err(|()| internal("body taken"))?;
    let stream = body.stream().map_err(|()| internal("no body stream"))?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(256 * 1024) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(wasi::http::types::http_error_code(&error)
                    .unwrap_or_else(|| internal(&error.to_debug_string())));
            }
        }
    }
    drop(stream);
    let trailers = IncomingBody::finish(body);
    trailers.subscribe().block();
    match trailers.get() {
        Some(Ok(Err(code))) => Err(code),
        _ => Ok(bytes),
    }
}
