//! The JSON Schema of a WIT type, in the one JSON shape [`super::value`]
//! converts to and from. Exact and strict: every integer type with its true
//! bounds, no extra properties, option fields not required.
//!
//! | WIT | JSON |
//! |---|---|
//! | `bool` | `true` / `false` |
//! | `u8` ... `s64` | an integer within the type's range |
//! | `f32`, `f64` | a number (`f32` within its range); a result that is not finite is `"NaN"`, `"Infinity"` or `"-Infinity"` |
//! | `char` | a string of one character |
//! | `string` | a string |
//! | `list<T>`, `list<T, N>` | an array (of exactly N) |
//! | `tuple<A, B>` | an array `[a, b]` |
//! | `record` | an object; `option` fields may be left out |
//! | `option<T>` | `null` or the value; `{"some": v}` when T is itself an option |
//! | `result<T, E>` | `{"ok": v}` or `{"err": e}` (`null` when there is no payload) |
//! | `variant` | `"case"` for a case without payload, else `{"case": v}` |
//! | `enum` | the case name as a string |
//! | `flags` | an array of the names that are set |
//!
//! Names (parameters, fields, cases, flags) are spelt as in the WIT.

use serde_json::{Map, Value, json};
use wasmtime::component::Type;

/// Whether the schema describes values going into the guest or coming out:
/// only results can be non-finite floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Input,
    Output,
}

/// What keeps a type from being a tool's parameter or result.
pub(crate) fn unsupported(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::Own(_) | Type::Borrow(_) => Some("a resource"),
        Type::Future(_) => Some("a future"),
        Type::Stream(_) => Some("a stream"),
        Type::ErrorContext => Some("an error-context"),
        Type::Map(_) => Some("a map"),
        Type::List(list) => unsupported(&list.ty()),
        Type::FixedLengthList(list) => unsupported(&list.ty()),
        Type::Option(option) => unsupported(&option.ty()),
        Type::Record(record) => record.fields().find_map(|f| unsupported(&f.ty)),
        Type::Tuple(tuple) => tuple.types().find_map(|t| unsupported(&t)),
        Type::Variant(variant) => variant
            .cases()
            .find_map(|c| c.ty.as_ref().and_then(unsupported)),
        Type::Result(result) => result
            .ok()
            .as_ref()
            .and_then(unsupported)
            .or_else(|| result.err().as_ref().and_then(unsupported)),
        Type::Bool
        | Type::S8
        | Type::U8
        | Type::S16
        | Type::U16
        | Type::S32
        | Type::U32
        | Type::S64
        | Type::U64
        | Type::Float32
        | Type::Float64
        | Type::Char
        | Type::String
        | Type::Enum(_)
        | Type::Flags(_) => None,
    }
}

/// The schema of the object holding named values (a function's parameters,
/// a record's fields): every name a property, required unless an option.
pub(crate) fn object<'a>(
    fields: impl IntoIterator<Item = (&'a str, Type)>,
    direction: Direction,
) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, ty) in fields {
        if !matches!(ty, Type::Option(_)) {
            required.push(Value::String(name.to_string()));
        }
        properties.insert(name.to_string(), of(&ty, direction));
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of one value of `ty` (which [`unsupported`] accepted).
pub(crate) fn of(ty: &Type, direction: Direction) -> Value {
    match ty {
        Type::Bool => json!({"type": "boolean"}),
        Type::S8 => integer(i8::MIN, i8::MAX),
        Type::U8 => integer(u8::MIN, u8::MAX),
        Type::S16 => integer(i16::MIN, i16::MAX),
        Type::U16 => integer(u16::MIN, u16::MAX),
        Type::S32 => integer(i32::MIN, i32::MAX),
        Type::U32 => integer(u32::MIN, u32::MAX),
        Type::S64 => integer(i64::MIN, i64::MAX),
        Type::U64 => integer(u64::MIN, u64::MAX),
        Type::Float32 => float(Some((f64::from(-f32::MAX), f64::from(f32::MAX))), direction),
        Type::Float64 => float(None, direction),
        Type::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        Type::String => json!({"type": "string"}),
        Type::List(list) => json!({"type": "array", "items": of(&list.ty(), direction)}),
        Type::FixedLengthList(list) => json!({
            "type": "array",
            "items": of(&list.ty(), direction),
            "minItems": list.len(),
            "maxItems": list.len(),
        }),
        Type::Tuple(tuple) => {
            let items: Vec<Value> = tuple.types().map(|t| of(&t, direction)).collect();
            json!({
                "type": "array",
                "prefixItems": items,
                "minItems": items.len(),
                "maxItems": items.len(),
            })
        }
        Type::Record(record) => object(record.fields().map(|f| (f.name, f.ty)), direction),
        Type::Option(option) => {
            let inner = option.ty();
            let some = if matches!(inner, Type::Option(_)) {
                single_key("some", Some(&inner), direction)
            } else {
                of(&inner, direction)
            };
            json!({"anyOf": [{"type": "null"}, some]})
        }
        Type::Result(result) => json!({"oneOf": [
            single_key("ok", result.ok().as_ref(), direction),
            single_key("err", result.err().as_ref(), direction),
        ]}),
        Type::Variant(variant) => {
            let cases: Vec<Value> = variant
                .cases()
                .map(|case| match &case.ty {
                    None => json!({"const": case.name}),
                    Some(ty) => single_key(case.name, Some(ty), direction),
                })
                .collect();
            json!({"oneOf": cases})
        }
        Type::Enum(cases) => json!({"type": "string", "enum": cases.names().collect::<Vec<_>>()}),
        Type::Flags(flags) => json!({
            "type": "array",
            "items": {"type": "string", "enum": flags.names().collect::<Vec<_>>()},
            "uniqueItems": true,
        }),
        // Refused by `unsupported` before any schema is asked for.
        Type::Own(_)
        | Type::Borrow(_)
        | Type::Future(_)
        | Type::Stream(_)
        | Type::ErrorContext
        | Type::Map(_) => json!(false),
    }
}

fn integer(min: impl Into<Value>, max: impl Into<Value>) -> Value {
    json!({"type": "integer", "minimum": min.into(), "maximum": max.into()})
}

fn float(range: Option<(f64, f64)>, direction: Direction) -> Value {
    let mut number = json!({"type": "number"});
    if let Some((min, max)) = range
        && direction == Direction::Input
    {
        number["minimum"] = json!(min);
        number["maximum"] = json!(max);
    }
    match direction {
        Direction::Input => number,
        Direction::Output => json!({"anyOf": [
            number,
            {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]},
        ]}),
    }
}

/// `{"key": value}` with exactly that key; `null` when there is no payload.
fn single_key(key: &str, ty: Option<&Type>, direction: Direction) -> Value {
    let value = match ty {
        Some(ty) => of(ty, direction),
        None => json!({"type": "null"}),
    };
    json!({
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": false,
    })
}
