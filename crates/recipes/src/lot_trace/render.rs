//! The rendered parcel: the photo at its own resolution with everything outside the parcel dimmed
//! and desaturated, the boundary stroked over a dark halo so it reads on any ground, each side's
//! length in feet along it, an acreage callout (inside the parcel when it fits, beside it with a
//! leader line when not) and the not-a-survey line. Sizes follow the image's size.

use super::boundary::{geo_polygon, PolygonRings};
use super::measure::{Measurement, DISCLAIMER};
use crate::numbers::thousands;
use geo::{BoundingRect, Centroid, Contains, Coord, InteriorPoint, MultiPolygon, Point, Polygon, Rect as GeoRect};
use image::RgbImage;
use media::text::{font, paint, rounded_rect, TextStyle, Weight};
use tiny_skia::{Color, FillRule, LineCap, LineJoin, Mask, Path, PathBuilder, Pixmap, Rect, Stroke, Transform};

/// The boundary's colour: a saturated amber that stands out from foliage, roofs and asphalt.
const BOUNDARY: [u8; 4] = [255, 196, 0, 255];
const HALO: [u8; 4] = [0, 0, 0, 150];
const PLATE: [u8; 4] = [18, 20, 24, 205];
const TEXT: [u8; 4] = [255, 255, 255, 255];
const SUBTEXT: [u8; 4] = [225, 228, 232, 255];
const LABEL_HALO: [u8; 4] = [0, 0, 0, 190];

fn rgba([r, g, b, a]: [u8; 4]) -> Color {
    Color::from_rgba8(r, g, b, a)
}

/// Sizes derived from the image.
struct Scale {
    line: f32,
    label: f32,
}

impl Scale {
    fn of(width: u32, height: u32) -> Scale {
        let short = width.min(height) as f32;
        Scale { line: (short / 320.0).clamp(1.5, 12.0), label: (short / 34.0).clamp(11.0, 56.0) }
    }
}

/// Renders the traced parcel over `photo`.
pub fn render(photo: &RgbImage, parcel: &[PolygonRings], measurement: &Measurement) -> RgbImage {
    let (width, height) = photo.dimensions();
    let scale = Scale::of(width, height);
    let outline = rings_path(parcel);
    let shape = MultiPolygon::new(parcel.iter().map(geo_polygon).collect());
    let Some(mut canvas) = isolate(photo, outline.as_ref()) else { return photo.clone() };
    if let Some(outline) = &outline {
        let halo = Stroke { width: scale.line * 2.8, line_join: LineJoin::Round, ..Stroke::default() };
        canvas.stroke_path(outline, &paint(rgba(HALO)), &halo, Transform::identity(), None);
        let line = Stroke { width: scale.line, line_join: LineJoin::Round, ..Stroke::default() };
        canvas.stroke_path(outline, &paint(rgba(BOUNDARY)), &line, Transform::identity(), None);
    }
    // Leader first, labels over it, the callout's plate on top.
    let callout = Callout::layout(&canvas, &shape, measurement, &scale);
    if let (Some(callout), Some(anchor)) = (&callout, callout.as_ref().and_then(|c| c.leader_to)) {
        draw_leader(&mut canvas, callout.plate, anchor, &scale);
    }
    draw_side_labels(&mut canvas, &shape, measurement, &scale);
    if let Some(callout) = callout {
        callout.draw(&mut canvas, &scale);
    }
    draw_disclaimer(&mut canvas, &scale);
    to_rgb(&canvas)
}

/// The outline of every ring as one path.
fn rings_path(parcel: &[PolygonRings]) -> Option<Path> {
    let mut pb = PathBuilder::new();
    for ring in parcel.iter().flat_map(|p| std::iter::once(&p.exterior).chain(&p.holes)) {
        for (i, &[x, y]) in ring.iter().enumerate() {
            if i == 0 {
                pb.move_to(x as f32, y as f32);
            } else {
                pb.line_to(x as f32, y as f32);
            }
        }
        pb.close();
    }
    pb.finish()
}

/// The photo with the outside of the parcel dimmed and desaturated (anti-aliased at the edge).
fn isolate(photo: &RgbImage, outline: Option<&Path>) -> Option<Pixmap> {
    let (width, height) = photo.dimensions();
    let mut mask = Mask::new(width, height)?;
    if let Some(outline) = outline {
        mask.fill_path(outline, FillRule::EvenOdd, true, Transform::identity());
    }
    let mut canvas = Pixmap::new(width, height)?;
    let coverage = mask.data();
    for ((pixel, source), &inside) in canvas.data_mut().chunks_exact_mut(4).zip(photo.pixels()).zip(coverage) {
        let [r, g, b] = source.0.map(f32::from);
        let luma = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let inside = f32::from(inside) / 255.0;
        for (out, value) in pixel.iter_mut().zip([r, g, b]) {
            // Outside: 80% toward grey, then 45% of the light.
            let outside = (luma * 0.8 + value * 0.2) * 0.45;
            *out = (value * inside + outside * (1.0 - inside)).round().clamp(0.0, 255.0) as u8;
        }
        pixel[3] = 255;
    }
    Some(canvas)
}

fn to_rgb(canvas: &Pixmap) -> RgbImage {
    let rgb: Vec<u8> = canvas.data().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    RgbImage::from_raw(canvas.width(), canvas.height(), rgb).unwrap_or_else(|| RgbImage::new(1, 1))
}

/// "164.0 ft" for short sides, "1,234 ft" for long ones.
pub fn feet_label(feet: f64) -> String {
    if feet < 1000.0 {
        format!("{feet:.1} ft")
    } else {
        format!("{} ft", thousands(feet.round() as u64))
    }
}

/// "0.62 acres", "12.5 acres", "1 acre".
pub fn acres_label(acres: f64) -> String {
    if (acres - 1.0).abs() < 0.005 {
        "1 acre".into()
    } else if acres < 10.0 {
        format!("{acres:.2} acres")
    } else {
        format!("{} acres", thousands_decimal(acres))
    }
}

fn thousands_decimal(value: f64) -> String {
    let tenths = (value * 10.0).round() as u64;
    format!("{}.{}", thousands(tenths / 10), tenths % 10)
}

/// Each side's length along it, outside the parcel, reading left to right; sides too short for
/// their label are left unlabelled rather than cluttered.
fn draw_side_labels(canvas: &mut Pixmap, shape: &MultiPolygon<f64>, measurement: &Measurement, scale: &Scale) {
    let (width, height) = (canvas.width() as f32, canvas.height() as f32);
    let size = scale.label * 0.8;
    let bold = font(Weight::Bold);
    let style =
        TextStyle { weight: Weight::Bold, size, color: rgba(TEXT), halo: Some((rgba(LABEL_HALO), size * 0.28)) };
    for side in &measurement.sides {
        let (ax, ay, bx, by) = (side.from[0] as f32, side.from[1] as f32, side.to[0] as f32, side.to[1] as f32);
        let length = (bx - ax).hypot(by - ay);
        let text = feet_label(side.length_ft);
        let metrics = bold.measure(&text, size);
        if metrics.width + size > length * 0.92 {
            continue;
        }
        let (dx, dy) = ((bx - ax) / length, (by - ay) / length);
        let (mx, my) = ((ax + bx) / 2.0, (ay + by) / 2.0);
        // Outward normal: the side of the edge not inside the parcel.
        let mut normal = (dy, -dx);
        let probe = Point::new(f64::from(mx + normal.0 * 2.0), f64::from(my + normal.1 * 2.0));
        if shape.contains(&probe) {
            normal = (-normal.0, -normal.1);
        }
        let gap = scale.line * 1.6 + size * 0.25;
        let reach = gap + metrics.height();
        let (ox, oy) = (mx + normal.0 * reach, my + normal.1 * reach);
        if ox < 0.0 || oy < 0.0 || ox > width || oy > height {
            // No room outside the image's edge: label the inside of the side instead.
            normal = (-normal.0, -normal.1);
        }
        // Text runs left to right: flip the direction of upside-down edges.
        let (tx, ty) = if dx < 0.0 { (-dx, -dy) } else { (dx, dy) };
        let angle = ty.atan2(tx).to_degrees();
        // The text's "up" in the image is (ty, -tx); the label sits on the outward side of the line.
        let up_is_outward = ty * normal.0 - tx * normal.1 > 0.0;
        let baseline_offset = if up_is_outward { -gap } else { gap + metrics.ascent };
        let transform = Transform::from_translate(mx, my)
            .pre_concat(Transform::from_rotate(angle))
            .pre_translate(-metrics.width / 2.0, baseline_offset);
        media::text::draw_text(canvas, &text, &style, transform);
    }
}

/// The acreage and square footage on a plate, inside the parcel when it fits there, beside it
/// with a leader line when not.
struct Callout {
    headline: String,
    detail: String,
    big: f32,
    small: f32,
    pad: f32,
    plate: Rect,
    /// Where the leader line points, when the plate is outside the parcel.
    leader_to: Option<(f32, f32)>,
}

impl Callout {
    fn layout(canvas: &Pixmap, shape: &MultiPolygon<f64>, measurement: &Measurement, scale: &Scale) -> Option<Callout> {
        let (width, height) = (canvas.width() as f32, canvas.height() as f32);
        let headline = acres_label(measurement.acres);
        let detail = format!("{} sq ft", thousands(measurement.square_feet.round() as u64));
        let pad = scale.label * 0.55;
        let widest = |big: f32, small: f32| {
            font(Weight::Bold).measure(&headline, big).width.max(font(Weight::Regular).measure(&detail, small).width)
        };
        // Never wider than 90% of the image.
        let shrink = ((width * 0.9 - 2.0 * pad) / widest(scale.label * 1.5, scale.label * 0.85)).min(1.0);
        let (big, small) = (scale.label * 1.5 * shrink, scale.label * 0.85 * shrink);
        let plate_w = widest(big, small) + 2.0 * pad;
        let plate_h = font(Weight::Bold).measure(&headline, big).ascent
            + font(Weight::Regular).measure(&detail, small).height()
            + pad * 2.0
            + small * 0.55;
        let anchor = shape
            .centroid()
            .filter(|c| shape.contains(c))
            .or_else(|| shape.interior_point())
            .map_or((width / 2.0, height / 2.0), |p| (p.x() as f32, p.y() as f32));
        let centred = Rect::from_xywh(anchor.0 - plate_w / 2.0, anchor.1 - plate_h / 2.0, plate_w, plate_h);
        let (plate, leader_to) = match centred.filter(|r| shape.contains(&rect_polygon(r))) {
            Some(inside) => (inside, None),
            None => {
                // Clear of the parcel and of the side labels along its edges.
                let gap = pad + scale.line * 2.0 + scale.label * 1.4;
                match beside(shape, plate_w, plate_h, width, height, gap) {
                    Some(outside) => (outside, Some(anchor)),
                    None => (centred?, None),
                }
            }
        };
        Some(Callout { headline, detail, big, small, pad, plate, leader_to })
    }

    fn draw(&self, canvas: &mut Pixmap, scale: &Scale) {
        let plate = self.plate;
        if let Some(path) = rounded_rect(plate, self.pad * 0.6) {
            canvas.fill_path(&path, &paint(rgba(PLATE)), FillRule::Winding, Transform::identity(), None);
            let border = Stroke { width: (scale.line * 0.6).max(1.0), ..Stroke::default() };
            canvas.stroke_path(&path, &paint(rgba(BOUNDARY)), &border, Transform::identity(), None);
        }
        let big_metrics = font(Weight::Bold).measure(&self.headline, self.big);
        let small_metrics = font(Weight::Regular).measure(&self.detail, self.small);
        let centre_x = plate.left() + plate.width() / 2.0;
        let first_baseline = plate.top() + self.pad + big_metrics.ascent;
        let headline_style = TextStyle { weight: Weight::Bold, size: self.big, color: rgba(TEXT), halo: None };
        media::text::draw_text(
            canvas,
            &self.headline,
            &headline_style,
            Transform::from_translate(centre_x - big_metrics.width / 2.0, first_baseline),
        );
        let detail_style = TextStyle { weight: Weight::Regular, size: self.small, color: rgba(SUBTEXT), halo: None };
        let second_baseline = first_baseline + self.small * 0.9 + small_metrics.ascent;
        media::text::draw_text(
            canvas,
            &self.detail,
            &detail_style,
            Transform::from_translate(centre_x - small_metrics.width / 2.0, second_baseline),
        );
    }
}

fn rect_polygon(rect: &Rect) -> Polygon<f64> {
    let (l, t, r, b) =
        (f64::from(rect.left()), f64::from(rect.top()), f64::from(rect.right()), f64::from(rect.bottom()));
    GeoRect::new(Coord { x: l, y: t }, Coord { x: r, y: b }).to_polygon()
}

/// A place for the plate beside the parcel (right, left, below, above), inside the image; the
/// image's emptiest corner when none fits.
fn beside(shape: &MultiPolygon<f64>, plate_w: f32, plate_h: f32, width: f32, height: f32, gap: f32) -> Option<Rect> {
    let bounds = shape.bounding_rect()?;
    let (min_x, min_y, max_x, max_y) =
        (bounds.min().x as f32, bounds.min().y as f32, bounds.max().x as f32, bounds.max().y as f32);
    let (mid_x, mid_y) = ((min_x + max_x) / 2.0, (min_y + max_y) / 2.0);
    let candidates = [
        (max_x + gap, mid_y - plate_h / 2.0),
        (min_x - gap - plate_w, mid_y - plate_h / 2.0),
        (mid_x - plate_w / 2.0, max_y + gap),
        (mid_x - plate_w / 2.0, min_y - gap - plate_h),
    ];
    let clamp = |(x, y): (f32, f32)| {
        (
            x.clamp(gap / 2.0, (width - plate_w - gap / 2.0).max(0.0)),
            y.clamp(gap / 2.0, (height - plate_h - gap / 2.0).max(0.0)),
        )
    };
    let clear_of_parcel = |r: &Rect| !geo::Intersects::intersects(&rect_polygon(r), shape);
    candidates
        .into_iter()
        .filter_map(|c| {
            let (x, y) = clamp(c);
            Rect::from_xywh(x, y, plate_w, plate_h)
        })
        .find(clear_of_parcel)
        .or_else(|| {
            let corners = [(0.0, 0.0), (width, 0.0), (0.0, height), (width, height)];
            corners
                .into_iter()
                .filter_map(|c| {
                    let (x, y) = clamp((c.0 - plate_w / 2.0, c.1 - plate_h / 2.0));
                    Rect::from_xywh(x, y, plate_w, plate_h)
                })
                .find(clear_of_parcel)
        })
}

/// A line from the plate to the parcel, ending in a dot inside it.
fn draw_leader(canvas: &mut Pixmap, plate: Rect, anchor: (f32, f32), scale: &Scale) {
    let start = (anchor.0.clamp(plate.left(), plate.right()), anchor.1.clamp(plate.top(), plate.bottom()));
    let mut pb = PathBuilder::new();
    pb.move_to(start.0, start.1);
    pb.line_to(anchor.0, anchor.1);
    let Some(line) = pb.finish() else { return };
    let halo = Stroke { width: scale.line * 2.4, line_cap: LineCap::Round, ..Stroke::default() };
    canvas.stroke_path(&line, &paint(rgba(HALO)), &halo, Transform::identity(), None);
    let stroke = Stroke { width: scale.line, line_cap: LineCap::Round, ..Stroke::default() };
    canvas.stroke_path(&line, &paint(rgba(TEXT)), &stroke, Transform::identity(), None);
    if let Some(dot) = PathBuilder::from_circle(anchor.0, anchor.1, scale.line * 2.2) {
        canvas.fill_path(&dot, &paint(rgba(TEXT)), FillRule::Winding, Transform::identity(), None);
        canvas.stroke_path(
            &dot,
            &paint(rgba(HALO)),
            &Stroke { width: scale.line * 0.6, ..Stroke::default() },
            Transform::identity(),
            None,
        );
    }
}

/// "Approximate; not a survey." on a plate in the bottom-left corner.
fn draw_disclaimer(canvas: &mut Pixmap, scale: &Scale) {
    let (width, height) = (canvas.width() as f32, canvas.height() as f32);
    let pad = scale.label * 0.35;
    let size = font(Weight::Regular).fit(DISCLAIMER, scale.label * 0.62, width - 4.0 * pad).max(6.0);
    let metrics = font(Weight::Regular).measure(DISCLAIMER, size);
    let plate = Rect::from_xywh(
        pad,
        height - pad - metrics.height() - 2.0 * pad,
        metrics.width + 2.0 * pad,
        metrics.height() + 2.0 * pad,
    );
    if let Some(path) = plate.and_then(|r| rounded_rect(r, pad * 0.8)) {
        canvas.fill_path(&path, &paint(rgba(PLATE)), FillRule::Winding, Transform::identity(), None);
    }
    let style = TextStyle { weight: Weight::Regular, size, color: rgba(TEXT), halo: None };
    media::text::draw_text(
        canvas,
        DISCLAIMER,
        &style,
        Transform::from_translate(2.0 * pad, height - 2.0 * pad - metrics.descent),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_as_people_write_them() {
        assert_eq!(feet_label(164.04), "164.0 ft");
        assert_eq!(feet_label(1234.4), "1,234 ft");
        assert_eq!(acres_label(0.6178), "0.62 acres");
        assert_eq!(acres_label(1.001), "1 acre");
        assert_eq!(acres_label(1234.56), "1,234.6 acres");
        assert_eq!(crate::numbers::thousands(26910), "26,910");
        assert_eq!(crate::numbers::thousands(999), "999");
    }
}
