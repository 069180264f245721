//! The request body of the listing-kit recipe (`POST /v1/recipes/listing-kit`): listing photos
//! and details made into a brand-locked marketing kit (print flyer, social posts, story, captions).
//! Unknown fields are refused with 400 naming them; the recipes crate checks ranges and URLs.

use crate::reel::{photo_fields, ListingDetails};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use crate::limits::KIT_MAX_PHOTOS;

/// Body of `POST /v1/recipes/listing-kit`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ListingKitRequest {
    /// 1 to 10 listing photos, the first the hero: each a URL (absolute http(s) or `data:` URI;
    /// PNG or JPEG) or `{"url": .., "caption": .., "staged": ..}`.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::limits::schema::KitPhotos, inline))]
    pub photos: Vec<KitPhoto>,
    /// The listing's details. Required; every field in it is optional.
    pub details: ListingDetails,
    /// Brand, paper size and the MLS remarks limit.
    #[serde(default)]
    pub params: KitParams,
}

/// One photo of the kit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KitPhoto {
    /// The photo (absolute http(s) URL or `data:` URI; PNG or JPEG).
    pub url: String,
    /// What it shows, such as "Chef's kitchen".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// Virtually staged: every piece then carries the disclosure.
    #[serde(default)]
    pub staged: bool,
}

impl<'de> Deserialize<'de> for KitPhoto {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (url, caption, staged) = photo_fields(Value::deserialize(deserializer)?, true)?;
        Ok(KitPhoto { url, caption, staged })
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for KitPhoto {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::limits::schema::photo(true)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for KitPhoto {}

/// `params` of the listing kit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct KitParams {
    /// The brand every piece is locked to.
    #[serde(default)]
    pub brand: Option<KitBrand>,
    /// The flyer's paper: `letter` (default) or `a4`.
    #[serde(default)]
    pub paper: Option<Paper>,
    /// Longest MLS remarks, characters, 100 to 5,000 (default 1,000).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::MlsRemarksMax>, inline))]
    pub mls_remarks_max: Option<i64>,
}

/// Colours, logo and typeface of the brand.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct KitBrand {
    /// Main colour as `#RRGGBB`: bands and backgrounds.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Colour>, inline))]
    pub primary: Option<String>,
    /// Second colour as `#RRGGBB`: rules, prices and highlights.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Colour>, inline))]
    pub accent: Option<String>,
    /// The logo, PNG or JPEG (absolute http(s) URL or `data:` URI).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::InputUrl>, inline))]
    pub logo_url: Option<String>,
    /// The typeface of headings and prices.
    #[serde(default)]
    pub font: Option<KitFont>,
}

/// A shipped typeface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum KitFont {
    /// Inter: a clean modern sans serif (the default).
    #[default]
    Inter,
    /// EB Garamond: a classic serif for headings, with Inter for body text.
    Garamond,
}

/// Flyer paper.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Paper {
    /// US Letter, 8.5 x 11 in.
    #[default]
    Letter,
    /// ISO A4, 210 x 297 mm.
    A4,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn photos_take_both_shapes_and_unknown_fields_are_named() {
        let request: ListingKitRequest = serde_json::from_value(json!({
            "photos": ["https://e.com/a.jpg", {"url": "https://e.com/b.jpg", "caption": "Kitchen", "staged": true}],
            "details": {"price": 525000, "features": ["Quartz counters"], "year_built": 1998},
            "params": {"brand": {"primary": "#112233", "font": "garamond"}, "paper": "a4"},
        }))
        .unwrap();
        assert!(request.photos[1].staged && !request.photos[0].staged);
        assert_eq!(request.params.paper, Some(Paper::A4));
        assert_eq!(request.params.brand.unwrap().font, Some(KitFont::Garamond));
        for bad in [
            json!({"photos": ["u"], "details": {"pool": true}}),
            json!({"photos": [{"url": "u", "alt": "x"}], "details": {}}),
            json!({"photos": ["u"], "details": {}, "params": {"paper": "legal"}}),
            json!({"photos": ["u"], "details": {}, "params": {"brand": {"font": "comic"}}}),
            json!({"photos": ["u"]}),
        ] {
            assert!(serde_json::from_value::<ListingKitRequest>(bad.clone()).is_err(), "{bad}");
        }
    }
}
