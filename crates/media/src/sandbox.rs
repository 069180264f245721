//! Deterministic procedural "sandbox" generators that stand in for generative models when none
//! is configured: their output is a function of the prompt and seed only, so tests and demos are
//! reproducible.

use image::{DynamicImage, RgbImage};

use crate::codecs::{MAX_ANIMATION_FRAMES, MAX_IMAGE_DIM};
use crate::resample::{even_dim, resize_rgb, resize_window, Filter};
use crate::seed::{fnv1a64, prompt_seed, Rng};

/// Deterministic procedural picture for `prompt` + `seed` (sandbox stand-in
/// for a text-to-image model).
///
/// Palette, gradient, glow, shapes and grain all derive from a stable FNV-1a
/// hash, so identical inputs give identical bytes and different prompts look
/// clearly different. Each side is clamped to [`MAX_IMAGE_DIM`].
pub fn sandbox_image(prompt: &str, seed: u64, width: u32, height: u32) -> RgbImage {
    let scene = Scene::new(prompt, seed);
    let (w, h) = (width.min(MAX_IMAGE_DIM), height.min(MAX_IMAGE_DIM));
    scene.render(&scene.backdrop(w, h), 0.0)
}

/// Deterministic visible edit of `img` for `prompt` + `seed` (sandbox stand-in
/// for an instruction-edit model): colour grade, prompt-coloured tint and
/// vignette. Output has the input's size.
pub fn sandbox_edit(img: &DynamicImage, prompt: &str, seed: u64) -> RgbImage {
    SandboxEdit::new(prompt, seed).apply(img.to_rgb8())
}

/// The edit [`sandbox_edit`] makes, prepared once for a `prompt` and `seed` and applied to
/// many pictures: the video-to-video engines apply it to every decoded frame. Each channel's
/// grade is a table of its 256 values and, for frames up to 4.2 megapixels (1080p and more), the
/// vignette a map of the frame's size, made once, so no power function runs per pixel of a frame.
pub struct SandboxEdit {
    /// Each channel's graded value (0 to 255) times the weight of its own channel in the output.
    own: [[f32; 256]; 3],
    /// Each channel's graded value (0 to 255) times its weight in the luma (Rec. 601).
    luma: [[f32; 256]; 3],
    /// Each output channel's weight of the luma: saturation, contrast and the tint folded in.
    luma_weight: [f32; 3],
    /// What every output channel gets whatever the pixel (0 to 255): the contrast's pivot.
    offset: f32,
    vignette: f32,
    /// The vignette's brightness at each pixel of the last size edited (when it was mapped).
    falloff: ((u32, u32), Vec<f32>),
}

/// The look an edit gives, drawn from its prompt and seed.
#[derive(Clone, Copy, Debug)]
struct Look {
    /// The tint's colour, already scaled by its strength.
    tint: [f32; 3],
    tint_strength: f32,
    gains: [f32; 3],
    gamma: f32,
    saturation: f32,
    contrast: f32,
    vignette: f32,
}

impl Look {
    fn new(prompt: &str, seed: u64) -> Look {
        let mut rng = Rng::new(prompt_seed(prompt, seed));
        let tint = hsv_to_rgb(rng.unit() as f32, rng.range(0.5, 0.9) as f32, 1.0);
        let tint_strength = rng.range(0.2, 0.4) as f32;
        let gains = [rng.range(0.85, 1.15) as f32, rng.range(0.85, 1.15) as f32, rng.range(0.85, 1.15) as f32];
        let gamma = rng.range(0.8, 1.25) as f32;
        let saturation = rng.range(0.6, 1.5) as f32;
        let contrast = rng.range(0.9, 1.25) as f32;
        let vignette = rng.range(0.35, 0.6) as f32;
        let tint = tint.map(|t| t * tint_strength * 1.6);
        Look { tint, tint_strength, gains, gamma, saturation, contrast, vignette }
    }

    /// Channel `k`'s value `v` after its gain and gamma, 0 to 1.
    fn graded(&self, k: usize, v: u8) -> f32 {
        (f32::from(v) / 255.0 * self.gains[k]).clamp(0.0, 1.0).powf(self.gamma)
    }
}

impl SandboxEdit {
    /// The edit for `prompt` + `seed`.
    pub fn new(prompt: &str, seed: u64) -> SandboxEdit {
        let look = Look::new(prompt, seed);
        let Look { tint, tint_strength, saturation, contrast, vignette, .. } = look;
        // Per channel k, with c the graded value and L the luma: saturation gives L + (c - L) s,
        // contrast (x - 1/2) t + 1/2, the tint keeps 1 - strength of that and adds tint_k L. So
        // the output is c s t keep + L ((1 - s) t keep + tint_k) + (1 - t) keep / 2, before the
        // vignette: one product per channel and one shared luma per pixel.
        let keep = 1.0 - tint_strength;
        let graded: [[f32; 256]; 3] = std::array::from_fn(|k| std::array::from_fn(|v| look.graded(k, v as u8) * 255.0));
        let own_weight = saturation * contrast * keep;
        SandboxEdit {
            own: graded.map(|table| table.map(|c| c * own_weight)),
            luma: std::array::from_fn(|k| graded[k].map(|c| c * LUMA[k])),
            luma_weight: tint.map(|t| (1.0 - saturation) * contrast * keep + t),
            offset: (1.0 - contrast) * keep * 0.5 * 255.0,
            vignette,
            falloff: ((0, 0), Vec::new()),
        }
    }

    /// Edits `rgb` in place and returns it.
    pub fn apply(&mut self, rgb: RgbImage) -> RgbImage {
        // A frame-sized map pays for itself over a video's frames; a large still is edited once,
        // and a map of it would cost a float per pixel of memory for nothing.
        let mapped = u64::from(rgb.width()) * u64::from(rgb.height()) <= MAX_VIGNETTE_MAP_PIXELS;
        self.apply_with(rgb, mapped)
    }

    /// [`SandboxEdit::apply`], the vignette read from a kept map or worked out row by row.
    fn apply_with(&mut self, mut rgb: RgbImage, mapped: bool) -> RgbImage {
        let (w, h) = rgb.dimensions();
        if w == 0 || h == 0 {
            return rgb;
        }
        if mapped && self.falloff.0 != (w, h) {
            self.falloff = ((w, h), (0..h).flat_map(|y| vignette_row(w, h, y, self.vignette)).collect());
        }
        if mapped {
            // One pass over the picture beside its map: the loop the compiler vectorises best.
            for (p, &fall) in rgb.chunks_exact_mut(3).zip(&self.falloff.1) {
                self.grade(p, fall);
            }
        } else {
            let mut falloff = Vec::with_capacity(w as usize);
            for (y, row) in (0..h).zip(rgb.chunks_exact_mut(w as usize * 3)) {
                falloff.clear();
                falloff.extend(vignette_row(w, h, y, self.vignette));
                for (p, &fall) in row.chunks_exact_mut(3).zip(&falloff) {
                    self.grade(p, fall);
                }
            }
        }
        rgb
    }

    /// Grades one RGB pixel and darkens it by the vignette's `fall` there.
    #[inline(always)]
    fn grade(&self, p: &mut [u8], fall: f32) {
        let [r, g, b] = [usize::from(p[0]), usize::from(p[1]), usize::from(p[2])];
        let luma = self.luma[0][r] + self.luma[1][g] + self.luma[2][b];
        let own = [self.own[0][r], self.own[1][g], self.own[2][b]];
        for k in 0..3 {
            p[k] = round_u8((own[k] + self.luma_weight[k] * luma + self.offset) * fall);
        }
    }
}

/// Rec. 601 luma weights of red, green and blue.
const LUMA: [f32; 3] = [0.299, 0.587, 0.114];

/// Largest frame whose vignette [`SandboxEdit`] keeps as a map (4 bytes a pixel): 1080p video
/// and more, not a 40 MP still.
const MAX_VIGNETTE_MAP_PIXELS: u64 = 4_200_000;

/// `1 - strength * d^1.3` along row `y` of a `w` x `h` picture, `d` each pixel's squared distance
/// from the centre over the corner's.
fn vignette_row(w: u32, h: u32, y: u32, strength: f32) -> impl Iterator<Item = f32> {
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let max_r2 = cx * cx + cy * cy;
    let dy = y as f32 + 0.5 - cy;
    (0..w).map(move |x| {
        let dx = x as f32 + 0.5 - cx;
        1.0 - strength * ((dx * dx + dy * dy) / max_r2).powf(1.3)
    })
}

/// Ken-Burns animation over a still: the crop window glides and zooms smoothly
/// (eased) between two seed-chosen framings. Frames are rendered as the iterator is
/// read, so an encoder can take them one at a time.
///
/// Odd sizes are rounded down to even (minimum 2) because H.264 4:2:0 needs
/// even dimensions; `frame_count` is capped at [`MAX_ANIMATION_FRAMES`] and
/// sizes at [`MAX_IMAGE_DIM`].
pub fn pan_zoom_frames(
    img: DynamicImage,
    width: u32,
    height: u32,
    frame_count: u32,
    seed: u64,
) -> Box<dyn Iterator<Item = RgbImage>> {
    let (w, h) = (even_dim(width), even_dim(height));
    let n = frame_count.min(MAX_ANIMATION_FRAMES);
    let mut src = img.into_rgb8();
    if src.width() == 0 || src.height() == 0 {
        return Box::new((0..n).map(move |_| RgbImage::new(w, h)));
    }
    let mut rng = Rng::new(prompt_seed("pan-zoom", seed));
    let zoom_max = rng.range(1.15, 1.35);
    let (zoom_start, zoom_end) = if rng.chance(0.5) { (1.0, zoom_max) } else { (zoom_max, 1.0) };

    // Shrink large sources first so per-frame bilinear sampling never has to
    // minify (which would alias); keep enough pixels for the tightest zoom.
    let aspect = f64::from(w) / f64::from(h);
    let full_win_w = f64::from(src.width()).min(f64::from(src.height()) * aspect);
    let scale = f64::from(w) * zoom_max / full_win_w;
    if scale < 1.0 {
        let nw = ((f64::from(src.width()) * scale).round() as u32).max(1);
        let nh = ((f64::from(src.height()) * scale).round() as u32).max(1);
        src = resize_rgb(&src, nw, nh, Filter::CatmullRom);
    }
    let (sw, sh) = (f64::from(src.width()), f64::from(src.height()));
    let (win_w, win_h) = if sw / sh > aspect { (sh * aspect, sh) } else { (sw, sw / aspect) };

    // Pan from one side of the free range to the other so motion is visible.
    let fx = rng.unit();
    let fy = rng.unit();
    let keyframe = |zoom: f64, ux: f64, uy: f64| {
        let (ww, wh) = (win_w / zoom, win_h / zoom);
        let cx = ww / 2.0 + (sw - ww) * ux;
        let cy = wh / 2.0 + (sh - wh) * uy;
        (cx, cy)
    };
    let start = keyframe(zoom_start, fx, fy);
    let end = keyframe(zoom_end, 1.0 - fx, 1.0 - fy);

    Box::new((0..n).map(move |i| {
        let t = if n > 1 { f64::from(i) / f64::from(n - 1) } else { 0.0 };
        let e = t * t * (3.0 - 2.0 * t);
        // Geometric zoom interpolation feels uniform to the eye.
        let zoom = zoom_start * (zoom_end / zoom_start).powf(e);
        let (ww, wh) = (win_w / zoom, win_h / zoom);
        let cx = (start.0 + (end.0 - start.0) * e).clamp(ww / 2.0, sw - ww / 2.0);
        let cy = (start.1 + (end.1 - start.1) * e).clamp(wh / 2.0, sh - wh / 2.0);
        let (x0, y0) = (cx - ww / 2.0, cy - wh / 2.0);
        resize_window(&src, (x0, y0, ww, wh), w, h, Filter::CatmullRom)
    }))
}

/// Deterministic animated procedural scene (sandbox stand-in for a
/// text-to-video model): shapes drift on looping paths over a slowly turning
/// gradient, so the last frame flows back into the first.
///
/// Sizes are rounded down to even (minimum 2) and capped at [`MAX_IMAGE_DIM`];
/// `frame_count` is capped at [`MAX_ANIMATION_FRAMES`]. Frames are rendered as the
/// iterator is read.
pub fn sandbox_motion_frames(
    prompt: &str,
    seed: u64,
    width: u32,
    height: u32,
    frame_count: u32,
) -> impl Iterator<Item = RgbImage> {
    let (w, h) = (even_dim(width), even_dim(height));
    let n = frame_count.min(MAX_ANIMATION_FRAMES);
    let scene = Scene::new(prompt, seed);
    // The glow and the grain do not move: they are worked out once for the whole clip.
    let backdrop = scene.backdrop(w, h);
    (0..n).map(move |i| scene.render(&backdrop, f64::from(i) / f64::from(n)))
}

fn to_rgb8(c: [f32; 3]) -> [u8; 3] {
    c.map(to_u8)
}

/// A 0..1 sample to 8 bits, rounded.
fn to_u8(v: f32) -> u8 {
    round_u8(v * 255.0)
}

/// A 0..255 sample to 8 bits, rounded.
#[inline(always)]
fn round_u8(v: f32) -> u8 {
    // Adding a half and truncating rounds the clamped (non-negative) value without a libm call.
    (v + 0.5).clamp(0.0, 255.0) as u8
}

/// HSV (all components in 0..1) to linear-ish RGB in 0..1.
fn hsv_to_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h6 = (h.rem_euclid(1.0)) * 6.0;
    let sector = h6.floor();
    let f = h6 - sector;
    let p = v * (1.0 - s);
    let q = v * (1.0 - s * f);
    let t = v * (1.0 - s * (1.0 - f));
    match sector as u32 {
        0 => [v, t, p],
        1 => [q, v, p],
        2 => [p, v, t],
        3 => [p, q, v],
        4 => [t, p, v],
        _ => [v, p, q],
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ShapeKind {
    Disc,
    Ring,
    Square,
}

/// One procedural shape, in coordinates where the shorter image side is 1.
#[derive(Debug, Clone)]
struct Shape {
    kind: ShapeKind,
    centre: (f32, f32),
    size: f32,
    colour: [f32; 3],
    opacity: f32,
    /// Looping motion: amplitude, whole-number cycles per loop and phase.
    amplitude: (f32, f32),
    cycles: (f32, f32),
    phase: (f32, f32),
    spin: f32,
}

/// Everything a sandbox picture derives from its prompt hash.
#[derive(Debug, Clone)]
struct Scene {
    top: [f32; 3],
    bottom: [f32; 3],
    angle: f32,
    glow_centre: (f32, f32),
    glow_colour: [f32; 3],
    glow_radius: f32,
    shapes: Vec<Shape>,
    noise_seed: u64,
    noise_cell: f32,
    noise_amp: f32,
}

impl Scene {
    fn new(prompt: &str, seed: u64) -> Self {
        let base = prompt_seed(prompt, seed);
        let mut rng = Rng::new(base);
        let hue = rng.unit() as f32;
        let harmony = [0.08f32, 0.33, 0.5, 0.58][rng.index(4)];
        let top = hsv_to_rgb(hue, rng.range(0.35, 0.8) as f32, rng.range(0.55, 0.95) as f32);
        let bottom = hsv_to_rgb(hue + harmony, rng.range(0.4, 0.9) as f32, rng.range(0.15, 0.5) as f32);
        let angle = rng.range(0.0, std::f64::consts::TAU) as f32;
        let glow_centre = (rng.range(0.2, 0.8) as f32, rng.range(0.2, 0.8) as f32);
        let glow_colour = hsv_to_rgb(hue + 0.5 * harmony, 0.3, 1.0);
        let glow_radius = rng.range(0.25, 0.6) as f32;

        // Each word contributes its own shape (hashed independently of order
        // and seed position) so prompts that differ by a word differ visibly.
        let mut shapes = Vec::new();
        let words: Vec<&str> = prompt.split_whitespace().take(8).collect();
        for (i, word) in words.iter().enumerate() {
            let word_hash = fnv1a64(word.to_lowercase().as_bytes()) ^ base.rotate_left(i as u32 * 7 + 1);
            shapes.push(Shape::random(&mut Rng::new(word_hash), hue, harmony));
        }
        while shapes.len() < 3 {
            shapes.push(Shape::random(&mut rng, hue, harmony));
        }
        Self {
            top,
            bottom,
            angle,
            glow_centre,
            glow_colour,
            glow_radius,
            shapes,
            noise_seed: rng.next_u64(),
            noise_cell: rng.range(0.04, 0.12) as f32,
            noise_amp: rng.range(0.03, 0.07) as f32,
        }
    }

    /// The parts of the picture that do not move, for a `w` x `h` frame.
    fn backdrop(&self, w: u32, h: u32) -> Backdrop {
        let unit = w.min(h).max(1) as f32;
        let (aw, ah) = (w as f32 / unit, h as f32 / unit);
        let mut glow = Vec::with_capacity(w as usize * h as usize);
        let mut grain = Vec::with_capacity(w as usize * h as usize);
        for y in 0..h {
            let v = (y as f32 + 0.5) / unit;
            for x in 0..w {
                let u = (x as f32 + 0.5) / unit;
                let (gx, gy) = (u - self.glow_centre.0 * aw, v - self.glow_centre.1 * ah);
                glow.push((-(gx * gx + gy * gy) / (self.glow_radius * self.glow_radius)).exp() * 0.45);
                let noise = value_noise(self.noise_seed, u / self.noise_cell, v / self.noise_cell) * 0.65
                    + value_noise(self.noise_seed ^ 0x5555, u / (self.noise_cell * 0.4), v / (self.noise_cell * 0.4))
                        * 0.35;
                grain.push((noise - 0.5) * self.noise_amp * 2.0);
            }
        }
        Backdrop { width: w, height: h, glow, grain }
    }

    /// Renders the scene at loop position `t` in [0, 1) over its `backdrop`.
    fn render(&self, backdrop: &Backdrop, t: f64) -> RgbImage {
        let (w, h) = (backdrop.width, backdrop.height);
        let mut img = RgbImage::new(w, h);
        if w == 0 || h == 0 {
            return img;
        }
        let unit = w.min(h) as f32;
        let (aw, ah) = (w as f32 / unit, h as f32 / unit);
        let tau = std::f32::consts::TAU;
        let t = t as f32;
        let angle = self.angle + 0.6 * (tau * t).sin();
        let (dir_x, dir_y) = (angle.cos(), angle.sin());
        let half_extent = 0.5 * (aw * dir_x.abs() + ah * dir_y.abs());
        let pixel = 1.0 / unit;

        // Resolve animated shape positions and rotations once per frame.
        let placed: Vec<Placed> = self
            .shapes
            .iter()
            .map(|s| Placed {
                shape: s,
                cx: s.centre.0 * aw + s.amplitude.0 * (tau * (s.cycles.0 * t + s.phase.0)).sin(),
                cy: s.centre.1 * ah + s.amplitude.1 * (tau * (s.cycles.1 * t + s.phase.1)).cos(),
                rotation: (s.spin * tau * t).sin_cos(),
                // Past this distance from the centre on either axis a shape covers nothing: the
                // rounded square's corner lies within size * sqrt(2), the ring's outer edge within
                // 1.18 * size, and the anti-aliased edge adds under a pixel.
                reach: s.size * 1.42 + 2.0 * pixel,
            })
            .collect();

        // Each row is drawn in three passes over a line of floating-point colours: the backdrop,
        // then each shape over the pixels it can reach, then the grain; each pixel sees the same
        // operations in the same order as a pass per pixel would, without testing every pixel
        // against every shape the row crosses.
        let mut line = vec![[0.0f32; 3]; w as usize];
        // Edges are anti-aliased over 1.5 px: a shape covers nothing past half of that outside
        // its outline.
        let per_edge = 1.0 / (1.5 * pixel);
        let edge_width = 0.75 * pixel * 1.01;
        let rows = img.chunks_exact_mut(w as usize * 3);
        let still = backdrop.glow.chunks_exact(w as usize).zip(backdrop.grain.chunks_exact(w as usize));
        for (y, (row, (glows, grains))) in rows.zip(still).enumerate() {
            let v = (y as f32 + 0.5) / unit;
            for (x, (c, &glow)) in line.iter_mut().zip(glows).enumerate() {
                let u = (x as f32 + 0.5) / unit;
                let g = (((u - aw / 2.0) * dir_x + (v - ah / 2.0) * dir_y) / (2.0 * half_extent.max(1e-3)) + 0.5)
                    .clamp(0.0, 1.0);
                *c = std::array::from_fn(|k| self.top[k] * (1.0 - g) + self.bottom[k] * g);
                for (ck, gk) in c.iter_mut().zip(self.glow_colour) {
                    *ck += (gk - *ck) * glow;
                }
            }
            for placed in placed.iter().filter(|p| (v - p.cy).abs() <= p.reach) {
                // How far either side of its centre the shape can cover this row: a disc or ring
                // within its outer circle, a square within its reach.
                let dy = v - placed.cy;
                let half = match placed.shape.kind {
                    ShapeKind::Square => placed.reach,
                    ShapeKind::Disc | ShapeKind::Ring => {
                        let outer = placed.shape.size * if placed.shape.kind == ShapeKind::Ring { 1.18 } else { 1.0 }
                            + edge_width;
                        if dy.abs() >= outer {
                            continue;
                        }
                        (outer * outer - dy * dy).sqrt()
                    }
                };
                // A pixel or so either side; `cover` below is the exact test.
                let first = (((placed.cx - half) * unit - 1.5).max(0.0) as usize).min(line.len());
                let last = (((placed.cx + half) * unit + 1.5).max(0.0) as usize).min(line.len()).max(first);
                let size = placed.shape.size;
                // Subtle internal shading gives shapes some volume.
                let shade = 1.0 - 0.25 * ((dy / size.max(1e-3)).clamp(-1.0, 1.0) * 0.5 + 0.5);
                for (x, colour) in line[first..last].iter_mut().enumerate() {
                    let u = ((first + x) as f32 + 0.5) / unit;
                    let dx = u - placed.cx;
                    if dx.abs() > placed.reach {
                        continue;
                    }
                    let dist = match placed.shape.kind {
                        ShapeKind::Disc => (dx * dx + dy * dy).sqrt() - size,
                        ShapeKind::Ring => ((dx * dx + dy * dy).sqrt() - size).abs() - size * 0.18,
                        ShapeKind::Square => {
                            let (s, co) = placed.rotation;
                            let (rx, ry) = (dx * co + dy * s, -dx * s + dy * co);
                            let r = size * 0.25;
                            let (qx, qy) = (rx.abs() - size + r, ry.abs() - size + r);
                            let outside = (qx.max(0.0).powi(2) + qy.max(0.0).powi(2)).sqrt();
                            outside + qx.max(qy).min(0.0) - r
                        }
                    };
                    // Anti-aliased edge about 1.5 px wide.
                    let cover = (0.5 - dist * per_edge).clamp(0.0, 1.0) * placed.shape.opacity;
                    if cover > 0.0 {
                        for (ck, sk) in colour.iter_mut().zip(placed.shape.colour) {
                            *ck += (sk * shade - *ck) * cover;
                        }
                    }
                }
            }
            for ((p, c), &grain) in row.chunks_exact_mut(3).zip(&line).zip(grains) {
                p.copy_from_slice(&to_rgb8(c.map(|ck| ck + grain)));
            }
        }
        img
    }
}

/// The still parts of a scene at one size: per pixel, the glow's weight and the grain's offset.
struct Backdrop {
    width: u32,
    height: u32,
    glow: Vec<f32>,
    grain: Vec<f32>,
}

/// A shape where it stands in one frame.
struct Placed<'a> {
    shape: &'a Shape,
    cx: f32,
    cy: f32,
    /// Sine and cosine of its rotation.
    rotation: (f32, f32),
    reach: f32,
}

impl Shape {
    fn random(rng: &mut Rng, hue: f32, harmony: f32) -> Self {
        let kind = [ShapeKind::Disc, ShapeKind::Ring, ShapeKind::Square][rng.index(3)];
        let shape_hue = hue + [0.0, harmony, -harmony, 0.5][rng.index(4)] + rng.range(-0.05, 0.05) as f32;
        Self {
            kind,
            centre: (rng.range(0.15, 0.85) as f32, rng.range(0.15, 0.85) as f32),
            size: rng.range(0.06, 0.22) as f32,
            colour: hsv_to_rgb(shape_hue, rng.range(0.45, 0.95) as f32, rng.range(0.6, 1.0) as f32),
            opacity: rng.range(0.55, 0.95) as f32,
            amplitude: (rng.range(0.05, 0.25) as f32, rng.range(0.03, 0.18) as f32),
            cycles: ((1 + rng.index(2)) as f32, (1 + rng.index(2)) as f32),
            phase: (rng.unit() as f32, rng.unit() as f32),
            spin: [-1.0f32, 0.0, 1.0][rng.index(3)] * 0.25,
        }
    }
}

/// Smooth value noise in [0, 1] on an integer lattice hashed with `seed`.
fn value_noise(seed: u64, x: f32, y: f32) -> f32 {
    let (xf, yf) = (x.floor(), y.floor());
    let (fx, fy) = (x - xf, y - yf);
    let (xi, yi) = (xf as i64, yf as i64);
    let lattice = |ix: i64, iy: i64| {
        let h = crate::seed::mix64(
            seed ^ (ix as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (iy as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
        );
        (h >> 40) as f32 / (1u64 << 24) as f32
    };
    let sx = fx * fx * (3.0 - 2.0 * fx);
    let sy = fy * fy * (3.0 - 2.0 * fy);
    let top = lattice(xi, yi) * (1.0 - sx) + lattice(xi + 1, yi) * sx;
    let bottom = lattice(xi, yi + 1) * (1.0 - sx) + lattice(xi + 1, yi + 1) * sx;
    top * (1.0 - sy) + bottom * sy
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::test_pattern;

    #[test]
    fn sandbox_image_is_deterministic_and_prompt_sensitive() {
        let a = sandbox_image("a red fox in snow", 7, 64, 48);
        let b = sandbox_image("a red fox in snow", 7, 64, 48);
        let c = sandbox_image("a blue whale at dusk", 7, 64, 48);
        let d = sandbox_image("a red fox in snow", 8, 64, 48);
        assert_eq!(a.dimensions(), (64, 48));
        assert_eq!(a, b);
        assert!(mean_abs_diff(&a, &c) > 10.0);
        assert_ne!(a, d);
        // Not a flat fill.
        let first = a.get_pixel(0, 0);
        assert!(a.pixels().filter(|p| *p != first).count() > 1000);
    }

    #[test]
    fn sandbox_edit_is_deterministic_and_visible() {
        let src = DynamicImage::ImageRgb8(test_pattern(40, 30));
        let a = sandbox_edit(&src, "make it warmer", 1);
        assert_eq!(a.dimensions(), (40, 30));
        assert_eq!(a, sandbox_edit(&src, "make it warmer", 1));
        assert!(mean_abs_diff(&a, &src.to_rgb8()) > 5.0);
        assert_ne!(a, sandbox_edit(&src, "make it colder", 1));
    }

    #[test]
    fn the_folded_grade_is_the_look_applied_step_by_step() {
        for (prompt, seed) in [("golden hour", 3), ("blue dusk", 11), ("", 0)] {
            let look = Look::new(prompt, seed);
            let edit = SandboxEdit::new(prompt, seed);
            for (i, pixel) in
                [[0u8, 0, 0], [255, 255, 255], [200, 40, 90], [17, 128, 250], [90, 90, 90]].iter().enumerate()
            {
                let fall = [1.0, 0.8, 0.55, 0.3, 0.95][i];
                let c: [f32; 3] = std::array::from_fn(|k| look.graded(k, pixel[k]));
                let luma = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
                let expected: [u8; 3] = std::array::from_fn(|k| {
                    let saturated = luma + (c[k] - luma) * look.saturation;
                    let contrasted = (saturated - 0.5) * look.contrast + 0.5;
                    let tinted = contrasted * (1.0 - look.tint_strength) + look.tint[k] * luma;
                    to_u8(tinted * fall)
                });
                let mut got = *pixel;
                edit.grade(&mut got, fall);
                for k in 0..3 {
                    // The folded sums round differently in the last bits of a float, never by more
                    // than one level.
                    assert!(got[k].abs_diff(expected[k]) <= 1, "{prompt} {pixel:?}: {got:?} against {expected:?}");
                }
            }
        }
    }

    #[test]
    fn a_prepared_edit_gives_each_frame_what_a_fresh_one_would() {
        let mut edit = SandboxEdit::new("golden hour", 3);
        // Two sizes in turn: the vignette's map follows the frame's size.
        for (w, h) in [(40, 30), (64, 48), (40, 30)] {
            let frame = test_pattern(w, h);
            let fresh = sandbox_edit(&DynamicImage::ImageRgb8(frame.clone()), "golden hour", 3);
            assert_eq!(edit.apply(frame.clone()), fresh, "{w}x{h}");
            // A picture too large for a kept map gets the same vignette worked out row by row.
            assert_eq!(SandboxEdit::new("golden hour", 3).apply_with(frame, false), fresh, "{w}x{h}");
        }
    }

    #[test]
    fn pan_zoom_frames_move_smoothly() {
        let src = DynamicImage::ImageRgb8(sandbox_image("mountain lake", 3, 200, 120));
        let frames: Vec<_> = pan_zoom_frames(src.clone(), 65, 48, 10, 5).collect();
        assert_eq!(frames.len(), 10);
        assert!(frames.iter().all(|f| f.dimensions() == (64, 48)));
        assert_ne!(frames[0], frames[9]);
        // Adjacent frames differ less than the endpoints do.
        let step = mean_abs_diff(&frames[4], &frames[5]);
        assert!(step < mean_abs_diff(&frames[0], &frames[9]));
        assert_eq!(frames, pan_zoom_frames(src.clone(), 64, 48, 10, 5).collect::<Vec<_>>());
        assert_eq!(pan_zoom_frames(src.clone(), 64, 48, 0, 5).count(), 0);
    }

    #[test]
    fn motion_frames_are_deterministic_and_animated() {
        let frames = |prompt| sandbox_motion_frames(prompt, 1, 48, 32, 6).collect::<Vec<_>>();
        let a = frames("dancing lights");
        assert_eq!(a.len(), 6);
        assert!(a.iter().all(|f| f.dimensions() == (48, 32)));
        assert_ne!(a[0], a[3]);
        assert_eq!(a, frames("dancing lights"));
        assert_ne!(a, frames("quiet ocean"));
    }

    fn mean_abs_diff(a: &RgbImage, b: &RgbImage) -> f64 {
        let total: u64 = a.as_raw().iter().zip(b.as_raw()).map(|(x, y)| u64::from(x.abs_diff(*y))).sum();
        total as f64 / a.as_raw().len().max(1) as f64
    }
}
