//! The notes a caller writes with a photo ("brighter", "less contrast", "twilight"), read word
//! by word into the style the enhancement aims for.

use super::white_balance::{COOL_CORRECTION, WARM_CORRECTION, WARM_CORRECTION_TWILIGHT, WARM_CORRECTION_WARM_NOTES};

/// Median display luma exposure aims for, by style.
pub(super) const KEY_DEFAULT: f32 = 0.45;
const KEY_BRIGHT: f32 = 0.52;
const KEY_MOODY: f32 = 0.40;
const KEY_TWILIGHT: f32 = 0.42;
/// Median luma below which shadows are lifted, rising to the maximum lift for a black median.
/// Twilight shots are meant to be dark, so they start lifting much lower.
const LIFT_KEY_DEFAULT: f32 = 0.38;
const LIFT_KEY_BRIGHT: f32 = 0.55;
const LIFT_KEY_TWILIGHT: f32 = 0.25;
const LIFT_MAX_DEFAULT: f32 = 0.3;
pub(super) const LIFT_MAX_BRIGHT: f32 = 0.6;
/// "Bright" always lifts at least this much, so it shows even on a photo with a high key.
pub(super) const LIFT_MIN_BRIGHT: f32 = 0.5;
/// "Moody" deepens shadows instead of lifting them.
pub(super) const LIFT_MOODY: f32 = -0.3;

/// Midtone S-curve strength, by style; the default keeps lifted shadows from looking flat.
const CONTRAST_DEFAULT: f32 = 0.10;
const CONTRAST_MOODY: f32 = 0.20;
const CONTRAST_EXTRA: f32 = 0.15;
const CONTRAST_TWILIGHT_EXTRA: f32 = 0.10;

/// Local contrast ("clarity") amount, by style.
const LOCAL_CONTRAST_DEFAULT: f32 = 0.25;
const LOCAL_CONTRAST_EXTRA: f32 = 0.10;
const LOCAL_CONTRAST_SOFT: f32 = 0.10;

pub(super) const SAT_DEFAULT: f32 = 0.08;
pub(super) const SAT_VIVID: f32 = 0.25;
pub(super) const SAT_NATURAL: f32 = 0.0;
const SAT_TWILIGHT: f32 = 0.15;

pub(super) const WARMTH_SHIFT: f32 = 0.06;

const BRIGHT_WORDS: &[&str] = &["bright", "brighter", "brighten", "airy", "light", "lighter"];
const MOODY_WORDS: &[&str] = &["moody", "darker", "darken"];
const VIVID_WORDS: &[&str] = &["vivid", "vibrant", "saturated", "pop", "pops", "punchy"];
const NATURAL_WORDS: &[&str] = &["natural", "subtle"];
const WARM_WORDS: &[&str] = &["warm", "warmer", "golden", "cosy", "cozy"];
const COOL_WORDS: &[&str] = &["cool", "cooler"];
const CONTRAST_WORDS: &[&str] = &["contrast", "contrasty", "crisp", "dramatic"];
const SOFT_WORDS: &[&str] = &["soft", "softer", "flat", "flatter"];
const TWILIGHT_WORDS: &[&str] = &["twilight", "dusk"];
const STRAIGHTEN_WORDS: &[&str] = &["straighten", "straightened", "vertical", "verticals"];
/// A style word right after one of these asks for the opposite style ("less contrast").
const NEGATIONS: &[&str] = &["less", "lower", "reduce", "no", "not", "without"];

/// Stylistic requests parsed from the free-text notes.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Intent {
    pub(super) bright: bool,
    pub(super) moody: bool,
    pub(super) vivid: bool,
    pub(super) natural: bool,
    pub(super) warm: bool,
    pub(super) cool: bool,
    pub(super) contrast: bool,
    pub(super) soft: bool,
    pub(super) twilight: bool,
    pub(super) straighten: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Brightness {
    Neutral,
    Bright,
    Moody,
}

/// Sets `wanted` when `word` is one of `words`, or `opposite` when the word is negated.
fn mark(word: &str, negated: bool, words: &[&str], wanted: &mut bool, opposite: &mut bool) {
    if words.contains(&word) {
        if negated {
            *opposite = true;
        } else {
            *wanted = true;
        }
    }
}

impl Intent {
    pub(super) fn parse(notes: &str) -> Self {
        let mut intent = Self::default();
        let words: Vec<String> =
            notes.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
        let mut previous = "";
        for word in &words {
            let word = word.as_str();
            let negated = NEGATIONS.contains(&previous);
            mark(word, negated, BRIGHT_WORDS, &mut intent.bright, &mut intent.moody);
            mark(word, negated, MOODY_WORDS, &mut intent.moody, &mut intent.bright);
            mark(word, negated, VIVID_WORDS, &mut intent.vivid, &mut intent.natural);
            mark(word, negated, NATURAL_WORDS, &mut intent.natural, &mut intent.vivid);
            mark(word, negated, WARM_WORDS, &mut intent.warm, &mut intent.cool);
            mark(word, negated, COOL_WORDS, &mut intent.cool, &mut intent.warm);
            mark(word, negated, CONTRAST_WORDS, &mut intent.contrast, &mut intent.soft);
            mark(word, negated, SOFT_WORDS, &mut intent.soft, &mut intent.contrast);
            let blue_hour = previous == "blue" && word == "hour";
            intent.twilight |= !negated && (TWILIGHT_WORDS.contains(&word) || blue_hour);
            intent.straighten |= !negated && STRAIGHTEN_WORDS.contains(&word);
            previous = word;
        }
        intent
    }

    /// No style asked for: the finishing is the default one, scaled by how much the photo needs.
    pub(super) fn is_plain(&self) -> bool {
        !(self.bright || self.moody || self.vivid || self.natural || self.warm || self.cool)
            && !(self.contrast || self.soft || self.twilight)
    }

    // Contradictory requests cancel out rather than letting word order decide.
    pub(super) fn brightness(&self) -> Brightness {
        match (self.bright, self.moody) {
            (true, false) => Brightness::Bright,
            (false, true) => Brightness::Moody,
            _ => Brightness::Neutral,
        }
    }

    pub(super) fn key_target(&self) -> f32 {
        let key = match self.brightness() {
            Brightness::Bright => KEY_BRIGHT,
            Brightness::Moody => KEY_MOODY,
            Brightness::Neutral => KEY_DEFAULT,
        };
        if self.twilight {
            key.min(KEY_TWILIGHT)
        } else {
            key
        }
    }

    /// Shadow lift for a photo whose median display luma (after exposure) is `key`.
    pub(super) fn shadow_lift(&self, key: f32) -> f32 {
        let brightness = self.brightness();
        let lift_key = if self.twilight {
            LIFT_KEY_TWILIGHT
        } else if brightness == Brightness::Bright {
            LIFT_KEY_BRIGHT
        } else {
            LIFT_KEY_DEFAULT
        };
        let max = if brightness == Brightness::Bright { LIFT_MAX_BRIGHT } else { LIFT_MAX_DEFAULT };
        let auto = max * ((lift_key - key) / lift_key).clamp(0.0, 1.0);
        match brightness {
            Brightness::Bright => auto.max(LIFT_MIN_BRIGHT),
            Brightness::Moody => LIFT_MOODY,
            Brightness::Neutral => auto,
        }
    }

    pub(super) fn midtone_contrast(&self) -> f32 {
        let base = if self.brightness() == Brightness::Moody { CONTRAST_MOODY } else { CONTRAST_DEFAULT };
        let styled = match (self.contrast, self.soft) {
            (true, false) => base + CONTRAST_EXTRA,
            (false, true) => 0.0,
            _ => base,
        };
        if self.twilight {
            styled + CONTRAST_TWILIGHT_EXTRA
        } else {
            styled
        }
    }

    pub(super) fn local_contrast(&self) -> f32 {
        match (self.contrast, self.soft) {
            (true, false) => LOCAL_CONTRAST_DEFAULT + LOCAL_CONTRAST_EXTRA,
            (false, true) => LOCAL_CONTRAST_SOFT,
            _ => LOCAL_CONTRAST_DEFAULT,
        }
    }

    pub(super) fn saturation(&self) -> f32 {
        let saturation = match (self.vivid, self.natural) {
            (true, false) => SAT_VIVID,
            (false, true) => SAT_NATURAL,
            _ => SAT_DEFAULT,
        };
        if self.twilight {
            saturation.max(SAT_TWILIGHT)
        } else {
            saturation
        }
    }

    pub(super) fn warmth(&self) -> f32 {
        match (self.warm, self.cool) {
            (true, false) => WARMTH_SHIFT,
            (false, true) => -WARMTH_SHIFT,
            _ => 0.0,
        }
    }

    pub(super) fn twilight(&self) -> f32 {
        if self.twilight {
            1.0
        } else {
            0.0
        }
    }

    /// Share of a warm cast (beyond the tolerance) that white balance removes.
    pub(super) fn warm_correction(&self) -> f32 {
        let share = if self.warm && !self.cool { WARM_CORRECTION_WARM_NOTES } else { WARM_CORRECTION };
        if self.twilight {
            share.min(WARM_CORRECTION_TWILIGHT)
        } else {
            share
        }
    }

    /// Share of a cool cast that white balance removes; a twilight look keeps its blue.
    pub(super) fn cool_correction(&self) -> f32 {
        if self.twilight {
            0.0
        } else {
            COOL_CORRECTION
        }
    }
}
