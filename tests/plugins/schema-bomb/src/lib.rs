//! Offers a tool whose `input-schema` nests 40 levels of `anyOf` over
//! `$ref`s: checking a value that matches no branch would take 2^40 steps.
//! toolhost must refuse it at load, naming its cap on schemas, and load the
//! other plugins.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct SchemaBomb;

const LEVELS: usize = 40;

impl Guest for SchemaBomb {
    fn list_tools() -> Vec<ToolSpec> {
        let mut defs = String::new();
        for level in 0..LEVELS {
            let next = format!("#/$defs/l{}", level + 1);
            defs.push_str(&format!(
                r#""l{level}": {{"anyOf": [{{"$ref": "{next}"}}, {{"$ref": "{next}", "minLength": 1}}]}}, "#
            ));
        }
        defs.push_str(&format!(r#""l{LEVELS}": {{"type": "string"}}"#));
        vec![ToolSpec {
            name: "nested".into(),
            description: "Its schema doubles at every one of 40 levels.".into(),
            input_schema: format!(
                r##"{{"type": "object", "properties": {{"x": {{"$ref": "#/$defs/l0"}}}}, "$defs": {{{defs}}}}}"##
            ),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok("checked".into())
    }
}

export!(SchemaBomb);
