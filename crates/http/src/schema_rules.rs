//! The rules of the request bodies that the derived schemas cannot state, added to the OpenAPI
//! document so that every request it describes is one we accept: the generate request engine by
//! engine from the live catalog (a `oneOf` discriminated by `model`, each engine with the inputs
//! it requires and no others, its `params` with types, ranges and enums; an operator's catalog
//! file changes the document with it), the rules across fields of two recipes, and the error codes
//! each status carries.

use crate::errors::codes_of;
use actix_web::http::StatusCode;
use domain::limits::schema::{InputUrl, Prompt};
use domain::{EngineSpec, InputRequirement, ParamRule};
use serde_json::{json, Map, Value};
use utoipa::PartialSchema;

/// The error body's place in the document.
const ERROR_BODY: &str = "#/components/schemas/ErrorBody";

/// An input URL as the validator accepts it, with `description`.
pub(crate) fn input_url_schema(description: &str) -> Value {
    let mut schema = serde_json::to_value(InputUrl::schema()).unwrap_or(Value::Bool(true));
    schema["description"] = json!(description);
    schema
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
            serde_json::to_value(Prompt::schema()).unwrap_or(Value::Bool(true))
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

/// The rules across fields that a type's schema cannot state: a lot trace's boundary and its one
/// ground scale, and that listing-enhance's `mls` preset exports JPEG only. Limits of single
/// fields are part of the types' schemas (see `domain::limits`).
pub(crate) fn describe_recipe_rules(doc: &mut Value) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(trace) = schemas.get_mut("LotTraceRequest").and_then(Value::as_object_mut) {
        // The boundary (points, or a GeoJSON parcel in params) and exactly one ground scale. That
        // the ring is a simple polygon inside the photo is checked on submit and cannot be said
        // in a schema.
        // A field given as null counts as absent, as the server reads it.
        let present = |names: &[&str]| {
            let not_null: Map<String, Value> =
                names.iter().map(|n| (n.to_string(), json!({"not": {"type": "null"}}))).collect();
            json!({"required": names, "properties": not_null})
        };
        let absent =
            |names: &[&str]| json!({"not": {"anyOf": names.iter().map(|n| present(&[n])).collect::<Vec<_>>()}});
        trace.insert(
            "allOf".into(),
            json!([
                {"oneOf": [
                    {"allOf": [present(&["points"]), {"properties": {"params": absent(&["geojson"])}}]},
                    {"allOf": [absent(&["points"]), present(&["params"]), {"properties": {"params": present(&["geojson"])}}]},
                ]},
                present(&["params"]),
                {"properties": {"params": {"oneOf": [
                    {"allOf": [present(&["meters_per_pixel"]), absent(&["latitude", "zoom", "bounds"])]},
                    {"allOf": [present(&["latitude", "zoom"]), absent(&["meters_per_pixel", "bounds"])]},
                    {"allOf": [present(&["bounds"]), absent(&["meters_per_pixel", "latitude", "zoom"])]},
                ]}}},
            ]),
        );
    }
    if let Some(params) = schemas.get_mut("ListingEnhanceParams").and_then(Value::as_object_mut) {
        params.insert(
            "not".into(),
            json!({
                "description": "The mls preset exports JPEG only.",
                "required": ["preset", "output_format"],
                "properties": {"preset": {"const": "mls"}, "output_format": {"const": "png"}},
            }),
        );
    }
}

/// What every operation shares and the annotations leave out: the `WWW-Authenticate` challenge
/// of each 401, the `Location` of each 202 that carries a poll URL, the 429 of an operation a
/// key's rate limits (every authenticated one), the 503 of an operation that reaches the database
/// while it is unreachable, and the error codes each status carries.
pub(crate) fn describe_common_responses(doc: &mut Value) {
    let Some(paths) = doc.pointer_mut("/paths").and_then(Value::as_object_mut) else {
        return;
    };
    for operations in paths.values_mut().filter_map(Value::as_object_mut) {
        for operation in operations.values_mut().filter_map(Value::as_object_mut) {
            let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else {
                continue;
            };
            if let Some(unauthorized) = responses.get_mut("401") {
                let challenge = json!({
                    "description": "The Bearer challenge: `Bearer realm=\"media-gateway\"`; on `/api/mcp` also `resource_metadata=\"<the connector's protected resource metadata>\"` (RFC 9728)",
                    "schema": {"type": "string"},
                });
                set_header(unauthorized, "WWW-Authenticate", challenge);
            }
            let polls = responses
                .get("202")
                .and_then(|accepted| accepted.pointer("/content/application~1json/schema"))
                .is_some();
            if polls {
                if let Some(accepted) = responses.get_mut("202") {
                    let location = json!({"description": "The poll URL", "schema": {"type": "string"}});
                    set_header(accepted, "Location", location);
                    let replayed = json!({
                        "description": "`true` when the answer is the task an earlier try under the same \
                                        `Idempotency-Key` made (nothing new was queued or held); absent otherwise",
                        "schema": {"type": "string", "enum": ["true"]},
                    });
                    set_header(accepted, "Idempotent-Replayed", replayed);
                }
            }
            if responses.contains_key("401") {
                let retry_after = |description: &str| json!({"Retry-After": {"description": description, "schema": {"type": "integer", "minimum": 0}}});
                responses.entry("429").or_insert_with(|| {
                    json!({
                        "description": "The key's request rate is used up (or, on a submit, its unfinished jobs hold \
                                        too many stored inputs); retry after `Retry-After` seconds",
                        "headers": retry_after("Seconds until a retry can succeed"),
                        "content": {"application/json": {"schema": {"$ref": ERROR_BODY}}},
                    })
                });
                responses.entry("503").or_insert_with(|| {
                    json!({
                        "description": "The database is unreachable for a moment; retry after `Retry-After` seconds, with backoff",
                        "headers": retry_after("Seconds worth waiting before a retry"),
                        "content": {"application/json": {"schema": {"$ref": ERROR_BODY}}},
                    })
                });
            }
            for (status, response) in responses.iter_mut() {
                narrow_error_codes(status, response);
            }
        }
    }
}

/// Lists, on an error answer, the codes its status is answered with (see `errors::status_of`).
fn narrow_error_codes(status: &str, response: &mut Value) {
    let Some(status) = status.parse::<u16>().ok().and_then(|s| StatusCode::from_u16(s).ok()) else {
        return;
    };
    let Some(schema) = response.pointer_mut("/content/application~1json/schema") else {
        return;
    };
    let codes = codes_of(status);
    if schema.get("$ref").and_then(Value::as_str) != Some(ERROR_BODY) || codes.is_empty() {
        return;
    }
    *schema = json!({
        "allOf": [
            {"$ref": ERROR_BODY},
            {"properties": {"code": {"enum": codes}}},
        ]
    });
}

fn set_header(response: &mut Value, name: &str, header: Value) {
    if let Some(response) = response.as_object_mut() {
        let headers = response.entry("headers").or_insert_with(|| json!({}));
        if let Some(headers) = headers.as_object_mut() {
            headers.entry(name).or_insert(header);
        }
    }
}
