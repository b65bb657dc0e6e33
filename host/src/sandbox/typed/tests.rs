//! Discovery, schemas and conversions, on the types of the real `typed`
//! fixture component (tests/plugins/typed): wasmtime's `Type`s only come
//! from a compiled component.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use wasmtime::component::{Component, Type};

use super::schema::{self, Direction};
use super::{Discovered, discover, docs::Docs, value};

fn discovered() -> &'static Discovered {
    static DISCOVERED: OnceLock<Discovered> = OnceLock::new();
    DISCOVERED.get_or_init(|| {
        // Built by host/test-plugins, a dev-dependency: the tests' only.
        let typed = std::fs::read(toolhost_test_plugins::TYPED).expect("the typed fixture");
        let engine =
            crate::sandbox::engine::engine(crate::sandbox::Tier::Optimized).expect("engine");
        let component = Component::new(&engine, &typed).expect("the fixture compiles");
        discover(&engine, &component, &Docs::of_component(&typed))
    })
}

fn function(name: &str) -> &'static super::TypedFunction {
    discovered()
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function `{name}`"))
}

#[test]
fn every_function_is_a_tool_named_in_snake_case_and_qualified_only_on_a_clash() {
    let names: Vec<&str> = discovered()
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    for expected in [
        "read_file",
        "write_file",
        "add",
        "echo_ints",
        "greet",
        "nothing",
        "describe",
        "echo_record",
        "echo_variant",
        "echo_flags",
        "echo_result",
        "area",
        "shapes_describe",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    assert!(!names.contains(&"make_counter"), "{names:?}");
    assert_eq!(
        function("shapes_describe").wit_name,
        "toolhost-test:typed/shapes@0.1.0#describe"
    );
    assert_eq!(
        discovered().skipped,
        vec![
            "the functions of resource `toolhost-test:typed/shapes@0.1.0#counter` are not tools: \
             a tool call cannot hold a resource"
                .to_string(),
            "function `toolhost-test:typed/shapes@0.1.0#make-counter` is not a tool: its result is \
             or holds a resource"
                .to_string(),
        ]
    );
}

#[test]
fn without_docs_the_description_is_the_signature() {
    assert_eq!(
        function("read_file").description,
        "Calls the component's function `read-file(path: string) -> result<string, string>`."
    );
}

#[test]
fn the_input_schema_is_exact() {
    assert_eq!(
        function("greet").input_schema,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "title": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            },
            "required": ["name"],
            "additionalProperties": false,
        })
    );
    assert_eq!(
        function("add").input_schema["properties"]["a"],
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
    );
    assert_eq!(
        function("echo_flags").input_schema["properties"]["p"],
        json!({
            "type": "array",
            "items": {"type": "string", "enum": ["read", "write", "exec"]},
            "uniqueItems": true,
        })
    );
    assert_eq!(
        function("echo_variant").input_schema["properties"]["s"]["oneOf"][2],
        json!({"const": "dot"})
    );
}

#[test]
fn the_output_schema_wraps_the_ok_value() {
    assert_eq!(
        function("read_file").output_schema,
        json!({
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
            "additionalProperties": false,
        })
    );
    assert_eq!(
        function("nothing").output_schema["properties"]["result"],
        json!({"type": "null"})
    );
}

/// Every type of the parameters and results of the functions `pick`
/// selects, and all the types inside them.
fn types_of(pick: impl Fn(&super::TypedFunction) -> bool) -> Vec<Type> {
    fn walk(ty: &Type, out: &mut Vec<Type>) {
        if out.contains(ty) {
            return;
        }
        out.push(ty.clone());
        match ty {
            Type::List(l) => walk(&l.ty(), out),
            Type::FixedLengthList(l) => walk(&l.ty(), out),
            Type::Option(o) => walk(&o.ty(), out),
            Type::Tuple(t) => t.types().for_each(|t| walk(&t, out)),
            Type::Record(r) => r.fields().for_each(|f| walk(&f.ty, out)),
            Type::Variant(v) => v.cases().filter_map(|c| c.ty).for_each(|t| walk(&t, out)),
            Type::Result(r) => r
                .ok()
                .into_iter()
                .chain(r.err())
                .for_each(|t| walk(&t, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for f in discovered().functions.iter().filter(|f| pick(f)) {
        for (_, ty) in &f.params {
            walk(ty, &mut out);
        }
        if let Some(ty) = &f.result {
            walk(ty, &mut out);
        }
    }
    out
}

fn types() -> &'static [Type] {
    static TYPES: OnceLock<Vec<Type>> = OnceLock::new();
    TYPES.get_or_init(|| types_of(|_| true))
}

/// A kind of type and how to recognise it.
type Kind = (&'static str, fn(&Type) -> bool);

#[test]
fn the_fixture_covers_every_type_at_the_world_level_and_in_an_interface() {
    let world = types_of(|f| !f.wit_name.contains('#'));
    let interface = types_of(|f| f.wit_name.contains('#'));
    for (level, types) in [("world", world), ("interface", interface)] {
        let has = |pred: fn(&Type) -> bool| types.iter().any(pred);
        let kinds: [Kind; 14] = [
            ("bool", |t| matches!(t, Type::Bool)),
            ("s8", |t| matches!(t, Type::S8)),
            ("u64", |t| matches!(t, Type::U64)),
            ("f32 or f64", |t| matches!(t, Type::Float32 | Type::Float64)),
            ("char", |t| matches!(t, Type::Char)),
            ("string", |t| matches!(t, Type::String)),
            ("list", |t| matches!(t, Type::List(_))),
            ("tuple", |t| matches!(t, Type::Tuple(_))),
            ("record", |t| matches!(t, Type::Record(_))),
            ("variant", |t| matches!(t, Type::Variant(_))),
            ("enum", |t| matches!(t, Type::Enum(_))),
            ("flags", |t| matches!(t, Type::Flags(_))),
            ("option", |t| matches!(t, Type::Option(_))),
            ("result", |t| matches!(t, Type::Result(_))),
        ];
        for (kind, pred) in kinds {
            assert!(has(pred), "no {kind} at the {level} level");
        }
    }
}

/// Any JSON value of type `ty`, in the documented shape.
fn arb(ty: &Type) -> BoxedStrategy<Value> {
    let ty = ty.clone();
    match &ty {
        Type::Bool => any::<bool>().prop_map(Value::from).boxed(),
        Type::S8 => any::<i8>().prop_map(Value::from).boxed(),
        Type::U8 => any::<u8>().prop_map(Value::from).boxed(),
        Type::S16 => any::<i16>().prop_map(Value::from).boxed(),
        Type::U16 => any::<u16>().prop_map(Value::from).boxed(),
        Type::S32 => any::<i32>().prop_map(Value::from).boxed(),
        Type::U32 => any::<u32>().prop_map(Value::from).boxed(),
        Type::S64 => any::<i64>().prop_map(Value::from).boxed(),
        Type::U64 => any::<u64>().prop_map(Value::from).boxed(),
        Type::Float32 => proptest::num::f32::NORMAL
            .prop_map(|f| f.to_string().parse::<f64>().expect("f32 text is an f64"))
            .prop_map(Value::from)
            .boxed(),
        Type::Float64 => proptest::num::f64::NORMAL.prop_map(Value::from).boxed(),
        Type::Char => any::<char>()
            .prop_map(|c| Value::from(c.to_string()))
            .boxed(),
        Type::String => any::<String>().prop_map(Value::from).boxed(),
        Type::List(l) => proptest::collection::vec(arb(&l.ty()), 0..4)
            .prop_map(Value::from)
            .boxed(),
        Type::FixedLengthList(l) => proptest::collection::vec(arb(&l.ty()), l.len() as usize)
            .prop_map(Value::from)
            .boxed(),
        Type::Tuple(t) => {
            let items: Vec<BoxedStrategy<Value>> = t.types().map(|t| arb(&t)).collect();
            items.prop_map(Value::from).boxed()
        }
        Type::Record(r) => {
            let fields: Vec<BoxedStrategy<(String, Value)>> = r
                .fields()
                .map(|f| {
                    let name = f.name.to_string();
                    arb(&f.ty).prop_map(move |v| (name.clone(), v)).boxed()
                })
                .collect();
            // A `none` field is written by leaving it out.
            fields
                .prop_map(|fields| {
                    Value::Object(fields.into_iter().filter(|(_, v)| !v.is_null()).collect())
                })
                .boxed()
        }
        Type::Option(o) => {
            let inner = o.ty();
            let nested = matches!(inner, Type::Option(_));
            prop_oneof![
                Just(Value::Null),
                arb(&inner).prop_map(move |v| if nested { json!({ "some": v }) } else { v }),
            ]
            .boxed()
        }
        Type::Result(r) => {
            let side = |key: &'static str, ty: Option<Type>| match ty {
                Some(ty) => arb(&ty).prop_map(move |v| json!({ key: v })).boxed(),
                None => Just(json!({ key: null })).boxed(),
            };
            prop_oneof![side("ok", r.ok()), side("err", r.err())].boxed()
        }
        Type::Variant(v) => {
            let cases: Vec<BoxedStrategy<Value>> = v
                .cases()
                .map(|c| {
                    let name = c.name.to_string();
                    match c.ty {
                        Some(ty) => arb(&ty)
                            .prop_map(move |v| json!({ name.clone(): v }))
                            .boxed(),
                        None => Just(Value::from(name)).boxed(),
                    }
                })
                .collect();
            proptest::strategy::Union::new(cases).boxed()
        }
        Type::Enum(e) => {
            let names: Vec<Value> = e.names().map(Value::from).collect();
            proptest::sample::select(names).boxed()
        }
        Type::Flags(f) => {
            let names: Vec<String> = f.names().map(str::to_string).collect();
            proptest::collection::vec(any::<bool>(), names.len())
                .prop_map(move |set| {
                    names
                        .iter()
                        .zip(set)
                        .filter(|(_, on)| *on)
                        .map(|(n, _)| Value::from(n.clone()))
                        .collect()
                })
                .boxed()
        }
        other => panic!("the fixture has no {other:?}"),
    }
}

fn valid(schema: &Value, value: &Value) -> bool {
    jsonschema::validator_for(schema)
        .expect("a valid schema")
        .is_valid(value)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// JSON -> component value -> JSON gives the value back, and every
    /// generated value satisfies the derived schema, going in and coming out.
    #[test]
    fn json_round_trips_through_component_values(
        (ty, json) in (0..types().len()).prop_flat_map(|i| (Just(&types()[i]), arb(&types()[i])))
    ) {
        prop_assert!(valid(&schema::of(ty, Direction::Input), &json), "{json} against {:?}", ty);
        let val = value::from_json(&json, ty, "").map_err(TestCaseError::fail)?;
        let back = value::to_json(&val, ty);
        prop_assert_eq!(&back, &json);
        prop_assert!(valid(&schema::of(ty, Direction::Output), &back));
    }
}

#[test]
fn integers_outside_their_range_are_refused_by_the_schema_not_wrapped() {
    let bounds: [(Type, i128, i128); 8] = [
        (Type::S8, i8::MIN.into(), i8::MAX.into()),
        (Type::U8, 0, u8::MAX.into()),
        (Type::S16, i16::MIN.into(), i16::MAX.into()),
        (Type::U16, 0, u16::MAX.into()),
        (Type::S32, i32::MIN.into(), i32::MAX.into()),
        (Type::U32, 0, u32::MAX.into()),
        (Type::S64, i64::MIN.into(), i64::MAX.into()),
        (Type::U64, 0, u64::MAX.into()),
    ];
    for (ty, min, max) in bounds {
        let schema = schema::of(&ty, Direction::Input);
        let number = |n: i128| -> Value { serde_json::from_str(&n.to_string()).expect("number") };
        assert!(
            valid(&schema, &number(min)) && valid(&schema, &number(max)),
            "{ty:?}"
        );
        assert!(!valid(&schema, &json!(1.5)), "{ty:?} fraction");
        for outside in [min - 1, max + 1] {
            let json = number(outside);
            let refused_by_schema = !valid(&schema, &json);
            let converted = value::from_json(&json, &ty, "/n");
            if !matches!(ty, Type::S64 | Type::U64) {
                assert!(refused_by_schema, "{ty:?}: {outside}");
            }
            // Past 64 bits JSON text becomes a rounded float, which can equal
            // the bound; the conversion refuses it instead of rounding.
            assert!(
                refused_by_schema || converted.is_err(),
                "{ty:?}: {outside} became {converted:?}"
            );
            assert!(converted.is_err(), "{ty:?}: {outside} converted");
        }
    }
    let u64_max = value::from_json(&json!(u64::MAX), &Type::U64, "").expect("u64::MAX");
    assert_eq!(
        value::to_json(&u64_max, &Type::U64).to_string(),
        "18446744073709551615"
    );
    assert!(!valid(
        &schema::of(&Type::Float32, Direction::Input),
        &json!(1e39)
    ));
}

#[test]
fn non_finite_results_are_spelt_as_strings() {
    use wasmtime::component::Val;
    assert_eq!(
        value::to_json(&Val::Float64(f64::NAN), &Type::Float64),
        json!("NaN")
    );
    assert_eq!(
        value::to_json(&Val::Float32(f32::NEG_INFINITY), &Type::Float32),
        json!("-Infinity")
    );
    assert!(valid(
        &schema::of(&Type::Float64, Direction::Output),
        &json!("Infinity")
    ));
    assert!(!valid(
        &schema::of(&Type::Float64, Direction::Input),
        &json!("Infinity")
    ));
}
