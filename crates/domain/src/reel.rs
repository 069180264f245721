//! The request body of the reel recipe (`POST /v1/recipes/reel`): up to three listing photos and
//! the listing's details, made into a captioned vertical video. Unknown fields are refused with
//! 400 naming them; the recipes crate checks ranges and URLs.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use crate::limits::REEL_MAX_PHOTOS;

/// Body of `POST /v1/recipes/reel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReelRequest {
    /// 1 to 3 listing stills, in the order they appear: each a URL (absolute http(s) or `data:`
    /// URI; PNG or JPEG) or `{"url": .., "caption": ..}`.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::limits::schema::ReelPhotos, inline))]
    pub photos: Vec<ReelPhoto>,
    /// The listing's details, burned in as captions and spoken by the voiceover. All optional;
    /// what is missing is left out, never invented.
    #[serde(default)]
    pub details: ListingDetails,
    /// Length, audio and brand colours.
    #[serde(default)]
    pub params: ReelParams,
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

/// One still of a reel: a URL, with an optional caption shown over it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReelPhoto {
    /// The photo (absolute http(s) URL or `data:` URI; PNG or JPEG).
    pub url: String,
    /// A line shown over this photo, such as "Chef's kitchen".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
}

impl<'de> Deserialize<'de> for ReelPhoto {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (url, caption, _) = photo_fields(Value::deserialize(deserializer)?, false)?;
        Ok(ReelPhoto { url, caption })
    }
}

/// A listing photo given as a URL string or as an object: its `url`, its `caption`, and, where
/// `staged` is allowed (the listing kit), whether it is virtually staged. Unknown fields are
/// refused by name.
pub(crate) fn photo_fields<E: serde::de::Error>(
    value: Value,
    staged_allowed: bool,
) -> Result<(String, Option<String>, bool), E> {
    let expected = if staged_allowed { "`url`, `caption` or `staged`" } else { "`url` or `caption`" };
    let map = match value {
        Value::String(url) => return Ok((url, None, false)),
        Value::Object(map) => map,
        _ => return Err(E::custom(format!("expected a photo URL string or an object with {expected}"))),
    };
    let known = |k: &str| matches!(k, "url" | "caption") || (staged_allowed && k == "staged");
    if let Some(unknown) = map.keys().find(|k| !known(k)) {
        return Err(E::custom(format!("unknown field `{unknown}`, expected {expected}")));
    }
    let url = match map.get("url") {
        Some(Value::String(url)) => url.clone(),
        Some(_) => return Err(E::custom("url: expected a string")),
        None => return Err(E::custom("missing field `url`")),
    };
    let caption = match map.get("caption") {
        None | Some(Value::Null) => None,
        Some(Value::String(caption)) => Some(caption.clone()),
        Some(_) => return Err(E::custom("caption: expected a string")),
    };
    let staged = match map.get("staged") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(staged)) => *staged,
        Some(_) => return Err(E::custom("staged: expected true or false")),
    };
    Ok((url, caption, staged))
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ReelPhoto {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::limits::schema::photo(false)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ReelPhoto {}

/// A listing's details, shared by the reel and the listing kit. Every field is optional; what is
/// missing is left out, never invented. The reel shows the address, price, beds, baths, area,
/// headline and the agent's name, brokerage and phone; the kit uses every field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ListingDetails {
    /// Street address, such as "42 Harbor Lane, Mystic, CT".
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::DetailText>, inline))]
    pub address: Option<String>,
    /// Asking price in US dollars: a number (525000) or text as written ("$525,000").
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Price>, inline))]
    pub price: Option<Amount>,
    /// Bedrooms.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Rooms>, inline))]
    pub beds: Option<f64>,
    /// Bathrooms (2.5 for two full and one half).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Rooms>, inline))]
    pub baths: Option<f64>,
    /// Interior living area, square feet.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::SquareFeet>, inline))]
    pub square_feet: Option<f64>,
    /// A short headline, such as "Waterfront colonial with a private dock".
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::DetailText>, inline))]
    pub headline: Option<String>,
    /// The listing agent's name, for the end card.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::DetailText>, inline))]
    pub agent_name: Option<String>,
    /// The brokerage, for the end card.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::DetailText>, inline))]
    pub brokerage: Option<String>,
    /// The agent's phone number, for the end card.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::DetailText>, inline))]
    pub phone: Option<String>,
    /// Lot size: a number of acres (0.25) or text as written ("10,890 sq ft lot").
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::LotSize>, inline))]
    pub lot_size: Option<Amount>,
    /// Year built, 1600 to 2100.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::YearBuilt>, inline))]
    pub year_built: Option<i64>,
    /// The listing description, in sentences.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Description>, inline))]
    pub description: Option<String>,
    /// Features as short phrases ("Quartz counters", "Two-car garage"), at most 20.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Features>, inline))]
    pub features: Option<Vec<String>>,
    /// Open house, as it should read ("Saturday, June 7, 1-3 pm").
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::DetailText>, inline))]
    pub open_house: Option<String>,
    /// The agent's email.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Email>, inline))]
    pub email: Option<String>,
    /// The agent's licence number.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::LicenseNumber>, inline))]
    pub license_number: Option<String>,
}

/// A dollar amount given as a number or as text; described by `limits::schema::Price` and
/// `limits::schema::LotSize`, which carry its limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Amount {
    /// A number of dollars.
    Number(f64),
    /// Text such as "$525,000" or "Offers over $500k".
    Text(String),
}

/// `params` of the reel recipe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReelParams {
    /// Length in seconds, 6 to 30 (default 15).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::ReelSeconds>, inline))]
    pub duration: Option<f64>,
    /// Speak a script written from the details (text-to-speech), as an AAC track.
    #[serde(default)]
    pub voiceover: Option<bool>,
    /// Lay a music bed under the reel (ducked under the voiceover), as an AAC track.
    #[serde(default)]
    pub music: Option<bool>,
    /// Brand colours of the caption plates and the end card.
    #[serde(default)]
    pub brand: Option<BrandColors>,
}

/// Brand colours as `#RRGGBB`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BrandColors {
    /// Main colour: the end card's background and the plates' accent bar.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Colour>, inline))]
    pub primary: Option<String>,
    /// Second colour: prices and rules.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Colour>, inline))]
    pub accent: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn photos_take_both_shapes_and_name_bad_fields() {
        let request: ReelRequest = serde_json::from_value(json!({
            "photos": ["https://e.com/a.jpg", {"url": "https://e.com/b.jpg", "caption": "Kitchen"}],
            "details": {"price": "$525,000", "beds": 3},
        }))
        .unwrap();
        assert_eq!(request.photos[1].caption.as_deref(), Some("Kitchen"));
        assert_eq!(request.details.price, Some(Amount::Text("$525,000".into())));
        let bad = serde_json::from_value::<ReelRequest>(json!({"photos": [{"url": "u", "alt": "x"}]})).unwrap_err();
        assert!(bad.to_string().contains("unknown field `alt`"), "{bad}");
        let bad =
            serde_json::from_value::<ReelRequest>(json!({"photos": ["u"], "details": {"pool": true}})).unwrap_err();
        assert!(bad.to_string().contains("unknown field `pool`"), "{bad}");
        assert!(serde_json::from_value::<ReelRequest>(json!({"photos": [7]})).is_err());
    }
}
