//! The HTTP layer both wire APIs share: POST a JSON body, retry what is
//! transient, and hand back the response body as a byte stream that fails
//! when the server goes quiet.
//!
//! Retry policy (docs/contributing/decisions.md#model-retries): 429, 5xx,
//! connect/reset errors and a missing response within `request_timeout` are
//! retried with exponential backoff and jitter, honouring `Retry-After`
//! (seconds), at most `max_retries` times; every other 4xx is not. A stream that breaks or stalls
//! is retried only when not one byte of its body had arrived: after that the
//! server has already generated (and billed) part of a reply, and the caller
//! should decide. Every wait ends at once when the cancellation token fires.
//!
//! It knows nothing of either API's JSON: the callers build the body and
//! assemble the stream. It never prints; each retry is told to the
//! [`RetryObserver`] of the request it belongs to.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::overflow::Overflow;

use super::ProviderError;

/// Default time to wait for the response headers (and for an error body).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default longest silence inside a streamed body. Generous because
/// reasoning models may think for minutes before their first token.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default longest time a streamed reply may go on without content: a
/// server that sends only comments or empty deltas holds a run no longer.
pub const DEFAULT_CONTENT_TIMEOUT: Duration = Duration::from_secs(120);
/// Default number of retries after the first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 4;
/// Default wait before the first retry; doubled for each further one.
pub const DEFAULT_INITIAL_BACKOFF: Duration = Duration::from_millis(500);
/// The longest computed backoff, before jitter.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest wait a `Retry-After` header can impose; a server asking for
/// more is capped, so a run never hangs for an hour on one header.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How much of a server's error body an error quotes.
pub const ERROR_BODY_CHARS: usize = 300;
/// How much of an error body is read at all.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// Told about each retry of one request before its wait, so whoever made
/// the request can report it (the agent loop turns it into an event).
pub type RetryObserver = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

/// One retry about to happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// 1 for the first retry, up to `max_retries`.
    pub attempt: u32,
    /// How long the client waits before sending again.
    pub wait: Duration,
    /// The failure being retried, as its error message.
    pub reason: String,
}

/// Where and how to send requests. The API key is never printed by `Debug`.
#[derive(Clone)]
pub struct HttpOptions {
    /// The API root without the endpoint path, e.g. `https://api.openai.com/v1`
    /// or `https://api.anthropic.com`; a trailing `/` is ignored.
    pub base_url: String,
    /// Sent as the provider's auth header; `None` sends none (local servers).
    pub api_key: Option<String>,
    /// Longest wait for the response headers; also the connect timeout.
    /// Default [`DEFAULT_REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// Longest silence between two chunks of the body. Default
    /// [`DEFAULT_IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// Retries after the first attempt. Default [`DEFAULT_MAX_RETRIES`].
    pub max_retries: u32,
    /// Wait before the first retry when the server gives no `Retry-After`.
    /// Default [`DEFAULT_INITIAL_BACKOFF`].
    pub initial_backoff: Duration,
    /// Longest time a streamed reply may go on without content (text,
    /// reasoning, a tool call): comments, pings and empty deltas do not
    /// count. Default [`DEFAULT_CONTENT_TIMEOUT`].
    pub content_timeout: Duration,
    /// Why the user's key was not sent to this server (it was chosen by a
    /// file the user does not trust), with the fix; told when the server
    /// then answers 401 or 403. `None` when nothing was withheld.
    pub key_withheld: Option<String>,
}

impl HttpOptions {
    /// Options with every default, for `base_url`.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            initial_backoff: DEFAULT_INITIAL_BACKOFF,
            content_timeout: DEFAULT_CONTENT_TIMEOUT,
            key_withheld: None,
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("content_timeout", &self.content_timeout)
            .field("key_withheld", &self.key_withheld)
            .finish()
    }
}

/// How the API key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <key>` (OpenAI and its copies).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
}

/// Makes *ring* the process's TLS provider (reqwest is built without one,
/// see host/Cargo.toml). Installing twice is harmless: the first one stays.
fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// One provider's HTTP endpoint family: options, auth style and the names
/// its errors use.
#[derive(Debug, Clone)]
pub struct HttpClient {
    options: HttpOptions,
    provider: &'static str,
    key_env: &'static str,
    /// Whether the base URL is the vendor's own API.
    vendor: bool,
    auth: Auth,
    model: String,
    headers: Vec<(&'static str, &'static str)>,
    /// Tells a context overflow from the other 400s.
    overflow: Option<OverflowTest>,
    client: reqwest::Client,
}

/// Reads an error response (status, body) as a context overflow, or not.
pub type OverflowTest = fn(u16, &[u8]) -> Option<Overflow>;

impl HttpClient {
    /// The API root requests go to.
    pub fn base_url(&self) -> &str {
        &self.options.base_url
    }

    /// The wire API's name (`openai`, `anthropic`).
    pub fn provider(&self) -> &'static str {
        self.provider
    }

    /// The model requests name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// A client for `provider`; [`ProviderError::MissingKey`] when
    /// `options` has no key for the vendor's own API (`default_base_url`).
    /// `key_env` and `model` are only named in errors (401/403 and 404), so
    /// the user knows what to fix.
    pub fn new(
        provider: &'static str,
        key_env: &'static str,
        default_base_url: &'static str,
        auth: Auth,
        model: impl Into<String>,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let vendor = same_root(&options.base_url, default_base_url);
        if vendor && options.api_key.is_none() {
            return Err(ProviderError::MissingKey {
                provider,
                base_url: options.base_url,
                key_env,
            });
        }
        install_tls_provider();
        // No redirect is followed, ever: a 3xx would re-send the whole
        // conversation (and a key in any header but `Authorization`) to an
        // address the user never named. `send` makes it an error.
        let client = reqwest::Client::builder()
            .connect_timeout(options.request_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| ProviderError::Client {
                provider,
                detail: format!("building the HTTP client failed: {err}"),
            })?;
        Ok(Self {
            options,
            provider,
            key_env,
            vendor,
            auth,
            model: model.into(),
            headers: Vec::new(),
            overflow: None,
            client,
        })
    }

    /// Adds a header sent with every request (e.g. `anthropic-version`).
    pub fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Reads 400s with `test`, so an overflow is its own error.
    pub fn with_overflow(mut self, test: OverflowTest) -> Self {
        self.overflow = Some(test);
        self
    }

    /// The same endpoint asking for `model`.
    pub fn with_model(&self, model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..self.clone()
        }
    }

    /// Longest time a streamed reply may go on without content.
    pub fn content_timeout(&self) -> Duration {
        self.options.content_timeout
    }

    /// The same endpoint with another content timeout.
    pub fn with_content_timeout(&self, timeout: Duration) -> Self {
        let mut client = self.clone();
        client.options.content_timeout = timeout;
        client
    }

    /// Whether requests go to the vendor's own API (not a local server).
    pub fn is_vendor(&self) -> bool {
        self.vendor
    }

    /// GETs `url` with this client's key and headers and reads its body
    /// (at most [`ERROR_BODY_BYTES`]) as JSON; `None` for anything else: no
    /// answer within `timeout`, an error status, a body that is not JSON.
    /// For what a server may tell about itself, never for a request that
    /// must work.
    pub async fn get_json(&self, url: &str, timeout: Duration) -> Option<Value> {
        let request = self.authorized(self.client.get(url).timeout(timeout));
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let mut stream = response.bytes_stream();
        let mut bytes = Vec::new();
        let read = async {
            while let Some(chunk) = stream.next().await {
                bytes.extend_from_slice(&chunk.ok()?);
                if bytes.len() > ERROR_BODY_BYTES {
                    return None;
                }
            }
            Some(())
        };
        tokio::time::timeout(timeout, read).await.ok()??;
        serde_json::from_slice(&bytes).ok()
    }

    /// `request` with the key (the provider's way) and the headers every
    /// request carries.
    fn authorized(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(key) = &self.options.api_key {
            request = match self.auth {
                Auth::Bearer => request.bearer_auth(key),
                Auth::XApiKey => request.header("x-api-key", key),
            };
        }
        for (name, value) in &self.headers {
            request = request.header(*name, *value);
        }
        request
    }

    /// `base_url` joined with `path`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.options.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    /// POSTs `body` to `path` and runs `read` on the response stream; a
    /// stream that breaks or stalls before its first byte is retried like a
    /// connect error, later ones are returned. `on_retry` is told about each
    /// retry before its wait. `Ok(None)` when `cancel`
    /// fired at any point: whatever `read` had built is dropped.
    pub async fn post_and_read<T, F, Fut>(
        &self,
        path: &str,
        body: &Value,
        cancel: &CancellationToken,
        on_retry: Option<&RetryObserver>,
        mut read: F,
    ) -> Result<Option<T>, ProviderError>
    where
        F: FnMut(ByteStream) -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        let url = self.url(path);
        let mut retries = 0;
        loop {
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => return Ok(None),
                outcome = self.attempt(&url, body, &mut read) => outcome,
            };
            let err = match outcome {
                Ok(value) => return Ok(Some(value)),
                Err(err) => err,
            };
            if !err.is_retryable() {
                return Err(err);
            }
            if retries >= self.options.max_retries {
                return Err(ProviderError::RetriesExhausted {
                    provider: self.provider,
                    attempts: retries + 1,
                    last: Box::new(err),
                });
            }
            retries += 1;
            let wait = match err.retry_after() {
                Some(after) => after.min(MAX_RETRY_AFTER),
                None => backoff(self.options.initial_backoff, retries),
            };
            if let Some(observer) = on_retry {
                observer(&RetryNotice {
                    attempt: retries,
                    wait,
                    reason: err.to_string(),
                });
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Ok(None),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// One request and, on success, one run of `read`.
    async fn attempt<T, F, Fut>(
        &self,
        url: &str,
        body: &Value,
        read: &mut F,
    ) -> Result<T, ProviderError>
    where
        F: FnMut(ByteStream) -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        let response = self.send(url, body).await?;
        let stream = ByteStream::new(response, self.options.idle_timeout);
        read(stream)
            .await
            .map_err(|err| self.classify_stream(url, err))
    }

    /// Sends the request and checks the status.
    async fn send(&self, url: &str, body: &Value) -> Result<reqwest::Response, ProviderError> {
        let request = self.authorized(
            self.client
                .post(url)
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .json(body),
        );
        let timeout = self.options.request_timeout;
        let response = match tokio::time::timeout(timeout, request.send()).await {
            Err(_) => {
                return Err(ProviderError::RequestTimeout {
                    provider: self.provider,
                    url: url.to_owned(),
                    after: timeout,
                });
            }
            Ok(Err(err)) => {
                return Err(ProviderError::Connect {
                    provider: self.provider,
                    url: url.to_owned(),
                    detail: connect_detail(&err),
                });
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            return Err(ProviderError::Redirect {
                provider: self.provider,
                url: url.to_owned(),
                status: status.as_u16(),
                location,
            });
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let (raw, body) = tokio::time::timeout(timeout, error_body(response))
            .await
            .unwrap_or_else(|_| {
                (
                    Vec::new(),
                    "(the error body did not arrive in time)".to_owned(),
                )
            });
        let provider = self.provider;
        let url = url.to_owned();
        let code = status.as_u16();
        if let Some(overflow) = self.overflow.and_then(|test| test(code, &raw)) {
            return Err(ProviderError::ContextOverflow {
                provider,
                url,
                overflow,
                body,
            });
        }
        Err(match code {
            401 | 403 => self.unauthorized(url, code, body),
            404 => ProviderError::NotFound {
                provider,
                hint: without_v1_hint(&url),
                url,
                model: self.model.clone(),
                body,
            },
            _ => ProviderError::Status {
                provider,
                url,
                status: code,
                retry_after,
                body,
            },
        })
    }

    /// The error for a refused key (401/403).
    fn unauthorized(&self, url: String, status: u16, body: String) -> ProviderError {
        ProviderError::Unauthorized {
            provider: self.provider,
            url,
            status,
            key_env: self.key_env,
            vendor: self.vendor,
            key_sent: self.options.api_key.is_some(),
            withheld: self.options.key_withheld.clone(),
            body,
        }
    }

    /// Turns a failure of the byte stream (which the SSE layer wraps as
    /// [`ProviderError::Transport`]) into the variant saying what happened.
    fn classify_stream(&self, url: &str, err: ProviderError) -> ProviderError {
        if let ProviderError::NoContent {
            provider, after, ..
        } = err
        {
            return ProviderError::NoContent {
                provider,
                url: url.to_owned(),
                after,
            };
        }
        let ProviderError::Transport { source, provider } = err else {
            return err;
        };
        match source.downcast::<StreamError>() {
            Ok(stream_err) => match *stream_err {
                StreamError::Idle { after, received } => ProviderError::IdleTimeout {
                    provider: self.provider,
                    url: url.to_owned(),
                    after,
                    received,
                },
                StreamError::Read { source, received } => ProviderError::StreamBroken {
                    provider: self.provider,
                    url: url.to_owned(),
                    received,
                    detail: error_chain(&source),
                },
            },
            Err(source) => ProviderError::Transport { provider, source },
        }
    }
}

/// For a 404 from a base URL without `/v1` (the usual slip with Ollama,
/// vLLM or llama.cpp, which serve the API under it): the base URL to try.
fn without_v1_hint(url: &str) -> String {
    let Some(base) = ["/chat/completions", "/messages"]
        .iter()
        .find_map(|endpoint| url.strip_suffix(endpoint))
    else {
        return String::new();
    };
    if base.ends_with("/v1") || base.contains("/v1/") {
        return String::new();
    }
    format!("; the API is usually served under `/v1`: try `--base-url {base}/v1`")
}

/// Why a request did not connect, for a person: a refused connection (the
/// usual first mistake with a local server) says what to check instead of
/// reqwest's chain, which repeats the URL.
fn connect_detail(err: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(error) = source {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return "connection refused: nothing listens there; is the server running (for \
                    Ollama, `ollama serve`), and are the host and port right?"
                .to_string();
        }
        source = error.source();
    }
    error_chain(err)
}

impl ProviderError {
    /// Whether the HTTP layer sends the request again after this error (the
    /// rule is stated on each variant).
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Connect { .. } | ProviderError::RequestTimeout { .. } => true,
            ProviderError::Status { status, .. } => *status == 429 || *status >= 500,
            ProviderError::IdleTimeout { received, .. }
            | ProviderError::StreamBroken { received, .. } => *received == 0,
            // A failing byte source other than our own response bodies
            // (those are reclassified above): a reset, like `Connect`.
            ProviderError::Transport { .. } => true,
            // Malformed data or streams, 401/403/404, exhausted retries, a
            // bad client, a missing key or script: the same request would
            // fail again.
            _ => false,
        }
    }

    /// The wait the server asked for, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Whether `url` names this machine (`localhost`, 127.0.0.0/8, `::1`).
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    match url.host_str() {
        Some("localhost") => true,
        Some(host) => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

/// Whether two API roots are the same, ignoring a trailing `/`.
fn same_root(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Exponential backoff for retry number `retry` (1-based), capped at
/// [`MAX_BACKOFF`], with jitter in [50 %, 100 %] so clients that failed
/// together do not come back together.
fn backoff(initial: Duration, retry: u32) -> Duration {
    let exponent = retry.saturating_sub(1).min(16);
    let base = initial.saturating_mul(1 << exponent).min(MAX_BACKOFF);
    base.mul_f64(0.5 + 0.5 * jitter())
}

/// A number in [0, 1) that differs between calls. The standard library's
/// randomly keyed hasher is enough for spreading retries; no crypto needed.
fn jitter() -> f64 {
    use std::hash::BuildHasher;
    let hash = std::hash::RandomState::new().hash_one(std::time::SystemTime::now());
    // 53 random bits make an exact f64 fraction.
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// `Retry-After` in seconds (integer or decimal). HTTP dates are ignored:
/// the computed backoff applies instead.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The start of an error response's body, on one line.
async fn error_body(response: reqwest::Response) -> (Vec<u8>, String) {
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = stream.next().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() >= ERROR_BODY_BYTES {
            break;
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut excerpt: String = flat.chars().take(ERROR_BODY_CHARS).collect();
    if excerpt.len() < flat.len() {
        excerpt.push('…');
    }
    if excerpt.is_empty() {
        excerpt.push_str("(empty body)");
    }
    (bytes, excerpt)
}

/// An error with its causes, `: `-joined (reqwest hides the useful part,
/// e.g. "connection refused", in its sources).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Why a [`ByteStream`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// No chunk arrived within the idle timeout.
    #[error("no data for {after:?} after {received} bytes")]
    Idle { after: Duration, received: u64 },
    /// The connection failed (reset, closed before the body's end).
    #[error("the connection failed after {received} bytes: {source}")]
    Read {
        source: reqwest::Error,
        received: u64,
    },
}

/// A response body as chunks, failing with [`StreamError::Idle`] when no
/// chunk arrives within the idle timeout. Ends after its first error.
pub struct ByteStream {
    inner: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    received: u64,
    done: bool,
}

impl ByteStream {
    fn new(response: reqwest::Response, idle: Duration) -> Self {
        Self {
            inner: Box::pin(response.bytes_stream()),
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            received: 0,
            done: false,
        }
    }
}

impl fmt::Debug for ByteStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByteStream")
            .field("idle", &self.idle)
            .field("received", &self.received)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Stream for ByteStream {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match this.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.received += chunk.len() as u64;
                let next = tokio::time::Instant::now() + this.idle;
                this.deadline.as_mut().reset(next);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(source))) => {
                this.done = true;
                Poll::Ready(Some(Err(StreamError::Read {
                    source,
                    received: this.received,
                })))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.done = true;
                    Poll::Ready(Some(Err(StreamError::Idle {
                        after: this.idle,
                        received: this.received,
                    })))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let initial = Duration::from_millis(100);
        for retry in 1..=4 {
            let full = Duration::from_millis(100 << (retry - 1));
            let wait = backoff(initial, retry);
            assert!(wait >= full / 2 && wait <= full, "{retry}: {wait:?}");
        }
        assert!(backoff(initial, 40) <= MAX_BACKOFF);
    }

    #[test]
    fn retry_after_takes_seconds_only() {
        assert_eq!(parse_retry_after("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-3"), None);
    }

    #[test]
    fn only_transient_failures_are_retryable() {
        let status = |status| ProviderError::Status {
            provider: "openai",
            url: "u".into(),
            status,
            retry_after: None,
            body: String::new(),
        };
        assert!(status(429).is_retryable());
        assert!(status(503).is_retryable());
        assert!(!status(400).is_retryable());
        assert!(!status(422).is_retryable());
        let broken = |received| ProviderError::StreamBroken {
            provider: "openai",
            url: "u".into(),
            received,
            detail: String::new(),
        };
        assert!(broken(0).is_retryable());
        assert!(!broken(1).is_retryable());
        let transport = ProviderError::Transport {
            provider: "openai",
            source: Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
        };
        assert!(
            transport.is_retryable(),
            "a reset is retried, as its doc says"
        );
        let refused = ProviderError::Unauthorized {
            provider: "openai",
            url: "u".into(),
            status: 401,
            key_env: "OPENAI_API_KEY",
            vendor: true,
            key_sent: true,
            withheld: None,
            body: String::new(),
        };
        assert!(!refused.is_retryable());
    }

    #[test]
    fn a_refused_key_at_the_vendors_url_says_which_variable_to_set() {
        let refused = |base_url: &str, key: Option<&str>| {
            let client = openai_client(base_url, key).expect("client");
            client.unauthorized("u".into(), 401, "bad key".into())
        };
        let advice = "`openai` at u answered HTTP 401: bad or missing API key: set the \
                      environment variable OPENAI_API_KEY (`export OPENAI_API_KEY=...`) \
                      (server said: bad key)";
        assert_eq!(
            refused("https://api.openai.com/v1", Some("k")).to_string(),
            advice
        );
        assert_eq!(
            refused("https://api.openai.com/v1/", Some("k")).to_string(),
            advice
        );
        assert!(
            refused("http://localhost:11434/v1", None)
                .to_string()
                .contains("the server wants an API key and none was sent"),
        );
    }

    fn openai_client(base_url: &str, key: Option<&str>) -> Result<HttpClient, ProviderError> {
        let mut options = HttpOptions::new(base_url);
        options.api_key = key.map(Into::into);
        HttpClient::new(
            "openai",
            "OPENAI_API_KEY",
            "https://api.openai.com/v1",
            Auth::Bearer,
            "gpt-4o",
            options,
        )
    }

    #[test]
    fn only_the_vendors_own_url_needs_a_key_to_build_a_client() {
        let err = openai_client("https://api.openai.com/v1/", None).expect_err("no key");
        assert!(
            matches!(
                &err,
                ProviderError::MissingKey { key_env: "OPENAI_API_KEY", base_url, .. }
                    if base_url == "https://api.openai.com/v1/"
            ),
            "{err:?}"
        );
        assert!(openai_client("https://api.openai.com/v1", Some("k")).is_ok());
        assert!(openai_client("http://localhost:11434/v1", None).is_ok());
    }

    #[test]
    fn debug_hides_the_api_key() {
        let mut options = HttpOptions::new("http://x");
        options.api_key = Some("sk-secret".into());
        let text = format!("{options:?}");
        assert!(!text.contains("sk-secret"), "{text}");
    }
}
