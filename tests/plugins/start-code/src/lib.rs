//! A plugin whose start code reaches the host: its `_initialize`, which
//! runs while the component is instantiated, appends a line to
//! `start-code.log` in the directory it may write. `host/tests/suite/spares.rs` holds that no
//! such write happens outside a call when instances are made ahead of
//! calls, and that each call still sees its grants: its tool `start_code`
//! answers whether that write went through.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

static WROTE: AtomicBool = AtomicBool::new(false);

/// wit-component makes the component call a module's `_initialize` when
/// it is instantiated (a constructor would run only at the first export
/// call, inside a call).
#[unsafe(no_mangle)]
pub extern "C" fn _initialize() {
    let wrote = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open("start-code.log")
        .and_then(|mut log| log.write_all(b"instantiated\n"))
        .is_ok();
    WROTE.store(wrote, Ordering::SeqCst);
}

struct StartCode;

impl Guest for StartCode {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "start_code".into(),
            description: "Say whether the start code wrote its line.".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            read_only: false,
        }]
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok(if WROTE.load(Ordering::SeqCst) {
            "wrote".into()
        } else {
            "could not write".into()
        })
    }
}

export!(StartCode);
