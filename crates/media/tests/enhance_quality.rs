//! Measured quality of the listing-photo enhancement on real photos (see `photos/README.md`).
//!
//! Each photo is degraded the ways listing photos go wrong (a warm or a blue colour cast, one
//! stop under-exposed, washed-out contrast) and enhanced with empty notes; the enhanced photo
//! must be clearly closer to the original, in mean CIEDE2000, than the degraded one was. The
//! original itself must come back only slightly changed, and the notes must steer the look.
//! `cargo test -p media --test enhance_quality -- --nocapture` prints the figures; each photo's
//! contact sheet (a row per degradation: degraded, enhanced, original) is written to the test
//! scratch directory (`target/tmp/enhance-*.png`) for a person to look at.

use std::path::PathBuf;

use image::{DynamicImage, RgbImage};
use media::colour::{ciede2000, srgb_to_lab};
use media::enhance::{enhance_listing_photo, plan_enhancement, straighten_verticals};

const PHOTOS: [&str; 4] = ["coffee.jpg", "rocket.jpg", "chelsea.jpg", "astronaut.jpg"];

/// Enhancing a degraded photo must cut its mean CIEDE2000 distance from the original by at least
/// this share (the prototype's worst case, the warm cast on `coffee.jpg`, reached 34%).
const MIN_IMPROVEMENT: f64 = 0.25;
/// Enhancing an original may move it by at most this mean CIEDE2000 (the prototype's worst: 1.9).
const MAX_ORIGINAL_CHANGE: f64 = 3.5;
/// Bounds: each set's figures with the current (seventh) version, rounded up (docs/recipes.md), so
/// a change that does worse fails. The held-out sets' one-run figures are in the docs too.
const MAX_TUNING: SetFigures = SetFigures { overall: 0.63, worst_kind: 0.77, made_worse: 11, most_moved: 6.0 };
const MAX_SECOND_TUNING: SetFigures = SetFigures { overall: 0.59, worst_kind: 0.73, made_worse: 12, most_moved: 6.3 };
const MAX_HELD_OUT: SetFigures = SetFigures { overall: 0.55, worst_kind: 0.68, made_worse: 5, most_moved: 8.3 };
const MAX_THIRD_HELD_OUT: SetFigures = SetFigures { overall: 0.59, worst_kind: 0.78, made_worse: 10, most_moved: 7.4 };
const MAX_FOURTH_HELD_OUT: SetFigures = SetFigures { overall: 0.57, worst_kind: 0.76, made_worse: 4, most_moved: 4.6 };
/// The fifth held-out set's figures on its one run (the seventh version), rounded up.
const MAX_FIFTH_HELD_OUT: SetFigures = SetFigures { overall: 0.58, worst_kind: 0.69, made_worse: 4, most_moved: 6.5 };
const MAX_HOMES: SetFigures = SetFigures { overall: 0.52, worst_kind: 0.69, made_worse: 2, most_moved: 4.8 };
/// "bright and warm" must raise mean L* and mean b* (yellow-blue) by at least this much.
const MIN_STYLE_SHIFT: f64 = 1.0;

fn load(name: &str) -> RgbImage {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "photos"].iter().collect::<PathBuf>().join(name);
    match image::open(&path) {
        Ok(img) => img.to_rgb8(),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn enhance(img: &RgbImage, notes: &str) -> RgbImage {
    enhance_listing_photo(&DynamicImage::ImageRgb8(img.clone()), notes)
}

#[derive(Debug, Clone, Copy)]
enum Degradation {
    /// R, G, B values multiplied by 1.15, 1.0, 0.80, like a camera balanced for daylight under lamps.
    WarmCast,
    /// The opposite: 0.80, 1.0, 1.15, like shade or an overcast window.
    BlueCast,
    /// Linear light halved: one stop under-exposed.
    MinusOneEv,
    /// Every value pulled halfway to mid-grey: haze, a cheap lens, a flat phone profile.
    LowContrast,
    /// Linear light times 1.5: over-exposed, the brightest parts clipped.
    OverExposed,
    /// A bluish-white veil over everything: atmospheric haze, a dirty window.
    Haze,
    /// A warm cast on a photo one stop under-exposed: a dim room lit by lamps.
    WarmAndDark,
    /// A blue cast on a washed-out photo: an overcast exterior through haze.
    BlueAndFlat,
}

impl Degradation {
    /// The kinds the development photos were tuned on.
    const TUNED: [Self; 4] = [Self::WarmCast, Self::BlueCast, Self::MinusOneEv, Self::LowContrast];
    /// Every kind, measured on the held-out photos.
    const ALL: [Self; 8] = [
        Self::WarmCast,
        Self::BlueCast,
        Self::MinusOneEv,
        Self::LowContrast,
        Self::OverExposed,
        Self::Haze,
        Self::WarmAndDark,
        Self::BlueAndFlat,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::WarmCast => "warm cast",
            Self::BlueCast => "blue cast",
            Self::MinusOneEv => "-1 EV",
            Self::LowContrast => "low contrast",
            Self::OverExposed => "+0.6 EV",
            Self::Haze => "haze",
            Self::WarmAndDark => "warm, -1 EV",
            Self::BlueAndFlat => "blue, flat",
        }
    }

    fn apply(self, img: &RgbImage) -> RgbImage {
        let mut out = img.clone();
        for p in out.pixels_mut() {
            p.0 = match self {
                Self::WarmCast => scale(p.0, [1.15, 1.0, 0.80]),
                Self::BlueCast => scale(p.0, [0.80, 1.0, 1.15]),
                Self::MinusOneEv => p.0.map(|v| srgb_encode(srgb_decode(v) * 0.5)),
                Self::LowContrast => p.0.map(|v| ((u16::from(v) + 128) / 2) as u8),
                Self::OverExposed => p.0.map(|v| srgb_encode(srgb_decode(v) * 1.5)),
                Self::Haze => {
                    let veil = [200.0, 210.0, 225.0];
                    [0, 1, 2].map(|i| (0.6 * f32::from(p.0[i]) + 0.4 * veil[i]).round() as u8)
                }
                Self::WarmAndDark => scale(p.0.map(|v| srgb_encode(srgb_decode(v) * 0.5)), [1.15, 1.0, 0.80]),
                Self::BlueAndFlat => scale(p.0.map(|v| ((u16::from(v) + 128) / 2) as u8), [0.80, 1.0, 1.15]),
            };
        }
        out
    }
}

fn scale(p: [u8; 3], gains: [f32; 3]) -> [u8; 3] {
    [0, 1, 2].map(|i| (f32::from(p[i]) * gains[i]).round().min(255.0) as u8)
}

fn srgb_decode(v: u8) -> f32 {
    let v = f32::from(v) / 255.0;
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

fn srgb_encode(linear: f32) -> u8 {
    let v = if linear <= 0.003_130_8 { linear * 12.92 } else { 1.055 * linear.powf(1.0 / 2.4) - 0.055 };
    (v * 255.0).round().clamp(0.0, 255.0) as u8
}

fn lab_pixels(img: &RgbImage) -> Vec<[f32; 3]> {
    img.pixels().map(|p| srgb_to_lab(p.0)).collect()
}

/// Mean CIEDE2000 between a photo (as Lab pixels) and a same-sized image.
fn mean_delta_e(reference: &[[f32; 3]], img: &RgbImage) -> f64 {
    assert_eq!(reference.len(), img.pixels().len(), "sizes differ");
    let total: f64 =
        reference.iter().zip(img.pixels()).map(|(&lab, p)| f64::from(ciede2000(lab, srgb_to_lab(p.0)))).sum();
    total / reference.len().max(1) as f64
}

fn lab_means(img: &RgbImage) -> [f64; 3] {
    let mut sums = [0.0f64; 3];
    for lab in lab_pixels(img) {
        for (sum, v) in sums.iter_mut().zip(lab) {
            *sum += f64::from(v);
        }
    }
    let n = img.pixels().len().max(1) as f64;
    sums.map(|s| s / n)
}

/// Degrades one photo every way, enhances it and checks the distances; prints its rows.
fn check_photo(name: &str) {
    let original = load(name);
    let reference = lab_pixels(&original);
    let mut rows = vec![format!(
        "{:<14} {:<13} {:>12} {:>12} {:>12}",
        "photo", "degradation", "dE00 before", "dE00 after", "improvement"
    )];
    let mut failures = Vec::new();

    let enhanced_original = enhance(&original, "");
    let mut sheet = vec![[original.clone(), enhanced_original.clone(), original.clone()]];
    let untouched = mean_delta_e(&reference, &enhanced_original);
    rows.push(format!("{name:<14} {:<13} {:>12.2} {untouched:>12.2} {:>12}", "none", 0.0, "-"));
    if untouched >= MAX_ORIGINAL_CHANGE {
        failures.push(format!("the original moved by {untouched:.2} (limit {MAX_ORIGINAL_CHANGE})"));
    }
    for degradation in Degradation::TUNED {
        let degraded = degradation.apply(&original);
        let before = mean_delta_e(&reference, &degraded);
        let enhanced = enhance(&degraded, "");
        let after = mean_delta_e(&reference, &enhanced);
        sheet.push([degraded, enhanced, original.clone()]);
        let improvement = 1.0 - after / before;
        rows.push(format!(
            "{name:<14} {:<13} {before:>12.2} {after:>12.2} {:>11.1}%",
            degradation.name(),
            100.0 * improvement
        ));
        if improvement < MIN_IMPROVEMENT {
            failures.push(format!("{}: {before:.2} -> {after:.2}", degradation.name()));
        }
    }
    println!("{}", rows.join("\n"));
    save_sheet(name, &sheet);
    assert!(failures.is_empty(), "{name}: {}", failures.join("; "));
}

/// Writes rows of same-sized images side by side as one PNG in the test scratch directory.
fn save_sheet(name: &str, rows: &[[RgbImage; 3]]) {
    let (w, h) = rows[0][0].dimensions();
    let mut sheet = RgbImage::new(w * 3, h * rows.len() as u32);
    for (r, row) in rows.iter().enumerate() {
        for (c, img) in row.iter().enumerate() {
            image::imageops::replace(&mut sheet, img, i64::from(w) * c as i64, i64::from(h) * r as i64);
        }
    }
    let stem = name.trim_end_matches(".jpg");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("enhance-{stem}.png"));
    sheet.save(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[test]
fn restores_degraded_coffee_interior() {
    check_photo("coffee.jpg");
}

#[test]
fn restores_degraded_dusk_exterior() {
    check_photo("rocket.jpg");
}

#[test]
fn restores_degraded_low_key_indoor_shot() {
    check_photo("chelsea.jpg");
}

#[test]
fn restores_degraded_full_range_scene() {
    check_photo("astronaut.jpg");
}

#[test]
fn bright_and_warm_notes_raise_luminance_and_warmth() {
    for name in PHOTOS {
        let photo = load(name);
        let [plain_l, _, plain_b] = lab_means(&enhance(&photo, ""));
        let [styled_l, _, styled_b] = lab_means(&enhance(&photo, "bright and warm"));
        println!("{name:<14} L* {plain_l:.1} -> {styled_l:.1}, b* {plain_b:.1} -> {styled_b:.1}");
        assert!(styled_l >= plain_l + MIN_STYLE_SHIFT, "{name}: L* {plain_l:.2} -> {styled_l:.2}");
        assert!(styled_b >= plain_b + MIN_STYLE_SHIFT, "{name}: b* {plain_b:.2} -> {styled_b:.2}");
    }
}

/// Mean b* of the dark pixels (sky, shadows), mean b* of the bright ones (lights) and the
/// standard deviation of luma (global contrast).
fn dusk_stats(img: &RgbImage) -> (f64, f64, f64) {
    let (mut dark, mut dark_n, mut bright, mut bright_n) = (0.0f64, 0u32, 0.0f64, 0u32);
    let mut lumas = Vec::new();
    for (p, [l, _, b]) in img.pixels().zip(lab_pixels(img)) {
        if l < 40.0 {
            dark += f64::from(b);
            dark_n += 1;
        } else if l > 70.0 {
            bright += f64::from(b);
            bright_n += 1;
        }
        let [r, g, bl] = p.0.map(f64::from);
        lumas.push(0.2126 * r + 0.7152 * g + 0.0722 * bl);
    }
    let mean = lumas.iter().sum::<f64>() / lumas.len().max(1) as f64;
    let variance = lumas.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / lumas.len().max(1) as f64;
    (dark / f64::from(dark_n.max(1)), bright / f64::from(bright_n.max(1)), variance.sqrt())
}

#[test]
fn twilight_notes_deepen_the_dusk_sky_and_warm_the_lights() {
    let dusk = load("rocket.jpg");
    let (plain_dark, plain_bright, plain_spread) = dusk_stats(&enhance(&dusk, ""));
    let (dark, bright, spread) = dusk_stats(&enhance(&dusk, "twilight"));
    println!(
        "rocket.jpg twilight: dark b* {plain_dark:.1} -> {dark:.1}, bright b* {plain_bright:.1} -> {bright:.1}, \
         luma sd {plain_spread:.1} -> {spread:.1}"
    );
    assert!(dark <= plain_dark - 2.0, "sky not bluer: {plain_dark:.2} -> {dark:.2}");
    assert!(bright >= plain_bright + 2.0, "lights not warmer: {plain_bright:.2} -> {bright:.2}");
    assert!(spread > plain_spread + 0.5, "no more contrast: {plain_spread:.2} -> {spread:.2}");
    let plan = plan_enhancement(&DynamicImage::ImageRgb8(dusk), "twilight");
    assert!(plan.twilight > 0.0, "{plan:?}");
}

#[test]
fn straighten_leaves_photos_without_dominant_verticals_alone() {
    // None of these has one dominant lean: the rocket's towers converge (perspective), the
    // others have few long verticals; rotating them would be a guess.
    for name in PHOTOS {
        let photo = load(name);
        let (out, degrees) = straighten_verticals(&photo);
        assert_eq!((degrees, out.dimensions()), (0.0, photo.dimensions()), "{name}");
    }
}

/// The tuning photos (`photos/tuning/`, see `photos/README.md`): held out until the enhancement's
/// fourth version had been measured on them, then looked at while its fifth was made.
const TUNING: [&str; 15] = [
    "wine_room.jpg",
    "brushes.jpg",
    "pavilion.jpg",
    "house_window.jpg",
    "facade.jpg",
    "valley.jpg",
    "mountain_path.jpg",
    "bridge.jpg",
    "sunset_hills.jpg",
    "evening_boats.jpg",
    "summer_lake.jpg",
    "jetty_dusk.jpg",
    "aerial_beach.jpg",
    "aerial_canopy.jpg",
    "forest_stream.jpg",
];

/// The second tuning set (`photos/heldout/`, see `photos/README.md`): gathered by someone who
/// had not seen the enhancement and held out until its fifth version was measured on them once,
/// then looked at while the sixth was made.
const SECOND_TUNING: [&str; 17] = [
    "brick_house_lawn.jpg",
    "chateau_lawn_sky.jpg",
    "palace_by_lake.jpg",
    "chateau_garden.jpg",
    "castle_reflection.jpg",
    "lighthouse_tower.jpg",
    "hillside_village.jpg",
    "walled_town.jpg",
    "green_hills_sky.jpg",
    "pasture_sheep.jpg",
    "island_abbey.jpg",
    "foggy_meadow_hills.jpg",
    "sunset_clouds_hills.jpg",
    "gateway_dusk.jpg",
    "fort_aerial.jpg",
    "city_from_summit.jpg",
    "canyon_overlook.jpg",
];

/// The held-out photos (`photos/heldout2/`, sources in its `SOURCES.md`): gathered from packages
/// no earlier set came from by someone who had not seen the enhancement, never looked at while
/// it was tuned, measured once on its sixth version.
const HELD_OUT: [&str; 20] = [
    "interior_corridor_hall.jpg",
    "interior_cinema_lobby.jpg",
    "interior_store_aisle.jpg",
    "interior_billiard_room.jpg",
    "stone_castle_exterior.jpg",
    "wooden_house_exterior.jpg",
    "chateau_driveway_lawn.jpg",
    "white_house_lawn.jpg",
    "cobbled_street_brick_houses.jpg",
    "garden_pergola_path.jpg",
    "garden_boulder_lawn.jpg",
    "outdoor_pool_patio.jpg",
    "city_skyline_night_river.jpg",
    "sunset_treeline.jpg",
    "hilltop_view_over_town.jpg",
    "aerial_city_suburbs.jpg",
    "rooftops_high_view.jpg",
    "beach_dune_grass_sea.jpg",
    "storm_sky_over_fields.jpg",
    "resort_pier_water_villas.jpg",
];

/// A second held-out set, weighted to homes (`photos/heldout3/`, sources in its `SOURCES.md`):
/// gathered by someone who had not seen the enhancement after its sixth version was fixed, and
/// measured once.
const HOMES: [&str; 9] = [
    "interior_salon_curtained_windows.jpg",
    "interior_stained_glass_window_desk.jpg",
    "interior_dining_sideboard_picture_wall.jpg",
    "interior_tiled_floor_tungsten_dog.jpg",
    "exterior_stone_houses_street.jpg",
    "exterior_apartment_block_lawn.jpg",
    "dusk_bay_bridge_city_lights.jpg",
    "aerial_apartment_towers_city.jpg",
    "garden_flower_bed_brick_wall.jpg",
];

/// A third held-out set (`photos/heldout4/`, sources in its `SOURCES.md`): gathered by someone who
/// had not seen the enhancement, and measured on its sixth version. Weighted
/// to exteriors, dusk and high views: free photographs of home interiors were not to be found in
/// the package registries.
const THIRD_HELD_OUT: [&str; 15] = [
    "interior_wood_panelled_games_room_lamplight.jpg",
    "exterior_old_town_street_townhouses_dome.jpg",
    "exterior_farmhouse_barn_country_road.jpg",
    "exterior_chateau_on_river_daylight.jpg",
    "exterior_palace_front_garden_blue_sky.jpg",
    "exterior_lighthouse_cottage_on_cliffs_evening.jpg",
    "exterior_cathedral_lawn_trees_blue_sky.jpg",
    "exterior_sandstone_palace_facade.jpg",
    "exterior_castle_house_on_loch.jpg",
    "garden_reflecting_pool_cypress_avenue.jpg",
    "dusk_suspension_bridge_city_lights.jpg",
    "dusk_floodlit_bridge_blue_hour.jpg",
    "aerial_coastline_spit_from_plane.jpg",
    "high_view_fort_ruins_lawn_harbour.jpg",
    "high_view_castle_above_valley_lakes.jpg",
];

/// A fourth held-out set (`photos/heldout5/`, sources and licences in its `SOURCES.md`): gathered
/// by someone who had not seen the enhancement, from packages and files no earlier set used, and
/// measured on its sixth version (docs/recipes.md). Three interiors (none of them a home),
/// exteriors, a street, a garden, high views, dusk and landscapes.
const FOURTH_HELD_OUT: [&str; 14] = [
    "aerial_city_park_overcast.jpg",
    "dusk_marina_low_evening_sun.jpg",
    "dusk_sunset_over_fjord_islands.jpg",
    "exterior_apartment_tower_lawn_blue_sky.jpg",
    "exterior_city_blocks_water_towers_blue_sky.jpg",
    "garden_park_lawn_trees_cloudy_sky.jpg",
    "high_view_town_harbour_fjord.jpg",
    "interior_museum_corridor_skylight.jpg",
    "interior_office_reception_desk.jpg",
    "interior_wooden_spiral_staircase_atrium.jpg",
    "landscape_lake_wooded_hills.jpg",
    "landscape_mountain_lake_reflection.jpg",
    "landscape_tea_plantation_hills.jpg",
    "street_canal_brick_townhouses_bare_trees.jpg",
];

/// A fifth held-out set (`photos/heldout6/`, sources and licences in its `SOURCES.md`): gathered
/// by someone who had not seen the enhancement, from packages no earlier set used, after its
/// seventh version was fixed, and measured once on it. Two interiors (a stair hall under a
/// skylight, a home office), apartment blocks, a castle, a campus, dusk scenes, beaches, a high
/// view and a misty lake.
const FIFTH_HELD_OUT: [&str; 13] = [
    "beach_granite_boulders_palms_blue_sky.jpg",
    "dusk_lakeside_chateau_floodlit_mountains.jpg",
    "dusk_observatory_domes_pink_sunset_clouds.jpg",
    "dusk_sunset_sky_house_silhouette_street_lamp.jpg",
    "exterior_apartment_blocks_riverside_overcast.jpg",
    "exterior_apartment_building_corner_balconies_blue_sky.jpg",
    "exterior_castle_on_hill_daisy_meadow_blue_sky.jpg",
    "exterior_university_buildings_pond_reflection.jpg",
    "high_view_city_below_wooded_mountains.jpg",
    "interior_home_office_desk_white_wall.jpg",
    "interior_tulip_spiral_staircase_skylight.jpg",
    "landscape_misty_lake_jetty_morning.jpg",
    "waterfront_beach_palm_causeway_blue_sky.jpg",
];

/// What one set of photos gives, every degradation: mean CIEDE2000 before and after by kind, the
/// photos made worse and how far an undegraded photo moves.
struct SetFigures {
    overall: f64,
    worst_kind: f64,
    made_worse: usize,
    most_moved: f64,
}

impl SetFigures {
    /// Fails when any figure is worse than its bound in `bounds`.
    fn assert_within(&self, bounds: &SetFigures) {
        assert!(self.overall <= bounds.overall, "overall {:.2}x", self.overall);
        assert!(self.worst_kind <= bounds.worst_kind, "worst kind {:.2}x", self.worst_kind);
        assert!(self.made_worse <= bounds.made_worse, "{} made worse", self.made_worse);
        assert!(self.most_moved <= bounds.most_moved, "moved {:.2}", self.most_moved);
    }
}

/// Measures `photos` (in `folder`), printing the table and writing contact sheets.
fn measure_set(set: &str, folder: &str, photos: &[&str]) -> SetFigures {
    let mut by_kind = vec![(0.0f64, 0.0f64); Degradation::ALL.len()];
    let mut made_worse = Vec::new();
    let mut most_moved = (String::new(), 0.0f64);
    for name in photos {
        let original = load(&format!("{folder}/{name}"));
        let reference = lab_pixels(&original);
        let enhanced_original = enhance(&original, "");
        let moved = mean_delta_e(&reference, &enhanced_original);
        if moved > most_moved.1 {
            most_moved = (name.to_string(), moved);
        }
        // The first row is the photo as it was, enhanced: what a good photo is moved by.
        let mut sheet = vec![[original.clone(), enhanced_original, original.clone()]];
        let mut row = format!("{name:<22} none {moved:5.2}");
        for (k, degradation) in Degradation::ALL.iter().enumerate() {
            let degraded = degradation.apply(&original);
            let before = mean_delta_e(&reference, &degraded);
            let enhanced = enhance(&degraded, "");
            let after = mean_delta_e(&reference, &enhanced);
            by_kind[k].0 += before;
            by_kind[k].1 += after;
            row.push_str(&format!(" | {} {before:5.2}>{after:5.2}", degradation.name()));
            if after > before {
                made_worse.push(format!("{name} {}: {before:.2} -> {after:.2}", degradation.name()));
            }
            sheet.push([degraded, enhanced, original.clone()]);
        }
        println!("{row}");
        save_sheet(&format!("{folder}-{name}"), &sheet);
    }
    let (mut before_all, mut after_all) = (0.0, 0.0);
    let mut worst_kind = 0.0f64;
    for (degradation, (before, after)) in Degradation::ALL.iter().zip(&by_kind) {
        let n = photos.len() as f64;
        println!(
            "{set} {:<12} mean dE00 {:5.2} -> {:5.2} ({:.2}x)",
            degradation.name(),
            before / n,
            after / n,
            after / before
        );
        before_all += before;
        after_all += after;
        worst_kind = worst_kind.max(after / before);
    }
    let overall = after_all / before_all;
    println!("{set} all kinds    {overall:.2}x; worst kind {worst_kind:.2}x");
    println!("{set} made worse: {} of {}", made_worse.len(), photos.len() * Degradation::ALL.len());
    for case in &made_worse {
        println!("  worse: {case}");
    }
    println!("{set} undegraded photo moved at most {:.2} ({})", most_moved.1, most_moved.0);
    SetFigures { overall, worst_kind, made_worse: made_worse.len(), most_moved: most_moved.1 }
}

/// The tuning photos: the bounds are the figures of the current enhancement (docs/recipes.md),
/// so a change that does worse fails.
#[test]
fn tuning_photos_are_measured() {
    measure_set("tuning", "tuning", &TUNING).assert_within(&MAX_TUNING);
}

/// The second tuning set, held out until the fifth version and looked at for the sixth.
#[test]
fn second_tuning_photos_are_measured() {
    measure_set("tuning 2", "heldout", &SECOND_TUNING).assert_within(&MAX_SECOND_TUNING);
}

/// The held-out photos, every degradation. The bounds are the figures of the one run on them
/// (docs/recipes.md), looser than the goal they are reported against (0.6x overall, 0.8x per
/// kind, no photo made worse, an undegraded photo moved by at most 3).
#[test]
fn held_out_photos_are_measured() {
    measure_set("held-out", "heldout2", &HELD_OUT).assert_within(&MAX_HELD_OUT);
}

/// The second held-out set, weighted to homes; bounds as for the first.
#[test]
fn held_out_home_photos_are_measured() {
    measure_set("homes", "heldout3", &HOMES).assert_within(&MAX_HOMES);
}

/// The third held-out set; bounds as for the first.
#[test]
fn third_held_out_photos_are_measured() {
    measure_set("held-out 3", "heldout4", &THIRD_HELD_OUT).assert_within(&MAX_THIRD_HELD_OUT);
}

/// The fourth held-out set; bounds as for the first.
#[test]
fn fourth_held_out_photos_are_measured() {
    measure_set("held-out 4", "heldout5", &FOURTH_HELD_OUT).assert_within(&MAX_FOURTH_HELD_OUT);
}

/// The fifth held-out set; bounds as for the first.
#[test]
fn fifth_held_out_photos_are_measured() {
    measure_set("held-out 5", "heldout6", &FIFTH_HELD_OUT).assert_within(&MAX_FIFTH_HELD_OUT);
}
