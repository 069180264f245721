//! The parcel boundary as the client gives it: pixel points, or GeoJSON in lon/lat. Checked at
//! submit: enough distinct points, finite numbers, a simple polygon (no self-intersection), not
//! degenerate.

use domain::limits::{LONGITUDE_MAX, TRACE_POINTS_MAX, TRACE_POINTS_MIN};
use domain::recipe::PixelPoint;
use domain::ValidationError;
use geo::{Area, Coord, LineString, Polygon, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A ring of positions, not repeating its first position at the end.
pub type Ring = Vec<[f64; 2]>;

/// One polygon: its outer ring, then any holes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolygonRings {
    /// Outer ring.
    pub exterior: Ring,
    /// Holes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holes: Vec<Ring>,
}

/// The checked boundary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Boundary {
    /// One polygon in image pixels `[x, y]`.
    Pixels {
        /// The ring.
        ring: Ring,
    },
    /// Polygons in `[lon, lat]` degrees (a GeoJSON Polygon or MultiPolygon).
    LonLat {
        /// The polygons.
        polygons: Vec<PolygonRings>,
    },
}

/// Checks pixel `points`.
pub fn from_points(points: &[PixelPoint]) -> Result<Boundary, ValidationError> {
    let bad = |message: String| ValidationError::new("points", message);
    let mut ring: Ring = points.iter().map(|p| [p.x, p.y]).collect();
    if ring.len() > 1 && ring.first() == ring.last() {
        // A closed ring (first point repeated at the end) is the same polygon.
        ring.pop();
    }
    if ring.len() < TRACE_POINTS_MIN {
        return Err(bad(format!("a parcel needs at least {TRACE_POINTS_MIN} distinct points, got {}", ring.len())));
    }
    if ring.len() > TRACE_POINTS_MAX {
        return Err(bad(format!("at most {TRACE_POINTS_MAX} points, got {}", ring.len())));
    }
    if let Some(i) = ring.iter().position(|[x, y]| !x.is_finite() || !y.is_finite() || *x < 0.0 || *y < 0.0) {
        return Err(bad(format!("point {i} is not a pair of non-negative pixel coordinates")));
    }
    check_polygon("points", &PolygonRings { exterior: ring.clone(), holes: Vec::new() })?;
    Ok(Boundary::Pixels { ring })
}

/// Checks a GeoJSON Polygon, MultiPolygon, or a Feature holding one, in lon/lat.
pub fn from_geojson(value: &Value) -> Result<Boundary, ValidationError> {
    const FIELD: &str = "params.geojson";
    let bad = |message: &str| ValidationError::new(FIELD, message);
    let geometry = match value.get("type").and_then(Value::as_str) {
        Some("Feature") => value.get("geometry").ok_or_else(|| bad("a Feature needs a geometry"))?,
        _ => value,
    };
    let coordinates = geometry.get("coordinates").ok_or_else(|| bad("a geometry needs coordinates"))?;
    let polygons = match geometry.get("type").and_then(Value::as_str) {
        Some("Polygon") => vec![polygon_rings(coordinates)?],
        Some("MultiPolygon") => coordinates
            .as_array()
            .ok_or_else(|| bad("MultiPolygon coordinates must be an array of polygons"))?
            .iter()
            .map(polygon_rings)
            .collect::<Result<_, _>>()?,
        _ => return Err(bad("expected a GeoJSON Polygon or MultiPolygon (or a Feature holding one)")),
    };
    if polygons.is_empty() {
        return Err(bad("the MultiPolygon has no polygons"));
    }
    let total: usize = polygons.iter().map(|p| p.exterior.len() + p.holes.iter().map(Vec::len).sum::<usize>()).sum();
    if total > TRACE_POINTS_MAX {
        return Err(bad(&format!("at most {TRACE_POINTS_MAX} positions in all rings together, got {total}")));
    }
    for polygon in &polygons {
        check_polygon(FIELD, polygon)?;
    }
    Ok(Boundary::LonLat { polygons })
}

fn polygon_rings(coordinates: &Value) -> Result<PolygonRings, ValidationError> {
    let bad = |message: String| ValidationError::new("params.geojson", message);
    let rings = coordinates.as_array().ok_or_else(|| bad("Polygon coordinates must be an array of rings".into()))?;
    let mut rings = rings.iter().map(|ring| {
        let positions = ring.as_array().ok_or_else(|| bad("a ring must be an array of [lon, lat] positions".into()))?;
        let mut ring: Ring = positions
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([lon, lat, ..]) => match (lon.as_f64(), lat.as_f64()) {
                    (Some(lon), Some(lat))
                        if (-LONGITUDE_MAX..=LONGITUDE_MAX).contains(&lon) && (-90.0..=90.0).contains(&lat) =>
                    {
                        Ok([lon, lat])
                    }
                    _ => Err(bad(format!("position {p} is not a [lon, lat] pair in degrees"))),
                },
                _ => Err(bad(format!("position {p} is not a [lon, lat] pair"))),
            })
            .collect::<Result<_, _>>()?;
        if ring.len() > 1 && ring.first() == ring.last() {
            ring.pop();
        }
        if ring.len() < TRACE_POINTS_MIN {
            return Err(bad(format!("a ring needs at least {TRACE_POINTS_MIN} distinct positions")));
        }
        Ok(ring)
    });
    let exterior = rings.next().ok_or_else(|| bad("a Polygon needs an outer ring".into()))??;
    let holes = rings.collect::<Result<_, _>>()?;
    Ok(PolygonRings { exterior, holes })
}

/// A ring as a closed geo line string.
pub(crate) fn line_string(ring: &[[f64; 2]]) -> LineString<f64> {
    let mut coords: Vec<Coord<f64>> = ring.iter().map(|&[x, y]| Coord { x, y }).collect();
    if let Some(&first) = coords.first() {
        coords.push(first);
    }
    LineString::new(coords)
}

/// A polygon in geo's types.
pub(crate) fn geo_polygon(polygon: &PolygonRings) -> Polygon<f64> {
    Polygon::new(line_string(&polygon.exterior), polygon.holes.iter().map(|h| line_string(h)).collect())
}

/// Refuses repeated vertices, self-intersections, crossing rings and zero-area polygons.
fn check_polygon(field: &str, polygon: &PolygonRings) -> Result<(), ValidationError> {
    for ring in std::iter::once(&polygon.exterior).chain(&polygon.holes) {
        for (i, a) in ring.iter().enumerate() {
            if let Some(j) = ring[i + 1..].iter().position(|b| b == a) {
                return Err(ValidationError::new(
                    field,
                    format!("point {} repeats point {i}; each corner of the parcel must appear once", i + 1 + j),
                ));
            }
        }
    }
    let shape = geo_polygon(polygon);
    if let Some(problem) = shape.validation_errors().into_iter().next() {
        return Err(ValidationError::new(field, format!("not a simple polygon: {problem}")));
    }
    // Collinear points enclose nothing; the relative test keeps it scale-free.
    let area = shape.unsigned_area();
    let extent = ring_extent(&polygon.exterior);
    if area.is_nan() || area <= extent * extent * 1e-9 {
        return Err(ValidationError::new(field, "the points are collinear: they enclose no area"));
    }
    Ok(())
}

fn ring_extent(ring: &[[f64; 2]]) -> f64 {
    let span = |axis: usize| {
        let values = ring.iter().map(|p| p[axis]);
        values.clone().fold(f64::MIN, f64::max) - values.fold(f64::MAX, f64::min)
    };
    span(0).max(span(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn points(coords: &[[f64; 2]]) -> Vec<PixelPoint> {
        coords.iter().map(|&[x, y]| PixelPoint { x, y }).collect()
    }

    #[test]
    fn refuses_what_is_not_a_simple_polygon() {
        let message = |coords: &[[f64; 2]]| from_points(&points(coords)).unwrap_err().message;
        assert!(message(&[[0.0, 0.0], [10.0, 0.0]]).contains("at least 3"));
        assert!(message(&[[0.0, 0.0], [10.0, 10.0], [10.0, 0.0], [0.0, 10.0]]).contains("self-intersection"));
        assert!(message(&[[0.0, 0.0], [5.0, 5.0], [10.0, 10.0]]).contains("collinear"));
        assert!(message(&[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [10.0, 0.0], [0.0, 10.0]]).contains("repeats"));
        assert!(message(&[[0.0, 0.0], [f64::NAN, 0.0], [1.0, 1.0]]).contains("point 1"));
        let many: Vec<[f64; 2]> = (0..1001).map(|i| [f64::from(i).cos() + 2.0, f64::from(i).sin() + 2.0]).collect();
        assert!(message(&many).contains("at most 1000"));
        // A closed ring is accepted as the same polygon.
        let closed = from_points(&points(&[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 0.0]])).unwrap();
        assert_eq!(closed, Boundary::Pixels { ring: vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]] });
    }

    #[test]
    fn reads_geojson_polygons_multipolygons_and_features() {
        let square = json!([[[-97.0, 30.0], [-96.999, 30.0], [-96.999, 30.001], [-97.0, 30.001], [-97.0, 30.0]]]);
        let Boundary::LonLat { polygons } = from_geojson(&json!({"type": "Polygon", "coordinates": square})).unwrap()
        else {
            panic!("lon/lat")
        };
        assert_eq!(polygons[0].exterior.len(), 4);
        let feature =
            json!({"type": "Feature", "properties": {}, "geometry": {"type": "MultiPolygon", "coordinates": [square]}});
        assert!(from_geojson(&feature).is_ok());
        assert!(from_geojson(&json!({"type": "Point", "coordinates": [1, 2]})).is_err());
        assert!(from_geojson(&json!({"type": "Polygon", "coordinates": [[[0, 0], [1, "x"], [1, 1]]]})).is_err());
        assert!(from_geojson(&json!({"type": "Polygon", "coordinates": [[[0, 0], [0, 200], [1, 1]]]})).is_err());
    }
}
