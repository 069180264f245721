//! Where text goes on a 1080x1920 reel and what it looks like: caption plates that read on any
//! photo, kept inside the platforms' safe zone (clear of the top 14%, the bottom 35% and 6% on
//! each side, where the apps draw their own buttons and text), and the end card.

use crate::colour::{self, contrast, relative_luminance};
use media::text::{draw_text, font, paint, rounded_rect, TextStyle, Weight};
use serde::Serialize;
use tiny_skia::{Color, Pixmap, Rect, Transform};

/// Reel width, pixels.
pub const WIDTH: u32 = 1080;
/// Reel height, pixels.
pub const HEIGHT: u32 = 1920;

/// A rectangle in reel pixels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BoxPx {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub width: f32,
    /// Height.
    pub height: f32,
}

impl BoxPx {
    /// Whether `other` lies entirely inside this box.
    pub fn contains(&self, other: &BoxPx) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.x + other.width <= self.x + self.width
            && other.y + other.height <= self.y + self.height
    }
}

/// The part of the screen no platform covers: 6% in from each side, 14% down from the top, 35%
/// up from the bottom.
pub fn safe_zone() -> BoxPx {
    let (w, h) = (WIDTH as f32, HEIGHT as f32);
    // Fractions as integer ratios, so the edges are the nearest floats to the exact values.
    BoxPx { x: w * 6.0 / 100.0, y: h * 14.0 / 100.0, width: w * 88.0 / 100.0, height: h * 51.0 / 100.0 }
}

/// The brand's colours, as RGB.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Brand {
    /// The end card's background and the plates' accent bar.
    pub primary: [u8; 3],
    /// Prices and rules.
    pub accent: [u8; 3],
}

impl Default for Brand {
    fn default() -> Self {
        // A deep navy and a warm brass: neutral enough for any brokerage.
        Brand { primary: [0x1f, 0x3a, 0x5f], accent: [0xd9, 0xb3, 0x6c] }
    }
}

/// One line of a caption plate.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The words.
    pub text: String,
    /// Emphasis: the price and headline are bold and larger.
    pub role: Role,
}

/// What a line is, which decides its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The price: bold, large, in the accent colour.
    Price,
    /// A headline or a photo's own caption: bold.
    Title,
    /// Facts and the address: regular.
    Body,
}

impl Role {
    fn style(self) -> (Weight, f32) {
        match self {
            Role::Price => (Weight::Bold, 76.0),
            Role::Title => (Weight::Bold, 56.0),
            Role::Body => (Weight::Regular, 44.0),
        }
    }
}

/// Padding inside a plate, pixels.
const PAD: f32 = 36.0;
/// Gap between lines, pixels.
const LINE_GAP: f32 = 18.0;
/// Width of the plate's brand bar, pixels.
const BAR: f32 = 10.0;
/// Distance from the plate's bottom to the safe zone's bottom, pixels.
const PLATE_LIFT: f32 = 24.0;
/// Smallest size a line may shrink to before it wraps, pixels per em.
const MIN_SIZE: f32 = 34.0;
/// Most lines a caption wraps to.
const MAX_WRAPPED_LINES: usize = 3;

/// A rendered caption plate and where it sits on the reel.
pub struct Plate {
    /// The plate, premultiplied RGBA, the size of `rect`.
    pub pixmap: Pixmap,
    /// Its place on the reel (inside the safe zone).
    pub rect: BoxPx,
}

/// A line set at its final size, possibly one of several a long line wrapped to.
struct SetLine {
    text: String,
    weight: Weight,
    size: f32,
    color: Color,
}

/// Lays out and draws `lines` on a translucent dark plate anchored at the bottom of the safe
/// zone; `None` when there is nothing to show.
pub fn caption_plate(lines: &[Line], brand: &Brand) -> Option<Plate> {
    let zone = safe_zone();
    let max_text = zone.width - 2.0 * PAD - BAR;
    let accent = readable_on_dark(brand.accent);
    let mut set = Vec::new();
    for line in lines.iter().filter(|l| !l.text.trim().is_empty()) {
        let (weight, size) = line.role.style();
        let color = if line.role == Role::Price { accent } else { Color::WHITE };
        for (text, size) in fit_lines(&line.text, weight, size, max_text) {
            set.push(SetLine { text, weight, size, color });
        }
    }
    if set.is_empty() {
        return None;
    }
    let metrics: Vec<_> = set.iter().map(|l| font(l.weight).measure(&l.text, l.size)).collect();
    let text_w = metrics.iter().map(|m| m.width).fold(0.0f32, f32::max);
    // Line boxes use the type size (not the ink) so plates of different text line up alike.
    let line_h = |l: &SetLine| l.size * 1.1;
    let text_h: f32 = set.iter().map(line_h).sum::<f32>() + LINE_GAP * (set.len() - 1) as f32;
    // Whole pixels inside the zone: the plate is composited without resampling.
    let (left, right, bottom) = (zone.x.ceil(), (zone.x + zone.width).floor(), (zone.y + zone.height).floor());
    let width = (text_w + 2.0 * PAD + BAR).ceil().min(right - left);
    let height = (text_h + 2.0 * PAD).ceil().min(bottom - zone.y.ceil() - PLATE_LIFT);
    let rect = BoxPx { x: left, y: bottom - PLATE_LIFT - height, width, height };
    let mut pixmap = Pixmap::new(width as u32, height as u32)?;
    let plate = rounded_rect(Rect::from_xywh(0.0, 0.0, width, height)?, 22.0)?;
    pixmap.fill_path(
        &plate,
        &paint(Color::from_rgba8(12, 14, 18, 178)),
        tiny_skia::FillRule::Winding,
        Transform::identity(),
        None,
    );
    let bar = rounded_rect(Rect::from_xywh(0.0, 0.0, BAR, height)?, BAR / 2.0)?;
    let [r, g, b] = brand.primary;
    let bar_color = if relative_luminance([r, g, b]) < 0.05 { accent } else { Color::from_rgba8(r, g, b, 255) };
    pixmap.fill_path(&bar, &paint(bar_color), tiny_skia::FillRule::Winding, Transform::identity(), None);
    let mut top = PAD;
    for (line, m) in set.iter().zip(&metrics) {
        let h = line_h(line);
        // Centre the ink of capitals in the line box.
        let baseline = top + (h + m.ascent) / 2.0;
        let style = TextStyle { weight: line.weight, size: line.size, color: line.color, halo: None };
        draw_text(&mut pixmap, &line.text, &style, Transform::from_translate(PAD + BAR, baseline));
        top += h + LINE_GAP;
    }
    Some(Plate { pixmap, rect })
}

/// The text broken into lines no wider than `max_width`: shrunk first (down to [`MIN_SIZE`]),
/// then wrapped at spaces, then shrunk again if it still needs more than three lines.
fn fit_lines(text: &str, weight: Weight, size: f32, max_width: f32) -> Vec<(String, f32)> {
    let face = font(weight);
    let fitted = face.fit(text, size, max_width);
    if fitted >= MIN_SIZE.min(size) {
        return vec![(text.to_string(), fitted)];
    }
    let mut size = size.min(MIN_SIZE.max(size * 0.8));
    loop {
        let lines = wrap(text, weight, size, max_width);
        if lines.len() <= MAX_WRAPPED_LINES || size <= 16.0 {
            return lines.into_iter().map(|l| (l.clone(), face.fit(&l, size, max_width))).collect();
        }
        size *= 0.9;
    }
}

/// Greedy word wrap at `size`.
fn wrap(text: &str, weight: Weight, size: f32, max_width: f32) -> Vec<String> {
    let face = font(weight);
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() { word.to_string() } else { format!("{current} {word}") };
        if face.measure(&candidate, size).width <= max_width || current.is_empty() {
            current = candidate;
        } else {
            lines.push(std::mem::replace(&mut current, word.to_string()));
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// The closing card: the brand colour, the agent, brokerage and phone (and the address and
/// price above them when known), centred in the safe zone. Returns the card and the boxes of its
/// text.
pub fn end_card(lines: &[Line], brand: &Brand) -> Option<(Pixmap, Vec<BoxPx>)> {
    let mut card = Pixmap::new(WIDTH, HEIGHT)?;
    let [r, g, b] = brand.primary;
    // A gentle vertical gradient of the brand colour reads richer than a flat fill.
    let top = Color::from_rgba8(lighten(r), lighten(g), lighten(b), 255);
    let bottom = Color::from_rgba8(r, g, b, 255);
    let gradient = tiny_skia::LinearGradient::new(
        tiny_skia::Point::from_xy(0.0, 0.0),
        tiny_skia::Point::from_xy(0.0, HEIGHT as f32),
        vec![tiny_skia::GradientStop::new(0.0, top), tiny_skia::GradientStop::new(1.0, bottom)],
        tiny_skia::SpreadMode::Pad,
        Transform::identity(),
    )?;
    let fill = tiny_skia::Paint { shader: gradient, ..Default::default() };
    card.fill_rect(Rect::from_xywh(0.0, 0.0, WIDTH as f32, HEIGHT as f32)?, &fill, Transform::identity(), None);
    let text = text_color_on(brand.primary);
    let accent = if contrast(brand.accent, brand.primary) >= 3.0 {
        Color::from_rgba8(brand.accent[0], brand.accent[1], brand.accent[2], 255)
    } else {
        text
    };
    let zone = safe_zone();
    let max_text = zone.width - 2.0 * PAD;
    let mut set = Vec::new();
    for line in lines.iter().filter(|l| !l.text.trim().is_empty()) {
        let (weight, size) = match line.role {
            Role::Title => (Weight::Bold, 72.0),
            Role::Price => (Weight::Bold, 60.0),
            Role::Body => (Weight::Regular, 46.0),
        };
        let color = if line.role == Role::Price { accent } else { text };
        for (t, size) in fit_lines(&line.text, weight, size, max_text) {
            set.push(SetLine { text: t, weight, size, color });
        }
    }
    if set.is_empty() {
        return None;
    }
    let line_h = |l: &SetLine| l.size * 1.25;
    let rule_gap = 48.0;
    let total: f32 = set.iter().map(line_h).sum::<f32>() + rule_gap;
    let mut y = zone.y + (zone.height - total) / 2.0;
    let mut boxes = Vec::new();
    for (i, line) in set.iter().enumerate() {
        let m = font(line.weight).measure(&line.text, line.size);
        let h = line_h(line);
        let x = zone.x + (zone.width - m.width) / 2.0;
        let baseline = y + (h + m.ascent) / 2.0;
        let style = TextStyle { weight: line.weight, size: line.size, color: line.color, halo: None };
        draw_text(&mut card, &line.text, &style, Transform::from_translate(x, baseline));
        boxes.push(BoxPx { x, y, width: m.width, height: h });
        y += h;
        if i == 0 {
            // An accent rule under the first line.
            let rule = Rect::from_xywh(WIDTH as f32 / 2.0 - 60.0, y + rule_gap / 2.0 - 3.0, 120.0, 6.0)?;
            card.fill_rect(rule, &paint(accent), Transform::identity(), None);
            y += rule_gap;
        }
    }
    Some((card, boxes))
}

fn lighten(v: u8) -> u8 {
    (f32::from(v) + (255.0 - f32::from(v)) * 0.12).round() as u8
}

/// The text colour that reads on `background` (WCAG AA, 4.5:1), as the renderer paints it.
pub fn text_color_on(background: [u8; 3]) -> Color {
    let [r, g, b] = colour::text_on(background);
    Color::from_rgba8(r, g, b, 255)
}

/// The accent colour when it reads on the dark plate, otherwise white.
fn readable_on_dark(accent: [u8; 3]) -> Color {
    if contrast(accent, [12, 14, 18]) >= 4.5 {
        Color::from_rgba8(accent[0], accent[1], accent[2], 255)
    } else {
        Color::WHITE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, role: Role) -> Line {
        Line { text: text.into(), role }
    }

    #[test]
    fn plates_stay_inside_the_safe_zone_whatever_the_text() {
        let zone = safe_zone();
        let edges = [zone.x, zone.y, zone.x + zone.width, zone.y + zone.height];
        for (edge, exact) in edges.into_iter().zip([64.8, 268.8, 1015.2, 1248.0]) {
            assert!((edge - exact).abs() < 1e-3, "{edges:?}");
        }
        let long = "An extraordinarily long headline about a waterfront colonial with a private dock and a \
                    three car garage on two acres of lawn";
        for lines in [
            vec![line("$525,000", Role::Price)],
            vec![
                line(long, Role::Title),
                line("$1,250,000", Role::Price),
                line("3 bd | 2 ba | 1,850 sq ft", Role::Body),
            ],
            vec![line(&"W".repeat(120), Role::Body)],
        ] {
            let plate = caption_plate(&lines, &Brand::default()).unwrap();
            assert!(zone.contains(&plate.rect), "{:?}", plate.rect);
            assert_eq!(
                (plate.pixmap.width() as f32, plate.pixmap.height() as f32),
                (plate.rect.width, plate.rect.height)
            );
        }
        assert!(caption_plate(&[line("  ", Role::Body)], &Brand::default()).is_none());
    }

    #[test]
    fn end_card_text_is_centred_in_the_safe_zone_and_readable() {
        let lines = [
            line("Dana Reyes", Role::Title),
            line("Shoreline Realty", Role::Body),
            line("(860) 555-0142", Role::Price),
        ];
        for primary in [[0x1f, 0x3a, 0x5f], [0xf4, 0xe9, 0xd8], [0xc8, 0x10, 0x2e]] {
            let (card, boxes) = end_card(&lines, &Brand { primary, accent: [0xd9, 0xb3, 0x6c] }).unwrap();
            assert_eq!((card.width(), card.height()), (WIDTH, HEIGHT));
            assert!(boxes.iter().all(|b| safe_zone().contains(b)), "{boxes:?}");
            let text = text_color_on(primary);
            let rgb = [text.red(), text.green(), text.blue()].map(|c| (c * 255.0).round() as u8);
            assert!(contrast(rgb, primary) >= 4.5, "{primary:?}");
        }
    }
}
