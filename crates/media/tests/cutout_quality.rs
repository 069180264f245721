//! Measured quality of background removal on real photographs (see `cutouts/README.md`).
//!
//! Each photo has a reference mask made by hand; the cut-out's opaque pixels (alpha at least
//! half) are compared with it by intersection over union. The development photos are the ones
//! the method was tuned on. The first three held-out sets were looked at while the method took
//! its present form (the calibration was chosen on `heldout2/yellow_flower`, the framed second
//! look on the failures of all three), so they are development too; the fourth was gathered
//! after that and was only ever measured; the fifth was measured once and then looked at (its
//! scissors taught the framed look to leave a whole object alone); the sixth was gathered after
//! that and was only ever measured, then looked at with the rest when the closer look was
//! chosen; the seventh was gathered after that and was only ever measured.
//! `cargo test -p media --test cutout_quality -- --nocapture` prints the figures and writes each
//! cut-out over a checkerboard to the test scratch directory (`target/tmp/cutout-*.png`) for a
//! person to look at.

use std::path::PathBuf;

use image::{GrayImage, Rgba, RgbaImage};
use media::segmentation::remove_background;

const DEVELOPMENT: [&str; 4] = ["coffee", "astronaut", "dahlia", "fig_plate"];
const HELD_OUT: [&str; 3] = ["grace_hopper", "marigold", "chelsea"];
/// A second held-out set, gathered after the first had been measured (`cutouts/heldout2/`).
const HELD_OUT_2: [&str; 6] = [
    "heldout2/yellow_flower",
    "heldout2/ladybird",
    "heldout2/toy_bird",
    "heldout2/nuthatch",
    "heldout2/maple_leaf",
    "heldout2/portrait",
];

/// A third held-out set, gathered after the subject network was adopted and measured once
/// (`cutouts/heldout3/`).
const HELD_OUT_3: [&str; 6] = [
    "heldout3/president",
    "heldout3/apple",
    "heldout3/notebook",
    "heldout3/butterfly",
    "heldout3/dog",
    "heldout3/kite",
];

/// A fourth held-out set, gathered after the framed second look was chosen on the first three
/// and measured once (`cutouts/heldout4/`).
const HELD_OUT_4: [&str; 8] = [
    "heldout4/orange",
    "heldout4/aloe",
    "heldout4/speaker",
    "heldout4/vice_president",
    "heldout4/rabbit",
    "heldout4/black_dog",
    "heldout4/raccoon",
    "heldout4/wall_clock",
];

/// A fifth held-out set, gathered while the fourth was measured, with the method unchanged, and
/// measured once (`cutouts/heldout5/`).
const HELD_OUT_5: [&str; 8] = [
    "heldout5/dutar",
    "heldout5/chair",
    "heldout5/scissors",
    "heldout5/shepherd_dog",
    "heldout5/red_panda",
    "heldout5/beach_walker",
    "heldout5/didgeridoo_player",
    "heldout5/young_man",
];

/// A sixth held-out set, gathered after the framed look was kept from taking what a whole object
/// lies on (chosen on `heldout5/scissors`), and measured once (`cutouts/heldout6/`).
const HELD_OUT_6: [&str; 8] = [
    "heldout6/spray_bottle",
    "heldout6/screwdriver",
    "heldout6/milk_pail",
    "heldout6/kiwi",
    "heldout6/alpaca",
    "heldout6/ibex",
    "heldout6/seated_woman",
    "heldout6/canyon_hiker",
];

/// A seventh held-out set, gathered after the closer look was chosen on the first six, and
/// measured once (`cutouts/heldout7/`).
const HELD_OUT_7: [&str; 8] = [
    "heldout7/teacup",
    "heldout7/scale",
    "heldout7/light_bulb",
    "heldout7/hammer",
    "heldout7/side_cutter",
    "heldout7/car",
    "heldout7/headshot",
    "heldout7/seated_man",
];

/// The goal for every photo's IoU with its reference mask, and for each set's mean; printed
/// beside the figures. Not every set reaches it yet (docs/engines.md).
const GOAL_EACH: f64 = 0.8;
const GOAL_MEAN: f64 = 0.9;
/// The bounds the test holds, by set: (lowest photo, mean). They are the figures of the current
/// method rounded down, so a change that does worse fails.
const DEVELOPMENT_BOUNDS: (f64, f64) = (0.85, 0.93);
const HELD_OUT_BOUNDS: (f64, f64) = (0.9, 0.95);
const HELD_OUT_2_BOUNDS: (f64, f64) = (0.45, 0.85);
const HELD_OUT_3_BOUNDS: (f64, f64) = (0.9, 0.95);
const HELD_OUT_4_BOUNDS: (f64, f64) = (0.2, 0.8);
const HELD_OUT_5_BOUNDS: (f64, f64) = (0.5, 0.83);
const HELD_OUT_6_BOUNDS: (f64, f64) = (0.8, 0.93);
const HELD_OUT_7_BOUNDS: (f64, f64) = (0.82, 0.94);

fn path(file: &str) -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "tests", "cutouts", file].iter().collect()
}

/// IoU of the cut-out of `name` with its reference mask, after writing the cut-out for viewing.
fn iou(name: &str) -> f64 {
    let photo = image::open(path(&format!("{name}.jpg"))).unwrap_or_else(|e| panic!("{name}.jpg: {e}"));
    let reference: GrayImage =
        image::open(path(&format!("{name}.mask.png"))).unwrap_or_else(|e| panic!("{name}.mask.png: {e}")).to_luma8();
    let started = std::time::Instant::now();
    let cutout = remove_background(photo).expect("cut-out");
    eprintln!("{name}: cut out in {} ms", started.elapsed().as_millis());
    assert_eq!(cutout.dimensions(), reference.dimensions(), "{name}: size");
    let (mut both, mut either) = (0u64, 0u64);
    for (c, r) in cutout.pixels().zip(reference.pixels()) {
        let (ours, theirs) = (c.0[3] >= 128, r.0[0] >= 128);
        both += u64::from(ours && theirs);
        either += u64::from(ours || theirs);
    }
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cutout-{}.png", name.replace('/', "-")));
    if let Err(e) = on_checkerboard(&cutout).save(&scratch) {
        eprintln!("{}: {e}", scratch.display());
    }
    if either == 0 {
        return 0.0;
    }
    both as f64 / either as f64
}

/// The cut-out composited over a grey checkerboard, as an editor shows transparency.
fn on_checkerboard(cutout: &RgbaImage) -> RgbaImage {
    RgbaImage::from_fn(cutout.width(), cutout.height(), |x, y| {
        let check = if (x / 12 + y / 12) % 2 == 0 { 200.0 } else { 150.0 };
        let p = cutout.get_pixel(x, y).0;
        let a = f32::from(p[3]) / 255.0;
        let mix = |v: u8| (f32::from(v) * a + check * (1.0 - a)).round() as u8;
        Rgba([mix(p[0]), mix(p[1]), mix(p[2]), 255])
    })
}

fn measure(set: &str, names: &[&str]) -> Vec<(String, f64)> {
    let scores: Vec<(String, f64)> = names.iter().map(|n| (n.to_string(), iou(n))).collect();
    for (name, score) in &scores {
        eprintln!("{set:<12} {name:<24} IoU {score:.3}");
    }
    let mean = scores.iter().map(|(_, s)| s).sum::<f64>() / scores.len() as f64;
    eprintln!("{set:<12} {:<24} IoU {mean:.3}", "mean");
    scores
}

fn check(set: &str, scores: &[(String, f64)], (min_each, min_mean): (f64, f64)) {
    let mean = scores.iter().map(|(_, s)| s).sum::<f64>() / scores.len() as f64;
    let short = scores.iter().filter(|(_, s)| *s < GOAL_EACH).count();
    eprintln!("{set}: {short} of {} photos under the goal of {GOAL_EACH}; mean goal {GOAL_MEAN}", scores.len());
    for (name, score) in scores {
        assert!(*score >= min_each, "{set} {name}: IoU {score:.3} under {min_each}");
    }
    assert!(mean >= min_mean, "{set}: mean IoU {mean:.3} under {min_mean}");
}

/// Measures one set and holds it to its bounds.
fn measure_and_check(set: &str, names: &[&str], bounds: (f64, f64)) {
    let scores = measure(set, names);
    check(set, &scores, bounds);
}

// One test per set, so the test runner spreads the sets over the cores.

#[test]
fn development_cutouts_match_the_reference_masks() {
    measure_and_check("development", &DEVELOPMENT, DEVELOPMENT_BOUNDS);
}

#[test]
fn held_out_cutouts_match_the_reference_masks() {
    measure_and_check("held-out", &HELD_OUT, HELD_OUT_BOUNDS);
}

#[test]
fn held_out_2_cutouts_match_the_reference_masks() {
    measure_and_check("held-out 2", &HELD_OUT_2, HELD_OUT_2_BOUNDS);
}

#[test]
fn held_out_3_cutouts_match_the_reference_masks() {
    measure_and_check("held-out 3", &HELD_OUT_3, HELD_OUT_3_BOUNDS);
}

#[test]
fn held_out_4_cutouts_match_the_reference_masks() {
    measure_and_check("held-out 4", &HELD_OUT_4, HELD_OUT_4_BOUNDS);
}

#[test]
fn held_out_5_cutouts_match_the_reference_masks() {
    measure_and_check("held-out 5", &HELD_OUT_5, HELD_OUT_5_BOUNDS);
}

#[test]
fn held_out_6_cutouts_match_the_reference_masks() {
    measure_and_check("held-out 6", &HELD_OUT_6, HELD_OUT_6_BOUNDS);
}

#[test]
fn held_out_7_cutouts_match_the_reference_masks() {
    measure_and_check("held-out 7", &HELD_OUT_7, HELD_OUT_7_BOUNDS);
}
