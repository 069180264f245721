//! lot-trace: an aerial or satellite photo, a parcel boundary and the ground scale to the parcel's
//! acreage, perimeter and side lengths, and the photo with the parcel isolated and annotated.

pub mod boundary;
pub mod frame;
pub mod measure;
pub mod render;

use crate::{blocking, decode_image, RecipeError, RecipeOutput};
use boundary::Boundary;
use domain::limits::{
    LONGITUDE_MAX, MERCATOR_MAX_LATITUDE, METERS_PER_PIXEL_MAX, TILE_SCALE_MAX, TILE_SCALE_MIN, ZOOM_MAX,
};
use domain::recipe::{LotTraceParams, LotTraceRequest};
use domain::validation::check_input_url;
use domain::ValidationError;
use engines::{Engines, OutputFile};
use frame::ScaleSpec;
use serde::{Deserialize, Serialize};

/// A checked lot-trace request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LotTraceJob {
    /// The photo.
    pub image_url: String,
    /// The parcel boundary.
    pub boundary: Boundary,
    /// The ground scale.
    pub scale: ScaleSpec,
}

/// Checks a request: the URL, the boundary (a simple polygon of 3 to 1,000 points, or GeoJSON),
/// and exactly one ground scale.
pub fn prepare(request: LotTraceRequest) -> Result<LotTraceJob, ValidationError> {
    let image_url = check_input_url(&request.image_url).map_err(|m| ValidationError::new("image_url", m))?;
    let scale = scale_spec(&request.params)?;
    let boundary = match (&request.points, &request.params.geojson) {
        (Some(_), Some(_)) => {
            return Err(ValidationError::new("points", "give either points (pixels) or params.geojson, not both"))
        }
        (None, None) => {
            return Err(ValidationError::new(
                "points",
                "required: the parcel boundary as [x, y] pixel points (or a GeoJSON polygon in params.geojson)",
            ))
        }
        (Some(points), None) => boundary::from_points(points)?,
        (None, Some(geojson)) => {
            if !scale.is_georeferenced() {
                return Err(ValidationError::new(
                    "params.geojson",
                    "a lon/lat boundary needs the image's geo-reference: params.bounds, or params.latitude, \
                     params.longitude and params.zoom",
                ));
            }
            boundary::from_geojson(geojson)?
        }
    };
    Ok(LotTraceJob { image_url, boundary, scale })
}

fn scale_spec(params: &LotTraceParams) -> Result<ScaleSpec, ValidationError> {
    let bad = |field: &str, message: &str| ValidationError::new(format!("params.{field}"), message);
    let tile = params.latitude.is_some() || params.zoom.is_some();
    let given = [params.meters_per_pixel.is_some(), tile, params.bounds.is_some()];
    match given.iter().filter(|g| **g).count() {
        0 => {
            return Err(bad(
                "meters_per_pixel",
                "the ground scale is required: params.meters_per_pixel, params.latitude with params.zoom \
                 (web-mercator tiles), or params.bounds",
            ))
        }
        1 => {}
        _ => {
            return Err(bad(
                "meters_per_pixel",
                "give one ground scale: meters_per_pixel, latitude with zoom, or bounds (not several)",
            ))
        }
    }
    if !tile {
        if params.longitude.is_some() {
            return Err(bad("longitude", "only used with params.latitude and params.zoom"));
        }
        if params.scale.is_some() {
            return Err(bad("scale", "only used with params.latitude and params.zoom"));
        }
    }
    if let Some(meters_per_pixel) = params.meters_per_pixel {
        if !(meters_per_pixel > 0.0 && meters_per_pixel <= METERS_PER_PIXEL_MAX) {
            return Err(bad("meters_per_pixel", &format!("must be above 0 and at most {METERS_PER_PIXEL_MAX}")));
        }
        return Ok(ScaleSpec::Planar { meters_per_pixel });
    }
    if let Some(bounds @ [west, south, east, north]) = params.bounds {
        let lon_ok = |v: f64| (-LONGITUDE_MAX..=LONGITUDE_MAX).contains(&v);
        let lat_ok = |v: f64| (-MERCATOR_MAX_LATITUDE..=MERCATOR_MAX_LATITUDE).contains(&v);
        if !(lon_ok(west) && lon_ok(east) && lat_ok(south) && lat_ok(north) && west < east && south < north) {
            return Err(bad(
                "bounds",
                &format!(
                    "must be [west, south, east, north] in degrees with west < east and south < north, \
                     latitudes within ±{MERCATOR_MAX_LATITUDE:.2}"
                ),
            ));
        }
        return Ok(ScaleSpec::Bounds { bounds });
    }
    let latitude = params.latitude.ok_or_else(|| bad("latitude", "required with params.zoom"))?;
    let zoom = params.zoom.ok_or_else(|| bad("zoom", "required with params.latitude"))?;
    if !(-MERCATOR_MAX_LATITUDE..=MERCATOR_MAX_LATITUDE).contains(&latitude) {
        return Err(bad("latitude", &format!("must be within ±{MERCATOR_MAX_LATITUDE:.2} degrees (web mercator)")));
    }
    if !(0.0..=ZOOM_MAX).contains(&zoom) {
        return Err(bad("zoom", &format!("must be between 0 and {ZOOM_MAX}")));
    }
    if let Some(longitude) = params.longitude.filter(|l| !(-LONGITUDE_MAX..=LONGITUDE_MAX).contains(l)) {
        return Err(bad(
            "longitude",
            &format!("{longitude} is not between -{LONGITUDE_MAX} and {LONGITUDE_MAX} degrees"),
        ));
    }
    let scale = params.scale.unwrap_or(TILE_SCALE_MIN);
    if !(TILE_SCALE_MIN..=TILE_SCALE_MAX).contains(&scale) {
        return Err(bad("scale", &format!("must be between {TILE_SCALE_MIN} and {TILE_SCALE_MAX} (2 for @2x tiles)")));
    }
    Ok(ScaleSpec::Tile { latitude, longitude: params.longitude, zoom, scale })
}

/// Fetches the photo, measures the parcel and renders it.
pub async fn run(engines: &Engines, job: &LotTraceJob) -> Result<RecipeOutput, RecipeError> {
    let bytes = engines.fetcher().fetch("image_url", &job.image_url).await?;
    let job = job.clone();
    blocking(move || {
        let photo = decode_image(&bytes, "image_url")?.into_rgb8();
        let (width, height) = photo.dimensions();
        let frame = job.scale.frame(width, height);
        let parcel = measure::place(&job.boundary, &frame)
            .ok_or_else(|| RecipeError::InvalidInput("params.geojson: needs a geo-referenced image".into()))?;
        check_inside(&parcel.pixels, &job.boundary, width, height)?;
        let measurement = measure::measure(&parcel, &frame, job.scale.is_georeferenced());
        let rendered = render::render(&photo, &parcel.pixels, &measurement);
        let png = media::codecs::encode_png(&image::DynamicImage::ImageRgb8(rendered))
            .map_err(|e| RecipeError::Failed(e.to_string()))?;
        let result = serde_json::to_value(&measurement).map_err(|e| RecipeError::Failed(e.to_string()))?;
        Ok(RecipeOutput { files: vec![OutputFile::image(png, "png", width, height)], result })
    })
    .await
}

/// Every corner must lie on the image (edges included).
fn check_inside(
    pixels: &[boundary::PolygonRings],
    boundary: &Boundary,
    width: u32,
    height: u32,
) -> Result<(), RecipeError> {
    let (w, h) = (f64::from(width), f64::from(height));
    let corners = pixels.iter().flat_map(|p| std::iter::once(&p.exterior).chain(&p.holes)).flatten();
    for (i, &[x, y]) in corners.enumerate() {
        if !(0.0..=w).contains(&x) || !(0.0..=h).contains(&y) {
            return Err(RecipeError::InvalidInput(match boundary {
                Boundary::Pixels { .. } => {
                    format!("points: point {i} ({x}, {y}) lies outside the {width}x{height} image")
                }
                Boundary::LonLat { .. } => format!(
                    "params.geojson: the parcel extends outside the image (a corner falls at pixel ({x:.0}, {y:.0}) of \
                     a {width}x{height} image); check params.bounds or the tile centre and zoom"
                ),
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(body: serde_json::Value) -> LotTraceRequest {
        serde_json::from_value(body).unwrap()
    }

    fn field_of(body: serde_json::Value) -> String {
        prepare(request(body)).unwrap_err().field
    }

    #[test]
    fn refuses_missing_or_conflicting_boundaries_and_scales() {
        let square = json!([[0, 0], [10, 0], [10, 10]]);
        let url = "https://example.com/a.png";
        assert_eq!(field_of(json!({"image_url": url, "params": {"meters_per_pixel": 1}})), "points");
        assert_eq!(field_of(json!({"image_url": url, "points": square})), "params.meters_per_pixel");
        assert_eq!(
            field_of(
                json!({"image_url": url, "points": square, "params": {"meters_per_pixel": 1, "zoom": 3, "latitude": 1}})
            ),
            "params.meters_per_pixel"
        );
        assert_eq!(
            field_of(json!({"image_url": url, "points": square, "params": {"meters_per_pixel": -1}})),
            "params.meters_per_pixel"
        );
        assert_eq!(field_of(json!({"image_url": url, "points": square, "params": {"latitude": 40}})), "params.zoom");
        assert_eq!(
            field_of(json!({"image_url": url, "points": square, "params": {"latitude": 89, "zoom": 18}})),
            "params.latitude"
        );
        assert_eq!(
            field_of(json!({"image_url": url, "points": square, "params": {"bounds": [10, 0, 9, 1]}})),
            "params.bounds"
        );
        let geojson = json!({"type": "Polygon", "coordinates": [[[0, 0], [0.001, 0], [0.001, 0.001], [0, 0]]]});
        assert_eq!(
            field_of(json!({"image_url": url, "params": {"meters_per_pixel": 1, "geojson": geojson}})),
            "params.geojson"
        );
        assert_eq!(
            field_of(json!({"image_url": url, "params": {"latitude": 0, "zoom": 18, "geojson": geojson}})),
            "params.geojson"
        );
        assert_eq!(
            field_of(json!({"image_url": "ftp://x", "points": square, "params": {"meters_per_pixel": 1}})),
            "image_url"
        );
        let job =
            prepare(request(json!({"image_url": url, "params": {"bounds": [0, 0, 0.01, 0.01], "geojson": geojson}})))
                .unwrap();
        assert!(matches!(job.boundary, Boundary::LonLat { .. }));
    }
}
