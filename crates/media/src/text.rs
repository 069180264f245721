//! Text rendering in the project's shipped typefaces (Inter, and EB Garamond for headings; SIL
//! Open Font License 1.1, in `crates/media/fonts/` with their licences): glyph outlines become anti-aliased vector paths that
//! can be filled, stroked for a halo, and rotated like any other shape.
//!
//! Layout is single-line and left to right with the font's advances and pair kerning from its
//! `kern` table when present; that covers captions, labels and callouts.

use std::sync::OnceLock;

use tiny_skia::{Color, FillRule, LineCap, LineJoin, Paint, Path, PathBuilder, Pixmap, Rect, Stroke, Transform};
use ttf_parser::{Face, GlyphId, OutlineBuilder};

static REGULAR_BYTES: &[u8] = include_bytes!("../fonts/Inter-Regular.otf");
static BOLD_BYTES: &[u8] = include_bytes!("../fonts/Inter-Bold.otf");
static GARAMOND_BYTES: &[u8] = include_bytes!("../fonts/EBGaramond12-Regular.otf");

/// Every shipped font file (Inter Regular and Bold, EB Garamond Regular; SIL Open Font License
/// 1.1), for renderers that take font data, such as an SVG renderer's font database.
pub const FONT_FILES: [&[u8]; 3] = [REGULAR_BYTES, BOLD_BYTES, GARAMOND_BYTES];

/// A weight of the shipped typeface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    /// Body text.
    Regular,
    /// Headlines, figures and labels.
    Bold,
}

/// A parsed font face.
pub struct Font {
    face: Face<'static>,
}

/// The shipped typeface in `weight`.
pub fn font(weight: Weight) -> &'static Font {
    static REGULAR: OnceLock<Font> = OnceLock::new();
    static BOLD: OnceLock<Font> = OnceLock::new();
    let (cell, bytes) = match weight {
        Weight::Regular => (&REGULAR, REGULAR_BYTES),
        Weight::Bold => (&BOLD, BOLD_BYTES),
    };
    // The fonts are compiled in and parsed in a unit test, so parsing cannot fail at run time.
    cell.get_or_init(|| Font { face: Face::parse(bytes, 0).expect("the shipped font parses") })
}

/// The shipped serif, EB Garamond Regular, for headings where a brand asks for a classic face.
pub fn garamond() -> &'static Font {
    static GARAMOND: OnceLock<Font> = OnceLock::new();
    // Compiled in and parsed in a unit test, like Inter.
    GARAMOND.get_or_init(|| Font { face: Face::parse(GARAMOND_BYTES, 0).expect("the shipped font parses") })
}

/// Size of a line of text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextMetrics {
    /// Advance width, pixels.
    pub width: f32,
    /// Height above the baseline of capitals and ascenders, pixels.
    pub ascent: f32,
    /// Depth below the baseline of descenders, pixels (positive).
    pub descent: f32,
}

impl TextMetrics {
    /// Ascent plus descent.
    pub fn height(&self) -> f32 {
        self.ascent + self.descent
    }
}

impl Font {
    fn scale(&self, size: f32) -> f32 {
        size / f32::from(self.face.units_per_em())
    }

    fn glyphs(&self, text: &str) -> Vec<GlyphId> {
        text.chars()
            .map(|c| self.face.glyph_index(c).or_else(|| self.face.glyph_index('?')).unwrap_or(GlyphId(0)))
            .collect()
    }

    fn kerning(&self, left: GlyphId, right: GlyphId) -> i16 {
        let Some(kern) = self.face.tables().kern else { return 0 };
        kern.subtables.into_iter().filter(|s| s.horizontal).find_map(|s| s.glyphs_kerning(left, right)).unwrap_or(0)
    }

    /// Pen offsets of each glyph, in font units, and the total advance.
    fn layout(&self, glyphs: &[GlyphId]) -> (Vec<f32>, f32) {
        let mut pen = 0.0f32;
        let mut offsets = Vec::with_capacity(glyphs.len());
        for (i, &glyph) in glyphs.iter().enumerate() {
            if i > 0 {
                pen += f32::from(self.kerning(glyphs[i - 1], glyph));
            }
            offsets.push(pen);
            pen += f32::from(self.face.glyph_hor_advance(glyph).unwrap_or(0));
        }
        (offsets, pen)
    }

    /// The size of `text` set at `size` pixels per em.
    pub fn measure(&self, text: &str, size: f32) -> TextMetrics {
        let scale = self.scale(size);
        let (_, advance) = self.layout(&self.glyphs(text));
        TextMetrics {
            width: advance * scale,
            ascent: f32::from(self.face.capital_height().unwrap_or(self.face.ascender())) * scale,
            descent: -f32::from(self.face.descender()) * scale,
        }
    }

    /// The largest size at most `size` at which `text` is no wider than `max_width`.
    pub fn fit(&self, text: &str, size: f32, max_width: f32) -> f32 {
        let width = self.measure(text, size).width;
        if width <= max_width || width <= 0.0 {
            size
        } else {
            size * max_width / width
        }
    }

    /// The outline of `text` at `size` pixels per em with its baseline starting at the origin
    /// (y grows downwards, as in images); `None` for text with no visible glyph.
    pub fn outline(&self, text: &str, size: f32) -> Option<Path> {
        let scale = self.scale(size);
        let glyphs = self.glyphs(text);
        let (offsets, _) = self.layout(&glyphs);
        let mut builder = GlyphPath { builder: PathBuilder::new(), scale, x: 0.0 };
        for (glyph, offset) in glyphs.iter().zip(offsets) {
            builder.x = offset * scale;
            self.face.outline_glyph(*glyph, &mut builder);
        }
        builder.builder.finish()
    }
}

/// Collects glyph outlines into one path, flipping font units (y up) into image space (y down).
struct GlyphPath {
    builder: PathBuilder,
    scale: f32,
    x: f32,
}

impl GlyphPath {
    fn point(&self, x: f32, y: f32) -> (f32, f32) {
        (self.x + x * self.scale, -y * self.scale)
    }
}

impl OutlineBuilder for GlyphPath {
    fn move_to(&mut self, x: f32, y: f32) {
        let (x, y) = self.point(x, y);
        self.builder.move_to(x, y);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        let (x, y) = self.point(x, y);
        self.builder.line_to(x, y);
    }
    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        let ((x1, y1), (x, y)) = (self.point(x1, y1), self.point(x, y));
        self.builder.quad_to(x1, y1, x, y);
    }
    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        let ((x1, y1), (x2, y2), (x, y)) = (self.point(x1, y1), self.point(x2, y2), self.point(x, y));
        self.builder.cubic_to(x1, y1, x2, y2, x, y);
    }
    fn close(&mut self) {
        self.builder.close();
    }
}

/// How a line of text is painted.
#[derive(Clone, Copy, Debug)]
pub struct TextStyle {
    /// Typeface weight.
    pub weight: Weight,
    /// Size, pixels per em.
    pub size: f32,
    /// Fill colour.
    pub color: Color,
    /// A contrasting outline drawn under the fill so the text reads on any background:
    /// colour and width in pixels.
    pub halo: Option<(Color, f32)>,
}

/// Paints `text` with its baseline starting at the origin of `transform` (rotate and translate it
/// to place the text). Returns false when there was nothing to draw.
pub fn draw_text(pixmap: &mut Pixmap, text: &str, style: &TextStyle, transform: Transform) -> bool {
    let Some(path) = font(style.weight).outline(text, style.size) else { return false };
    if let Some((color, width)) = style.halo {
        let stroke = Stroke { width, line_join: LineJoin::Round, line_cap: LineCap::Round, ..Stroke::default() };
        pixmap.stroke_path(&path, &paint(color), &stroke, transform, None);
    }
    pixmap.fill_path(&path, &paint(style.color), FillRule::Winding, transform, None);
    true
}

/// An anti-aliased solid paint.
pub fn paint(color: Color) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color(color);
    paint.anti_alias = true;
    paint
}

/// A rectangle with rounded corners of `radius`, or `None` when it is empty.
pub fn rounded_rect(rect: Rect, radius: f32) -> Option<Path> {
    let r = radius.min(rect.width() / 2.0).min(rect.height() / 2.0).max(0.0);
    let (l, t, rt, b) = (rect.left(), rect.top(), rect.right(), rect.bottom());
    // Cubic arcs with the usual circle constant.
    let k = r * 0.552_284_8;
    let mut pb = PathBuilder::new();
    pb.move_to(l + r, t);
    pb.line_to(rt - r, t);
    pb.cubic_to(rt - r + k, t, rt, t + r - k, rt, t + r);
    pb.line_to(rt, b - r);
    pb.cubic_to(rt, b - r + k, rt - r + k, b, rt - r, b);
    pb.line_to(l + r, b);
    pb.cubic_to(l + r - k, b, l, b - r + k, l, b - r);
    pb.line_to(l, t + r);
    pb.cubic_to(l, t + r - k, l + r - k, t, l + r, t);
    pb.close();
    pb.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_fonts_parse_and_measure() {
        for weight in [Weight::Regular, Weight::Bold] {
            let metrics = font(weight).measure("0.62 acres", 40.0);
            assert!(metrics.width > 100.0 && metrics.width < 300.0, "{metrics:?}");
            assert!(metrics.ascent > 20.0 && metrics.ascent < 40.0, "{metrics:?}");
        }
        assert!(font(Weight::Bold).measure("WWW", 20.0).width > font(Weight::Regular).measure("iii", 20.0).width);
        assert!(font(Weight::Regular).outline(" ", 20.0).is_none());
        let serif = garamond().measure("$525,000", 40.0);
        assert!(serif.width > 100.0 && serif.width < 300.0, "{serif:?}");
        // Every glyph a listing needs is in the serif.
        let sample = "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789 $,.-|&'\"()#@";
        assert!(sample.chars().all(|c| c == ' ' || garamond().face.glyph_index(c).is_some()));
    }

    #[test]
    fn text_is_drawn_anti_aliased_where_measured() {
        let mut pixmap = Pixmap::new(200, 60).unwrap();
        let style = TextStyle { weight: Weight::Bold, size: 32.0, color: Color::WHITE, halo: None };
        assert!(draw_text(&mut pixmap, "Lot 7", &style, Transform::from_translate(10.0, 45.0)));
        let width = font(Weight::Bold).measure("Lot 7", 32.0).width;
        let alphas: Vec<u8> = pixmap.pixels().iter().map(|p| p.alpha()).collect();
        let inked_columns: Vec<usize> = (0..200).filter(|&x| (0..60).any(|y| alphas[y * 200 + x] > 0)).collect();
        let (first, last) = (inked_columns[0] as f32, *inked_columns.last().unwrap() as f32);
        assert!(first >= 9.0 && last <= 10.0 + width + 1.0, "ink from {first} to {last}, width {width}");
        // Anti-aliasing: edge pixels are partly covered.
        assert!(alphas.iter().any(|&a| a > 0 && a < 255));
    }
}
