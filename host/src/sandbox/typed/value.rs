//! JSON values <-> component values, in the shapes [`super::schema`]
//! describes. Input has passed the derived schema before it gets here, so
//! an error is rare (an integer written as `1e3` is still accepted); when
//! one happens it names where in the input.

use serde_json::{Map, Value};
use wasmtime::component::{Type, Val};

/// Converts the arguments object into the function's parameters, in order.
/// An absent `option` parameter is `none`.
pub(crate) fn params(input: &Value, params: &[(String, Type)]) -> Result<Vec<Val>, String> {
    let object = input
        .as_object()
        .ok_or_else(|| "the arguments must be an object".to_string())?;
    params
        .iter()
        .map(|(name, ty)| field(object, name, ty, &format!("/{name}")))
        .collect()
}

fn field(object: &Map<String, Value>, name: &str, ty: &Type, at: &str) -> Result<Val, String> {
    match object.get(name) {
        Some(value) => from_json(value, ty, at),
        None if matches!(ty, Type::Option(_)) => Ok(Val::Option(None)),
        None => Err(format!("{at}: missing")),
    }
}

/// The component value of type `ty` that `value` stands for; `at` is the
/// JSON pointer of `value` in the input, for errors.
///
/// Long: one arm per component type, each its JSON form.
pub(crate) fn from_json(value: &Value, ty: &Type, at: &str) -> Result<Val, String> {
    let wrong = |expected: &str| Err(format!("{at}: expected {expected}, got {value}"));
    Ok(match ty {
        Type::Bool => match value.as_bool() {
            Some(b) => Val::Bool(b),
            None => return wrong("a boolean"),
        },
        Type::S8 => Val::S8(int(value, at)?),
        Type::U8 => Val::U8(int(value, at)?),
        Type::S16 => Val::S16(int(value, at)?),
        Type::U16 => Val::U16(int(value, at)?),
        Type::S32 => Val::S32(int(value, at)?),
        Type::U32 => Val::U32(int(value, at)?),
        Type::S64 => Val::S64(int(value, at)?),
        Type::U64 => Val::U64(int(value, at)?),
        Type::Float32 => match value.as_f64() {
            Some(n) if n.abs() <= f64::from(f32::MAX) => Val::Float32(n as f32),
            _ => return wrong("a number in the range of f32"),
        },
        Type::Float64 => match value.as_f64() {
            Some(n) => Val::Float64(n),
            None => return wrong("a number"),
        },
        Type::Char => {
            let mut chars = value.as_str().unwrap_or_default().chars();
            match (value.is_string(), chars.next(), chars.next()) {
                (true, Some(c), None) => Val::Char(c),
                _ => return wrong("a string of one character"),
            }
        }
        Type::String => match value.as_str() {
            Some(s) => Val::String(s.to_string()),
            None => return wrong("a string"),
        },
        Type::List(list) => Val::List(array(value, &list.ty(), None, at)?),
        Type::FixedLengthList(list) => {
            Val::FixedLengthList(array(value, &list.ty(), Some(list.len() as usize), at)?)
        }
        Type::Tuple(tuple) => {
            let types: Vec<Type> = tuple.types().collect();
            let Some(items) = value.as_array().filter(|a| a.len() == types.len()) else {
                return wrong(&format!("an array of {} items", types.len()));
            };
            Val::Tuple(
                items
                    .iter()
                    .zip(&types)
                    .enumerate()
                    .map(|(i, (item, ty))| from_json(item, ty, &format!("{at}/{i}")))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Record(record) => {
            let Some(object) = value.as_object() else {
                return wrong("an object");
            };
            Val::Record(
                record
                    .fields()
                    .map(|f| {
                        let value = field(object, f.name, &f.ty, &format!("{at}/{}", f.name))?;
                        Ok((f.name.to_string(), value))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        Type::Option(option) => {
            let inner = option.ty();
            if value.is_null() {
                Val::Option(None)
            } else if matches!(inner, Type::Option(_)) {
                let (_, payload) = single_key(value, &["some"], at)?;
                Val::Option(Some(Box::new(from_json(
                    payload,
                    &inner,
                    &format!("{at}/some"),
                )?)))
            } else {
                Val::Option(Some(Box::new(from_json(value, &inner, at)?)))
            }
        }
        Type::Result(result) => {
            let (key, payload) = single_key(value, &["ok", "err"], at)?;
            let ty = if key == "ok" {
                result.ok()
            } else {
                result.err()
            };
            let payload = payload_of(payload, ty.as_ref(), &format!("{at}/{key}"))?;
            Val::Result(if key == "ok" {
                Ok(payload)
            } else {
                Err(payload)
            })
        }
        Type::Variant(variant) => {
            if let Some(name) = value.as_str() {
                match variant.cases().find(|c| c.name == name) {
                    Some(case) if case.ty.is_none() => Val::Variant(name.to_string(), None),
                    _ => return wrong("a case of the variant"),
                }
            } else {
                let names: Vec<&str> = variant.cases().map(|c| c.name).collect();
                let (key, payload) = single_key(value, &names, at)?;
                let case = variant
                    .cases()
                    .find(|c| c.name == key)
                    .expect("single_key returns one of the names");
                let payload = payload_of(payload, case.ty.as_ref(), &format!("{at}/{key}"))?;
                Val::Variant(key.to_string(), payload)
            }
        }
        Type::Enum(cases) => match value.as_str() {
            Some(name) if cases.names().any(|n| n == name) => Val::Enum(name.to_string()),
            _ => return wrong("a case of the enum"),
        },
        Type::Flags(flags) => {
            let Some(items) = value.as_array() else {
                return wrong("an array of flag names");
            };
            let mut set = Vec::with_capacity(items.len());
            for item in items {
                match item.as_str() {
                    Some(name) if flags.names().any(|n| n == name) => {
                        if !set.iter().any(|s| s == name) {
                            set.push(name.to_string());
                        }
                    }
                    _ => return wrong("an array of flag names"),
                }
            }
            Val::Flags(set)
        }
        Type::Own(_)
        | Type::Borrow(_)
        | Type::Future(_)
        | Type::Stream(_)
        | Type::ErrorContext
        | Type::Map(_) => return Err(format!("{at}: this type cannot be passed as JSON")),
    })
}

/// An integer that fits `T`, also when written with a zero fraction (`3.0`).
/// A float is taken only where it is exact (up to 2^53): JSON text past the
/// 64-bit range reaches us as a rounded float, which must be refused rather
/// than rounded into range.
fn int<T: TryFrom<i128>>(value: &Value, at: &str) -> Result<T, String> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    let n: Option<i128> = if let Some(n) = value.as_i64() {
        Some(n.into())
    } else if let Some(n) = value.as_u64() {
        Some(n.into())
    } else {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() <= EXACT)
            .map(|f| f as i128)
    };
    n.and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("{at}: expected an integer in the type's range, got {value}"))
}

fn array(value: &Value, ty: &Type, len: Option<usize>, at: &str) -> Result<Vec<Val>, String> {
    let items = value
        .as_array()
        .filter(|items| len.is_none_or(|len| items.len() == len))
        .ok_or_else(|| match len {
            Some(len) => format!("{at}: expected an array of {len} items, got {value}"),
            None => format!("{at}: expected an array, got {value}"),
        })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| from_json(item, ty, &format!("{at}/{i}")))
        .collect()
}

/// The one key of `{"key": payload}`, which must be one of `keys`.
fn single_key<'v>(
    value: &'v Value,
    keys: &[&str],
    at: &str,
) -> Result<(&'v str, &'v Value), String> {
    match value.as_object() {
        Some(object) if object.len() == 1 => {
            let (key, payload) = object.iter().next().expect("one entry");
            if keys.contains(&key.as_str()) {
                return Ok((key, payload));
            }
        }
        _ => {}
    }
    let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    Err(format!(
        "{at}: expected an object with exactly one of the keys {}, got {value}",
        keys.join(", ")
    ))
}

fn payload_of(value: &Value, ty: Option<&Type>, at: &str) -> Result<Option<Box<Val>>, String> {
    match ty {
        Some(ty) => Ok(Some(Box::new(from_json(value, ty, at)?))),
        None if value.is_null() => Ok(None),
        None => Err(format!(
            "{at}: expected null (this case has no payload), got {value}"
        )),
    }
}

/// The JSON of a component value of type `ty`.
pub(crate) fn to_json(val: &Val, ty: &Type) -> Value {
    match (val, ty) {
        (Val::Bool(b), _) => Value::Bool(*b),
        (Val::S8(n), _) => (*n).into(),
        (Val::U8(n), _) => (*n).into(),
        (Val::S16(n), _) => (*n).into(),
        (Val::U16(n), _) => (*n).into(),
        (Val::S32(n), _) => (*n).into(),
        (Val::U32(n), _) => (*n).into(),
        (Val::S64(n), _) => (*n).into(),
        (Val::U64(n), _) => (*n).into(),
        // Through its shortest decimal form, so `1.1` comes back as `1.1`.
        (Val::Float32(n), _) => float(n.to_string().parse().unwrap_or(f64::NAN)),
        (Val::Float64(n), _) => float(*n),
        (Val::Char(c), _) => Value::String(c.to_string()),
        (Val::String(s), _) => Value::String(s.clone()),
        (Val::List(items), Type::List(list)) => {
            let ty = list.ty();
            Value::Array(items.iter().map(|v| to_json(v, &ty)).collect())
        }
        (Val::FixedLengthList(items), Type::FixedLengthList(list)) => {
            let ty = list.ty();
            Value::Array(items.iter().map(|v| to_json(v, &ty)).collect())
        }
        (Val::Tuple(items), Type::Tuple(tuple)) => Value::Array(
            items
                .iter()
                .zip(tuple.types())
                .map(|(v, ty)| to_json(v, &ty))
                .collect(),
        ),
        (Val::Record(fields), Type::Record(record)) => Value::Object(
            fields
                .iter()
                .zip(record.fields())
                .filter(|((_, v), _)| !matches!(v, Val::Option(None)))
                .map(|((name, v), f)| (name.clone(), to_json(v, &f.ty)))
                .collect(),
        ),
        (Val::Option(None), _) => Value::Null,
        (Val::Option(Some(v)), Type::Option(option)) => {
            let inner = option.ty();
            let json = to_json(v, &inner);
            if matches!(inner, Type::Option(_)) {
                serde_json::json!({ "some": json })
            } else {
                json
            }
        }
        (Val::Result(result), Type::Result(ty)) => match result {
            Ok(v) => keyed("ok", v.as_deref(), ty.ok().as_ref()),
            Err(v) => keyed("err", v.as_deref(), ty.err().as_ref()),
        },
        (Val::Variant(name, payload), Type::Variant(variant)) => {
            let case = variant.cases().find(|c| c.name == name);
            match (payload, case.and_then(|c| c.ty)) {
                (Some(v), Some(ty)) => keyed(name, Some(v), Some(&ty)),
                _ => Value::String(name.clone()),
            }
        }
        (Val::Enum(name), _) => Value::String(name.clone()),
        (Val::Flags(names), _) => names.iter().map(|n| Value::String(n.clone())).collect(),
        // A value that does not match its type, or one that cannot be
        // JSON; the loader never lets such a function be a tool.
        _ => Value::Null,
    }
}

fn keyed(key: &str, val: Option<&Val>, ty: Option<&Type>) -> Value {
    let payload = match (val, ty) {
        (Some(v), Some(ty)) => to_json(v, ty),
        _ => Value::Null,
    };
    let mut object = Map::new();
    object.insert(key.to_string(), payload);
    Value::Object(object)
}

/// JSON has no NaN or infinities; they are spelt as strings.
fn float(n: f64) -> Value {
    if n.is_nan() {
        Value::String("NaN".into())
    } else if n.is_infinite() {
        Value::String(if n > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}
