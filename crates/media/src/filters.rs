//! Separable blurs shared by the image operations.

/// Separable box blur with clamped edges; two passes approximate a Gaussian.
/// Running sums keep it O(pixels) whatever the radius.
pub fn box_blur(data: &mut [f32], w: usize, h: usize, radius: usize) {
    let mut line = vec![0.0f32; w.max(h)];
    let mut blurred = vec![0.0f32; w.max(h)];
    for y in 0..h {
        let row = &mut data[y * w..(y + 1) * w];
        blur_1d(row, &mut blurred[..w], radius);
        row.copy_from_slice(&blurred[..w]);
    }
    for x in 0..w {
        for (y, v) in line[..h].iter_mut().enumerate() {
            *v = data[y * w + x];
        }
        blur_1d(&line[..h], &mut blurred[..h], radius);
        for (y, v) in blurred[..h].iter().enumerate() {
            data[y * w + x] = *v;
        }
    }
}

fn blur_1d(src: &[f32], dst: &mut [f32], radius: usize) {
    let n = src.len();
    if n == 0 {
        return;
    }
    let r = radius as isize;
    let at = |i: isize| f64::from(src[i.clamp(0, n as isize - 1) as usize]);
    let mut acc: f64 = (-r..=r).map(at).sum();
    let norm = 1.0 / (2 * radius + 1) as f64;
    for (i, d) in dst.iter_mut().enumerate() {
        *d = (acc * norm) as f32;
        let i = i as isize;
        acc += at(i + r + 1) - at(i - r);
    }
}

/// The indices of pixel `i`'s left, right, upper and lower neighbours in a `w`x`h` grid, `None`
/// past an edge.
pub(crate) fn neighbours4(i: usize, w: usize, h: usize) -> [Option<usize>; 4] {
    let (x, y) = (i % w, i / w);
    [(x > 0).then(|| i - 1), (x + 1 < w).then(|| i + 1), (y > 0).then(|| i - w), (y + 1 < h).then(|| i + w)]
}
