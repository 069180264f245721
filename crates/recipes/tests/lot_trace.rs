//! lot-trace measured against independent computations, and its rendering checked on a small, a
//! large and a very thin parcel. The rendered samples are written to the test's temporary
//! directory (`target/tmp/lot-trace-*.png`) for a person to look at.

use domain::recipe::{LotTraceParams, LotTraceRequest, PixelPoint};
use geo::{Distance, Geodesic, Point, VincentyDistance};
use image::{Rgb, RgbImage};
use recipes::lot_trace::{boundary, frame::ScaleSpec, measure, prepare, render};

/// WGS84.
const A: f64 = 6_378_137.0;
const F: f64 = 1.0 / 298.257_223_563;

/// Area on the WGS84 ellipsoid between two parallels and two meridians, in closed form (the
/// authalic-latitude formula), independent of the polygon algorithm under test.
fn ellipsoid_quad_area(lat1: f64, lat2: f64, lon1: f64, lon2: f64) -> f64 {
    let e2 = F * (2.0 - F);
    let e = e2.sqrt();
    let b2 = (A * (1.0 - F)).powi(2);
    let q = |lat: f64| {
        let s = lat.to_radians().sin();
        s / (1.0 - e2 * s * s) + (1.0 / (2.0 * e)) * ((1.0 + e * s) / (1.0 - e * s)).ln()
    };
    (lon2 - lon1).to_radians() * b2 / 2.0 * (q(lat2) - q(lat1))
}

#[test]
fn geodesic_area_matches_the_closed_form_and_sides_match_vincenty() {
    // A 0.003 x 0.002 degree lot at 45 N: about 236 m x 222 m.
    let (west, south, east, north) = (-93.003, 45.0, -93.0, 45.002);
    let ring = [[west, south], [east, south], [east, north], [west, north], [west, south]];
    let request = LotTraceRequest {
        image_url: "https://example.com/aerial.png".into(),
        points: None,
        params: LotTraceParams {
            bounds: Some([west - 0.001, south - 0.001, east + 0.001, north + 0.001]),
            geojson: Some(serde_json::json!({"type": "Polygon", "coordinates": [ring]})),
            ..Default::default()
        },
    };
    let job = prepare(request).unwrap();
    let frame = job.scale.frame(1000, 800);
    let parcel = measure::place(&job.boundary, &frame).unwrap();
    let m = measure::measure(&parcel, &frame, true);
    let expected = ellipsoid_quad_area(south, north, west, east);
    let relative = (m.square_meters - expected).abs() / expected;
    println!("geodesic {:.2} m² vs closed form {expected:.2} m² (relative {relative:.2e})", m.square_meters);
    assert!(relative < 1e-5, "{} vs {expected}", m.square_meters);
    assert!((m.acres - expected / measure::SQUARE_METERS_PER_ACRE).abs() < 0.0001);
    // Each side against Vincenty's formulae (another algorithm): within a millimetre.
    for (side, (a, b)) in m.sides.iter().zip(ring.windows(2).map(|w| (w[0], w[1]))) {
        let vincenty = Point::new(a[0], a[1]).vincenty_distance(&Point::new(b[0], b[1])).unwrap();
        let karney = Geodesic.distance(Point::new(a[0], a[1]), Point::new(b[0], b[1]));
        assert!((side.length_m - vincenty).abs() < 0.001 && (karney - vincenty).abs() < 0.001, "{side:?}");
        assert!((side.length_ft - vincenty / measure::METERS_PER_FOOT).abs() < 0.01, "{side:?}");
    }
}

#[test]
fn tile_scale_matches_the_ground_resolution_formula() {
    // Ground resolution of web-mercator tiles: 156543.03392 m/px * cos(lat) / 2^zoom at the
    // centre, on a sphere of the equatorial radius. On the ellipsoid a pixel is N/a as wide and
    // M/a as tall (N, M: the radii of curvature), so a small square there measures
    // (side * resolution)^2 * N * M / a^2.
    let (lat, zoom): (f64, f64) = (37.77, 19.0);
    let resolution = 156_543.033_92 * lat.to_radians().cos() / 2f64.powf(zoom);
    let request = LotTraceRequest {
        image_url: "https://example.com/tile.png".into(),
        points: Some(
            [[462.0, 462.0], [562.0, 462.0], [562.0, 562.0], [462.0, 562.0]]
                .iter()
                .map(|&[x, y]| PixelPoint { x, y })
                .collect(),
        ),
        params: LotTraceParams { latitude: Some(lat), zoom: Some(zoom), ..Default::default() },
    };
    let job = prepare(request).unwrap();
    let frame = job.scale.frame(1024, 1024);
    let m = measure::measure(&measure::place(&job.boundary, &frame).unwrap(), &frame, false);
    let e2 = F * (2.0 - F);
    let sin2 = lat.to_radians().sin().powi(2);
    let (n, mer) = (1.0 / (1.0 - e2 * sin2).sqrt(), (1.0 - e2) / (1.0 - e2 * sin2).powf(1.5));
    let expected = (100.0 * resolution).powi(2) * n * mer;
    assert!((m.square_meters - expected).abs() / expected < 2e-4, "{} vs {expected}", m.square_meters);
    assert!(m.geojson.is_none() && m.centroid.lon.is_none(), "no longitude: not geo-referenced");
}

/// A synthetic aerial: lawn texture, a street, driveways and roofs.
fn aerial(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        let noise = ((x.wrapping_mul(73_856_093) ^ y.wrapping_mul(19_349_663)) % 23) as u8;
        let street = y % 400 > 360;
        let roof = (x % 300) > 90 && (x % 300) < 210 && (y % 400) > 110 && (y % 400) < 250;
        if street {
            Rgb([90 + noise, 92 + noise, 96 + noise])
        } else if roof {
            Rgb([150 + noise, 80 + noise / 2, 60])
        } else {
            Rgb([70 + noise, 115 + noise, 55 + noise / 2])
        }
    })
}

fn render_sample(name: &str, width: u32, height: u32, ring: &[[f64; 2]], mpp: f64) -> RgbImage {
    let points: Vec<PixelPoint> = ring.iter().map(|&[x, y]| PixelPoint { x, y }).collect();
    let boundary = boundary::from_points(&points).unwrap();
    let frame = ScaleSpec::Planar { meters_per_pixel: mpp }.frame(width, height);
    let parcel = measure::place(&boundary, &frame).unwrap();
    let m = measure::measure(&parcel, &frame, false);
    let photo = aerial(width, height);
    let out = render::render(&photo, &parcel.pixels, &m);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    out.save(dir.join(format!("lot-trace-{name}.png"))).unwrap();
    assert_eq!(out.dimensions(), (width, height));
    // The boundary's amber appears; outside the parcel the photo is dimmed.
    let amber = out.pixels().filter(|p| p.0[0] > 230 && p.0[1] > 170 && p.0[1] < 215 && p.0[2] < 40).count();
    assert!(amber > (width + height) as usize / 4, "{name}: boundary not drawn ({amber} px)");
    let luma = |p: &Rgb<u8>| 0.2126 * f64::from(p.0[0]) + 0.7152 * f64::from(p.0[1]) + 0.0722 * f64::from(p.0[2]);
    let (corner_in, corner_out) = (luma(photo.get_pixel(2, 2)), luma(out.get_pixel(2, 2)));
    assert!(corner_out < corner_in * 0.6, "{name}: outside not dimmed ({corner_out} vs {corner_in})");
    out
}

#[test]
fn renders_small_large_and_thin_parcels() {
    render_sample("small", 320, 240, &[[70.0, 50.0], [250.0, 60.0], [240.0, 190.0], [80.0, 180.0]], 0.3);
    render_sample(
        "large",
        3000,
        2000,
        &[[600.0, 300.0], [2300.0, 420.0], [2500.0, 1500.0], [1400.0, 1750.0], [500.0, 1400.0]],
        0.15,
    );
    // A flag lot's thin strip: the callout cannot fit inside and goes beside with a leader.
    let thin =
        render_sample("thin", 1200, 800, &[[200.0, 380.0], [1000.0, 360.0], [1002.0, 392.0], [202.0, 410.0]], 0.25);
    // The callout's dark plate stands clear of the strip (rows 360 to 410): find it above or below,
    // away from the not-a-survey line along the bottom edge.
    let plate = |p: &Rgb<u8>| p.0.iter().all(|&c| c < 36);
    let (mut above, mut below) = (0, 0);
    for (_, y, pixel) in thin.enumerate_pixels() {
        if plate(pixel) && y < 340 {
            above += 1;
        } else if plate(pixel) && (430..720).contains(&y) {
            below += 1;
        }
    }
    assert!(above.max(below) > PLATE_PIXELS_MIN, "no callout plate beside the strip ({above} above, {below} below)");
}

/// Fewest plate pixels a callout has on a 1200 x 800 photo (its plate is about 250 x 80).
const PLATE_PIXELS_MIN: usize = 4000;
