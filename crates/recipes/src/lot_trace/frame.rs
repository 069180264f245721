//! Ground frames: how image pixels relate to the ground. A planar frame has one scale for the
//! whole image; a web-mercator frame maps pixels to longitude and latitude, so lengths and areas
//! are measured on the WGS84 ellipsoid rather than with one scale factor.

use domain::limits::MERCATOR_MAX_LATITUDE;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Web-mercator tile edge at zoom 0, pixels.
const TILE_SIZE: f64 = 256.0;

/// How the ground scale was given, as queued; resolved into a [`GroundFrame`] once the image's
/// size is known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ScaleSpec {
    /// Ground metres per pixel, the same everywhere.
    Planar {
        /// Metres per pixel.
        meters_per_pixel: f64,
    },
    /// A web-mercator tile image centred on `latitude` (and `longitude` when known).
    Tile {
        /// Latitude of the image centre, degrees.
        latitude: f64,
        /// Longitude of the image centre, degrees; unknown means the image is not geo-referenced
        /// (areas and lengths do not depend on it).
        longitude: Option<f64>,
        /// Zoom level.
        zoom: f64,
        /// Pixel density (2 for @2x tiles).
        scale: f64,
    },
    /// A web-mercator image whose edges are `[west, south, east, north]`.
    Bounds {
        /// Edges, degrees.
        bounds: [f64; 4],
    },
}

impl ScaleSpec {
    /// Whether pixels map to real longitudes and latitudes.
    pub fn is_georeferenced(&self) -> bool {
        match self {
            ScaleSpec::Planar { .. } => false,
            ScaleSpec::Tile { longitude, .. } => longitude.is_some(),
            ScaleSpec::Bounds { .. } => true,
        }
    }

    /// The frame of an image of `width` x `height` pixels.
    pub fn frame(&self, width: u32, height: u32) -> GroundFrame {
        let (w, h) = (f64::from(width), f64::from(height));
        match *self {
            ScaleSpec::Planar { meters_per_pixel } => GroundFrame::Planar { meters_per_pixel },
            ScaleSpec::Tile { latitude, longitude, zoom, scale } => {
                let world = TILE_SIZE * 2f64.powf(zoom) * scale;
                let deg_per_px = 360.0 / world;
                let merc_per_px = -2.0 * PI / world;
                GroundFrame::Mercator(MercatorFrame {
                    lon_left: longitude.unwrap_or(0.0) - deg_per_px * w / 2.0,
                    deg_per_px,
                    merc_top: mercator_y(latitude) - merc_per_px * h / 2.0,
                    merc_per_px,
                })
            }
            ScaleSpec::Bounds { bounds: [west, south, east, north] } => GroundFrame::Mercator(MercatorFrame {
                lon_left: west,
                deg_per_px: (east - west) / w,
                merc_top: mercator_y(north),
                merc_per_px: (mercator_y(south) - mercator_y(north)) / h,
            }),
        }
    }
}

/// Pixels to ground, resolved for one image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GroundFrame {
    /// One scale everywhere.
    Planar {
        /// Metres per pixel.
        meters_per_pixel: f64,
    },
    /// Pixels to longitude and latitude on web mercator.
    Mercator(MercatorFrame),
}

/// A web-mercator image: longitude is linear in x, the mercator ordinate linear in y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MercatorFrame {
    lon_left: f64,
    deg_per_px: f64,
    merc_top: f64,
    merc_per_px: f64,
}

impl MercatorFrame {
    /// `[lon, lat]` of the pixel position `(x, y)`.
    pub fn to_lon_lat(&self, x: f64, y: f64) -> [f64; 2] {
        [self.lon_left + self.deg_per_px * x, latitude_of(self.merc_top + self.merc_per_px * y)]
    }

    /// The pixel position `(x, y)` of `[lon, lat]`.
    pub fn to_pixel(&self, lon_lat: [f64; 2]) -> (f64, f64) {
        ((lon_lat[0] - self.lon_left) / self.deg_per_px, (mercator_y(lon_lat[1]) - self.merc_top) / self.merc_per_px)
    }
}

/// The mercator ordinate of a latitude in degrees.
fn mercator_y(latitude: f64) -> f64 {
    let phi = latitude.clamp(-MERCATOR_MAX_LATITUDE, MERCATOR_MAX_LATITUDE).to_radians();
    (PI / 4.0 + phi / 2.0).tan().ln()
}

/// The latitude in degrees of a mercator ordinate.
fn latitude_of(mercator: f64) -> f64 {
    (2.0 * mercator.exp().atan() - PI / 2.0).to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_frame_matches_the_slippy_map_scale() {
        // At zoom 18 a 256 px tile at the equator spans 360 / 2^18 degrees.
        let spec = ScaleSpec::Tile { latitude: 0.0, longitude: Some(10.0), zoom: 18.0, scale: 1.0 };
        let GroundFrame::Mercator(frame) = spec.frame(256, 256) else { panic!("mercator") };
        let [lon, lat] = frame.to_lon_lat(128.0, 128.0);
        assert!((lon - 10.0).abs() < 1e-12 && lat.abs() < 1e-12);
        let [west, _] = frame.to_lon_lat(0.0, 128.0);
        assert!((10.0 - west - 180.0 / 2f64.powi(18)).abs() < 1e-12);
    }

    #[test]
    fn bounds_frame_round_trips() {
        let spec = ScaleSpec::Bounds { bounds: [-122.42, 37.77, -122.41, 37.78] };
        let GroundFrame::Mercator(frame) = spec.frame(800, 1000) else { panic!("mercator") };
        let corner = frame.to_lon_lat(800.0, 1000.0);
        assert!((corner[0] + 122.41).abs() < 1e-12 && (corner[1] - 37.77).abs() < 1e-12);
        let (x, y) = frame.to_pixel(frame.to_lon_lat(123.4, 567.8));
        assert!((x - 123.4).abs() < 1e-6 && (y - 567.8).abs() < 1e-6);
    }
}
