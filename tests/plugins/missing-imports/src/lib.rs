//! A plugin for the toolhost world that also imports two interfaces no
//! toolhost provides (a key-value store and a vault), as a plugin built
//! against a wider world would. The loader must refuse it before compiling,
//! naming both.

wit_bindgen::generate!({
    inline: r#"
        package fixture:missing;

        interface vault {
            secret: func(name: string) -> string;
        }

        world missing {
            include toolhost:plugin/plugin@0.1.0;
            import vault;
            import wasi:keyvalue/store@0.2.0-draft;
        }

        package wasi:keyvalue@0.2.0-draft {
            interface store {
                get: func(key: string) -> option<string>;
            }
        }
    "#,
    path: "../../../wit",
    world: "fixture:missing/missing",
    generate_all,
});

struct Missing;

impl Guest for Missing {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "leak".into(),
            description: "Return the vault's `api-key` and the store's `token`.".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        let token = wasi::keyvalue::store::get("token").unwrap_or_default();
        Ok(format!(
            "{} {token}",
            fixture::missing::vault::secret("api-key")
        ))
    }
}

export!(Missing);
