//! Types of the engine catalog: what each engine is, what it accepts and how it is priced.
//!
//! The catalog's data lives in the `engines` crate; these are the shapes and the pure rules on them.

use crate::money::Usd;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kind of work an engine does; decides its local implementation and output media.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Text to image.
    ImageGeneration,
    /// Image plus instruction to image.
    ImageEditing,
    /// Image to image with a transparent background.
    BackgroundRemoval,
    /// Image to a larger image.
    ImageUpscaling,
    /// Still image to video.
    ImageToVideo,
    /// Text to video.
    TextToVideo,
    /// Video plus instruction to video.
    VideoToVideo,
    /// Video to a larger video.
    VideoUpscaling,
    /// Video plus audio to video with speech.
    LipSync,
    /// Text to speech audio.
    TextToSpeech,
    /// Text to music audio.
    Music,
    /// A recipe's catalog entry (its title and price); recipes run in the recipes crate, not as
    /// an engine. Older catalogs call listing-enhance's family `photo_enhancement`.
    #[serde(alias = "photo_enhancement")]
    Recipe,
}

impl Family {
    /// The family's name as the catalog spells it (`video_upscaling`).
    pub fn name(self) -> &'static str {
        match self {
            Family::ImageGeneration => "image_generation",
            Family::ImageEditing => "image_editing",
            Family::BackgroundRemoval => "background_removal",
            Family::ImageUpscaling => "image_upscaling",
            Family::ImageToVideo => "image_to_video",
            Family::TextToVideo => "text_to_video",
            Family::VideoToVideo => "video_to_video",
            Family::VideoUpscaling => "video_upscaling",
            Family::LipSync => "lip_sync",
            Family::TextToSpeech => "text_to_speech",
            Family::Music => "music",
            Family::Recipe => "recipe",
        }
    }

    /// Every family of the public engines, in catalog order.
    pub const PUBLIC: [Family; 11] = [
        Family::ImageGeneration,
        Family::ImageEditing,
        Family::BackgroundRemoval,
        Family::ImageUpscaling,
        Family::ImageToVideo,
        Family::TextToVideo,
        Family::VideoToVideo,
        Family::VideoUpscaling,
        Family::LipSync,
        Family::TextToSpeech,
        Family::Music,
    ];
}

/// Whether an engine needs, accepts or refuses one of the request's top-level inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputRequirement {
    /// The request must carry it.
    Required,
    /// The request may carry it.
    Optional,
    /// The request must not carry it.
    #[default]
    Rejected,
}

/// The top-level inputs of a generate request and what an engine makes of each.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineInputs {
    /// `prompt`.
    #[serde(default)]
    pub prompt: InputRequirement,
    /// `image_url`.
    #[serde(default)]
    pub image_url: InputRequirement,
    /// `video_url`.
    #[serde(default)]
    pub video_url: InputRequirement,
    /// `audio_url`.
    #[serde(default)]
    pub audio_url: InputRequirement,
}

/// The rule one key of `params` must satisfy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ParamRule {
    /// A whole number in `min..=max`.
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
        /// Value used when the key is absent.
        default: i64,
    },
    /// A number in `min..=max`, kept exact.
    Number {
        /// Smallest accepted value.
        min: Decimal,
        /// Largest accepted value.
        max: Decimal,
        /// Value used when the key is absent.
        default: Decimal,
    },
    /// A string, optionally restricted to a set of values.
    String {
        /// Accepted values; any string up to `max_len` when empty.
        #[serde(default)]
        one_of: Vec<String>,
        /// Longest accepted string, in characters.
        #[serde(default = "default_max_len")]
        max_len: usize,
        /// Value used when the key is absent.
        #[serde(default)]
        default: Option<String>,
    },
    /// `true` or `false`.
    Boolean {
        /// Value used when the key is absent.
        default: bool,
    },
    /// An absolute http(s) or `data:` URL of an additional input (for example a mask).
    Url {
        /// Whether the key must be present.
        #[serde(default)]
        required: bool,
    },
}

fn default_max_len() -> usize {
    2000
}

/// How an engine's price is computed from a job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "per", rename_all = "snake_case", deny_unknown_fields)]
pub enum PriceRule {
    /// A flat price per call.
    Call {
        /// Price of one call.
        usd: Usd,
    },
    /// A price per output image (`num_images`).
    Image {
        /// Price of one image.
        usd: Usd,
    },
    /// A price per output megapixel (`width` x `height` x `num_images`, or the input size times `scale`).
    Megapixel {
        /// Price of one megapixel.
        usd: Usd,
    },
    /// A price per second of output media (`duration`).
    Second {
        /// Price of one second.
        usd: Usd,
    },
    /// A price per 1,000 characters of prompt text, rounded up to whole thousands.
    ThousandChars {
        /// Price of 1,000 characters.
        usd: Usd,
    },
}

/// Where an engine runs.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Route {
    /// The built-in local implementation of the engine's family.
    #[default]
    Local,
    /// A fal-style queue app, such as `fal-ai/flux-pro/v1.1-ultra`.
    Fal {
        /// The app path submitted to (`POST {queue}/{app}`).
        app: String,
    },
    /// A Replicate-style model, such as `black-forest-labs/flux-schnell`.
    Replicate {
        /// `owner/name`.
        model: String,
        /// A pinned version; without one the model's latest version runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<String>,
    },
}

impl Route {
    /// The provider's name (`fal`, `replicate`), or `None` for the local engines.
    pub fn provider(&self) -> Option<&'static str> {
        match self {
            Route::Local => None,
            Route::Fal { .. } => Some("fal"),
            Route::Replicate { .. } => Some("replicate"),
        }
    }

    /// Parses one route of `ENGINE_ROUTES`: `local`, `fal:APP_PATH` or
    /// `replicate:OWNER/NAME[:VERSION]`.
    pub fn parse(text: &str) -> Result<Route, String> {
        let text = text.trim();
        let segment_ok =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        match text.split_once(':') {
            None if text == "local" => Ok(Route::Local),
            Some(("fal", app)) => {
                let segments: Vec<&str> = app.split('/').collect();
                if segments.len() >= 2 && segments.iter().all(|s| segment_ok(s)) {
                    Ok(Route::Fal { app: app.to_string() })
                } else {
                    Err(format!("{text:?}: a fal route is fal:OWNER/APP[/SUB/PATH]"))
                }
            }
            Some(("replicate", model)) => {
                let (model, version) = match model.split_once(':') {
                    Some((model, version)) => (model, Some(version)),
                    None => (model, None),
                };
                let name_ok =
                    matches!(model.split_once('/'), Some((owner, name)) if segment_ok(owner) && segment_ok(name));
                let version_ok = version.is_none_or(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric()));
                if name_ok && version_ok {
                    Ok(Route::Replicate { model: model.to_string(), version: version.map(str::to_string) })
                } else {
                    Err(format!("{text:?}: a Replicate route is replicate:OWNER/NAME[:VERSION]"))
                }
            }
            _ => Err(format!("{text:?}: a route is local, fal:APP_PATH or replicate:OWNER/NAME[:VERSION]")),
        }
    }
}

/// How an engine is used at a provider. A job's fields become the provider's input: our names (`prompt`, `image_url`, `video_url`,
/// `audio_url` and the engine's params) are renamed to the provider's, where a dotted name nests
/// (`width` to `image_size.width`); names not listed pass through unchanged, and a name mapped to
/// `""` is left out. `extra` fields are added as given (such as `"output_format": "png"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderMapping {
    /// Our field name to the provider's (dotted to nest).
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// Fields added to every input.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// What the provider charges per second of compute it reports, for margin reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_second: Option<Usd>,
}

impl ProviderMapping {
    /// The provider's input for `fields` (our names and values).
    pub fn apply(&self, fields: impl IntoIterator<Item = (String, serde_json::Value)>) -> serde_json::Value {
        let mut input = serde_json::Map::new();
        for (name, value) in fields {
            let target = self.rename.get(&name).map_or(name.as_str(), String::as_str);
            if !target.is_empty() {
                insert_dotted(&mut input, target, value);
            }
        }
        for (name, value) in &self.extra {
            insert_dotted(&mut input, name, value.clone());
        }
        serde_json::Value::Object(input)
    }
}

fn insert_dotted(map: &mut serde_json::Map<String, serde_json::Value>, path: &str, value: serde_json::Value) {
    match path.split_once('.') {
        None => {
            map.insert(path.to_string(), value);
        }
        Some((head, rest)) => {
            let entry = map.entry(head.to_string()).or_insert_with(|| serde_json::Value::Object(Default::default()));
            if !entry.is_object() {
                *entry = serde_json::Value::Object(Default::default());
            }
            if let serde_json::Value::Object(inner) = entry {
                insert_dotted(inner, rest, value);
            }
        }
    }
}

/// One engine of the catalog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// Engine id, the `model` of a generate request.
    pub id: String,
    /// What the engine does.
    pub family: Family,
    /// A short human-readable description.
    pub title: String,
    /// Which top-level inputs it needs or accepts.
    pub inputs: EngineInputs,
    /// Accepted `params` keys and their rules; any other key is refused.
    #[serde(default)]
    pub params: BTreeMap<String, ParamRule>,
    /// How the price of a job is computed.
    pub price: PriceRule,
    /// Where it runs.
    #[serde(default)]
    pub route: Route,
    /// How it is used at each provider (input mapping, compute cost), by provider name (`fal`,
    /// `replicate`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provider_input: BTreeMap<String, ProviderMapping>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_names_are_the_catalogs_spelling() {
        for family in Family::PUBLIC.into_iter().chain([Family::Recipe]) {
            assert_eq!(serde_json::to_value(family).unwrap(), family.name());
        }
    }
}
