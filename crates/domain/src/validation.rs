//! Validation of a generate request against an engine's catalog entry, and its price quote.

use crate::catalog::{EngineSpec, InputRequirement, ParamRule, PriceRule};
use crate::money::Usd;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::str::FromStr;

pub use crate::limits::{MAX_DATA_URI_CHARS, MAX_PROMPT_CHARS, MAX_URL_CHARS};

/// Body of `POST /v1/generate`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GenerateRequest {
    /// Engine id; `GET /v1` lists them.
    pub model: String,
    /// Text prompt, when the engine takes one.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Prompt>, inline))]
    pub prompt: Option<String>,
    /// Input image (absolute http(s) URL or `data:` URI).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::InputUrl>, inline))]
    pub image_url: Option<String>,
    /// Input video (absolute http(s) URL or `data:` URI).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::InputUrl>, inline))]
    pub video_url: Option<String>,
    /// Input audio (absolute http(s) URL or `data:` URI).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::InputUrl>, inline))]
    pub audio_url: Option<String>,
    /// Engine-specific parameters; `GET /v1` lists each engine's keys and their rules.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub params: Option<Map<String, Value>>,
    /// Where to POST this task's JSON (what its poll returns) when it ends, and when it starts if
    /// `webhook_events` lists `running`: an absolute http(s) URL on a public address. Signed by the
    /// Standard Webhooks convention with the key's `whsec_` secret. Default: the key's default
    /// webhook, if one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::WebhookUrl>, inline))]
    pub webhook_url: Option<String>,
    /// The events sent to `webhook_url` (or, without it, to the key's default webhook):
    /// `completed` (the terminal state, always sent) and `running`. Default: `["completed"]`, or
    /// the key default's own events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_events: Option<Vec<crate::WebhookEvent>>,
}

/// A request that passed validation, with defaults filled in and its price quoted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidatedJob {
    /// Engine id.
    pub model: String,
    /// Prompt, if given.
    pub prompt: Option<String>,
    /// Input image URL, if given.
    pub image_url: Option<String>,
    /// Input video URL, if given.
    pub video_url: Option<String>,
    /// Input audio URL, if given.
    pub audio_url: Option<String>,
    /// Every parameter of the engine, defaults included.
    pub params: Map<String, Value>,
    /// The published price of this job.
    pub price: Usd,
}

impl ValidatedJob {
    /// The upscaling factor asked for (the `scale` parameter); 0 when the engine takes none.
    pub fn upscale(&self) -> u32 {
        self.int_param("scale").and_then(|scale| u32::try_from(scale).ok()).unwrap_or(0)
    }

    /// An integer parameter (validated, so present whenever the engine declares it).
    pub fn int_param(&self, key: &str) -> Option<i64> {
        self.params.get(key).and_then(Value::as_i64)
    }

    /// A string parameter.
    pub fn str_param(&self, key: &str) -> Option<&str> {
        self.params.get(key).and_then(Value::as_str)
    }

    /// Every field of the job by our name: the prompt, the input URLs and the parameters (what a
    /// provider's input is made from).
    pub fn fields(&self) -> Vec<(String, Value)> {
        let top = [
            ("prompt", &self.prompt),
            ("image_url", &self.image_url),
            ("video_url", &self.video_url),
            ("audio_url", &self.audio_url),
        ];
        let top = top.into_iter().filter_map(|(name, value)| Some((name.to_string(), Value::String(value.clone()?))));
        top.chain(self.params.iter().map(|(k, v)| (k.clone(), v.clone()))).collect()
    }
}

/// A request field that is missing or wrong; the message names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ValidationError {
    /// Path of the offending field, such as `params.duration`.
    pub field: String,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl ValidationError {
    /// Builds an error for `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ValidationError { field: field.into(), message: message.into() }
    }
}

/// Quantities a job produces, from which its price (expected) or cost (actual) is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Produced {
    /// Number of images.
    pub images: u32,
    /// Total pixels over all images or frames of one image size.
    pub pixels: u64,
    /// Seconds of video or audio, in milliseconds.
    pub millis: u64,
    /// Characters of text spoken or read.
    pub chars: u64,
    /// The short side of the video's frames, in pixels (720 for 720p, landscape or portrait); 0
    /// when the output is not video or its size is not known.
    #[serde(default)]
    pub frame_short_side: u32,
    /// The upscaling factor the job was asked for (its `scale`); 0 when it does not upscale.
    #[serde(default)]
    pub upscale: u32,
}

/// How the price of a second of video follows its resolution: the catalog's per-second price is
/// for 480p; 360p costs half, 720p twice and 1080p (or more) four times as much, roughly the
/// ratio of their pixels. Output that is not video, or whose size is unknown, is priced at the
/// catalog's rate.
pub fn resolution_factor(frame_short_side: u32) -> Decimal {
    match frame_short_side {
        0 => Decimal::ONE,
        1..=360 => Decimal::new(5, 1),
        361..=480 => Decimal::ONE,
        481..=720 => Decimal::from(2),
        _ => Decimal::from(4),
    }
}

/// How a per-call price follows the upscaling factor: the catalog's price is for 2x (or no
/// scale); the work grows with the output's pixels, so 3x costs 2.25 times and 4x four times as
/// much.
pub fn upscale_factor(scale: u32) -> Decimal {
    if scale <= 2 {
        Decimal::ONE
    } else {
        Decimal::from(u64::from(scale) * u64::from(scale)) / Decimal::from(4)
    }
}

/// The largest image a per-image price covers (1024x1024); larger images cost in proportion to
/// their pixels.
pub const IMAGE_PRICE_PIXELS: u64 = 1_048_576;

/// How many image prices `produced` is billed: one per image, or the images' pixels in units of
/// [`IMAGE_PRICE_PIXELS`] when that is more (a 2048x2048 image is four).
fn image_units(produced: &Produced) -> Decimal {
    let by_size = Decimal::from(produced.pixels) / Decimal::from(IMAGE_PRICE_PIXELS);
    Decimal::from(produced.images).max(by_size)
}

/// The short side of a `resolution` parameter such as `720p`.
fn resolution_lines(resolution: &str) -> Option<u32> {
    resolution.strip_suffix('p')?.parse().ok()
}

impl PriceRule {
    /// The amount this rule charges for `produced`.
    pub fn amount(&self, produced: &Produced) -> Usd {
        let quantity = match self {
            PriceRule::Call { .. } => upscale_factor(produced.upscale),
            PriceRule::Image { .. } => image_units(produced),
            PriceRule::Megapixel { .. } => Decimal::from(produced.pixels) / Decimal::from(1_000_000),
            PriceRule::Second { .. } => {
                Decimal::from(produced.millis) / Decimal::from(1_000) * resolution_factor(produced.frame_short_side)
            }
            PriceRule::ThousandChars { .. } => Decimal::from(produced.chars.div_ceil(1_000)),
        };
        Usd::new(self.unit_price().as_decimal() * quantity)
    }

    /// Price of one unit of this rule.
    pub fn unit_price(&self) -> Usd {
        match self {
            PriceRule::Call { usd }
            | PriceRule::Image { usd }
            | PriceRule::Megapixel { usd }
            | PriceRule::Second { usd }
            | PriceRule::ThousandChars { usd } => *usd,
        }
    }
}

impl EngineSpec {
    /// Checks the entry is usable: pricing by megapixel needs `width` and `height`, by second a
    /// `duration`, and parameter defaults lie within their ranges.
    pub fn check(&self) -> Result<(), String> {
        let needs: &[&str] = match self.price {
            PriceRule::Megapixel { .. } => &["width", "height"],
            PriceRule::Second { .. } => &["duration"],
            _ => &[],
        };
        for key in needs {
            if !self.params.contains_key(*key) {
                return Err(format!("engine {}: its price rule needs a `{key}` parameter", self.id));
            }
        }
        if let Some(name) = self.provider_input.keys().find(|name| !["fal", "replicate"].contains(&name.as_str())) {
            return Err(format!("engine {}: provider_input names an unknown provider {name:?}", self.id));
        }
        for (key, rule) in &self.params {
            let ok = match rule {
                ParamRule::Integer { min, max, default } => min <= default && default <= max,
                ParamRule::String { one_of, default: Some(default), .. } => {
                    one_of.is_empty() || one_of.contains(default)
                }
                ParamRule::Number { min, max, default } => min <= default && default <= max,
                _ => true,
            };
            if !ok {
                return Err(format!("engine {}: default of `{key}` is outside its range", self.id));
            }
        }
        Ok(())
    }

    /// Validates `request` against this engine and quotes its price.
    pub fn validate(&self, request: &GenerateRequest) -> Result<ValidatedJob, ValidationError> {
        let prompt = check_prompt(self, request.prompt.as_deref())?;
        let image_url = check_url_input("image_url", self.inputs.image_url, request.image_url.as_deref(), self)?;
        let video_url = check_url_input("video_url", self.inputs.video_url, request.video_url.as_deref(), self)?;
        let audio_url = check_url_input("audio_url", self.inputs.audio_url, request.audio_url.as_deref(), self)?;
        let params = check_params(self, request.params.as_ref())?;
        let mut job =
            ValidatedJob { model: self.id.clone(), prompt, image_url, video_url, audio_url, params, price: Usd::ZERO };
        job.price = self.price.amount(&self.expected_output(&job));
        Ok(job)
    }

    /// What a job is expected to produce, from its parameters; the basis of its quoted price.
    pub fn expected_output(&self, job: &ValidatedJob) -> Produced {
        let images = job.int_param("num_images").unwrap_or(1).max(1) as u32;
        let width = job.int_param("width").unwrap_or(1024).max(0) as u64;
        let height = job.int_param("height").unwrap_or(1024).max(0) as u64;
        let seconds = job.int_param("duration").unwrap_or(0).max(0) as u64;
        Produced {
            images,
            pixels: width * height * u64::from(images),
            millis: seconds * 1_000,
            chars: job.prompt.as_deref().map_or(0, |p| p.chars().count() as u64),
            frame_short_side: job.str_param("resolution").and_then(resolution_lines).unwrap_or(0),
            upscale: job.upscale(),
        }
    }
}

fn check_prompt(spec: &EngineSpec, prompt: Option<&str>) -> Result<Option<String>, ValidationError> {
    let prompt = prompt.map(str::trim).filter(|p| !p.is_empty());
    match (spec.inputs.prompt, prompt) {
        (InputRequirement::Required, None) => {
            Err(ValidationError::new("prompt", format!("required by model {}", spec.id)))
        }
        (InputRequirement::Rejected, Some(_)) => {
            Err(ValidationError::new("prompt", format!("not accepted by model {}", spec.id)))
        }
        (_, Some(p)) if p.chars().count() > MAX_PROMPT_CHARS => {
            Err(ValidationError::new("prompt", format!("longer than {MAX_PROMPT_CHARS} characters")))
        }
        (_, p) => Ok(p.map(str::to_string)),
    }
}

fn check_url_input(
    field: &str,
    requirement: InputRequirement,
    value: Option<&str>,
    spec: &EngineSpec,
) -> Result<Option<String>, ValidationError> {
    match (requirement, value) {
        (InputRequirement::Required, None) => {
            Err(ValidationError::new(field, format!("required by model {}", spec.id)))
        }
        (InputRequirement::Rejected, Some(_)) => {
            Err(ValidationError::new(field, format!("not accepted by model {}", spec.id)))
        }
        (_, Some(url)) => check_input_url(url).map(Some).map_err(|m| ValidationError::new(field, m)),
        (_, None) => Ok(None),
    }
}

/// Checks that `url` is an absolute http(s) URL or a `data:` URI of acceptable size.
pub fn check_input_url(url: &str) -> Result<String, String> {
    if let Some(rest) = url.strip_prefix("data:") {
        if url.len() > MAX_DATA_URI_CHARS {
            return Err(format!("data: URI longer than {MAX_DATA_URI_CHARS} characters; pass an http(s) URL"));
        }
        return match rest.split_once(',') {
            Some((meta, _)) if meta.ends_with(";base64") => Ok(url.to_string()),
            _ => Err("data: URI must be base64 encoded (data:<type>;base64,<data>)".to_string()),
        };
    }
    if url.len() > MAX_URL_CHARS {
        return Err(format!("URL longer than {MAX_URL_CHARS} characters"));
    }
    let parsed = url::Url::parse(url).map_err(|_| "must be an absolute http(s) URL or a data: URI".to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
        return Err("must be an absolute http(s) URL or a data: URI".to_string());
    }
    if crate::url_host::has_reserved_label(&parsed) {
        return Err(crate::url_host::RESERVED_LABEL.to_string());
    }
    Ok(url.to_string())
}

fn check_params(spec: &EngineSpec, given: Option<&Map<String, Value>>) -> Result<Map<String, Value>, ValidationError> {
    let empty = Map::new();
    let given = given.unwrap_or(&empty);
    if let Some(unknown) = given.keys().find(|k| !spec.params.contains_key(*k)) {
        let known: Vec<&str> = spec.params.keys().map(String::as_str).collect();
        let accepted = if known.is_empty() { "none".to_string() } else { known.join(", ") };
        return Err(ValidationError::new(
            format!("params.{unknown}"),
            format!("unknown parameter for model {}; accepted: {accepted}", spec.id),
        ));
    }
    let mut out = Map::new();
    for (key, rule) in &spec.params {
        let field = format!("params.{key}");
        if let Some(value) = check_param(&field, rule, given.get(key))? {
            out.insert(key.clone(), value);
        }
    }
    Ok(out)
}

fn check_param(field: &str, rule: &ParamRule, value: Option<&Value>) -> Result<Option<Value>, ValidationError> {
    let value = match value {
        None | Some(Value::Null) => {
            return match rule {
                ParamRule::Integer { default, .. } => Ok(Some(Value::from(*default))),
                ParamRule::Number { default, .. } => Ok(Some(Value::String(default.to_string()))),
                ParamRule::Boolean { default } => Ok(Some(Value::Bool(*default))),
                ParamRule::Url { required: true } => Err(ValidationError::new(field, "required")),
                ParamRule::String { default, .. } => Ok(default.clone().map(Value::String)),
                ParamRule::Url { .. } => Ok(None),
            }
        }
        Some(value) => value,
    };
    match rule {
        ParamRule::Integer { min, max, .. } => match value.as_i64() {
            Some(n) if (*min..=*max).contains(&n) => Ok(Some(Value::from(n))),
            _ => Err(ValidationError::new(field, format!("must be an integer from {min} to {max}"))),
        },
        ParamRule::Number { min, max, .. } => {
            // Parsed from the JSON text, never through f64, so the value stays exact.
            let number = match value {
                Value::Number(n) => {
                    Decimal::from_str(&n.to_string()).or_else(|_| Decimal::from_scientific(&n.to_string())).ok()
                }
                _ => None,
            };
            match number {
                Some(n) if *min <= n && n <= *max => Ok(Some(Value::String(n.normalize().to_string()))),
                _ => Err(ValidationError::new(field, format!("must be a number from {min} to {max}"))),
            }
        }
        ParamRule::String { one_of, max_len, .. } => match value.as_str() {
            Some(s) if !one_of.is_empty() && !one_of.iter().any(|o| o == s) => {
                Err(ValidationError::new(field, format!("must be one of: {}", one_of.join(", "))))
            }
            Some(s) if s.chars().count() > *max_len => {
                Err(ValidationError::new(field, format!("longer than {max_len} characters")))
            }
            Some(s) => Ok(Some(Value::String(s.to_string()))),
            None => Err(ValidationError::new(field, "must be a string")),
        },
        ParamRule::Boolean { .. } => match value {
            Value::Bool(b) => Ok(Some(Value::Bool(*b))),
            _ => Err(ValidationError::new(field, "must be true or false")),
        },
        ParamRule::Url { .. } => match value.as_str() {
            Some(url) => {
                check_input_url(url).map(|u| Some(Value::String(u))).map_err(|m| ValidationError::new(field, m))
            }
            None => Err(ValidationError::new(field, "must be a URL string")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{EngineInputs, Family, Route};
    use rust_decimal_macros::dec;
    use serde_json::json;

    fn video_engine() -> EngineSpec {
        EngineSpec {
            id: "theta-i2v".into(),
            family: Family::ImageToVideo,
            title: "test".into(),
            inputs: EngineInputs {
                prompt: InputRequirement::Optional,
                image_url: InputRequirement::Required,
                ..Default::default()
            },
            params: [
                ("duration".to_string(), ParamRule::Integer { min: 1, max: 10, default: 5 }),
                ("strength".to_string(), ParamRule::Number { min: dec!(0), max: dec!(1), default: dec!(0.5) }),
                (
                    "style".to_string(),
                    ParamRule::String { one_of: vec!["calm".into(), "fast".into()], max_len: 20, default: None },
                ),
                (
                    "resolution".to_string(),
                    ParamRule::String {
                        one_of: vec!["360p".into(), "480p".into(), "720p".into(), "1080p".into()],
                        max_len: 8,
                        default: Some("480p".into()),
                    },
                ),
            ]
            .into_iter()
            .collect(),
            price: PriceRule::Second { usd: Usd::new(dec!(0.05)) },
            route: Route::Local,
            provider_input: Default::default(),
        }
    }

    #[test]
    fn hosts_with_a_reserved_label_are_refused_as_the_schema_leaves_them_out() {
        for refused in ["http://xn--aA-.A", "https://ab--c.example.com/x.png", "http://xn--p1ai/x.png"] {
            assert!(check_input_url(refused).is_err(), "{refused}");
        }
        for accepted in ["http://a-b.example.com/x.png", "https://a--.example.com/x.png", "http://ab-c--d.io/"] {
            assert!(check_input_url(accepted).is_ok(), "{accepted}");
        }
    }

    fn request(value: Value) -> GenerateRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn quotes_per_second_with_defaults() {
        let job = video_engine()
            .validate(&request(json!({"model": "theta-i2v", "image_url": "https://example.com/a.png"})))
            .unwrap();
        assert_eq!(job.price.to_string(), "0.2500");
        assert_eq!(job.params["duration"], json!(5));
        let job = video_engine()
            .validate(&request(
                json!({"model": "theta-i2v", "image_url": "https://e.com/a.png", "params": {"duration": 2}}),
            ))
            .unwrap();
        assert_eq!(job.price.to_string(), "0.1000");
    }

    #[test]
    fn a_second_of_video_is_priced_by_its_resolution() {
        let quote = |resolution: &str| {
            let body =
                json!({"model": "theta-i2v", "image_url": "https://e.com/a.png", "params": {"resolution": resolution}});
            video_engine().validate(&request(body)).unwrap().price.to_string()
        };
        assert_eq!(
            [quote("360p"), quote("480p"), quote("720p"), quote("1080p")],
            ["0.1250", "0.2500", "0.5000", "1.0000"]
        );
        // What was made is billed by its own frames: a portrait 720p clip is 720p.
        let made = |short_side: u32| Produced { millis: 5_000, frame_short_side: short_side, ..Produced::default() };
        let rule = PriceRule::Second { usd: Usd::new(dec!(0.05)) };
        assert_eq!(rule.amount(&made(720)).to_string(), "0.5000");
        assert_eq!(rule.amount(&made(0)).to_string(), "0.2500", "not video: the catalog's rate");
    }

    #[test]
    fn an_upscale_is_priced_by_its_factor_and_an_image_by_its_size() {
        let call = PriceRule::Call { usd: Usd::new(dec!(0.03)) };
        let upscaled = |scale: u32| call.amount(&Produced { upscale: scale, images: 1, ..Produced::default() });
        assert_eq!(
            [upscaled(0), upscaled(2), upscaled(3), upscaled(4)].map(|usd| usd.to_string()),
            ["0.0300", "0.0300", "0.0675", "0.1200"]
        );
        let image = PriceRule::Image { usd: Usd::new(dec!(0.06)) };
        let made = |images: u32, side: u64| Produced {
            images,
            pixels: u64::from(images) * side * side,
            ..Produced::default()
        };
        assert_eq!(image.amount(&made(1, 512)).to_string(), "0.0600", "small images cost one price each");
        assert_eq!(image.amount(&made(2, 1024)).to_string(), "0.1200");
        assert_eq!(image.amount(&made(1, 2048)).to_string(), "0.2400", "four times the pixels of 1024x1024");
        assert_eq!(image.amount(&made(2, 1536)).to_string(), "0.2700", "2 x 2.25");
    }

    #[test]
    fn errors_name_the_field() {
        let spec = video_engine();
        let cases = [
            (json!({"model": "theta-i2v"}), "image_url"),
            (json!({"model": "theta-i2v", "image_url": "ftp://x/y"}), "image_url"),
            (json!({"model": "theta-i2v", "image_url": "/relative.png"}), "image_url"),
            (
                json!({"model": "theta-i2v", "image_url": "https://e.com/a", "video_url": "https://e.com/v"}),
                "video_url",
            ),
            (
                json!({"model": "theta-i2v", "image_url": "https://e.com/a", "params": {"duration": 11}}),
                "params.duration",
            ),
            (
                json!({"model": "theta-i2v", "image_url": "https://e.com/a", "params": {"duration": 2.5}}),
                "params.duration",
            ),
            (
                json!({"model": "theta-i2v", "image_url": "https://e.com/a", "params": {"strength": 1.5}}),
                "params.strength",
            ),
            (
                json!({"model": "theta-i2v", "image_url": "https://e.com/a", "params": {"style": "slow"}}),
                "params.style",
            ),
            (json!({"model": "theta-i2v", "image_url": "https://e.com/a", "params": {"seed2": 1}}), "params.seed2"),
        ];
        for (body, field) in cases {
            let err = spec.validate(&request(body.clone())).unwrap_err();
            assert_eq!(err.field, field, "{body}");
        }
    }

    #[test]
    fn accepts_base64_data_uris_only() {
        assert!(check_input_url("data:image/png;base64,iVBORw0KGgo=").is_ok());
        assert!(check_input_url("data:text/plain,hello").is_err());
    }

    #[test]
    fn numbers_stay_exact() {
        let job = video_engine()
            .validate(&request(
                json!({"model": "theta-i2v", "image_url": "https://e.com/a", "params": {"strength": 0.1}}),
            ))
            .unwrap();
        assert_eq!(job.params["strength"], json!("0.1"));
    }
}
