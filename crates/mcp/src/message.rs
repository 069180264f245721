//! The JSON-RPC 2.0 messages a client posts to the connector, as types: [`ClientMessage`] tells a
//! request, a notification and a response apart, and its schema is the OpenAPI document's
//! description of `POST /api/mcp`.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

/// The largest integer id every JSON parser reads exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// One JSON-RPC 2.0 message a client posts.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ClientMessage {
    /// With an id a request (answered 200), without one a notification (answered 202).
    Request(RequestMessage),
    /// The client's result for a request of ours (answered 202).
    Result(ResultMessage),
    /// The client's error for a request of ours (answered 202).
    Error(ErrorMessage),
}

/// A request, or without an id a notification.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestMessage {
    /// The protocol version.
    pub jsonrpc: Version,
    /// The request's id; a notification has none. A null id is refused, not read as none.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    pub id: Option<MessageId>,
    /// `initialize`, `ping`, `tools/list`, `tools/call`, `notifications/...`.
    pub method: String,
    /// The method's parameters.
    #[serde(default)]
    #[schema(value_type = Option<Object>, nullable = false)]
    pub params: Option<Map<String, Value>>,
}

/// A client's result for a request of ours.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultMessage {
    /// The protocol version.
    pub jsonrpc: Version,
    /// The id of our request.
    pub id: MessageId,
    /// The result.
    #[schema(value_type = Object)]
    pub result: Value,
}

/// A client's error for a request of ours.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorMessage {
    /// The protocol version.
    pub jsonrpc: Version,
    /// The id of our request.
    pub id: MessageId,
    /// The error.
    #[schema(value_type = Object)]
    pub error: Map<String, Value>,
}

/// The protocol version, always `"2.0"`.
#[derive(Debug, Deserialize, ToSchema)]
pub enum Version {
    /// JSON-RPC 2.0.
    #[serde(rename = "2.0")]
    V2,
}

/// A message id: a string or a number (never null).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum MessageId {
    /// A string id.
    Text(String),
    /// A numeric id.
    Number(serde_json::Number),
}

impl utoipa::PartialSchema for MessageId {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::String))
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)).maximum(Some(MAX_SAFE_INTEGER)))
            .into()
    }
}

impl ToSchema for MessageId {}

/// An id that is there: absent is `None` (through `default`), `null` is an error.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<MessageId>, D::Error> {
    MessageId::deserialize(deserializer).map(Some)
}
