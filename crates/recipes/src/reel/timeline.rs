//! When each still and the end card are on screen, how they cross-fade, and when each caption
//! shows. Times are in frames so the video is exactly the requested length.

/// Frames per second of every reel.
pub const FPS: u32 = 30;
/// Length of a cross-fade between two pieces, seconds.
const CROSSFADE_SECS: f64 = 0.6;
/// Length of the end card, seconds.
const END_CARD_SECS: f64 = 2.5;
/// Time a caption takes to fade in or out, seconds.
pub const CAPTION_FADE_SECS: f64 = 0.25;
/// Delay before the first still's caption appears, so the opening frame is the photo.
const FIRST_CAPTION_DELAY_SECS: f64 = 0.3;

/// One piece on the timeline: a still, or the end card.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    /// First second it is visible (the start of its fade-in).
    pub start: f64,
    /// Last second it is visible (the end of its fade-out, or the end of the reel).
    pub end: f64,
}

/// The layout in time of a reel of `photos` stills.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Total frames.
    pub frames: u32,
    /// The stills' slots, then the end card's when there is one.
    pub slots: Vec<Slot>,
    /// Whether the last slot is the end card.
    pub end_card: bool,
    crossfade: f64,
}

/// What one frame shows: slot `current` (by index), mixed over the previous one during a
/// cross-fade, and how far through each still's own motion the frame is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shot {
    /// The slot coming in (or alone on screen).
    pub current: usize,
    /// The slot going out and the weight of `current` (0 to 1), during a cross-fade.
    pub outgoing: Option<(usize, f64)>,
}

impl Timeline {
    /// Lays out `photos` stills (1 or more) and, when `end_card`, a closing card over
    /// `duration_secs`.
    pub fn new(photos: usize, duration_secs: f64, end_card: bool) -> Timeline {
        let frames = (duration_secs * f64::from(FPS)).round() as u32;
        let duration = f64::from(frames) / f64::from(FPS);
        let pieces = photos + usize::from(end_card);
        let crossfade = CROSSFADE_SECS;
        let end_len = if end_card { END_CARD_SECS.min(duration / 4.0) } else { 0.0 };
        // Stills share what the end card leaves; consecutive pieces overlap by one cross-fade.
        let overlaps = (pieces - 1) as f64 * crossfade;
        let photo_len = (duration - end_len + overlaps - if end_card { crossfade } else { 0.0 }) / photos as f64;
        let mut slots: Vec<Slot> = (0..photos)
            .map(|i| {
                let start = i as f64 * (photo_len - crossfade);
                Slot { start, end: start + photo_len }
            })
            .collect();
        if end_card {
            slots.push(Slot { start: duration - end_len - crossfade, end: duration });
        }
        if let Some(last) = slots.last_mut() {
            last.end = duration;
        }
        Timeline { frames, slots, end_card, crossfade }
    }

    /// Length of the reel, seconds.
    pub fn duration(&self) -> f64 {
        f64::from(self.frames) / f64::from(FPS)
    }

    /// The middle of frame `index`, seconds.
    pub fn time_of(&self, index: u32) -> f64 {
        (f64::from(index) + 0.5) / f64::from(FPS)
    }

    /// What is on screen at `t` seconds.
    pub fn shot(&self, t: f64) -> Shot {
        let current = self.slots.iter().rposition(|s| s.start <= t).unwrap_or(0);
        let into = t - self.slots[current].start;
        let outgoing = (current > 0 && into < self.crossfade).then(|| (current - 1, ease(into / self.crossfade)));
        Shot { current, outgoing }
    }

    /// How far through its slot still `slot` is at `t`, 0 to 1, eased at both ends so the motion
    /// starts and stops without a jolt.
    pub fn progress(&self, slot: usize, t: f64) -> f64 {
        let Slot { start, end } = self.slots[slot];
        ease(((t - start) / (end - start)).clamp(0.0, 1.0))
    }

    /// When still `slot`'s caption is shown: after its fade-in, until the next piece starts
    /// coming in.
    pub fn caption_window(&self, slot: usize) -> (f64, f64) {
        let Slot { start, end } = self.slots[slot];
        let from = if slot == 0 { FIRST_CAPTION_DELAY_SECS } else { start + self.crossfade };
        let until = if slot + 1 < self.slots.len() { end - self.crossfade } else { end };
        (from, until.max(from))
    }

    /// Opacity of still `slot`'s caption at `t`: fading in and out over [`CAPTION_FADE_SECS`].
    pub fn caption_opacity(&self, slot: usize, t: f64) -> f64 {
        let (from, until) = self.caption_window(slot);
        let fade_in = ((t - from) / CAPTION_FADE_SECS).clamp(0.0, 1.0);
        let fade_out =
            if slot + 1 == self.slots.len() { 1.0 } else { ((until - t) / CAPTION_FADE_SECS).clamp(0.0, 1.0) };
        ease(fade_in.min(fade_out))
    }
}

/// Sine ease-in-out on 0..=1.
pub fn ease(x: f64) -> f64 {
    0.5 - 0.5 * (std::f64::consts::PI * x.clamp(0.0, 1.0)).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_cover_the_reel_with_one_crossfade_between_neighbours() {
        for (photos, secs, card) in [(3, 15.0, true), (1, 6.0, false), (2, 30.0, true), (3, 6.0, true)] {
            let timeline = Timeline::new(photos, secs, card);
            assert_eq!(timeline.frames, (secs * 30.0) as u32);
            assert_eq!(timeline.slots.len(), photos + usize::from(card));
            assert_eq!(timeline.slots[0].start, 0.0);
            assert!((timeline.slots.last().unwrap().end - secs).abs() < 1e-9);
            for pair in timeline.slots.windows(2) {
                assert!((pair[0].end - pair[1].start - CROSSFADE_SECS).abs() < 1e-9, "{timeline:?}");
                assert!(pair[1].end - pair[1].start > 2.0 * CROSSFADE_SECS, "{timeline:?}");
            }
        }
    }

    #[test]
    fn shots_cross_fade_and_captions_wait_for_their_still() {
        let timeline = Timeline::new(3, 15.0, true);
        assert_eq!(timeline.shot(0.0), Shot { current: 0, outgoing: None });
        let second = timeline.slots[1].start;
        let mid_fade = timeline.shot(second + CROSSFADE_SECS / 2.0);
        assert_eq!(mid_fade.current, 1);
        let (outgoing, weight) = mid_fade.outgoing.unwrap();
        assert_eq!(outgoing, 0);
        assert!((weight - 0.5).abs() < 1e-9);
        assert_eq!(timeline.shot(second + CROSSFADE_SECS + 0.01).outgoing, None);
        // A caption is invisible while its still fades in and out, fully visible between.
        let (from, until) = timeline.caption_window(1);
        assert_eq!(timeline.caption_opacity(1, second + 0.1), 0.0);
        assert_eq!(timeline.caption_opacity(1, (from + until) / 2.0), 1.0);
        assert_eq!(timeline.caption_opacity(1, until + 0.01), 0.0);
        assert!(timeline.progress(0, 0.0) == 0.0 && timeline.progress(0, timeline.slots[0].end) == 1.0);
    }
}
