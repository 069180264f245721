//! The request body of each recipe endpoint. Each type carries only the fields its recipe uses, so
//! an unknown or misplaced field is refused with 400 naming it; the recipes crate checks the rest.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Body of `POST /v1/recipes/listing-enhance`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ListingEnhanceRequest {
    /// The raw interior, exterior or drone photo (absolute http(s) URL or `data:` URI; PNG or JPEG).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::limits::schema::InputUrl, inline))]
    pub image_url: String,
    /// Edit guidance that steers the result, such as "brighter and warmer", "more contrast",
    /// "twilight", "straighten verticals".
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Notes>, inline))]
    pub notes: Option<String>,
    /// Same as `notes` (recipes accept a prompt in general); both are read when both are given.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Notes>, inline))]
    pub prompt: Option<String>,
    /// Export and correction settings.
    #[serde(default)]
    pub params: ListingEnhanceParams,
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

/// `params` of listing-enhance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ListingEnhanceParams {
    /// Export preset: `mls` (default: JPEG, long edge at most 2048 px, under 3 MB), `web` (JPEG,
    /// long edge at most 1600 px) or `print` (full resolution).
    #[serde(default)]
    pub preset: Option<ExportPreset>,
    /// File format of the result: `jpeg` (default) or `png`. MLS exports are always JPEG.
    #[serde(default)]
    pub output_format: Option<ImageFormat>,
    /// Correct converging and tilted verticals (walls, door frames). Also asked for by notes such
    /// as "straighten verticals".
    #[serde(default)]
    pub straighten: Option<bool>,
}

/// Where an enhanced listing photo is going, which decides its size and encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ExportPreset {
    /// Multiple-listing-service upload: JPEG, long edge at most 2048 px, under 3 MB.
    #[default]
    Mls,
    /// Web pages: JPEG, long edge at most 1600 px.
    Web,
    /// Print: full resolution, high-quality JPEG or PNG.
    Print,
}

/// An image file format of a recipe's result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// JPEG.
    #[default]
    Jpeg,
    /// PNG (lossless).
    Png,
}

/// Body of `POST /v1/recipes/lot-trace`: an aerial photo, the parcel boundary (pixel `points` or
/// `params.geojson`) and the ground scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LotTraceRequest {
    /// The aerial or satellite photo (absolute http(s) URL or `data:` URI; PNG or JPEG).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::limits::schema::InputUrl, inline))]
    pub image_url: String,
    /// The parcel boundary in image pixels (origin top left, x right, y down): 3 to 1,000 points
    /// of a simple polygon, in order around it. Required unless `params.geojson` is given.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::TracePoints>, inline))]
    pub points: Option<Vec<PixelPoint>>,
    /// Ground scale, geo-reference and, instead of `points`, a GeoJSON boundary.
    #[serde(default)]
    pub params: LotTraceParams,
}

/// One boundary point in image pixels: `[x, y]` or `{"x": .., "y": ..}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PixelPoint {
    /// Pixels from the left edge.
    pub x: f64,
    /// Pixels from the top edge.
    pub y: f64,
}

impl<'de> Deserialize<'de> for PixelPoint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTED: &str = "expected a point as [x, y] or {\"x\": .., \"y\": ..} with numbers";
        let value = Value::deserialize(deserializer)?;
        let (x, y) = match &value {
            Value::Array(pair) if pair.len() == 2 => (pair[0].as_f64(), pair[1].as_f64()),
            Value::Object(map) if map.len() == 2 => {
                (map.get("x").and_then(Value::as_f64), map.get("y").and_then(Value::as_f64))
            }
            _ => (None, None),
        };
        match (x, y) {
            (Some(x), Some(y)) => Ok(PixelPoint { x, y }),
            _ => Err(serde::de::Error::custom(EXPECTED)),
        }
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for PixelPoint {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::limits::schema::pixel_point()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for PixelPoint {}

/// `params` of lot-trace. Give exactly one scale: `meters_per_pixel` (a planar image), `latitude`
/// with `zoom` (a web-mercator tile image; add `longitude` of the image centre to geo-reference
/// it), or `bounds` (a web-mercator image whose edges are known).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LotTraceParams {
    /// Ground metres per image pixel (orthophoto or drone map); planar measurement.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::MetersPerPixel>, inline))]
    pub meters_per_pixel: Option<f64>,
    /// Latitude of the image centre, degrees (web-mercator tile image).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Latitude>, inline))]
    pub latitude: Option<f64>,
    /// Longitude of the image centre, degrees; with `latitude` and `zoom` it geo-references the
    /// image (lon/lat centroid and a GeoJSON polygon in the result).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Longitude>, inline))]
    pub longitude: Option<f64>,
    /// Web-mercator zoom level of the image (0 to 23).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::Zoom>, inline))]
    pub zoom: Option<f64>,
    /// Pixel density of the tiles: 1 (default) or 2 for @2x (retina) tiles.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::limits::schema::TileScale>, inline))]
    pub scale: Option<f64>,
    /// `[west, south, east, north]` in degrees: the edges of a web-mercator image.
    #[serde(default)]
    pub bounds: Option<[f64; 4]>,
    /// The boundary as a GeoJSON Polygon or MultiPolygon in lon/lat (a geometry, or a Feature
    /// holding one), instead of `points`; needs `bounds`, or `latitude`, `longitude` and `zoom`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub geojson: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn points_take_both_shapes_and_refuse_others() {
        let request: LotTraceRequest = serde_json::from_value(json!({
            "image_url": "https://e.com/a.jpg",
            "points": [[1, 2], {"x": 3.5, "y": 4}, [5, 6]],
        }))
        .unwrap();
        let points = request.points.unwrap();
        assert_eq!(points[1], PixelPoint { x: 3.5, y: 4.0 });
        for bad in [json!([1]), json!([1, "a"]), json!({"x": 1}), json!({"x": 1, "y": 2, "z": 3}), json!("1,2")] {
            let body = json!({"image_url": "https://e.com/a.jpg", "points": [bad]});
            assert!(serde_json::from_value::<LotTraceRequest>(body).is_err());
        }
    }

    #[test]
    fn each_recipe_refuses_fields_it_does_not_use() {
        let error =
            serde_json::from_value::<ListingEnhanceRequest>(json!({"image_url": "https://e.com/a.jpg", "points": []}))
                .unwrap_err();
        assert!(error.to_string().contains("unknown field `points`"), "{error}");
        let error = serde_json::from_value::<LotTraceRequest>(
            json!({"image_url": "https://e.com/a.jpg", "params": {"zoom": 18, "dpi": 3}}),
        )
        .unwrap_err();
        assert!(error.to_string().contains("unknown field `dpi`"), "{error}");
        let enhance: ListingEnhanceRequest =
            serde_json::from_value(json!({"image_url": "https://e.com/a.jpg", "params": {"preset": "web"}})).unwrap();
        assert_eq!(enhance.params.preset, Some(ExportPreset::Web));
    }
}
