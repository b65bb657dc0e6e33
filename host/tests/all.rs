//! Integration tests: one binary, one module per area (as in Codex's
//! `exec/tests/all.rs`). Most drive the real `toolhost` binary; the hostile
//! suite drives the library so it can check that the same process survives.

mod suite;
