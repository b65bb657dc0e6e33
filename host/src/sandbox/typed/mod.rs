//! Components with typed exports: any component that does not target the
//! `toolhost:plugin` world but exports functions is a plugin, each function
//! a tool. The schema comes from the WIT types ([`schema`]), arguments and
//! results cross as JSON ([`value`]), and a call runs through the same
//! [`call::run`](super::call::run) as every other plugin, under the tool's
//! grants and limits.
//!
//! Such a component carries no tool metadata, so what toolhost cannot read
//! from the types comes from the user's config ([`TypedConfig`]): which
//! parameters are paths, which tools are read-only, a name prefix.

pub(crate) mod docs;
pub(crate) mod renames;
pub(crate) mod schema;
pub(crate) mod value;

use std::collections::BTreeMap;

use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, ComponentExportIndex, Instance, Type, Val};
use wasmtime::{Engine, Store};

use super::bindings::CallError;
use super::call::{Export, State};
use super::capabilities::Access;
use super::tool_name::is_tool_name;
use docs::Docs;
use schema::Direction;

/// What the user's config says about tools derived from typed exports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedConfig {
    /// By tool name (as listed, after any prefix).
    pub tools: BTreeMap<String, TypedToolConfig>,
    /// By plugin file stem (`fs` for `fs.wasm`): a prefix for every tool
    /// name the plugin derives, instead of prefixing only on a clash.
    pub prefixes: BTreeMap<String, String>,
    /// The same, from an untrusted workspace's file: only for the plugins
    /// that workspace ships (over [`TypedConfig::prefixes`]).
    pub shipped_prefixes: BTreeMap<String, String>,
}

/// `[tools.<name>]` keys that only typed tools need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedToolConfig {
    /// Parameters that are paths, checked against the grants before the
    /// call like `x-toolhost-path`.
    pub paths: BTreeMap<String, Access>,
    /// The tool changes nothing (default: it may write).
    pub read_only: Option<bool>,
}

/// One exported function, ready to offer as a tool.
pub(crate) struct TypedFunction {
    /// The tool name before any plugin prefix: the function name in
    /// snake_case, qualified with its interface where needed.
    pub(crate) name: String,
    /// Where the function is, as WIT spells it (`read-file`,
    /// `pkg:ns/iface@1.0.0#read-file`), for messages.
    pub(crate) wit_name: String,
    pub(crate) description: String,
    pub(crate) index: ComponentExportIndex,
    pub(crate) params: Vec<(String, Type)>,
    pub(crate) result: Option<Type>,
    pub(crate) input_schema: serde_json::Value,
    /// The shape of a successful result, for MCP's `outputSchema`.
    pub(crate) output_schema: serde_json::Value,
}

/// The functions of a component, and why others were left out.
pub(crate) struct Discovered {
    pub(crate) functions: Vec<TypedFunction>,
    /// One line per skipped function, naming it.
    pub(crate) skipped: Vec<String>,
    /// Exported WASI interfaces (`wasi:cli/run`): entry points for other
    /// hosts, not tools.
    pub(crate) wasi_exports: Vec<String>,
}

/// A function as found, before names are settled.
struct Found {
    interface: Option<String>,
    func: String,
    index: ComponentExportIndex,
    ty: wasmtime::component::types::ComponentFunc,
}

/// Every exported function of `component` that can be a tool.
///
/// Long: one walk over the component's exports, one arm per kind of item, then
/// the names settled.
pub(crate) fn discover(engine: &Engine, component: &Component, docs: &Docs) -> Discovered {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut wasi_exports = Vec::new();
    let ty = component.component_type();
    for (name, item) in ty.exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(func) => {
                if let Some(index) = component.get_export_index(None, name) {
                    found.push(Found {
                        interface: None,
                        func: name.to_string(),
                        index,
                        ty: func,
                    });
                }
            }
            ComponentItem::ComponentInstance(_) if name.starts_with("wasi:") => {
                wasi_exports.push(name.to_string());
            }
            ComponentItem::ComponentInstance(instance) => {
                let Some(instance_index) = component.get_export_index(None, name) else {
                    continue;
                };
                for (func_name, item) in instance.exports(engine) {
                    let ComponentItem::ComponentFunc(func) = item.ty else {
                        continue;
                    };
                    if let Some(index) =
                        component.get_export_index(Some(&instance_index), func_name)
                    {
                        found.push(Found {
                            interface: Some(name.to_string()),
                            func: func_name.to_string(),
                            index,
                            ty: func,
                        });
                    }
                }
            }
            _ => {}
        }
    }

    let mut usable = Vec::new();
    let mut resources: Vec<String> = Vec::new();
    for f in found {
        let wit_name = match &f.interface {
            Some(interface) => format!("{interface}#{}", f.func),
            None => f.func.clone(),
        };
        // `[constructor]counter`, `[method]counter.bump`: one line per resource.
        if let Some(resource) = resource_of(&f.func) {
            let resource = match &f.interface {
                Some(interface) => format!("{interface}#{resource}"),
                None => resource.to_string(),
            };
            if !resources.contains(&resource) {
                skipped.push(format!(
                    "the functions of resource `{resource}` are not tools: a tool call cannot hold a resource"
                ));
                resources.push(resource);
            }
            continue;
        }
        match unusable(&f) {
            Some(why) => skipped.push(format!("function `{wit_name}` is not a tool: {why}")),
            None => usable.push((f, wit_name)),
        }
    }

    // World-level functions keep the bare name; an interface's function is
    // qualified with the interface when that name is taken.
    let bare = |f: &Found| snake(&f.func);
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    for (f, _) in &usable {
        *taken.entry(bare(f)).or_default() += 1;
    }
    let mut functions: Vec<TypedFunction> = Vec::new();
    for (f, wit_name) in usable {
        let name = match &f.interface {
            Some(interface) if taken[&bare(&f)] > 1 => {
                format!("{}_{}", snake(docs::short_interface(interface)), bare(&f))
            }
            _ => bare(&f),
        };
        if !is_tool_name(&name) {
            skipped.push(format!(
                "function `{wit_name}` is not a tool: its name `{name}` is longer than 64 characters"
            ));
            continue;
        }
        if functions.iter().any(|t| t.name == name) {
            skipped.push(format!(
                "function `{wit_name}` is not a tool: another function of the component is also named `{name}`"
            ));
            continue;
        }
        let params: Vec<(String, Type)> = f.ty.params().map(|(n, t)| (n.to_string(), t)).collect();
        let result = f.ty.results().next();
        let description = docs
            .function(f.interface.as_deref(), &f.func)
            .map(str::to_string)
            .unwrap_or_else(|| signature_sentence(&wit_name, &params, result.as_ref()));
        let input_schema = schema::object(
            params.iter().map(|(n, t)| (n.as_str(), t.clone())),
            Direction::Input,
        );
        let output_schema = output_schema(result.as_ref());
        functions.push(TypedFunction {
            name,
            wit_name,
            description,
            index: f.index,
            params,
            result,
            input_schema,
            output_schema,
        });
    }
    Discovered {
        functions,
        skipped,
        wasi_exports,
    }
}

/// Why a function cannot be offered as a tool, if it cannot.
fn unusable(f: &Found) -> Option<String> {
    if f.ty.async_() {
        return Some("it is an async function".into());
    }
    for (name, ty) in f.ty.params() {
        if let Some(what) = schema::unsupported(&ty) {
            return Some(format!("parameter `{name}` is or holds {what}"));
        }
    }
    for ty in f.ty.results() {
        if let Some(what) = schema::unsupported(&ty) {
            return Some(format!("its result is or holds {what}"));
        }
    }
    None
}

/// The resource a `[constructor]r`, `[method]r.f` or `[static]r.f` export
/// belongs to.
fn resource_of(func: &str) -> Option<&str> {
    let rest = func.strip_prefix('[')?.split_once(']')?.1;
    Some(rest.split_once('.').map_or(rest, |(resource, _)| resource))
}

/// `read-file` -> `read_file`. WIT names are kebab-case and never hold an
/// underscore, so the conversion loses nothing.
fn snake(name: &str) -> String {
    name.replace('-', "_")
}

/// The prefix a plugin file gives its tools on a clash: its stem with
/// every character outside `[a-zA-Z0-9_-]` made `_`.
pub(crate) fn stem_prefix(stem: &str) -> String {
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// True when `param` is a parameter of `function` holding a string (or an
/// optional one): only those can be checked as paths.
pub(crate) fn is_string_param(function: &TypedFunction, param: &str) -> bool {
    function.params.iter().any(|(name, ty)| {
        name == param
            && match ty {
                Type::String => true,
                Type::Option(o) => matches!(o.ty(), Type::String),
                _ => false,
            }
    })
}

/// Past this many characters a signature says less than the schema and
/// costs the model more: the description names only the parameters.
const LONGEST_SIGNATURE: usize = 240;

/// The description when the component kept no doc comment.
fn signature_sentence(wit_name: &str, params: &[(String, Type)], result: Option<&Type>) -> String {
    let typed: Vec<String> = params
        .iter()
        .map(|(n, t)| format!("{n}: {}", wit_type(t)))
        .collect();
    let result = result.map_or(String::new(), |t| format!(" -> {}", wit_type(t)));
    let sentence = format!(
        "Calls the component's function `{wit_name}({}){result}`.",
        typed.join(", ")
    );
    if sentence.len() <= LONGEST_SIGNATURE {
        return sentence;
    }
    let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    format!(
        "Calls the component's function `{wit_name}({})`; the input schema gives the types.",
        names.join(", ")
    )
}

/// A WIT type as text, for the signature sentence.
fn wit_type(ty: &Type) -> String {
    match ty {
        Type::Bool => "bool".into(),
        Type::S8 => "s8".into(),
        Type::U8 => "u8".into(),
        Type::S16 => "s16".into(),
        Type::U16 => "u16".into(),
        Type::S32 => "s32".into(),
        Type::U32 => "u32".into(),
        Type::S64 => "s64".into(),
        Type::U64 => "u64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(l) => format!("list<{}>", wit_type(&l.ty())),
        Type::FixedLengthList(l) => format!("list<{}, {}>", wit_type(&l.ty()), l.len()),
        Type::Tuple(t) => {
            let types: Vec<String> = t.types().map(|t| wit_type(&t)).collect();
            format!("tuple<{}>", types.join(", "))
        }
        Type::Record(r) => {
            let fields: Vec<String> = r
                .fields()
                .map(|f| format!("{}: {}", f.name, wit_type(&f.ty)))
                .collect();
            format!("record {{ {} }}", fields.join(", "))
        }
        Type::Variant(v) => {
            let cases: Vec<String> = v
                .cases()
                .map(|c| match &c.ty {
                    Some(t) => format!("{}({})", c.name, wit_type(t)),
                    None => c.name.to_string(),
                })
                .collect();
            format!("variant {{ {} }}", cases.join(", "))
        }
        Type::Enum(e) => format!("enum {{ {} }}", e.names().collect::<Vec<_>>().join(", ")),
        Type::Flags(f) => format!("flags {{ {} }}", f.names().collect::<Vec<_>>().join(", ")),
        Type::Option(o) => format!("option<{}>", wit_type(&o.ty())),
        Type::Result(r) => match (r.ok(), r.err()) {
            (None, None) => "result".into(),
            (Some(ok), None) => format!("result<{}>", wit_type(&ok)),
            (None, Some(err)) => format!("result<_, {}>", wit_type(&err)),
            (Some(ok), Some(err)) => format!("result<{}, {}>", wit_type(&ok), wit_type(&err)),
        },
        Type::Own(_) | Type::Borrow(_) => "resource".into(),
        Type::Future(_) => "future".into(),
        Type::Stream(_) => "stream".into(),
        Type::ErrorContext => "error-context".into(),
        Type::Map(m) => format!("map<{}, {}>", wit_type(&m.key()), wit_type(&m.value())),
    }
}

/// A successful result as MCP's `structuredContent` carries it: always an
/// object, `{"result": value}`. A top-level `result<T, E>` contributes its
/// `T` (an `err` is a tool error, not structured content).
fn output_schema(result: Option<&Type>) -> serde_json::Value {
    let value = match result {
        None => serde_json::json!({"type": "null"}),
        Some(Type::Result(r)) => match r.ok() {
            Some(ok) => schema::of(&ok, Direction::Output),
            None => serde_json::json!({"type": "null"}),
        },
        Some(ty) => schema::of(ty, Direction::Output),
    };
    serde_json::json!({
        "type": "object",
        "properties": {"result": value},
        "required": ["result"],
        "additionalProperties": false,
    })
}

/// One call of a typed function with its converted arguments.
pub(crate) struct CallTyped<'a> {
    pub(crate) function: &'a TypedFunction,
    pub(crate) params: Vec<Val>,
}

impl Export for CallTyped<'_> {
    type Output = Option<Val>;

    async fn call(
        self,
        store: &mut Store<State>,
        instance: Instance,
    ) -> wasmtime::Result<Option<Val>> {
        let func = instance
            .get_func(&mut *store, self.function.index)
            .ok_or_else(|| {
                wasmtime::format_err!("the component has no function `{}`", self.function.wit_name)
            })?;
        let mut results = vec![Val::Bool(false); usize::from(self.function.result.is_some())];
        func.call_async(&mut *store, &self.params, &mut results)
            .await?;
        Ok(results.pop())
    }
}

/// What a typed function returned, as the answer of a tool: the text the
/// model reads and the structured value for MCP, or the function's own
/// `err` as the tool's failure.
pub(crate) fn answer(
    returned: Option<Val>,
    function: &TypedFunction,
) -> Result<(String, serde_json::Value), CallError> {
    let (val, ty) = match (returned, &function.result) {
        (Some(Val::Result(result)), Some(Type::Result(ty))) => match result {
            Ok(ok) => (ok.map(|v| *v), ty.ok()),
            Err(err) => {
                let text = match (err.as_deref(), ty.err()) {
                    (Some(v), Some(t)) => text_of(&value::to_json(v, &t)),
                    _ => format!("`{}` returned an error", function.wit_name),
                };
                return Err(CallError::Failed(text));
            }
        },
        (returned, ty) => (returned, ty.clone()),
    };
    let json = match (&val, &ty) {
        (Some(v), Some(t)) => value::to_json(v, t),
        _ => serde_json::Value::Null,
    };
    Ok((text_of(&json), serde_json::json!({ "result": json })))
}

/// A string is given to the model as itself (a file's text should not
/// arrive escaped); every other value as compact JSON.
fn text_of(json: &serde_json::Value) -> String {
    match json {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
