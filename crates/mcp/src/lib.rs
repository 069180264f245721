//! The agent connector: the Model Context Protocol over JSON-RPC 2.0, served by the HTTP front end
//! at `POST /api/mcp`.
//!
//! Methods are registered on a jsonrpsee [`RpcModule`]; the authenticated key reaches them through
//! the module's `Extensions`. [`Connector::handle`] deals with what a single JSON-RPC call does not:
//! parse errors, batches, notifications and client responses. Every tool calls the same
//! [`service::Service`] use-cases as the HTTP API, so validation, holds, billing and task scoping are
//! shared, not repeated.

mod message;
mod tools;

pub use message::{ClientMessage, ErrorMessage, MessageId, RequestMessage, ResultMessage, Version};

use jsonrpsee::types::{ErrorObjectOwned, Params};
use jsonrpsee::{Extensions, RpcModule};
use serde_json::{json, Value};
use service::{Caller, ErrorCode, Service};
use std::sync::Arc;

/// Protocol versions this connector speaks, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// JSON-RPC error codes used here.
pub mod codes {
    /// The body is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON is not a valid request.
    pub const INVALID_REQUEST: i32 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Bad parameters, including an unknown tool name.
    pub const INVALID_PARAMS: i32 = -32602;
}

/// What the HTTP front end sends back for one POST.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A JSON-RPC response, HTTP 200.
    Response(String),
    /// A malformed message, HTTP 400 with a JSON-RPC error that has no id.
    Invalid(String),
    /// A notification or a client's response: HTTP 202 with no body.
    Accepted,
}

/// Whether a `MCP-Protocol-Version` header value is one we speak.
pub fn supports_protocol_version(version: &str) -> bool {
    SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// The MCP server over the service's use-cases; cheap to clone.
#[derive(Clone)]
pub struct Connector {
    module: RpcModule<Service>,
}

fn caller(extensions: &Extensions) -> Result<Caller, ErrorObjectOwned> {
    extensions.get::<Caller>().cloned().ok_or_else(|| {
        ErrorObjectOwned::owned(-32603, "no authenticated key on this call", Some(json!({"code": ErrorCode::Internal})))
    })
}

impl Connector {
    /// Registers the MCP methods over `service`.
    pub fn new(service: Service) -> Connector {
        let mut module = RpcModule::new(service);
        let registered = [
            module.register_method("initialize", |params, _, _| initialize(params)).map(|_| ()),
            module.register_method("ping", |_, _, _| Ok::<_, ErrorObjectOwned>(json!({}))).map(|_| ()),
            module
                .register_method("tools/list", |_, service, _| Ok::<_, ErrorObjectOwned>(tools::list(service)))
                .map(|_| ()),
            module
                .register_async_method("tools/call", |params, service: Arc<Service>, extensions| async move {
                    let caller = caller(&extensions)?;
                    tools::call(&service, &caller, params).await
                })
                .map(|_| ()),
        ];
        // Names are distinct constants, so registration cannot collide.
        debug_assert!(registered.iter().all(Result::is_ok));
        Connector { module }
    }

    /// Answers one HTTP POST body from `caller`.
    pub async fn handle(&self, caller: Caller, body: &[u8]) -> Reply {
        let message: Value = match serde_json::from_slice(body) {
            Ok(message) => message,
            Err(e) => return invalid(codes::PARSE_ERROR, &format!("parse error: {e}")),
        };
        let Some(object) = message.as_object() else {
            let what = if message.is_array() {
                "batch requests are not supported; send one JSON-RPC message per POST"
            } else {
                "a JSON-RPC message must be an object"
            };
            return invalid(codes::INVALID_REQUEST, what);
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return invalid(codes::INVALID_REQUEST, "jsonrpc must be \"2.0\"");
        }
        // The typed message tells a request, a notification and a response apart; what it
        // refuses is named from the members the client sent.
        match serde_json::from_value::<ClientMessage>(message.clone()) {
            Ok(ClientMessage::Request(RequestMessage { id: Some(_), .. })) => {}
            // Notifications and the client's responses to us need no answer.
            Ok(ClientMessage::Request(RequestMessage { id: None, .. }))
            | Ok(ClientMessage::Result(_))
            | Ok(ClientMessage::Error(_)) => return Reply::Accepted,
            Err(_) => return invalid(codes::INVALID_REQUEST, &refusal(object)),
        }
        let mut module = self.module.clone();
        module.extensions_mut().insert(caller);
        let text = message.to_string();
        match module.raw_json_request(&text, 1).await {
            Ok((response, _)) => Reply::Response(response.get().to_string()),
            Err(e) => invalid(codes::INVALID_REQUEST, &format!("invalid request: {e}")),
        }
    }
}

/// Why a JSON-RPC 2.0 object is not a message we take.
fn refusal(object: &serde_json::Map<String, Value>) -> String {
    let allowed: &[&str] = if object.contains_key("method") {
        &["jsonrpc", "id", "method", "params"]
    } else {
        &["jsonrpc", "id", "result", "error"]
    };
    if let Some(unknown) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return format!("unknown member {unknown:?} in a JSON-RPC message");
    }
    if !object.contains_key("method") {
        return "not a request (method), a notification (method, no id) or a response (id with result or error)".into();
    }
    if !object.get("method").is_some_and(Value::is_string) {
        return "method must be a string".into();
    }
    if !matches!(object.get("id"), None | Some(Value::String(_)) | Some(Value::Number(_))) {
        return "id must be a string or a number (null ids are not allowed)".into();
    }
    "params must be an object".into()
}

fn invalid(code: i32, message: &str) -> Reply {
    let error = json!({"code": code, "message": message, "data": {"code": ErrorCode::InvalidInput}});
    Reply::Invalid(json!({"jsonrpc": "2.0", "id": null, "error": error}).to_string())
}

/// The handshake: echo a requested version we speak, otherwise offer our latest.
fn initialize(params: Params) -> Result<Value, ErrorObjectOwned> {
    let requested: Value = params.parse().unwrap_or(Value::Null);
    let version = requested
        .get("protocolVersion")
        .and_then(Value::as_str)
        .filter(|v| supports_protocol_version(v))
        .unwrap_or(SUPPORTED_PROTOCOL_VERSIONS[0]);
    Ok(json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": {
            "name": "media-gateway",
            "title": "Media Gateway",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "Generate images, video and audio with named engines, enhance real-estate listing photos, \
            trace parcels on aerial photos and make listing marketing kits and reels. Call list_models to see engines, their inputs and prices; generate or \
            listing_enhance to start a billed job (it returns a task id at once); then task_status with that id \
            until the status is succeeded (output URLs are then included) or failed. lot_trace and listing_kit answer \
            with their result directly. Jobs are billed only when they succeed.",
    }))
}
