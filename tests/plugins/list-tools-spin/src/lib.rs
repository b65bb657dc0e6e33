//! Spins in `list-tools`, reading the clock, until its deadline: copies of it in a
//! repository's plugins directory must not hold every start for the sum of
//! their limits (`suite/load.rs`).

use std::hint::black_box;

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Spin;

impl Guest for Spin {
    fn list_tools() -> Vec<ToolSpec> {
        // A host call per turn burns little fuel for its time, as a guest
        // waiting on the host would: it is the deadline that stops it.
        loop {
            black_box(std::time::Instant::now());
        }
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok(String::new())
    }
}

export!(Spin);
