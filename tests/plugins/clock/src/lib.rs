//! A plugin that reads its monotonic clock: `host/tests/suite/spares.rs`
//! holds that a call on an instance made ahead sees a clock that started
//! with the call, not one that has counted since the previous call ended
//! (the gap would tell each call when the last one ended).

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Clock;

impl Guest for Clock {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "clock".into(),
            description: "Return the monotonic clock's reading, in nanoseconds.".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok(monotonic_ns().to_string())
    }
}

/// `wasi:clocks/monotonic-clock.now`, through wasi-libc.
fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer.
    let got = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    assert_eq!(got, 0, "clock_gettime failed");
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

export!(Clock);
