//! Panics in `list-tools`: toolhost must skip this plugin at load, report
//! the trap with the file's path, and load the others.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Trap;

impl Guest for Trap {
    fn list_tools() -> Vec<ToolSpec> {
        panic!("list-tools exploded on purpose")
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok(String::new())
    }
}

export!(Trap);
