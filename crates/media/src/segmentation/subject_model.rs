//! Where the subject is, by a salient-object network: U²-Net-p (Qin et al., "U²-Net: Going
//! deeper with nested U-structure for salient object detection", 2020), shipped in the binary as
//! ONNX (`crates/media/models`, Apache-2.0 weights) and run on the CPU by `tract`, a pure-Rust
//! inference engine. The network sees the picture squeezed to 320x320 and answers, for each of
//! those pixels, how likely it is to belong to the picture's main subject.

use std::sync::OnceLock;

use image::{imageops, ImageBuffer, Luma, Rgb, RgbImage};
use tract_onnx::prelude::{
    tract_ndarray, tvec, Arc, DatumExt, Framework, InferenceModelExt, IntoRunnable, Tensor, TypedRunnableModel,
};

use crate::MediaError;

/// The network, as published by the rembg project (4,574,861 bytes, SHA-256 `309c8469…ddd8`).
static U2NETP_ONNX: &[u8] = include_bytes!("../../models/u2netp.onnx");

/// The side of the square the network was trained on and is run at.
pub(crate) const SIDE: usize = 320;

/// Lowest peak likelihood that is a subject: the network's raw answer on a picture with nothing
/// in it stays near 0.
const MIN_PEAK: f32 = 0.2;

/// ImageNet statistics the network's input is normalised with.
const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const DEVIATION: [f32; 3] = [0.229, 0.224, 0.225];

/// The network, parsed and optimised once per process (about 0.15 s).
fn plan() -> Result<&'static Arc<TypedRunnableModel>, MediaError> {
    static PLAN: OnceLock<Result<Arc<TypedRunnableModel>, String>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let shape = [1, 3, SIDE, SIDE];
        tract_onnx::onnx()
            .model_for_read(&mut &U2NETP_ONNX[..])
            .and_then(|model| model.with_input_fact(0, f32::fact(shape).into()))
            .and_then(|model| model.into_optimized())
            .and_then(|model| model.into_runnable())
            .map_err(|e| format!("the subject model could not be loaded: {e}"))
    })
    .as_ref()
    .map_err(|e| MediaError::Inference(e.clone()))
}

/// The subject likelihood of each pixel of `rgb` squeezed to [`SIDE`]x[`SIDE`], row by row,
/// stretched so the least likely pixel is 0 and the most likely 1 (the network's scale varies
/// from picture to picture; its ranking is what it learnt). `None` when no pixel reaches
/// [`MIN_PEAK`]: the network sees no subject (a flat picture, noise).
///
/// The network looks twice: at the picture as it is, and at the picture inside a grey frame.
/// It learnt salient objects that stand inside the picture, so a subject cut by the frame (a
/// flower filling it, a notebook seen close up) comes out faint or is passed over for a detail
/// inside it; with a margin around the picture the same subject stands inside and is found.
/// The framed look is taken when [`framed_look_is_better`] says so. Then, where the subject
/// fills only part of the picture, it looks a third time, closer ([`closer`]).
pub(crate) fn subject_likelihood(rgb: &RgbImage) -> Result<Option<Vec<f32>>, MediaError> {
    let plain = look(&squeezed(rgb))?;
    if peak(&plain) < MIN_PEAK {
        return Ok(None);
    }
    let plain = stretched(plain);
    let framed = stretched(unframed(&look(&framed(rgb))?));
    let chosen = if framed_look_is_better(&plain, &framed) { framed } else { plain };
    Ok(Some(closer(rgb, chosen)?))
}

/// How far the closer look's window reaches past the subject's box on each side, as a share of
/// the box's width and height: the wider margin first, the narrower where the wider would cover
/// most of the picture (a seated figure filling the frame still gains from a look at its box).
const CLOSE_MARGINS: [f32; 2] = [0.3, 0.1];
/// Largest share of the picture the closer look's window may cover: past it the look would see
/// nearly the picture the first look saw.
const MAX_CLOSE_SHARE: f32 = 0.8;
/// Fewest picture pixels on each side of a window worth a closer look.
const MIN_CLOSE_SIDE: u32 = 16;

/// A closer look: the picture cropped to the subject's box with a margin, squeezed to the
/// network's square, so a subject filling part of the picture is seen at more of the network's
/// resolution (a bottle's trigger head, a bird's tail, a lute's neck). It only adds to `map`,
/// the likelihood over the whole picture: inside the window each pixel keeps the larger of the
/// two looks' values, since the closer look resolves parts the first could not, and outside it
/// nothing changes. There is no closer look when the window would cover most of the picture.
fn closer(rgb: &RgbImage, mut map: Vec<f32>) -> Result<Vec<f32>, MediaError> {
    let Some(window) = close_window(&map, rgb.width(), rgb.height()) else {
        return Ok(map);
    };
    let crop = imageops::crop_imm(rgb, window.x, window.y, window.width, window.height).to_image();
    let close = stretched(look(&squeezed(&crop))?);
    let side = SIDE as f32;
    // Each network pixel of the picture, placed in the window's own square.
    let inside = |at: usize, picture: u32, start: u32, length: u32| -> Option<f32> {
        let position = (at as f32 + 0.5) * picture as f32 / side;
        let within = (position - start as f32) / length as f32 * side - 0.5;
        (-0.5..side - 0.5).contains(&within).then_some(within.clamp(0.0, side - 1.0))
    };
    for my in 0..SIDE {
        let Some(cy) = inside(my, rgb.height(), window.y, window.height) else { continue };
        for mx in 0..SIDE {
            let Some(cx) = inside(mx, rgb.width(), window.x, window.width) else { continue };
            let value = bilinear(&close, cx, cy);
            let here = &mut map[my * SIDE + mx];
            *here = here.max(value);
        }
    }
    Ok(map)
}

/// A rectangle of the picture, in its pixels.
#[derive(Debug, PartialEq)]
struct Window {
    x: u32,
    y: u32,
    width: u32,
    height: u32,
}

/// The window of a `width`x`height` picture a closer look sees: the box of `map`'s subject (its
/// values over one half, over the picture at [`SIDE`]x[`SIDE`]) widened on each side by the
/// first of [`CLOSE_MARGINS`] that keeps it within [`MAX_CLOSE_SHARE`] of the picture. `None`
/// when there is no subject, when even the narrowest window would cover more, or when it is too
/// small to show the network anything.
fn close_window(map: &[f32], width: u32, height: u32) -> Option<Window> {
    let (mut x0, mut y0, mut x1, mut y1) = (SIDE, SIDE, 0, 0);
    for (i, _) in map.iter().enumerate().filter(|(_, &p)| p > 0.5) {
        let (x, y) = (i % SIDE, i / SIDE);
        (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
    }
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    // From the network's square to the picture, widened and kept inside it.
    let span = |start: usize, end: usize, picture: u32, share: f32| -> (u32, u32) {
        let scale = picture as f32 / SIDE as f32;
        let margin = share * (end - start) as f32;
        let from = ((start as f32 - margin) * scale).floor().max(0.0) as u32;
        let to = (((end as f32 + margin) * scale).ceil() as u32).min(picture);
        (from, to.saturating_sub(from))
    };
    let window = CLOSE_MARGINS.iter().find_map(|&margin| {
        let (x, window_width) = span(x0, x1, width, margin);
        let (y, window_height) = span(y0, y1, height, margin);
        let share = (window_width as f32 * window_height as f32) / (width as f32 * height as f32);
        (share <= MAX_CLOSE_SHARE).then_some(Window { x, y, width: window_width, height: window_height })
    })?;
    (window.width.min(window.height) >= MIN_CLOSE_SIDE).then_some(window)
}

/// `values` (row by row over the network's square) read between pixels at (`x`, `y`).
fn bilinear(values: &[f32], x: f32, y: f32) -> f32 {
    let last = SIDE - 1;
    let (x0, y0) = ((x.floor() as usize).min(last), (y.floor() as usize).min(last));
    let (x1, y1) = ((x0 + 1).min(last), (y0 + 1).min(last));
    let (tx, ty) = (x - x0 as f32, y - y0 as f32);
    let at = |x: usize, y: usize| values[y * SIDE + x];
    let top = at(x0, y0) * (1.0 - tx) + at(x1, y0) * tx;
    let bottom = at(x0, y1) * (1.0 - tx) + at(x1, y1) * tx;
    top * (1.0 - ty) + bottom * ty
}

/// The share of a picture's margin a framed look may claim before it has read the picture
/// itself as the object (a photo on a grey card).
const WHOLE_PICTURE_MARGIN: f32 = 0.8;
/// Least mean certainty (|2p - 1|, 1 when every pixel is 0 or 1) of a framed look that is taken.
const MIN_FRAMED_CERTAINTY: f32 = 0.8;
/// Least share of the plain look's subject that the framed look must hold: it may only grow
/// the subject, never move to another one.
const MIN_HELD: f32 = 0.8;
/// How much larger the framed look's subject must be to be worth its lower resolution.
const MIN_GROWTH: f32 = 1.1;
/// Least share of the picture's margin the framed look's subject must touch: framing only helps
/// a subject that the picture's edge cuts.
const MIN_MARGIN_TOUCHED: f32 = 0.05;

/// Least share of the picture that a plain look's subject clear of the picture's edge must cover
/// to be taken as a whole object (scissors on a board) rather than a detail of a larger subject
/// that the edge cuts (a notebook's elastic band, a clock's hands).
const MIN_WHOLE_SUBJECT: f32 = 0.15;

/// Whether the framed look (`framed`) tells the subject better than the plain one (`plain`),
/// both stretched likelihoods over the picture at [`SIDE`]x[`SIDE`]: it grows the plain look's
/// subject (holding most of it) into one that the picture's edge cuts, is sure of it, and has
/// not taken the whole picture for the subject. A plain look that found a whole object standing
/// clear of the picture's edge stands: the framed look would only add what the object lies on.
fn framed_look_is_better(plain: &[f32], framed: &[f32]) -> bool {
    let subject = |map: &[f32]| map.iter().map(|&p| p > 0.5).collect::<Vec<bool>>();
    let (plain_subject, framed_subject) = (subject(plain), subject(framed));
    let count = |mask: &[bool]| mask.iter().filter(|&&on| on).count();
    let (plain_area, framed_area) = (count(&plain_subject), count(&framed_subject));
    let held = plain_subject.iter().zip(&framed_subject).filter(|(&p, &f)| p && f).count();
    let certainty = framed.iter().map(|&p| (2.0 * p - 1.0).abs()).sum::<f32>() / framed.len().max(1) as f32;
    let margin = margin_share(&framed_subject);
    let whole_object_inside = margin_share(&plain_subject) < MIN_MARGIN_TOUCHED
        && plain_area as f32 >= MIN_WHOLE_SUBJECT * plain.len() as f32;
    !whole_object_inside
        && (MIN_MARGIN_TOUCHED..WHOLE_PICTURE_MARGIN).contains(&margin)
        && certainty >= MIN_FRAMED_CERTAINTY
        && held as f32 >= MIN_HELD * plain_area as f32
        && framed_area as f32 >= MIN_GROWTH * plain_area as f32
}

/// The share of the pixels on a [`SIDE`]x[`SIDE`] mask's four edges that are set.
fn margin_share(mask: &[bool]) -> f32 {
    let last = SIDE - 1;
    let on_edge =
        (0..SIDE).flat_map(|i| [(i, 0), (i, last), (0, i), (last, i)]).filter(|&(x, y)| mask[y * SIDE + x]).count();
    on_edge as f32 / (4 * SIDE) as f32
}

/// The filter that shrinks a picture for the network: Lanczos, as rembg (which distributes the
/// network) shrinks its input; a softer filter blurs the edges the network looks for.
const SHRINK: imageops::FilterType = imageops::FilterType::Lanczos3;

/// The picture squeezed to the network's square.
fn squeezed(rgb: &RgbImage) -> RgbImage {
    imageops::resize(rgb, SIDE as u32, SIDE as u32, SHRINK)
}

/// Width of the grey frame around a framed look, in network pixels on each side (15% of the
/// picture's width and height).
const FRAME: u32 = 37;
/// The frame's grey: mid grey, near the mean colour the network was trained to expect.
const FRAME_GREY: u8 = 128;

/// The picture squeezed into the middle of the network's square, inside a grey frame.
fn framed(rgb: &RgbImage) -> RgbImage {
    let inner = SIDE as u32 - 2 * FRAME;
    let mut canvas = RgbImage::from_pixel(SIDE as u32, SIDE as u32, Rgb([FRAME_GREY; 3]));
    let picture = imageops::resize(rgb, inner, inner, SHRINK);
    imageops::replace(&mut canvas, &picture, i64::from(FRAME), i64::from(FRAME));
    canvas
}

/// A framed look's likelihood over the picture alone, scaled back to the network's square.
fn unframed(values: &[f32]) -> Vec<f32> {
    let inner = SIDE as u32 - 2 * FRAME;
    let square = ImageBuffer::<Luma<f32>, Vec<f32>>::from_fn(inner, inner, |x, y| {
        Luma([values[(y + FRAME) as usize * SIDE + (x + FRAME) as usize]])
    });
    imageops::resize(&square, SIDE as u32, SIDE as u32, imageops::FilterType::Triangle).into_raw()
}

fn peak(values: &[f32]) -> f32 {
    values.iter().copied().fold(f32::MIN, f32::max)
}

/// `values` stretched so the lowest is 0 and the highest 1.
fn stretched(values: Vec<f32>) -> Vec<f32> {
    let (low, high) = values.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let span = (high - low).max(1e-6);
    values.into_iter().map(|v| ((v - low) / span).clamp(0.0, 1.0)).collect()
}

/// The network's answer for a [`SIDE`]x[`SIDE`] picture: the subject likelihood of each pixel,
/// row by row.
fn look(square: &RgbImage) -> Result<Vec<f32>, MediaError> {
    // As the network was trained: channels scaled by the brightest value, then standardised.
    let brightest = f32::from(square.pixels().flat_map(|p| p.0).max().unwrap_or(255).max(1));
    let input = tract_ndarray::Array4::from_shape_fn((1, 3, SIDE, SIDE), |(_, c, y, x)| {
        let v = f32::from(square.get_pixel(x as u32, y as u32).0[c]) / brightest;
        (v - MEAN[c]) / DEVIATION[c]
    });
    let input: Tensor = input.into();
    let plan = plan()?;
    let threads = crate::job_threads();
    let run = || plan.run(tvec!(input.into()));
    let outputs = if threads > 1 {
        let pool = tract_linalg::multithread::Executor::multithread(threads);
        tract_linalg::multithread::multithread_tract_scope(pool, run)
    } else {
        run()
    }
    .map_err(|e| MediaError::Inference(format!("the subject model failed: {e}")))?;
    let fused = outputs
        .first()
        .ok_or_else(|| MediaError::Inference("the subject model gave no output".into()))?
        .to_plain_array_view::<f32>()
        .map_err(|e| MediaError::Inference(format!("the subject model's output: {e}")))?;
    let values: Vec<f32> = fused.iter().copied().collect();
    if values.len() != SIDE * SIDE {
        return Err(MediaError::Inference(format!(
            "the subject model gave {} values, not {}",
            values.len(),
            SIDE * SIDE
        )));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A likelihood over the network's square: 1 inside the rectangle `x0..x1` by `y0..y1`
    /// (in network pixels), 0 elsewhere.
    fn rectangle(x0: usize, x1: usize, y0: usize, y1: usize) -> Vec<f32> {
        (0..SIDE * SIDE)
            .map(|i| if (x0..x1).contains(&(i % SIDE)) && (y0..y1).contains(&(i / SIDE)) { 1.0 } else { 0.0 })
            .collect()
    }

    #[test]
    fn a_framed_look_is_taken_when_it_grows_the_subject_to_the_edge() {
        // The plain look found only a band across a notebook; the framed one the notebook,
        // cut by the top, left and right edges.
        let band = rectangle(200, 240, 0, 280);
        let notebook = rectangle(0, SIDE, 0, 280);
        assert!(framed_look_is_better(&band, &notebook));
        // A faint subject the plain look missed altogether.
        assert!(framed_look_is_better(&vec![0.0; SIDE * SIDE], &notebook));
    }

    #[test]
    fn a_framed_look_is_not_taken_when_it_takes_the_picture_moves_or_stays_inside() {
        // A small cup (a subject small enough to be a detail of a larger one).
        let cup = rectangle(130, 190, 100, 200);
        // The whole picture read as the object.
        assert!(!framed_look_is_better(&cup, &rectangle(0, SIDE, 0, SIDE)));
        // Another subject than the plain look's.
        assert!(!framed_look_is_better(&cup, &rectangle(0, 90, 0, 200)));
        // A larger subject that the picture's edge does not cut: the plain look's resolution wins.
        assert!(!framed_look_is_better(&cup, &rectangle(90, 230, 70, 270)));
        // Scissors found whole inside the picture; the framed look adds the board they lie on. (A
        // small detail would be grown into the same board.)
        let board = rectangle(0, SIDE, 40, SIDE);
        assert!(!framed_look_is_better(&rectangle(40, 280, 60, 180), &board));
        assert!(framed_look_is_better(&cup, &board));
        // The same subject: nothing gained.
        assert!(!framed_look_is_better(&cup, &cup));
        // An unsure framed look.
        let unsure: Vec<f32> = rectangle(0, SIDE, 0, 280).iter().map(|&p| 0.3 + 0.3 * p).collect();
        assert!(!framed_look_is_better(&cup, &unsure));
    }

    #[test]
    fn a_closer_look_sees_the_subject_with_a_margin_unless_it_fills_the_picture() {
        // A subject over the middle fifth of each side of a 640x480 picture: its box widened by
        // 30% of its size on each side, in the picture's pixels.
        let window = close_window(&rectangle(128, 192, 128, 192), 640, 480).expect("a window");
        assert_eq!(window, Window { x: 217, y: 163, width: 206, height: 154 });
        // A subject whose box widened by 30% would cover most of the picture: widened by 10%.
        let window = close_window(&rectangle(48, 272, 48, 272), 640, 480).expect("a narrower window");
        assert_eq!(window, Window { x: 51, y: 38, width: 538, height: 404 });
        // A subject whose box covers most of the picture, none at all, or one too small.
        assert_eq!(close_window(&rectangle(20, 300, 20, 300), 640, 480), None);
        assert_eq!(close_window(&vec![0.0; SIDE * SIDE], 640, 480), None);
        assert_eq!(close_window(&rectangle(160, 162, 160, 162), 640, 480), None);
    }

    #[test]
    fn a_closer_look_only_adds_to_the_likelihood_and_only_inside_its_window() {
        let (w, h) = (400u32, 300u32);
        // A small red square on grey, which the first look marks only faintly.
        let picture = RgbImage::from_fn(w, h, |x, y| {
            if (180..220).contains(&x) && (130..170).contains(&y) {
                Rgb([200, 30, 40])
            } else {
                Rgb([128, 128, 128])
            }
        });
        let faint: Vec<f32> = rectangle(144, 176, 139, 181).iter().map(|&p| if p > 0.0 { 0.6 } else { 0.0 }).collect();
        let closer_map = closer(&picture, faint.clone()).expect("the model runs");
        assert!(closer_map.iter().zip(&faint).all(|(c, f)| c >= f), "a closer look never lowers a value");
        let centre = closer_map[160 * SIDE + 160];
        assert!(centre > 0.9, "the square's centre, seen closer: {centre}");
        assert_eq!(closer_map[5 * SIDE + 5], 0.0, "outside the window nothing changes");
    }

    #[test]
    fn the_model_finds_a_red_disc_on_grey() {
        let (w, h) = (200u32, 160u32);
        let disc = RgbImage::from_fn(w, h, |x, y| {
            let (dx, dy) = (x as f32 - 100.0, y as f32 - 80.0);
            if dx * dx + dy * dy < 45.0 * 45.0 {
                Rgb([200, 30, 40])
            } else {
                Rgb([190, 190, 185])
            }
        });
        let map = subject_likelihood(&disc).expect("the model runs").expect("a subject");
        assert_eq!(map.len(), SIDE * SIDE);
        let at = |fx: f32, fy: f32| map[(fy * SIDE as f32) as usize * SIDE + (fx * SIDE as f32) as usize];
        assert!(at(0.5, 0.5) > 0.9, "centre {}", at(0.5, 0.5));
        for (fx, fy) in [(0.02, 0.02), (0.98, 0.5), (0.5, 0.97), (0.1, 0.9)] {
            assert!(at(fx, fy) < 0.1, "({fx},{fy}) {}", at(fx, fy));
        }
        // With the worker otherwise idle the network runs on every core, to the same answer.
        crate::set_job_threads(2);
        let threaded = subject_likelihood(&disc);
        crate::set_job_threads(1);
        let threaded = threaded.expect("the model runs on two threads").expect("a subject");
        let worst = map.iter().zip(&threaded).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(worst < 1e-3, "two threads differ from one by {worst}");
    }
}
