//! A tool's input schema: checked for complexity when the plugin loads, and
//! validated under the call's deadline and cancellation.
//!
//! Validation is host work a plugin controls before any wasm runs: a schema
//! of nested `anyOf`s behind `$ref`s costs time exponential in its depth
//! (40 levels spun for minutes), and no fuel or epoch reaches into the
//! validator. Two bounds hold it:
//!
//! - at load, the schema's size with every local `$ref` expanded in place
//!   (counted with memoisation, so counting is cheap) may not pass
//!   [`MAX_EXPANDED`]: that refuses the exponential schemas outright;
//! - at a call, every subschema carries a [`TICK`] keyword whose check reads
//!   the clock and the call's cancellation every [`TICKS_PER_CHECK`] visits;
//!   past the deadline it unwinds the validator (`resume_unwind`, no panic
//!   hook) and the call ends as a timeout. A schema that is not cheap by
//!   construction (small, no cycles, no regex) or a large input is validated
//!   on a thread of its own, never on the thread that serves other requests;
//!   a schema nested past [`MAX_DEPTH`] is refused at load, so neither
//!   building nor running the validator can overflow the host's stack.

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::time::Instant;

use jsonschema::{Keyword, ValidationError, Validator};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::outcome::SchemaError;

/// At most this many subschemas with every local `$ref` expanded in place.
/// Real tool schemas have tens to a few thousand; each level of a doubling
/// `anyOf` of `$ref`s doubles it, so 17 levels already pass it.
pub const MAX_EXPANDED: u64 = 100_000;

/// At most this many subschemas one inside another, with `$ref`s followed
/// (a recursive schema's cycle counted once): deeper, building or running
/// the validator could overflow the host's stack. A schema's own JSON is
/// at most 128 levels deep (the parser's limit); a chain of `$ref`s is not.
pub(crate) const MAX_DEPTH: usize = 256;

/// The stack of the thread that checks an input against a schema that is
/// not cheap: a recursive schema nests once per level of the input (at
/// most 128), each at most [`MAX_DEPTH`] deep. Only what is used is mapped.
const CHECK_STACK: usize = 64 << 20;

/// The keyword added to every subschema: a deadline check.
const TICK: &str = "x-toolhost-deadline";

/// The clock and the cancellation are read once per this many ticks.
const TICKS_PER_CHECK: u32 = 64;

/// A schema at most this big (expanded), without cycles or regexes, checks
/// an input of at most [`INLINE_INPUT_BYTES`] in well under a millisecond:
/// it is validated where the call runs, without a thread hop.
const INLINE_EXPANDED: u64 = 64;
const INLINE_INPUT_BYTES: usize = 64 * 1024;

/// Keywords whose cost is not bounded by the schema's size alone.
const COSTLY_KEYWORDS: &[&str] = &["pattern", "patternProperties", "uniqueItems", "format"];

/// A tool's compiled input schema and what its validation may cost.
#[derive(Clone)]
pub(crate) struct InputSchema {
    validator: Arc<Validator>,
    /// Cheap by construction: validated inline for small inputs.
    cheap: bool,
}

impl std::fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputSchema")
            .field("cheap", &self.cheap)
            .finish_non_exhaustive()
    }
}

/// Why validation stopped before it had an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    Deadline,
    Cancelled,
}

impl InputSchema {
    /// Compiles `schema`; the error says what is wrong, for a message that
    /// names the tool.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let expansion = Expansion::of(schema);
        if expansion.too_deep {
            return Err(format!(
                "its `input-schema` nests more than {MAX_DEPTH} subschemas deep when its `$ref`s \
                 are followed, which could overflow the host's stack; flatten the schema"
            ));
        }
        if expansion.size > MAX_EXPANDED {
            return Err(format!(
                "its `input-schema` expands to more than {MAX_EXPANDED} subschemas when its \
                 `$ref`s are followed (nested `anyOf`/`oneOf`/`allOf` over `$ref`s double it at \
                 every level), which would take the host minutes to check; flatten the schema"
            ));
        }
        let mut ticked = schema.clone();
        add_ticks(&mut ticked);
        let validator = jsonschema::options()
            .with_keyword(TICK, |_, _, _| Ok(Box::new(Tick)))
            .build(&ticked)
            .map_err(|e| format!("`input-schema` is not a valid JSON Schema: {e}"))?;
        Ok(InputSchema {
            validator: Arc::new(validator),
            cheap: expansion.size <= INLINE_EXPANDED && !expansion.cyclic && !expansion.costly,
        })
    }

    /// At most ten of the ways `input` breaks the schema (none: it is
    /// valid), or why the check stopped first. `input_bytes` is the size of
    /// the text `input` was parsed from.
    pub(crate) async fn validate(
        &self,
        input: Arc<Value>,
        input_bytes: usize,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<Vec<SchemaError>, Stopped> {
        if self.cheap && input_bytes <= INLINE_INPUT_BYTES {
            return errors_before(&self.validator, &input, deadline, cancel);
        }
        let validator = Arc::clone(&self.validator);
        let watched = cancel.clone();
        let (answer, answered) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("toolhost-schema-check".into())
            .stack_size(CHECK_STACK)
            .spawn(move || {
                let _ = answer.send(errors_before(&validator, &input, deadline, &watched));
            });
        if spawned.is_err() {
            // No thread to spare: the check cannot run, as if out of time.
            return Err(Stopped::Deadline);
        }
        // The thread stops at its next tick; the call does not wait for it
        // past the deadline either way.
        tokio::select! {
            answer = answered => answer.unwrap_or(Err(Stopped::Cancelled)),
            () = tokio::time::sleep_until(deadline.into()) => Err(Stopped::Deadline),
            () = cancel.cancelled() => Err(Stopped::Cancelled),
        }
    }
}

/// The validation itself, on the current thread, with the watch set.
fn errors_before(
    validator: &Validator,
    input: &Value,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<Vec<SchemaError>, Stopped> {
    let previous = WATCH.replace(Some(Watch {
        deadline,
        cancel: cancel.clone(),
        ticks: 0,
    }));
    let answer = catch_unwind(AssertUnwindSafe(|| {
        validator
            .iter_errors(input)
            .take(10)
            .map(|e| SchemaError {
                path: e.instance_path().to_string(),
                message: e.to_string(),
            })
            .collect::<Vec<_>>()
    }));
    WATCH.set(previous);
    match answer {
        Ok(errors) => Ok(errors),
        Err(payload) => match payload.downcast::<Stopped>() {
            Ok(stopped) => Err(*stopped),
            Err(other) => resume_unwind(other),
        },
    }
}

/// What the ticks of the validation running on this thread check.
struct Watch {
    deadline: Instant,
    cancel: CancellationToken,
    ticks: u32,
}

thread_local! {
    static WATCH: Cell<Option<Watch>> = const { Cell::new(None) };
}

/// The deadline keyword: valid for every instance, until the deadline or
/// the cancellation, when it unwinds out of the validator.
struct Tick;

impl Tick {
    fn check(&self) {
        let Some(mut watch) = WATCH.take() else {
            return;
        };
        watch.ticks += 1;
        let stopped = if watch.ticks % TICKS_PER_CHECK != 0 {
            None
        } else if watch.cancel.is_cancelled() {
            Some(Stopped::Cancelled)
        } else if Instant::now() >= watch.deadline {
            Some(Stopped::Deadline)
        } else {
            None
        };
        WATCH.set(Some(watch));
        if let Some(stopped) = stopped {
            // No panic hook, no message: the caller catches exactly this.
            resume_unwind(Box::new(stopped));
        }
    }
}

impl<'i> Keyword<'i> for Tick {
    fn validate(&self, _: &'i Value) -> Result<(), ValidationError<'i>> {
        self.check();
        Ok(())
    }

    fn is_valid(&self, _: &'i Value) -> bool {
        self.check();
        true
    }
}

/// The keywords whose values are subschemas: one, a list, or a map of them.
const ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "items",
];
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Where schemas are kept to be referred to, not applied.
const DEFINITIONS: &[&str] = &["$defs", "definitions"];

/// The subschemas directly inside `schema` that apply to an instance, with
/// their JSON pointer tokens (definitions count where a `$ref` uses them).
fn children(schema: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut found = Vec::new();
    for (keyword, value) in schema {
        if DEFINITIONS.contains(&keyword.as_str()) {
            continue;
        }
        let key = escape(keyword);
        match value {
            Value::Object(_) | Value::Bool(_) if ONE.contains(&keyword.as_str()) => {
                found.push((key, value));
            }
            Value::Array(list) if LIST.contains(&keyword.as_str()) => {
                for (i, item) in list.iter().enumerate() {
                    found.push((format!("{key}/{i}"), item));
                }
            }
            Value::Object(map) if MAP.contains(&keyword.as_str()) => {
                for (name, item) in map {
                    if item.is_object() || item.is_boolean() {
                        found.push((format!("{key}/{}", escape(name)), item));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// Adds [`TICK`] to every object subschema of `schema`.
fn add_ticks(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for (keyword, value) in map.iter_mut() {
        match value {
            Value::Object(_) if ONE.contains(&keyword.as_str()) => add_ticks(value),
            Value::Array(list) if LIST.contains(&keyword.as_str()) => {
                list.iter_mut().for_each(add_ticks);
            }
            Value::Object(inner) if MAP.contains(&keyword.as_str()) => {
                inner.values_mut().for_each(add_ticks);
            }
            _ => {}
        }
    }
    map.insert(TICK.to_string(), Value::Bool(true));
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A schema's size with its local `$ref`s expanded in place.
#[derive(Debug, Default, PartialEq, Eq)]
struct Expansion {
    /// Subschemas, saturating just past [`MAX_EXPANDED`].
    size: u64,
    /// A `$ref` leads back to a schema it is inside (a recursive type).
    cyclic: bool,
    /// A keyword whose cost the size does not bound, or a `$ref` this
    /// count cannot follow.
    costly: bool,
    /// Subschemas nest more than [`MAX_DEPTH`] deep.
    too_deep: bool,
}

impl Expansion {
    fn of(root: &Value) -> Expansion {
        let mut count = Count {
            root,
            sizes: HashMap::new(),
            open: Vec::new(),
            cyclic: false,
            costly: false,
            too_deep: false,
            depth: 0,
        };
        let size = count.size(root, "");
        Expansion {
            size,
            cyclic: count.cyclic,
            costly: count.costly,
            too_deep: count.too_deep,
        }
    }
}

struct Count<'a> {
    root: &'a Value,
    /// Expanded sizes of the `$ref` targets counted so far, by pointer.
    sizes: HashMap<String, u64>,
    /// The `$ref` targets being counted (a cycle leads back to one).
    open: Vec<String>,
    cyclic: bool,
    costly: bool,
    too_deep: bool,
    /// Subschemas the count is inside now.
    depth: usize,
}

impl Count<'_> {
    fn size(&mut self, schema: &Value, pointer: &str) -> u64 {
        let Value::Object(map) = schema else {
            return 1;
        };
        if self.depth >= MAX_DEPTH {
            self.too_deep = true;
            return MAX_EXPANDED + 1;
        }
        self.depth += 1;
        let size = self.size_of(map, pointer);
        self.depth -= 1;
        size
    }

    fn size_of(&mut self, map: &Map<String, Value>, pointer: &str) -> u64 {
        if COSTLY_KEYWORDS.iter().any(|k| map.contains_key(*k)) {
            self.costly = true;
        }
        let mut size: u64 = 1;
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            size = size.saturating_add(self.target(reference));
        }
        for (token, child) in children(map) {
            if size > MAX_EXPANDED {
                break;
            }
            let child_pointer = format!("{pointer}/{token}");
            size = size.saturating_add(self.size(child, &child_pointer));
        }
        size.min(MAX_EXPANDED + 1)
    }

    fn target(&mut self, reference: &str) -> u64 {
        let Some(pointer) = reference.strip_prefix('#') else {
            self.costly = true;
            return 1;
        };
        if let Some(&known) = self.sizes.get(pointer) {
            return known;
        }
        if self.open.iter().any(|open| open == pointer) {
            self.cyclic = true;
            return 1;
        }
        let Some(target) = self.root.pointer(pointer) else {
            // An anchor (`#name`) or a pointer this count cannot follow.
            self.costly = true;
            return 1;
        };
        self.open.push(pointer.to_string());
        let size = self.size(target, pointer);
        self.open.pop();
        self.sizes.insert(pointer.to_string(), size);
        size
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    /// `levels` levels of `anyOf: [$ref next, $ref next]` down to a string.
    pub(crate) fn doubling(levels: usize) -> Value {
        let mut defs = Map::new();
        for level in 0..levels {
            let next = format!("#/$defs/l{}", level + 1);
            defs.insert(
                format!("l{level}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next, "minLength": 1}]}),
            );
        }
        defs.insert(format!("l{levels}"), json!({"type": "string"}));
        json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/l0"}},
            "$defs": defs,
        })
    }

    #[test]
    fn expansion_counts_each_ref_where_it_is_used() {
        let flat = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(
            Expansion::of(&flat),
            Expansion {
                size: 2,
                ..Expansion::default()
            }
        );
        // Level k is 3 + 2 * level k+1 (itself, two branches, two targets).
        let five = Expansion::of(&doubling(5));
        assert_eq!(five.size, 2 + 125, "{five:?}");
        assert!(!five.cyclic && !five.costly);
        assert_eq!(Expansion::of(&doubling(40)).size, MAX_EXPANDED + 1);
    }

    #[test]
    fn a_recursive_schema_is_counted_once_and_marked() {
        let tree = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }}}
        });
        let expansion = Expansion::of(&tree);
        assert!(expansion.cyclic);
        assert!(expansion.size < 20, "{expansion:?}");
        assert!(InputSchema::compile(&tree).is_ok());
    }

    #[test]
    fn a_long_chain_of_refs_is_refused_before_it_is_built() {
        let chain = |links: usize| {
            let mut defs = Map::new();
            for n in 0..links {
                defs.insert(
                    format!("d{n}"),
                    json!({"$ref": format!("#/$defs/d{}", n + 1)}),
                );
            }
            defs.insert(format!("d{links}"), json!({"type": "string"}));
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
        };
        assert!(InputSchema::compile(&chain(100)).is_ok());
        let error = InputSchema::compile(&chain(100_000)).expect_err("refused");
        assert!(
            error.starts_with("its `input-schema` nests more than 256 subschemas deep"),
            "{error}"
        );
    }

    #[test]
    fn the_doubling_schema_is_refused_at_load() {
        let error = InputSchema::compile(&doubling(40)).expect_err("refused");
        assert!(error.starts_with("its `input-schema` expands to more than 100000"));
    }

    #[test]
    fn ticks_change_no_answer() {
        let schema = InputSchema::compile(&json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "map": {"type": "object", "properties": {"x~/y": {"type": "string"}}},
            },
            "required": ["path"],
            "additionalProperties": false,
        }))
        .expect("compiles");
        let far = Instant::now() + Duration::from_secs(60);
        let cancel = CancellationToken::new();
        let check = |value: Value| errors_before(&schema.validator, &value, far, &cancel);
        assert_eq!(check(json!({"path": "a", "n": 3})), Ok(vec![]));
        assert_eq!(
            check(json!({"path": "a", "map": {"x~/y": "s"}})),
            Ok(vec![])
        );
        let errors = check(json!({"n": "three", "extra": 1})).expect("compiles");
        assert_eq!(errors.len(), 3, "{errors:?}");
        // A property literally named like the tick is not special.
        let errors = check(json!({"path": "a", TICK: true})).expect("compiles");
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    #[tokio::test]
    async fn a_slow_validation_stops_at_the_deadline_and_on_cancel() {
        // Under the cap, yet slow for a long input: each item fails every
        // branch of a 14-level doubling tree.
        let mut schema = doubling(14);
        schema["properties"]["x"] = json!({"type": "array", "items": {"$ref": "#/$defs/l0"}});
        let schema = InputSchema::compile(&schema).expect("compiles");
        let input = Arc::new(json!({"x": vec![0; 100_000]}));

        let start = Instant::now();
        let deadline = start + Duration::from_millis(300);
        let stopped = schema
            .validate(input.clone(), 300_000, deadline, &CancellationToken::new())
            .await;
        assert_eq!(stopped, Err(Stopped::Deadline));
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );

        let cancel = CancellationToken::new();
        let far = Instant::now() + Duration::from_secs(60);
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            canceller.cancel();
        });
        let start = Instant::now();
        let stopped = schema.validate(input, 300_000, far, &cancel).await;
        assert_eq!(stopped, Err(Stopped::Cancelled));
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }
}
