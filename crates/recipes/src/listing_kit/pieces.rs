//! The kit's templates: one layout per piece, composed as SVG, from which both the raster and
//! the vector output are rendered. Print pieces are laid out in points on the trim with the bleed
//! around it; screen pieces in pixels.
//!
//! Every template paints with the same [`Palette`] and faces, places photos cropped around their
//! subject for its own slots, and records where each line of text went.

use super::brand::Palette;
use super::canvas::{wrap, Align, Canvas, Face, Rect, Style};
use super::photos::{PhotoSlots, Placed};
use crate::colour::{INK, MUTED, WHITE};
use domain::listing_kit::Paper;
use serde::Serialize;

/// Bleed around a print trim: 0.125 in.
pub const BLEED_PT: f64 = 9.0;
/// Text keeps at least this far inside the trim: 0.25 in.
pub const TRIM_SAFETY_PT: f64 = 18.0;
/// The flyer's outer margin: 0.5 in.
const MARGIN_PT: f64 = 36.0;
/// Print photos are placed for 300 pixels per inch.
pub const PRINT_PPI: f64 = 300.0;

/// What the templates print: the details, checked and written as they are shown.
#[derive(Clone, Debug, Default)]
pub struct Content {
    /// "$525,000".
    pub price: Option<String>,
    /// "3 bd | 2 ba | 1,850 sq ft".
    pub facts: Option<String>,
    /// The address.
    pub address: Option<String>,
    /// The headline.
    pub headline: Option<String>,
    /// The description.
    pub description: Option<String>,
    /// Features.
    pub features: Vec<String>,
    /// The open house.
    pub open_house: Option<String>,
    /// The agent's name.
    pub agent_name: Option<String>,
    /// The brokerage.
    pub brokerage: Option<String>,
    /// "(860) 555-0142 | dana@example.com".
    pub reach: Option<String>,
    /// "License #123".
    pub license: Option<String>,
    /// The story's line.
    pub story_line: String,
    /// The virtual-staging disclosure, when a photo is staged.
    pub disclosure: Option<String>,
}

impl Content {
    /// "OPEN HOUSE" when there is one, else "JUST LISTED".
    fn tag(&self) -> &'static str {
        if self.open_house.is_some() {
            "OPEN HOUSE"
        } else {
            "JUST LISTED"
        }
    }

    /// The agent's one-line signature: "Dana Reyes | (860) 555-0142".
    fn signature(&self) -> Option<String> {
        let parts: Vec<&str> = [&self.agent_name, &self.reach].into_iter().flatten().map(String::as_str).collect();
        (!parts.is_empty()).then(|| parts.join(" | "))
    }
}

/// The logo, ready to place.
#[derive(Clone, Debug)]
pub struct Logo {
    /// PNG bytes.
    pub png: Vec<u8>,
    /// Width over height.
    pub aspect: f64,
}

/// One piece laid out.
#[derive(Debug)]
pub struct Design {
    /// The SVG document.
    pub svg: String,
    /// Its size, in its units.
    pub width: f64,
    /// Its size, in its units.
    pub height: f64,
    /// Where each line of text went, by role.
    pub text_boxes: Vec<(String, Rect)>,
    /// The photos placed.
    pub photos: Vec<PhotoPlacement>,
}

/// A photo placed on a piece.
#[derive(Clone, Debug, Serialize)]
pub struct PhotoPlacement {
    /// Index in the request's `photos`.
    pub photo: usize,
    /// The slot, in the piece's units.
    pub slot: Rect,
    /// Pixels placed.
    pub pixels: [u32; 2],
    /// Pixels per inch as printed (print pieces only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ppi: Option<f64>,
}

/// Trim size of `paper`, points.
pub fn trim_size(paper: Paper) -> (f64, f64) {
    match paper {
        Paper::Letter => (612.0, 792.0),
        Paper::A4 => (595.276, 841.89),
    }
}

/// A piece being composed: the canvas, and the photos placed on it.
struct Piece<'a> {
    canvas: Canvas,
    photos: Vec<PhotoPlacement>,
    slots: &'a mut dyn PhotoSlots,
    /// Points per pixel placed, for print; `None` on screens.
    print: bool,
    width: f64,
    height: f64,
}

impl<'a> Piece<'a> {
    fn new(width: f64, height: f64, offset: f64, slots: &'a mut dyn PhotoSlots, print: bool) -> Piece<'a> {
        Piece { canvas: Canvas::with_offset(width, height, offset), photos: Vec::new(), slots, print, width, height }
    }

    /// Photo `index` cropped around its subject into `slot`.
    fn photo(&mut self, index: usize, slot: Rect) {
        let scale = if self.print { PRINT_PPI / 72.0 } else { 1.0 };
        let want = ((slot.width * scale).round() as u32, (slot.height * scale).round() as u32);
        let Some(Placed { jpeg, width, height }) = self.slots.place(index, want) else { return };
        self.canvas.image(slot, "image/jpeg", &jpeg);
        let ppi = self.print.then(|| f64::from(width) / (slot.width / 72.0));
        self.photos.push(PhotoPlacement { photo: index, slot, pixels: [width, height], ppi });
    }

    fn finish(self) -> Design {
        let (svg, text_boxes) = self.canvas.finish();
        Design { svg, width: self.width, height: self.height, text_boxes, photos: self.photos }
    }
}

/// A tag ("JUST LISTED") on an accent chip whose top left is at `x`, `y`; returns its rectangle.
fn tag(canvas: &mut Canvas, text: &str, x: f64, y: f64, size: f64, palette: &Palette) -> Rect {
    let style = Style::new(Face::SansBold, size, palette.on_accent).tracked(size * 0.14);
    let width = Face::SansBold.width(text, size, style.tracking);
    let chip = Rect { x, y, width: width + size * 1.6, height: size * 2.2 };
    canvas.rect(chip, palette.accent, 1.0);
    canvas.line("tag", text, x + size * 0.8, y + size * 1.47, Align::Start, &style);
    chip
}

/// The logo fitted into `area`, anchored at its right (`right`) or left edge, on `background`
/// when it needs one.
fn logo(canvas: &mut Canvas, logo: Option<&Logo>, area: Rect, right: bool) {
    let Some(logo) = logo else { return };
    let (mut w, mut h) = (area.width, area.width / logo.aspect);
    if h > area.height {
        h = area.height;
        w = h * logo.aspect;
    }
    let x = if right { area.x + area.width - w } else { area.x };
    canvas.image(Rect { x, y: area.y + (area.height - h) / 2.0, width: w, height: h }, "image/png", &logo.png);
}

/// The print flyer on `paper`: trim with a 0.125 in bleed; text at least 0.25 in inside the trim.
pub fn flyer(
    paper: Paper,
    content: &Content,
    palette: &Palette,
    logo_image: Option<&Logo>,
    photos: &mut dyn PhotoSlots,
    photo_count: usize,
) -> Design {
    let (w, h) = trim_size(paper);
    let b = BLEED_PT;
    let m = MARGIN_PT;
    let mut piece = Piece::new(w + 2.0 * b, h + 2.0 * b, b, photos, true);
    piece.canvas.rect(Rect { x: -b, y: -b, width: w + 2.0 * b, height: h + 2.0 * b }, WHITE, 1.0);

    // The hero, bled off the top and sides.
    let hero_h = (h * 0.42).round();
    piece.photo(0, Rect { x: -b, y: -b, width: w + 2.0 * b, height: hero_h + b });
    tag(&mut piece.canvas, content.tag(), m, m, 9.0, palette);

    // The brand band: price, facts, address; the open house on the right.
    let band = Rect { x: -b, y: hero_h, width: w + 2.0 * b, height: 96.0 };
    piece.canvas.rect(band, palette.primary, 1.0);
    let mut text_right = w - m;
    if let Some(open_house) = &content.open_house {
        let box_w = 168.0;
        let x = w - m - box_w;
        let label = Style::new(Face::SansBold, 8.5, palette.highlight_on_primary).tracked(1.4);
        piece.canvas.line("open_house", "OPEN HOUSE", x, hero_h + 32.0, Align::Start, &label);
        let when = Style::new(Face::Sans, 11.5, palette.on_primary);
        let lines = wrap(open_house, &when, box_w, 3);
        piece.canvas.lines("open_house", &lines, x, hero_h + 50.0, Align::Start, &when.leading(1.25));
        text_right = x - 16.0;
    }
    let band_text_w = text_right - m;
    if let Some(price) = &content.price {
        let style = Style::new(palette.display, 34.0, palette.highlight_on_primary);
        piece.canvas.fit_line("price", price, (m, hero_h + 44.0), &style, band_text_w, 18.0);
    }
    let facts_line: Vec<&str> = [&content.facts, &content.address].into_iter().flatten().map(String::as_str).collect();
    let detail_style = Style::new(Face::Sans, 12.5, palette.on_primary);
    let mut baseline = if content.price.is_some() { hero_h + 68.0 } else { hero_h + 44.0 };
    for line in facts_line {
        piece.canvas.fit_line("facts", line, (m, baseline), &detail_style, band_text_w, 8.5);
        baseline += 17.0;
    }

    // A strip of up to three more photos.
    let mut y = band.y + band.height + 14.0;
    let extra = photo_count.saturating_sub(1).min(3);
    if extra > 0 {
        let gap = 10.0;
        let strip_h = 112.0;
        let cell_w = (w - 2.0 * m - gap * (extra as f64 - 1.0)) / extra as f64;
        for i in 0..extra {
            piece.photo(i + 1, Rect { x: m + i as f64 * (cell_w + gap), y, width: cell_w, height: strip_h });
        }
        y += strip_h + 24.0;
    } else {
        y += 18.0;
    }

    // The headline, then the description beside the features.
    let footer_top = h - 104.0;
    if let Some(headline) = &content.headline {
        let size = if palette.display == Face::Serif { 22.0 } else { 19.0 };
        let style = Style::new(palette.display, size, palette.on_white).leading(1.2);
        let lines = wrap(headline, &style, w - 2.0 * m, 2);
        y += size * 0.75;
        y = piece.canvas.lines("headline", &lines, m, y, Align::Start, &style) + 2.0;
    }
    let body = Style::new(Face::Sans, 10.0, INK).leading(1.45);
    let features_w = if content.features.is_empty() { 0.0 } else { (w - 2.0 * m) * 0.36 };
    let description_w = w - 2.0 * m - if features_w > 0.0 { features_w + 18.0 } else { 0.0 };
    let room = ((footer_top - 14.0 - y) / (body.size * body.leading)).floor().max(0.0) as usize;
    let top = y + body.size * 0.75;
    if let Some(description) = &content.description {
        let lines = whole_sentences(description, &body, description_w, room);
        piece.canvas.lines("description", &lines, m, top, Align::Start, &body);
    }
    if features_w > 0.0 {
        let x = w - m - features_w;
        let bullet = Style::new(Face::SansBold, 10.0, palette.on_white);
        let mut line_y = top;
        let mut used = 0;
        for feature in &content.features {
            let lines = wrap(feature, &body, features_w - 12.0, 2);
            if used + lines.len() > room {
                break;
            }
            piece.canvas.line("features", "•", x, line_y, Align::Start, &bullet);
            line_y = piece.canvas.lines("features", &lines, x + 12.0, line_y, Align::Start, &body);
            used += lines.len();
        }
    }

    // The footer: a rule, the agent, the logo; the disclosure and the fair-housing line below.
    piece.canvas.rect(Rect { x: m, y: footer_top, width: w - 2.0 * m, height: 1.5 }, palette.accent, 1.0);
    let logo_area = Rect { x: w - m - 150.0, y: footer_top + 12.0, width: 150.0, height: 54.0 };
    logo(&mut piece.canvas, logo_image, logo_area, true);
    let text_w = if logo_image.is_some() { w - 2.0 * m - 166.0 } else { w - 2.0 * m };
    let mut line_y = footer_top + 24.0;
    let rows = [
        (&content.agent_name, Style::new(Face::SansBold, 13.0, INK), "agent"),
        (&content.brokerage, Style::new(Face::Sans, 10.5, INK), "agent"),
        (&content.reach, Style::new(Face::Sans, 10.5, INK), "agent"),
        (&content.license, Style::new(Face::Sans, 8.5, MUTED), "agent"),
    ];
    for (text, style, role) in rows {
        if let Some(text) = text {
            let size = piece.canvas.fit_line(role, text, (m, line_y), &style, text_w, 7.0);
            line_y += size * 1.35;
        }
    }
    let small = Style::new(Face::Sans, 7.5, MUTED);
    let last_baseline = h - TRIM_SAFETY_PT - 6.0;
    piece.canvas.line("fair_housing", "Equal Housing Opportunity", w - m, last_baseline, Align::End, &small);
    if let Some(disclosure) = &content.disclosure {
        piece.canvas.line("disclosure", disclosure, m, last_baseline, Align::Start, &small);
    }
    piece.finish()
}

/// A social post, `width` x `height` pixels: the photo above a brand panel.
pub fn social(
    width: f64,
    height: f64,
    content: &Content,
    palette: &Palette,
    logo_image: Option<&Logo>,
    photos: &mut dyn PhotoSlots,
) -> Design {
    let mut piece = Piece::new(width, height, 0.0, photos, false);
    let m = 60.0;
    let panel_h = if height > width { 470.0 } else { 356.0 };
    let panel = Rect { x: 0.0, y: height - panel_h, width, height: panel_h };
    piece.photo(0, Rect { x: 0.0, y: 0.0, width, height: height - panel_h });
    tag(&mut piece.canvas, content.tag(), m, m, 24.0, palette);
    logo_chip(&mut piece.canvas, logo_image, Rect { x: width - m - 240.0, y: m, width: 240.0, height: 96.0 });
    piece.canvas.rect(panel, palette.primary, 1.0);
    piece.canvas.rect(Rect { x: 0.0, y: panel.y, width, height: 8.0 }, palette.accent, 1.0);
    let text_w = width - 2.0 * m;
    let mut y = panel.y + 112.0;
    if let Some(price) = &content.price {
        let style = Style::new(palette.display, 84.0, palette.highlight_on_primary);
        piece.canvas.fit_line("price", price, (m, y), &style, text_w, 40.0);
        y += 62.0;
    } else if let Some(headline) = &content.headline {
        let style = Style::new(palette.display, 56.0, palette.highlight_on_primary);
        piece.canvas.fit_line("headline", headline, (m, y), &style, text_w, 30.0);
        y += 62.0;
    }
    for (text, size) in [(&content.facts, 38.0), (&content.address, 30.0)] {
        if let Some(text) = text {
            let style = Style::new(Face::Sans, size, palette.on_primary);
            let size = piece.canvas.fit_line("facts", text, (m, y), &style, text_w, 20.0);
            y += size * 1.45;
        }
    }
    if height > width {
        if let Some(headline) = content.headline.as_ref().filter(|_| content.price.is_some()) {
            let style = Style::new(palette.display, 36.0, palette.on_primary).leading(1.2);
            let lines = wrap(headline, &style, text_w, 2);
            y = piece.canvas.lines("headline", &lines, m, y + 20.0, Align::Start, &style);
        }
    }
    let bottom = height - 34.0;
    if let Some(signature) = content.signature() {
        let style = Style::new(Face::Sans, 26.0, palette.on_primary);
        let at = if content.disclosure.is_some() { bottom - 40.0 } else { bottom };
        // Only where the lines above leave room.
        if y <= at {
            piece.canvas.fit_line("agent", &signature, (m, at), &style, text_w, 16.0);
        }
    }
    if let Some(disclosure) = &content.disclosure {
        let style = Style::new(Face::Sans, 20.0, palette.on_primary);
        piece.canvas.line("disclosure", disclosure, m, bottom, Align::Start, &style);
    }
    piece.finish()
}

/// The story, 1080 x 1920: the photo full screen, the text on a brand card inside the safe zone.
pub fn story(content: &Content, palette: &Palette, logo_image: Option<&Logo>, photos: &mut dyn PhotoSlots) -> Design {
    let (width, height) = (1080.0, 1920.0);
    let safe = story_safe_zone();
    let mut piece = Piece::new(width, height, 0.0, photos, false);
    piece.photo(0, Rect { x: 0.0, y: 0.0, width, height });
    let m = 72.0;
    logo_chip(&mut piece.canvas, logo_image, Rect { x: m, y: safe.y + 24.0, width: 260.0, height: 104.0 });
    // The card sits at the bottom of the safe zone, over the photo's lower half.
    let card = Rect { x: m - 12.0, y: safe.y + safe.height - 440.0, width: width - 2.0 * (m - 12.0), height: 420.0 };
    piece.canvas.rect(card, palette.primary, 0.96);
    let inner = card.x + 44.0;
    let text_w = card.width - 88.0;
    let chip = tag(&mut piece.canvas, content.tag(), inner, card.y + 40.0, 24.0, palette);
    let mut y = chip.y + chip.height + 92.0;
    let line_style = Style::new(palette.display, 76.0, palette.highlight_on_primary);
    let headline = content.price.clone().unwrap_or_else(|| content.story_line.clone());
    piece.canvas.fit_line("price", &headline, (inner, y), &line_style, text_w, 36.0);
    y += 70.0;
    for (text, size) in [(&content.facts, 38.0), (&content.address, 32.0)] {
        if let Some(text) = text {
            let style = Style::new(Face::Sans, size, palette.on_primary);
            let size = piece.canvas.fit_line("facts", text, (inner, y), &style, text_w, 20.0);
            y += size * 1.4;
        }
    }
    if content.price.is_some() && content.open_house.is_some() {
        let style = Style::new(Face::SansBold, 30.0, palette.on_primary);
        piece.canvas.fit_line("story_line", &content.story_line, (inner, y), &style, text_w, 18.0);
    }
    let bottom = card.y + card.height - 30.0;
    if let Some(disclosure) = &content.disclosure {
        let style = Style::new(Face::Sans, 22.0, palette.on_primary);
        piece.canvas.line("disclosure", disclosure, inner, bottom, Align::Start, &style);
    }
    piece.finish()
}

/// `text` wrapped into at most `room` lines, keeping whole sentences; only when not even the
/// first sentence fits is it cut at a word with an ellipsis.
fn whole_sentences(text: &str, style: &Style, width: f64, room: usize) -> Vec<String> {
    let sentences = super::captions::split_sentences(text);
    let mut best = Vec::new();
    for end in 1..=sentences.len() {
        let lines = wrap(&sentences[..end].join(" "), style, width, usize::MAX);
        if lines.len() > room {
            break;
        }
        best = lines;
    }
    if best.is_empty() {
        wrap(text, style, width, room)
    } else {
        best
    }
}

/// Where a story's text may go: clear of the top 14% and the bottom 35% that the platforms cover.
pub fn story_safe_zone() -> Rect {
    let (width, height) = (1080.0, 1920.0);
    let top = (height * 0.14_f64).ceil();
    let bottom = (height * 0.65_f64).floor();
    Rect { x: 0.0, y: top, width, height: bottom - top }
}

/// The logo on a white rounded chip, for screens where it sits over a photo.
fn logo_chip(canvas: &mut Canvas, logo_image: Option<&Logo>, area: Rect) {
    let Some(image) = logo_image else { return };
    let pad = 14.0;
    let inner = area.inset(pad);
    let (mut w, mut h) = (inner.width, inner.width / image.aspect);
    if h > inner.height {
        h = inner.height;
        w = h * image.aspect;
    }
    let chip = Rect { x: area.x + area.width - w - 2.0 * pad, y: area.y, width: w + 2.0 * pad, height: h + 2.0 * pad };
    canvas.rect(chip, WHITE, 0.94);
    logo(canvas, Some(image), chip.inset(pad), true);
}
