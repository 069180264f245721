//! A small SVG writer for the kit's templates: rectangles, photos, a logo and lines of text set in
//! the shipped typefaces, with wrapping measured from the fonts' own advances. Every text line's
//! box is recorded, so tests (and the result) can show that text sits where the template means it
//! to, inside the trim's margin or a story's safe zone.
//!
//! Units are the piece's own: points for print, pixels for screens.

use media::text::{font, garamond, Font, Weight};
use serde::Serialize;
use std::fmt::Write;

/// A rectangle, in the piece's units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    /// This rectangle shrunk by `by` on every side.
    pub fn inset(&self, by: f64) -> Rect {
        Rect { x: self.x + by, y: self.y + by, width: self.width - 2.0 * by, height: self.height - 2.0 * by }
    }
}

/// A typeface of the kit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    /// Inter Regular.
    Sans,
    /// Inter Bold.
    SansBold,
    /// EB Garamond Regular.
    Serif,
}

impl Face {
    fn font(self) -> &'static Font {
        match self {
            Face::Sans => font(Weight::Regular),
            Face::SansBold => font(Weight::Bold),
            Face::Serif => garamond(),
        }
    }

    fn attributes(self) -> &'static str {
        match self {
            Face::Sans => r#"font-family="Inter" font-weight="400""#,
            Face::SansBold => r#"font-family="Inter" font-weight="700""#,
            Face::Serif => r#"font-family="EB Garamond" font-weight="400""#,
        }
    }

    /// The width of `text` at `size`, with `tracking` added between letters.
    pub fn width(self, text: &str, size: f64, tracking: f64) -> f64 {
        f64::from(self.font().measure(text, size as f32).width)
            + tracking * text.chars().count().saturating_sub(1) as f64
    }
}

/// How a line of text is set.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// The typeface.
    pub face: Face,
    /// Size, units per em.
    pub size: f64,
    /// Fill colour.
    pub color: [u8; 3],
    /// Extra space between letters.
    pub tracking: f64,
    /// Distance between baselines, as a multiple of `size`.
    pub leading: f64,
}

impl Style {
    /// A style with no tracking and a leading of 1.3.
    pub fn new(face: Face, size: f64, color: [u8; 3]) -> Style {
        Style { face, size, color, tracking: 0.0, leading: 1.3 }
    }

    /// The same style, letter-spaced.
    pub fn tracked(self, tracking: f64) -> Style {
        Style { tracking, ..self }
    }

    /// The same style with `leading`.
    pub fn leading(self, leading: f64) -> Style {
        Style { leading, ..self }
    }

    fn ascent(&self) -> f64 {
        // Cap height and ascenders reach about 0.75 em in both faces; descenders 0.25 em.
        self.size * 0.75
    }

    fn descent(&self) -> f64 {
        self.size * 0.25
    }
}

/// Where a line is anchored horizontally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// `x` is the left edge.
    Start,
    /// `x` is the centre.
    Middle,
    /// `x` is the right edge.
    End,
}

/// An SVG document being composed.
pub struct Canvas {
    width: f64,
    height: f64,
    offset: f64,
    body: String,
    text_boxes: Vec<(String, Rect)>,
}

impl Canvas {
    /// An empty canvas of `width` x `height`.
    pub fn new(width: f64, height: f64) -> Canvas {
        Self::with_offset(width, height, 0.0)
    }

    /// An empty canvas of `width` x `height` whose drawing origin is `offset` in from the top left
    /// (a print trim inside its bleed).
    pub fn with_offset(width: f64, height: f64, offset: f64) -> Canvas {
        Canvas { width, height, offset, body: String::new(), text_boxes: Vec::new() }
    }

    /// A filled rectangle.
    pub fn rect(&mut self, r: Rect, color: [u8; 3], opacity: f64) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{}" fill-opacity="{opacity:.3}"/>"#,
            r.x,
            r.y,
            r.width,
            r.height,
            hex(color)
        );
    }

    /// An encoded image (`mime` `image/jpeg` or `image/png`) filling `r`.
    pub fn image(&mut self, r: Rect, mime: &str, bytes: &[u8]) {
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        let _ = writeln!(
            self.body,
            r#"<image x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" preserveAspectRatio="none" href="data:{mime};base64,{data}"/>"#,
            r.x, r.y, r.width, r.height
        );
    }

    /// One line of text with its baseline at `y`; its box is recorded under `name`.
    pub fn line(&mut self, name: &str, text: &str, x: f64, y: f64, align: Align, style: &Style) -> Rect {
        let width = style.face.width(text, style.size, style.tracking);
        let (anchor, left) = match align {
            Align::Start => ("start", x),
            Align::Middle => ("middle", x - width / 2.0),
            Align::End => ("end", x - width),
        };
        let tracking =
            if style.tracking == 0.0 { String::new() } else { format!(r#" letter-spacing="{:.2}""#, style.tracking) };
        let _ = writeln!(
            self.body,
            r#"<text x="{x:.2}" y="{y:.2}" {} font-size="{:.2}" fill="{}" text-anchor="{anchor}"{tracking}>{}</text>"#,
            style.face.attributes(),
            style.size,
            hex(style.color),
            escape(text)
        );
        let bounds = Rect { x: left, y: y - style.ascent(), width, height: style.ascent() + style.descent() };
        self.text_boxes.push((name.to_string(), bounds));
        bounds
    }

    /// One line of text at the baseline `at`, shrunk to fit `max_width` but not below `min_size`,
    /// and cut at a word with an ellipsis if it still does not fit; returns the size used.
    pub fn fit_line(
        &mut self,
        name: &str,
        text: &str,
        at: (f64, f64),
        style: &Style,
        max_width: f64,
        min_size: f64,
    ) -> f64 {
        let size = fit_size(text, style, max_width, min_size);
        let style = Style { size, ..*style };
        let text = match wrap(text, &style, max_width, 1).into_iter().next() {
            Some(line) => line,
            None => return size,
        };
        self.line(name, &text, at.0, at.1, Align::Start, &style);
        size
    }

    /// `lines` set one under the other from the baseline `y`; returns the baseline after the last.
    pub fn lines(&mut self, name: &str, lines: &[String], x: f64, y: f64, align: Align, style: &Style) -> f64 {
        let mut baseline = y;
        for line in lines {
            self.line(name, line, x, baseline, align, style);
            baseline += style.size * style.leading;
        }
        baseline
    }

    /// The document.
    pub fn finish(self) -> (String, Vec<(String, Rect)>) {
        let svg = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.3}" height="{h:.3}" viewBox="0 0 {w:.3} {h:.3}"><g transform="translate({o:.3} {o:.3})">{body}</g></svg>"#,
            w = self.width,
            h = self.height,
            o = self.offset,
            body = self.body
        );
        (svg, self.text_boxes)
    }
}

/// `text` broken into lines no wider than `max_width`, at most `max_lines` of them; a text that
/// does not fit ends its last line with an ellipsis at a word.
pub fn wrap(text: &str, style: &Style, max_width: f64, max_lines: usize) -> Vec<String> {
    let fits = |line: &str| style.face.width(line, style.size, style.tracking) <= max_width;
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() { word.to_string() } else { format!("{current} {word}") };
        if fits(&candidate) || current.is_empty() {
            current = candidate;
        } else {
            lines.push(std::mem::take(&mut current));
            current = word.to_string();
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    // A single word wider than the line is cut to fit.
    for line in &mut lines {
        while !fits(line) && line.chars().count() > 1 {
            line.pop();
        }
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            let mut words: Vec<&str> = last.split_whitespace().collect();
            loop {
                let candidate = format!("{}…", words.join(" ").trim_end_matches([',', ';', ':', '.']));
                if fits(&candidate) || words.len() <= 1 {
                    *last = candidate;
                    break;
                }
                words.pop();
            }
        }
    }
    lines
}

/// The largest size at most `style.size` at which `text` fits `max_width` on one line, not below
/// `min_size`.
pub fn fit_size(text: &str, style: &Style, max_width: f64, min_size: f64) -> f64 {
    let width = style.face.width(text, style.size, style.tracking);
    if width <= max_width || width <= 0.0 {
        style.size
    } else {
        (style.size * max_width / width).max(min_size)
    }
}

/// `#rrggbb`.
pub fn hex(color: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", color[0], color[1], color[2])
}

/// Text made safe inside an XML element.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML.
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_boxes_are_recorded() {
        let mut canvas = Canvas::new(200.0, 100.0);
        let style = Style::new(Face::SansBold, 20.0, [0, 0, 0]);
        let b = canvas.line("price", "<b>Tom & Jerry's</b>", 190.0, 50.0, Align::End, &style);
        assert!((b.x + b.width - 190.0).abs() < 1e-9);
        let (svg, boxes) = canvas.finish();
        assert!(svg.contains("&lt;b&gt;Tom &amp; Jerry&apos;s&lt;/b&gt;"));
        assert_eq!(boxes[0].0, "price");
    }

    #[test]
    fn wrapping_respects_width_and_line_count() {
        let style = Style::new(Face::Sans, 12.0, [0, 0, 0]);
        let text =
            "Sunlit rooms open to the water through a wall of glass, with a deck that runs the width of the house.";
        let lines = wrap(text, &style, 150.0, 10);
        assert!(lines.len() > 2);
        assert!(lines.iter().all(|l| Face::Sans.width(l, 12.0, 0.0) <= 150.0));
        assert_eq!(lines.join(" "), text);
        let short = wrap(text, &style, 150.0, 2);
        assert_eq!(short.len(), 2);
        assert!(short[1].ends_with('…') && Face::Sans.width(&short[1], 12.0, 0.0) <= 150.0);
    }
}
