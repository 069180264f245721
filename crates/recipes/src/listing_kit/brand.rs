//! The brand every piece is locked to: two colours, the text colours that read on them (WCAG AA,
//! 4.5:1, at least), the heading typeface and the logo.

use super::canvas::Face;
use crate::colour::{contrast, parse_hex, text_on, AA, INK, MUTED, WHITE};
use domain::listing_kit::{KitBrand, KitFont};
use domain::ValidationError;
use serde::{Deserialize, Serialize};

/// The default main colour: a deep navy.
const DEFAULT_PRIMARY: [u8; 3] = [0x1f, 0x3a, 0x5f];
/// The default second colour: a muted gold.
const DEFAULT_ACCENT: [u8; 3] = [0xc8, 0xa2, 0x4a];
/// The checked brand, as the request gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrandSpec {
    /// Main colour.
    pub primary: [u8; 3],
    /// Second colour.
    pub accent: [u8; 3],
    /// The logo's URL.
    pub logo_url: Option<String>,
    /// The heading typeface.
    pub font: KitFont,
}

impl BrandSpec {
    /// Checks the request's brand; the error names the field.
    pub fn from_request(brand: Option<KitBrand>) -> Result<BrandSpec, ValidationError> {
        let brand = brand.unwrap_or_default();
        let color = |field: &str, value: &Option<String>, default: [u8; 3]| match value {
            None => Ok(default),
            Some(text) => parse_hex(text)
                .ok_or_else(|| ValidationError::new(format!("params.brand.{field}"), "expected a colour as #RRGGBB")),
        };
        let logo_url = match &brand.logo_url {
            None => None,
            Some(url) => Some(
                domain::validation::check_input_url(url)
                    .map_err(|m| ValidationError::new("params.brand.logo_url", m))?,
            ),
        };
        Ok(BrandSpec {
            primary: color("primary", &brand.primary, DEFAULT_PRIMARY)?,
            accent: color("accent", &brand.accent, DEFAULT_ACCENT)?,
            logo_url,
            font: brand.font.unwrap_or_default(),
        })
    }
}

/// The brand resolved into what the templates paint with.
#[derive(Clone, Debug, PartialEq)]
pub struct Palette {
    /// Main colour: bands and panels.
    pub primary: [u8; 3],
    /// Second colour: tags and rules.
    pub accent: [u8; 3],
    /// Text on the main colour.
    pub on_primary: [u8; 3],
    /// Prices and highlights on the main colour: the accent where it reads, else `on_primary`.
    pub highlight_on_primary: [u8; 3],
    /// Text on the accent.
    pub on_accent: [u8; 3],
    /// Rules and headings on white: the main colour where it reads, else ink.
    pub on_white: [u8; 3],
    /// The face of headings and prices.
    pub display: Face,
}

impl Palette {
    /// The palette of `brand`.
    pub fn of(brand: &BrandSpec) -> Palette {
        let on_primary = text_on(brand.primary);
        let highlight_on_primary = if contrast(brand.accent, brand.primary) >= AA { brand.accent } else { on_primary };
        Palette {
            primary: brand.primary,
            accent: brand.accent,
            on_primary,
            highlight_on_primary,
            on_accent: text_on(brand.accent),
            on_white: if contrast(brand.primary, WHITE) >= AA { brand.primary } else { INK },
            display: match brand.font {
                KitFont::Inter => Face::SansBold,
                KitFont::Garamond => Face::Serif,
            },
        }
    }

    /// Every text/background pair the templates use, with its contrast ratio.
    pub fn pairs(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("text on primary", contrast(self.on_primary, self.primary)),
            ("highlight on primary", contrast(self.highlight_on_primary, self.primary)),
            ("text on accent", contrast(self.on_accent, self.accent)),
            ("headings on white", contrast(self.on_white, WHITE)),
            ("body on white", contrast(INK, WHITE)),
            ("muted on white", contrast(MUTED, WHITE)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_reaches_aa_on_any_brand() {
        // A sweep of greys and colours, including the mid tones where neither white nor ink is easy.
        for r in (0..=255).step_by(17) {
            for g in (0..=255).step_by(51) {
                for b in (0..=255).step_by(85) {
                    let brand = BrandSpec {
                        primary: [r as u8, g as u8, b as u8],
                        accent: [b as u8, r as u8, g as u8],
                        logo_url: None,
                        font: KitFont::Inter,
                    };
                    for (name, ratio) in Palette::of(&brand).pairs() {
                        assert!(ratio >= AA, "{name} {ratio:.2} on {:?}", brand.primary);
                    }
                }
            }
        }
    }

    #[test]
    fn bad_colours_name_the_field() {
        let brand = KitBrand { accent: Some("gold".into()), ..Default::default() };
        assert_eq!(BrandSpec::from_request(Some(brand)).unwrap_err().field, "params.brand.accent");
        let brand = KitBrand { logo_url: Some("ftp://x/logo.png".into()), ..Default::default() };
        assert_eq!(BrandSpec::from_request(Some(brand)).unwrap_err().field, "params.brand.logo_url");
    }
}
