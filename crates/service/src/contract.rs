//! The JSON Schemas of the contract's types, self-contained, for front ends that do not speak
//! OpenAPI (the connector's tool input and output schemas). They are derived from the same
//! `utoipa::ToSchema` implementations as the OpenAPI document, so the two cannot disagree.

use serde_json::{Map, Value};
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

/// Where the OpenAPI document keeps named schemas, and where a standalone schema keeps them.
const COMPONENTS: &str = "#/components/schemas/";
const DEFS: &str = "#/$defs/";

/// `T`'s JSON Schema (2020-12), with every schema it refers to under `$defs`.
pub fn json_schema<T: ToSchema>() -> Value {
    let mut named: Vec<(String, RefOr<Schema>)> = Vec::new();
    T::schemas(&mut named);
    let mut schema = serde_json::to_value(T::schema()).unwrap_or(Value::Bool(true));
    if !named.is_empty() {
        let defs: Map<String, Value> =
            named.into_iter().filter_map(|(name, schema)| Some((name, serde_json::to_value(schema).ok()?))).collect();
        if let Value::Object(object) = &mut schema {
            object.insert("$defs".into(), Value::Object(defs));
        }
    }
    rebase_refs(&mut schema);
    schema
}

/// A schema of objects matching any of `schemas` (each from [`json_schema`]), their `$defs`
/// merged: the answer of a call that returns one of several shapes.
pub fn any_of(schemas: impl IntoIterator<Item = Value>) -> Value {
    let mut defs = Map::new();
    let branches: Vec<Value> = schemas
        .into_iter()
        .map(|mut schema| {
            if let Some(Value::Object(own)) = schema.as_object_mut().and_then(|o| o.remove("$defs")) {
                defs.extend(own);
            }
            schema
        })
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("anyOf".into(), Value::Array(branches));
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(schema)
}

/// Points every OpenAPI component reference in `value` at `$defs`.
fn rebase_refs(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, item) in object.iter_mut() {
                match (key.as_str(), item) {
                    ("$ref", Value::String(target)) => {
                        if let Some(name) = target.strip_prefix(COMPONENTS) {
                            *target = format!("{DEFS}{name}");
                        }
                    }
                    (_, item) => rebase_refs(item),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rebase_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::TaskView;

    #[test]
    fn a_view_is_self_contained() {
        let schema = json_schema::<TaskView>();
        let text = schema.to_string();
        assert!(!text.contains(COMPONENTS), "{text}");
        assert!(schema["$defs"]["OutputView"].is_object(), "{text}");
        assert_eq!(schema["type"], "object");
    }
}
