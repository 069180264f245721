//! Every answer the suites read through `common::read` (and so `TestServer::get` and `post`) is
//! checked against what the OpenAPI document declares for its path and status: a field renamed, a
//! type changed or an undocumented success status fails the test that met it; an error status the
//! operation does not list (405, 429) is checked against the error body.

use jsonschema::Validator;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The OpenAPI document of the built-in catalog (the one every test server runs).
fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let catalog = engines::Catalog::builtin();
        serde_json::from_str(&http_api::openapi_json(catalog.engines())).expect("OpenAPI document")
    })
}

/// Whether the concrete `path` fits the document's `template` (`/v1/tasks/{id}`).
fn fits(template: &str, path: &str) -> bool {
    // `/files/{path}` takes the rest of the path.
    if let Some(prefix) = template.strip_suffix("{path}") {
        return path.starts_with(prefix) && path.len() > prefix.len();
    }
    let (template, path): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    template.len() == path.len()
        && template.iter().zip(&path).all(|(t, p)| (t.starts_with('{') && !p.is_empty()) || t == p)
}

/// The schema the document declares for an answer of `status` at `path`, as a JSON pointer, or
/// None for a path the document does not describe.
fn declared(path: &str, status: u16) -> Option<String> {
    let paths = document()["paths"].as_object().expect("paths");
    let (template, operations) = paths.iter().find(|(template, _)| fits(template, path))?;
    let operations = operations.as_object().expect("operations");
    // Every path has one method, so the path alone names the operation.
    let (method, operation) = operations.iter().next().expect("an operation");
    // A JSON pointer in a URI fragment: `~` and `/` escaped, braces percent-encoded.
    let escaped = template.replace('~', "~0").replace('/', "~1").replace('{', "%7B").replace('}', "%7D");
    let responses = &operation["responses"];
    let key = status.to_string();
    if responses.get(&key).is_none() {
        // A known path may still answer an error it shares with every path (405, 429).
        assert!(status >= 400, "{method} {template} answered {status}, which the document does not declare");
        return Some("/components/schemas/ErrorBody".into());
    }
    let schema = &responses[&key]["content"]["application/json"]["schema"];
    assert!(!schema.is_null(), "{method} {template} answered JSON with {status}, documented without a JSON body");
    Some(format!("/paths/{escaped}/{method}/responses/{key}/content/application~1json/schema"))
}

/// Checks `body`, answered with `status` at `path`, against the document.
pub fn check_answer(path: &str, status: u16, body: &Value) {
    let pointer = match declared(path, status) {
        Some(pointer) => pointer,
        // Outside the document (the document itself, the console) only errors are ours to check.
        None if status >= 400 => "/components/schemas/ErrorBody".into(),
        None => return,
    };
    check(&format!("#{pointer}"), body, &format!("{status} at {path}"));
}

/// Checks `value` against the schema at `reference` in the document. Each reference's validator
/// is compiled once per test process: the document is large and every answer is checked.
fn check(reference: &str, value: &Value, what: &str) {
    static VALIDATORS: OnceLock<Mutex<HashMap<String, Arc<Validator>>>> = OnceLock::new();
    let validator = VALIDATORS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(reference.to_string())
        .or_insert_with(|| {
            // The document is the root resource, so every `#/components/...` reference resolves;
            // its other members are not schema keywords and are ignored.
            let mut root = document().clone();
            root["$ref"] = json!(reference);
            root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
            Arc::new(compile(&root, what))
        })
        .clone();
    report(&validator, value, what);
}

/// Checks `value` against a standalone JSON Schema (an MCP tool's output schema).
pub fn assert_valid(schema: &Value, value: &Value, what: &str) {
    report(&compile(schema, what), value, what);
}

fn compile(schema: &Value, what: &str) -> Validator {
    jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("schema for {what}: {e}"))
}

fn report(validator: &Validator, value: &Value, what: &str) {
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "{what} does not match its declared schema:\n{}\n{value}", errors.join("\n"));
}
