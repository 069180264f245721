//! The generate request described exactly, engine by engine, from the live catalog: a `oneOf`
//! discriminated by `model`, one schema per engine with the inputs it requires (and no others)
//! and its `params` with their types, ranges and enums. An operator's catalog file changes the
//! document with it.

use domain::validation::{MAX_DATA_URI_CHARS, MAX_PROMPT_CHARS, MAX_URL_CHARS};
use domain::{EngineSpec, InputRequirement, ParamRule};
use serde_json::{json, Map, Value};

/// A port in 0..=65535, as the URL parser accepts it.
const PORT: &str = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";

/// An input URL as the validator accepts it: an absolute http(s) URL or a base64 `data:` URI.
pub(crate) fn input_url_schema(description: &str) -> Value {
    json!({
        "description": description,
        "anyOf": [
            {
                "type": "string",
                "maxLength": MAX_URL_CHARS,
                "pattern": format!("^https?://[A-Za-z0-9][A-Za-z0-9.-]*(:{PORT})?(/[^\\s]*)?$"),
            },
            {"type": "string", "maxLength": MAX_DATA_URI_CHARS, "pattern": "^data:[^,\\s]*;base64,[A-Za-z0-9+/=\\s]*$"},
        ]
    })
}

/// The schema name of one engine's request.
fn schema_name(spec: &EngineSpec) -> String {
    let id: String = spec.id.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("Generate_{id}")
}

fn param_schema(rule: &ParamRule) -> Value {
    match rule {
        ParamRule::Integer { min, max, default } => {
            json!({"type": "integer", "minimum": min, "maximum": max, "default": default})
        }
        ParamRule::Number { min, max, default } => json!({
            "type": "number",
            "minimum": min.to_string().parse::<f64>().unwrap_or(0.0),
            "maximum": max.to_string().parse::<f64>().unwrap_or(0.0),
            "default": default.to_string().parse::<f64>().unwrap_or(0.0),
        }),
        ParamRule::String { one_of, max_len, default } => {
            let mut schema = if one_of.is_empty() {
                json!({"type": "string", "maxLength": max_len})
            } else {
                json!({"type": "string", "enum": one_of})
            };
            if let Some(default) = default {
                schema["default"] = json!(default);
            }
            schema
        }
        ParamRule::Boolean { default } => json!({"type": "boolean", "default": default}),
        ParamRule::Url { .. } => input_url_schema("An additional input, as an http(s) URL or a base64 data: URI"),
    }
}

/// One engine's request schema.
fn engine_schema(spec: &EngineSpec) -> Value {
    let mut properties = Map::new();
    let mut required = vec![json!("model")];
    properties.insert("model".into(), json!({"type": "string", "const": spec.id, "description": spec.title}));
    let inputs = [
        ("prompt", spec.inputs.prompt),
        ("image_url", spec.inputs.image_url),
        ("video_url", spec.inputs.video_url),
        ("audio_url", spec.inputs.audio_url),
    ];
    for (name, requirement) in inputs {
        if requirement == InputRequirement::Rejected {
            continue;
        }
        let schema = if name == "prompt" {
            // Trimmed before use: it must hold something besides white space.
            json!({"type": "string", "maxLength": MAX_PROMPT_CHARS, "pattern": "\\S"})
        } else {
            input_url_schema(&format!("The {} input", name.trim_end_matches("_url")))
        };
        properties.insert(name.into(), schema);
        if requirement == InputRequirement::Required {
            required.push(json!(name));
        }
    }
    let mut params = Map::new();
    let mut required_params = Vec::new();
    for (key, rule) in &spec.params {
        params.insert(key.clone(), param_schema(rule));
        if matches!(rule, ParamRule::Url { required: true }) {
            required_params.push(json!(key));
        }
    }
    let mut params_schema = json!({"type": "object", "additionalProperties": false, "properties": params});
    if !required_params.is_empty() {
        params_schema["required"] = json!(required_params);
        required.push(json!("params"));
    }
    properties.insert("params".into(), params_schema);
    json!({
        "type": "object",
        "title": spec.id,
        "additionalProperties": false,
        "required": required,
        "properties": properties,
    })
}

/// Replaces `GenerateRequest` in `doc` by a `oneOf` of one schema per engine, discriminated by
/// `model`.
pub(crate) fn describe_engines<'a>(doc: &mut Value, engines: impl IntoIterator<Item = &'a EngineSpec>) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else {
        return;
    };
    let mut refs = Vec::new();
    let mut mapping = Map::new();
    for spec in engines {
        let name = schema_name(spec);
        let reference = format!("#/components/schemas/{name}");
        schemas.insert(name, engine_schema(spec));
        refs.push(json!({"$ref": reference}));
        mapping.insert(spec.id.clone(), json!(reference));
    }
    schemas.insert(
        "GenerateRequest".into(),
        json!({
            "description": "A generation job: `model` names the engine and decides which inputs and params apply \
                (see `GET /v1` for prices). Unknown fields are refused.",
            "oneOf": refs,
            "discriminator": {"propertyName": "model", "mapping": mapping},
        }),
    );
}
