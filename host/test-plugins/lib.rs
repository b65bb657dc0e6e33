//! The test fixtures of `tests/plugins/`, built for `wasm32-wasip2` by this
//! crate's build script: one path constant each (`ECHO` for
//! `tests/plugins/echo`). The host's tests and benches depend on it; the
//! host's own build does not, so a user's build compiles no fixture.

include!(concat!(env!("OUT_DIR"), "/test_plugins.rs"));
