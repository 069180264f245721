//! Measuring a parcel: area, perimeter and side lengths, planar with one scale or geodesic on the
//! WGS84 ellipsoid (Karney's algorithms, through the `geo` crate) when the image is web mercator.

use super::boundary::{geo_polygon, Boundary, PolygonRings, Ring};
use super::frame::GroundFrame;
use geo::orient::{Direction, Orient};
use geo::{Area, Centroid, Distance, Geodesic, GeodesicArea, MultiPolygon, Point};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Square metres in an acre (exact, by the international foot).
pub const SQUARE_METERS_PER_ACRE: f64 = 4_046.856_422_4;
/// Metres in a foot (exact).
pub const METERS_PER_FOOT: f64 = 0.3048;
/// What every result says of itself.
pub const DISCLAIMER: &str = "Approximate; not a survey.";

/// The parcel in image pixels, and in lon/lat when the frame maps to the ground's coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedParcel {
    /// Polygons in pixels `[x, y]`.
    pub pixels: Vec<PolygonRings>,
    /// The same polygons in `[lon, lat]`, for mercator frames.
    pub lon_lat: Option<Vec<PolygonRings>>,
}

/// Places `boundary` in `frame`; `None` when a lon/lat boundary meets a planar frame (refused at
/// submit, so not expected here).
pub fn place(boundary: &Boundary, frame: &GroundFrame) -> Option<PlacedParcel> {
    match (boundary, frame) {
        (Boundary::Pixels { ring }, GroundFrame::Planar { .. }) => {
            Some(PlacedParcel { pixels: vec![polygon(ring.clone())], lon_lat: None })
        }
        (Boundary::Pixels { ring }, GroundFrame::Mercator(m)) => {
            let lon_lat = ring.iter().map(|&[x, y]| m.to_lon_lat(x, y)).collect();
            Some(PlacedParcel { pixels: vec![polygon(ring.clone())], lon_lat: Some(vec![polygon(lon_lat)]) })
        }
        (Boundary::LonLat { polygons }, GroundFrame::Mercator(m)) => {
            let to_pixels = |ring: &Ring| -> Ring {
                ring.iter()
                    .map(|&p| {
                        let (x, y) = m.to_pixel(p);
                        [x, y]
                    })
                    .collect()
            };
            let pixels = polygons
                .iter()
                .map(|p| PolygonRings {
                    exterior: to_pixels(&p.exterior),
                    holes: p.holes.iter().map(to_pixels).collect(),
                })
                .collect();
            Some(PlacedParcel { pixels, lon_lat: Some(polygons.clone()) })
        }
        (Boundary::LonLat { .. }, GroundFrame::Planar { .. }) => None,
    }
}

fn polygon(exterior: Ring) -> PolygonRings {
    PolygonRings { exterior, holes: Vec::new() }
}

/// One side of the parcel, between two consecutive corners of an outer ring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Side {
    /// Start corner, image pixels `[x, y]`.
    pub from: [f64; 2],
    /// End corner, image pixels.
    pub to: [f64; 2],
    /// Ground length, metres (3 decimals).
    pub length_m: f64,
    /// Ground length, feet (2 decimals).
    pub length_ft: f64,
}

/// Where the parcel's centre of area is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CentroidView {
    /// Image pixels from the left.
    pub x: f64,
    /// Image pixels from the top.
    pub y: f64,
    /// Longitude, when the image is geo-referenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lon: Option<f64>,
    /// Latitude, when the image is geo-referenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat: Option<f64>,
}

/// The measured parcel, as the result reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Measurement {
    /// Area in acres (4 decimals).
    pub acres: f64,
    /// Area in square feet (1 decimal).
    pub square_feet: f64,
    /// Area in square metres (2 decimals).
    pub square_meters: f64,
    /// Perimeter of the outer rings, metres (2 decimals).
    pub perimeter_m: f64,
    /// Perimeter of the outer rings, feet (2 decimals).
    pub perimeter_ft: f64,
    /// Every side of every outer ring, in order.
    pub sides: Vec<Side>,
    /// Centre of area.
    pub centroid: CentroidView,
    /// The parcel as a GeoJSON Feature in lon/lat, when the image is geo-referenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub geojson: Option<Value>,
    /// `planar` (one scale for the image) or `geodesic` (WGS84 ellipsoid).
    #[cfg_attr(feature = "openapi", schema(example = "geodesic"))]
    pub method: String,
    /// "Approximate; not a survey."
    #[cfg_attr(feature = "openapi", schema(example = "Approximate; not a survey."))]
    pub disclaimer: String,
}

/// Measures `parcel` in `frame`; lon/lat are reported only when `georeferenced`.
pub fn measure(parcel: &PlacedParcel, frame: &GroundFrame, georeferenced: bool) -> Measurement {
    let pixel_shape = MultiPolygon::new(parcel.pixels.iter().map(geo_polygon).collect());
    // A mercator frame always places the parcel in lon/lat too, so the planar branch is the
    // planar frame's.
    let (square_meters, side_lengths, method) = match (&parcel.lon_lat, frame) {
        (Some(lon_lat), _) => {
            // On the sphere a ring encloses either side of itself: orient outer rings
            // counter-clockwise (holes clockwise) so the area is the parcel's, not the rest of the
            // Earth's, whichever way the client went round.
            let area = lon_lat.iter().map(|p| geo_polygon(p).orient(Direction::Default).geodesic_area_unsigned()).sum();
            let lengths: Vec<f64> = lon_lat
                .iter()
                .flat_map(|p| ring_edges(&p.exterior))
                .map(|(a, b)| Geodesic.distance(Point::new(a[0], a[1]), Point::new(b[0], b[1])))
                .collect();
            (area, lengths, "geodesic")
        }
        (None, frame) => {
            let mpp = match frame {
                GroundFrame::Planar { meters_per_pixel } => *meters_per_pixel,
                GroundFrame::Mercator(_) => 0.0,
            };
            let lengths: Vec<f64> = parcel
                .pixels
                .iter()
                .flat_map(|p| ring_edges(&p.exterior))
                .map(|(a, b)| (b[0] - a[0]).hypot(b[1] - a[1]) * mpp)
                .collect();
            (pixel_shape.unsigned_area() * mpp * mpp, lengths, "planar")
        }
    };
    let sides: Vec<Side> = parcel
        .pixels
        .iter()
        .flat_map(|p| ring_edges(&p.exterior))
        .zip(side_lengths)
        .map(|((from, to), meters)| Side {
            from: [round(from[0], 2), round(from[1], 2)],
            to: [round(to[0], 2), round(to[1], 2)],
            length_m: round(meters, 3),
            length_ft: round(meters / METERS_PER_FOOT, 2),
        })
        .collect();
    let perimeter_m: f64 = sides.iter().map(|s| s.length_m).sum();
    let centre = pixel_shape.centroid().map_or((0.0, 0.0), |c| (c.x(), c.y()));
    let centre_lon_lat = match frame {
        GroundFrame::Mercator(m) if georeferenced => Some(m.to_lon_lat(centre.0, centre.1)),
        _ => None,
    };
    Measurement {
        acres: round(square_meters / SQUARE_METERS_PER_ACRE, 4),
        square_feet: round(square_meters / (METERS_PER_FOOT * METERS_PER_FOOT), 1),
        square_meters: round(square_meters, 2),
        perimeter_m: round(perimeter_m, 2),
        perimeter_ft: round(perimeter_m / METERS_PER_FOOT, 2),
        sides,
        centroid: CentroidView {
            x: round(centre.0, 2),
            y: round(centre.1, 2),
            lon: centre_lon_lat.map(|p| round(p[0], 7)),
            lat: centre_lon_lat.map(|p| round(p[1], 7)),
        },
        geojson: parcel.lon_lat.as_ref().filter(|_| georeferenced).map(|polygons| feature(polygons)),
        method: method.to_string(),
        disclaimer: DISCLAIMER.to_string(),
    }
}

/// Consecutive corner pairs of a ring, closing it.
fn ring_edges(ring: &[[f64; 2]]) -> impl Iterator<Item = ([f64; 2], [f64; 2])> + '_ {
    ring.iter().enumerate().map(move |(i, &a)| (a, ring[(i + 1) % ring.len()]))
}

/// A GeoJSON Feature of the parcel, rings closed and counter-clockwise outer rings as RFC 7946
/// recommends.
fn feature(polygons: &[PolygonRings]) -> Value {
    let ring = |ring: &Ring, outer: bool| {
        let mut positions: Vec<[f64; 2]> = ring.iter().map(|p| [round(p[0], 8), round(p[1], 8)]).collect();
        let signed: f64 = ring_edges(ring).map(|(a, b)| a[0] * b[1] - b[0] * a[1]).sum();
        // In lon/lat (y up) a positive shoelace sum is counter-clockwise.
        if (signed > 0.0) != outer {
            positions.reverse();
        }
        if let Some(&first) = positions.first() {
            positions.push(first);
        }
        positions
    };
    let rings = |p: &PolygonRings| {
        std::iter::once(ring(&p.exterior, true)).chain(p.holes.iter().map(|h| ring(h, false))).collect::<Vec<_>>()
    };
    let geometry = match polygons {
        [one] => json!({"type": "Polygon", "coordinates": rings(one)}),
        many => json!({"type": "MultiPolygon", "coordinates": many.iter().map(rings).collect::<Vec<_>>()}),
    };
    json!({"type": "Feature", "properties": {}, "geometry": geometry})
}

fn round(value: f64, decimals: i32) -> f64 {
    let factor = 10f64.powi(decimals);
    (value * factor).round() / factor
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lot_trace::frame::ScaleSpec;

    fn pixels(ring: &[[f64; 2]]) -> Boundary {
        Boundary::Pixels { ring: ring.to_vec() }
    }

    #[test]
    fn a_square_at_half_a_metre_per_pixel() {
        let frame = ScaleSpec::Planar { meters_per_pixel: 0.5 }.frame(200, 200);
        let parcel = place(&pixels(&[[10.0, 10.0], [110.0, 10.0], [110.0, 110.0], [10.0, 110.0]]), &frame).unwrap();
        let m = measure(&parcel, &frame, false);
        assert_eq!(m.acres, 0.6178);
        assert_eq!(m.square_meters, 2500.0);
        assert_eq!(m.perimeter_m, 200.0);
        assert_eq!(m.sides.len(), 4);
        assert_eq!(m.sides[0].length_ft, 164.04);
        assert_eq!((m.centroid.x, m.centroid.y), (60.0, 60.0));
        assert_eq!(m.method, "planar");
        assert!(m.geojson.is_none() && m.centroid.lon.is_none());
    }

    #[test]
    fn an_irregular_polygon_by_the_shoelace_formula() {
        // An L-shaped lot: 30x10 plus 10x20, at 1 m/px.
        let ring = [[0.0, 0.0], [30.0, 0.0], [30.0, 10.0], [10.0, 10.0], [10.0, 30.0], [0.0, 30.0]];
        let frame = ScaleSpec::Planar { meters_per_pixel: 1.0 }.frame(40, 40);
        let m = measure(&place(&pixels(&ring), &frame).unwrap(), &frame, false);
        assert_eq!(m.square_meters, 500.0);
        assert_eq!(m.perimeter_m, 120.0);
        assert_eq!(m.square_feet, 5382.0);
    }

    #[test]
    fn geojson_is_closed_and_counter_clockwise() {
        let frame = ScaleSpec::Bounds { bounds: [-97.001, 29.999, -96.999, 30.001] }.frame(1000, 1000);
        // Clockwise in the image (y down) is counter-clockwise on the ground (y up) once flipped.
        let parcel = place(&pixels(&[[100.0, 100.0], [400.0, 100.0], [400.0, 400.0], [100.0, 400.0]]), &frame).unwrap();
        let m = measure(&parcel, &frame, true);
        let ring = m.geojson.unwrap()["geometry"]["coordinates"][0].as_array().unwrap().clone();
        assert_eq!(ring.len(), 5);
        assert_eq!(ring.first(), ring.last());
        let coords: Vec<[f64; 2]> = ring.iter().map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()]).collect();
        let signed: f64 = coords.windows(2).map(|w| w[0][0] * w[1][1] - w[1][0] * w[0][1]).sum();
        assert!(signed > 0.0, "outer ring must be counter-clockwise");
        assert_eq!(m.method, "geodesic");
        assert!(m.centroid.lon.is_some());
    }
}
