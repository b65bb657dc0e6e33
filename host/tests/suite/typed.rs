//! A component with typed exports and no `toolhost:plugin` world
//! (tests/plugins/typed, built with wit-bindgen) dropped into a plugins
//! directory: every function is a tool with a schema derived from its WIT
//! types, called through the real binary under the usual grants and limits.

use serde_json::{Value, json};

use super::common::{Workspace, stderr_of_failure, stdout_of, test_plugins};

fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::TYPED, "typed.wasm");
    ws
}

/// The tool's answer on success.
fn ok(ws: &Workspace, tool: &str, input: Value) -> String {
    stdout_of(&mut ws.call(tool, &input.to_string(), &[]))
        .trim_end_matches('\n')
        .to_string()
}

/// The tool's `isError` text (after the load warnings on stderr).
fn error(ws: &Workspace, tool: &str, input: Value, flags: &[&str]) -> String {
    without_warnings(&stderr_of_failure(
        &mut ws.call(tool, &input.to_string(), flags),
        1,
    ))
}

fn without_warnings(stderr: &str) -> String {
    stderr
        .lines()
        .skip_while(|line| line.starts_with("warning: "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_exported_function_is_listed_with_its_derived_schema() {
    let ws = workspace();
    let output = ws
        .toolhost()
        .args(["tools", "--json"])
        .output()
        .expect("run");
    assert!(output.status.success());
    let doc: Value = serde_json::from_slice(&output.stdout).expect("json");
    let tools = doc["tools"].as_array().expect("tools");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no tool {name} in {tools:#?}"))
    };
    // `read-file` meets the standard `read_file` and gets the file's stem.
    assert_eq!(tool("read_file")["plugin"], "builtin:read-file");
    let read = tool("typed_read_file");
    assert_eq!(read["read_only"], false);
    assert_eq!(
        read["input_schema"],
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false,
        })
    );
    assert_eq!(
        read["output_schema"]["properties"]["result"],
        json!({"type": "string"})
    );
    assert_eq!(
        tool("add")["input_schema"]["properties"]["b"],
        json!({"type": "integer", "minimum": 0, "maximum": 18_446_744_073_709_551_615u64})
    );
    // The interface's `describe` is qualified; the world's keeps its name.
    tool("describe");
    tool("shapes_describe");
    assert!(tools.iter().all(|t| t["name"] != "make_counter"));

    // What is not a tool, and one notice for every name that was taken.
    let plugin = ws
        .path()
        .canonicalize()
        .expect("workspace")
        .join(".toolhost/plugins/typed.wasm");
    let plugin = plugin.display();
    assert_eq!(
        String::from_utf8(output.stderr).expect("utf-8"),
        format!(
            "warning: plugin `{plugin}`: the functions of resource `toolhost-test:typed/shapes@0.1.0#counter` \
             are not tools: a tool call cannot hold a resource\n\
             warning: plugin `{plugin}`: function `toolhost-test:typed/shapes@0.1.0#make-counter` is not a \
             tool: its result is or holds a resource\n\
             warning: plugin `{plugin}`: 2 tool names are taken (by `builtin:read-file`: `read_file`; by \
             `builtin:write-file`: `write_file`), so they are offered as `typed_read_file`, \
             `typed_write_file` (set `[plugins.typed] prefix` in toolhost.toml to choose the prefix)\n"
        )
    );
}

/// A plugin whose every name is taken (a second copy of the fixture) still
/// gets one notice for all of them, not one per function.
#[test]
fn taken_names_are_one_notice_per_plugin_however_many() {
    let ws = workspace();
    ws.install_plugin(test_plugins::TYPED, "again.wasm");
    let output = ws.toolhost().arg("tools").output().expect("run");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).expect("utf-8");
    let notices = |plugin: &str| {
        stderr
            .lines()
            .filter(|line| line.contains(&format!("/{plugin}`: ")))
            .map(|line| line.split_once("`: ").expect("a plugin's notice").1)
            .collect::<Vec<_>>()
    };
    // again.wasm loads first and meets the standard tools only.
    assert_eq!(
        notices("again.wasm")[2],
        "2 tool names are taken (by `builtin:read-file`: `read_file`; by `builtin:write-file`: \
         `write_file`), so they are offered as `again_read_file`, `again_write_file` (set \
         `[plugins.again] prefix` in toolhost.toml to choose the prefix)"
    );
    let typed = notices("typed.wasm");
    assert_eq!(typed.len(), 3, "{stderr}");
    assert!(
        typed[2].starts_with("23 tool names are taken (by `")
            && typed[2].contains("again.wasm`: `mix`, `add`, ")
            && typed[2].contains(
                "by `builtin:read-file`: `read_file`; by `builtin:write-file`: `write_file`"
            )
            && typed[2].ends_with(
                ", `typed_shapes_describe`, `typed_echo_scalars_in` (set `[plugins.typed] prefix` \
                 in toolhost.toml to choose the prefix)"
            ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 6, "{stderr}");
}

#[test]
fn scalars_cross_exactly_in_both_directions() {
    let ws = workspace();
    assert_eq!(
        ok(
            &ws,
            "add",
            json!({"a": 18_446_744_073_709_551_614u64, "b": 1})
        ),
        "18446744073709551615"
    );
    assert_eq!(
        ok(
            &ws,
            "echo_ints",
            json!({"a": -128, "b": 255, "c": -32768, "d": 65535, "e": -2_147_483_648i64,
                   "f": 4_294_967_295u32, "g": i64::MIN, "h": u64::MAX})
        ),
        format!(
            "[-128,255,-32768,65535,-2147483648,4294967295,{},{}]",
            i64::MIN,
            u64::MAX
        )
    );
    assert_eq!(
        ok(&ws, "echo_floats", json!({"a": 1.1, "b": -2.5e-300})),
        "[1.1,-2.5e-300]"
    );
    assert_eq!(
        ok(
            &ws,
            "echo_scalars",
            json!({"c": "é", "s": "tab\there", "b": true})
        ),
        r#"["é","tab\there",true]"#
    );
    // A string result is the text itself, not JSON.
    assert_eq!(ok(&ws, "greet", json!({"name": "Ada"})), "Hello, Ada!");
    assert_eq!(
        ok(&ws, "greet", json!({"name": "Ada", "title": "Dr."})),
        "Hello, Dr. Ada!"
    );
    assert_eq!(
        ok(&ws, "greet", json!({"name": "Ada", "title": null})),
        "Hello, Ada!"
    );
    assert_eq!(ok(&ws, "nothing", json!({})), "null");
    assert_eq!(ok(&ws, "describe", json!({})), "the world's describe");
    assert_eq!(
        ok(&ws, "shapes_describe", json!({})),
        "the interface's describe"
    );
}

#[test]
fn compound_types_cross_in_their_documented_shapes() {
    let ws = workspace();
    let cases = [
        (
            "echo_record",
            json!({"p": {"x": 1, "y": -2}}),
            r#"{"x":1,"y":-2}"#,
        ),
        (
            "echo_record",
            json!({"p": {"x": 1, "y": 2, "label": "a"}}),
            r#"{"label":"a","x":1,"y":2}"#,
        ),
        ("echo_variant", json!({"s": "dot"}), "dot"),
        (
            "echo_variant",
            json!({"s": {"circle": 0.5}}),
            r#"{"circle":0.5}"#,
        ),
        (
            "echo_variant",
            json!({"s": {"rect": {"x": 3, "y": 4}}}),
            r#"{"rect":{"x":3,"y":4}}"#,
        ),
        ("echo_enum", json!({"c": "green"}), "green"),
        (
            "echo_flags",
            json!({"p": ["exec", "read"]}),
            r#"["read","exec"]"#,
        ),
        ("echo_flags", json!({"p": []}), "[]"),
        ("echo_option", json!({"o": null}), "null"),
        ("echo_option", json!({}), "null"),
        (
            "echo_option",
            json!({"o": {"some": null}}),
            r#"{"some":null}"#,
        ),
        ("echo_option", json!({"o": {"some": 7}}), r#"{"some":7}"#),
        (
            "echo_list",
            json!({"points": [{"x": 1, "y": 2}, {"x": 3, "y": 4, "label": "b"}]}),
            r#"[{"x":1,"y":2},{"label":"b","x":3,"y":4}]"#,
        ),
        (
            "echo_tuple",
            json!({"t": ["a", 255, false]}),
            r#"["a",255,false]"#,
        ),
        ("echo_result", json!({"r": {"ok": 3}}), r#"[{"ok":3}]"#),
        (
            "echo_result",
            json!({"r": {"err": "no"}}),
            r#"[{"err":"no"}]"#,
        ),
        ("area", json!({"s": {"rect": {"x": 3, "y": 4}}}), "12.0"),
        (
            "echo_scalars_in",
            json!({"a": u64::MAX, "b": -128, "c": "🦀", "f": -0.5, "t": true}),
            r#"[18446744073709551615,-128,"🦀",-0.5,true]"#,
        ),
        // The world's own compound types.
        (
            "mix",
            json!({"p": {"a": 1}, "e": {"click": {"a": 2, "b": "x"}}, "l": "high", "m": ["safe"],
                   "o": 9, "r": {"err": "bad"}, "xs": [-1, 2], "t": [false, 0.25]}),
            r#"[{"a":1},{"click":{"a":2,"b":"x"}},"high",["safe"],9,[{"err":"bad"}],[-1,2],[false,0.25]]"#,
        ),
        (
            "mix",
            json!({"p": {"a": 0, "b": null}, "e": "quit", "l": "low", "m": [],
                   "r": {"ok": 255}, "xs": [], "t": [true, -1e300]}),
            r#"[{"a":0},"quit","low",[],null,[{"ok":255}],[],[true,-1e+300]]"#,
        ),
        (
            "mix",
            json!({"p": {"a": 0}, "e": {"key": "k"}, "l": "low", "m": ["fast", "safe"], "o": null,
                   "r": {"ok": 0}, "xs": [32767], "t": [true, 1.0]}),
            r#"[{"a":0},{"key":"k"},"low",["fast","safe"],null,[{"ok":0}],[32767],[true,1.0]]"#,
        ),
    ];
    for (tool, input, expected) in cases {
        assert_eq!(ok(&ws, tool, input.clone()), expected, "{tool} {input}");
    }
}

#[test]
fn input_outside_the_derived_schema_is_refused_before_the_call() {
    let ws = workspace();
    let cases = [
        ("add", json!({"a": 18_446_744_073_709_551_615u64, "b": 1.5})),
        ("add", json!({"a": -1, "b": 0})),
        ("add", json!({"a": 1})),
        ("add", json!({"a": 1, "b": 2, "c": 3})),
        (
            "echo_ints",
            json!({"a": 128, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": 0}),
        ),
        ("echo_scalars", json!({"c": "ab", "s": "", "b": true})),
        ("echo_enum", json!({"c": "purple"})),
        ("echo_flags", json!({"p": ["read", "read"]})),
        ("echo_variant", json!({"s": {"dot": null}})),
        ("echo_record", json!({"p": {"x": 1}})),
        ("echo_tuple", json!({"t": ["a", 1]})),
        ("echo_result", json!({"r": {"ok": 1, "err": "x"}})),
    ];
    for (tool, input) in cases {
        let text = error(&ws, tool, input.clone(), &[]);
        assert!(
            text.starts_with(&format!(
                "error: the arguments for `{tool}` do not match its input schema"
            )),
            "{tool} {input}: {text}"
        );
    }
    // A number past u64 (JSON text; serde reads it as a float) is refused,
    // never rounded or wrapped into range.
    let past = without_warnings(&stderr_of_failure(
        &mut ws.call("add", r#"{"a": 18446744073709551616, "b": 0}"#, &[]),
        1,
    ));
    assert!(
        past.contains("do not match its input schema") || past.contains("rejected its input"),
        "{past}"
    );
}

#[test]
fn an_err_is_the_tools_failure_and_a_panic_its_crash() {
    let ws = workspace();
    assert_eq!(
        error(&ws, "fail", json!({"message": "the disk is full"}), &[]).trim_end(),
        "error: `fail` failed: the disk is full"
    );
    let missing = error(&ws, "typed_read_file", json!({"path": "missing.txt"}), &[]);
    assert!(
        missing.starts_with("error: `typed_read_file` failed: cannot read missing.txt"),
        "{missing}"
    );
    let crash = error(&ws, "crash", json!({"message": "boom"}), &[]);
    assert!(
        crash.starts_with("error: `crash` crashed:") && crash.contains("boom"),
        "{crash}"
    );
    let overflow = error(&ws, "add", json!({"a": u64::MAX, "b": 1}), &[]);
    assert!(overflow.contains("add overflowed u64"), "{overflow}");
}

#[test]
fn a_typed_tool_reaches_only_its_grants() {
    let ws = workspace();
    ws.write("notes.txt", "line one\nline two\n");
    assert_eq!(
        ok(&ws, "typed_read_file", json!({"path": "notes.txt"})),
        "line one\nline two"
    );
    // Read-only by default: the sandbox refuses the write inside the guest,
    // and the model reads the refusal, which names the flag.
    let text = error(
        &ws,
        "typed_write_file",
        json!({"path": "out.txt", "contents": "x"}),
        &[],
    );
    assert_eq!(
        text,
        "error: access denied: `typed_write_file` may not write `out.txt`: it has no write access \
         to any directory. Only the user can grant it (in toolhost.toml or with --allow-write \
         typed_write_file=DIR)."
    );
    assert!(!ws.path().join("out.txt").exists());

    ws.mkdir("out");
    let written = ws
        .call(
            "typed_write_file",
            &json!({"path": "out/a.txt", "contents": "hello"}).to_string(),
            &["--allow-write", "typed_write_file=out"],
        )
        .output()
        .expect("run");
    assert!(written.status.success(), "{written:?}");
    assert_eq!(ws.read("out/a.txt"), "hello");

    // A protected path stays protected for typed tools too.
    let text = error(
        &ws,
        "typed_write_file",
        json!({"path": "toolhost.toml", "contents": "[defaults]\n"}),
        &["--allow-write", "."],
    );
    assert!(text.contains("is protected"), "{text}");
    assert!(!ws.path().join("toolhost.toml").exists());
}

#[test]
fn the_config_marks_path_parameters_read_only_tools_and_the_prefix() {
    let ws = workspace();
    ws.mkdir("out");
    ws.write(
        "toolhost.toml",
        "[tools.typed_read_file]\nread_only = true\npaths = { path = \"read\" }\n\n\
         [tools.typed_write_file]\npaths = { path = \"write\" }\nwrite = [\"out\"]\n",
    );
    // Checked before the call, with the same text as `x-toolhost-path`.
    let text = error(
        &ws,
        "typed_write_file",
        json!({"path": "elsewhere.txt", "contents": "x"}),
        &[],
    );
    assert!(
        text.starts_with("error: access denied: `typed_write_file` may not write `elsewhere.txt`: it is outside the directories this tool may write: `out`"),
        "{text}"
    );
    // An absolute path inside the workspace is rewritten to the guest's.
    ws.write("a.txt", "A");
    let absolute = ws.path().canonicalize().expect("canonical").join("a.txt");
    assert_eq!(
        ok(
            &ws,
            "typed_read_file",
            json!({"path": absolute.to_str().expect("utf-8 path")})
        ),
        "A"
    );
    let listed: Value =
        serde_json::from_str(&stdout_of(ws.toolhost().args(["tools", "--json"]))).expect("json");
    let read_only = |name: &str| {
        listed["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["read_only"].clone())
    };
    assert_eq!(read_only("typed_read_file"), Some(json!(true)));
    assert_eq!(read_only("typed_write_file"), Some(json!(false)));

    // A configured prefix applies to every tool of the file.
    ws.write("toolhost.toml", "[plugins.typed]\nprefix = \"t\"\n");
    assert_eq!(ok(&ws, "t_add", json!({"a": 1, "b": 2})), "3");
    assert_eq!(ok(&ws, "t_read_file", json!({"path": "a.txt"})), "A");
    let text = error(&ws, "add", json!({"a": 1, "b": 2}), &[]);
    assert!(text.contains("there is no tool named `add`"), "{text}");
}

#[test]
fn plugin_check_shows_the_derived_schemas_and_what_is_not_a_tool() {
    let ws = Workspace::new();
    let out = stdout_of(ws.toolhost().args(["plugin", "check", test_plugins::TYPED]));
    assert!(
        out.starts_with(&format!(
            "ok: `{}` is a component with typed exports, offered as 23 tool(s):\n",
            test_plugins::TYPED
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "  greet (writes): Calls the component's function `greet(name: string, title: option<string>) -> string`.\n    input schema: {\"additionalProperties\":false,"
        ),
        "{out}"
    );
    assert!(out.contains("  note: the functions of resource"), "{out}");
}

#[test]
fn a_prefix_that_cannot_start_a_tool_name_is_a_config_error_at_its_line() {
    let ws = workspace();
    ws.write(
        "toolhost.toml",
        "[limits]\nfuel = 1000000000\n\n[plugins.typed]\nprefix = \"my fs\"\n",
    );
    let err = stderr_of_failure(ws.toolhost().arg("tools"), 1);
    assert!(
        err.contains("toolhost.toml`: [plugins.typed] prefix = \"my fs\" at line 5: a prefix is 1-32 characters of [a-zA-Z0-9_-]"),
        "{err}"
    );
}
