//! Where the subject is, by a salient-object network: U²-Net-p (Qin et al., "U²-Net: Going
//! deeper with nested U-structure for salient object detection", 2020), shipped in the binary as
//! ONNX (`crates/media/models`, Apache-2.0 weights) and run on the CPU by `tract`, a pure-Rust
//! inference engine. The network sees the picture squeezed to 320x320 and answers, for each of
//! those pixels, how likely it is to belong to the picture's main subject.

use std::sync::OnceLock;

use image::{imageops, RgbImage};
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
pub(crate) fn subject_likelihood(rgb: &RgbImage) -> Result<Option<Vec<f32>>, MediaError> {
    let side = SIDE as u32;
    let small = imageops::resize(rgb, side, side, imageops::FilterType::Triangle);
    // As the network was trained: channels scaled by the brightest value, then standardised.
    let brightest = f32::from(small.pixels().flat_map(|p| p.0).max().unwrap_or(255).max(1));
    let input = tract_ndarray::Array4::from_shape_fn((1, 3, SIDE, SIDE), |(_, c, y, x)| {
        let v = f32::from(small.get_pixel(x as u32, y as u32).0[c]) / brightest;
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
    let (low, high) = values.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if high < MIN_PEAK {
        return Ok(None);
    }
    let span = (high - low).max(1e-6);
    Ok(Some(values.into_iter().map(|v| ((v - low) / span).clamp(0.0, 1.0)).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

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
