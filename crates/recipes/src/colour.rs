//! Colour rules the recipes share: parsing `#RRGGBB`, WCAG relative luminance and contrast, and
//! the text colour that reads on a background.

/// White, and the black that reads on any colour white does not (WCAG AA, 4.5:1, is reached by
/// one of the two on every background).
pub const WHITE: [u8; 3] = [255, 255, 255];
/// Body text on white.
pub const INK: [u8; 3] = [0x1a, 0x1c, 0x20];
/// Secondary text on white (7.6:1).
pub const MUTED: [u8; 3] = [0x4a, 0x4f, 0x57];
const BLACK: [u8; 3] = [0, 0, 0];
/// WCAG AA for body text.
pub const AA: f64 = 4.5;

/// WCAG relative luminance of an sRGB colour.
pub fn relative_luminance(rgb: [u8; 3]) -> f64 {
    let channel = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2])
}

/// WCAG contrast ratio of two colours (1 to 21).
pub fn contrast(a: [u8; 3], b: [u8; 3]) -> f64 {
    let (la, lb) = (relative_luminance(a), relative_luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// White or black, whichever reads better on `background`; one of them always reaches 4.5:1.
pub fn text_on(background: [u8; 3]) -> [u8; 3] {
    if contrast(WHITE, background) >= contrast(BLACK, background) {
        WHITE
    } else if contrast(INK, background) >= AA {
        INK
    } else {
        BLACK
    }
}

/// Parses `#RRGGBB`.
pub fn parse_hex(text: &str) -> Option<[u8; 3]> {
    let hex = text.strip_prefix('#')?;
    if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_parse_and_contrast_is_wcag() {
        assert_eq!(parse_hex("#1F3a5f"), Some([0x1f, 0x3a, 0x5f]));
        assert_eq!(parse_hex("1f3a5f"), None);
        assert_eq!(parse_hex("#12345"), None);
        assert!((contrast([255, 255, 255], [0, 0, 0]) - 21.0).abs() < 1e-9);
    }

    #[test]
    fn the_text_colour_reaches_aa_on_every_background() {
        for r in (0..=255).step_by(15) {
            for g in (0..=255).step_by(15) {
                for b in (0..=255).step_by(51) {
                    let background = [r as u8, g as u8, b as u8];
                    assert!(contrast(text_on(background), background) >= AA, "{background:?}");
                }
            }
        }
    }
}
