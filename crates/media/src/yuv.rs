//! BT.709 limited-range conversion between packed RGB and planar 4:2:0 YUV (I420), the form the
//! H.264 encoder takes and the decoder gives. Fixed-point integer arithmetic that the compiler
//! vectorises: the floating-point converter it replaces, with a software fused multiply-add per
//! sample, cost more than the encoder's own motion search. The coefficients are the ones the
//! files' BT.709 colour tags promise players.

/// Fixed-point scale of the coefficients (16 fractional bits).
const ONE: i32 = 1 << 16;

/// RGB to Y'CbCr, BT.709, 8-bit limited range: rows Y, Cb, Cr; columns R, G, B.
const TO_YUV: [[i32; 3]; 3] = [
    [11966, 40254, 4064],   // 0.18259, 0.61423, 0.06201
    [-6596, -22189, 28784], // -0.10064, -0.33857, 0.43922
    [28784, -26145, -2639], // 0.43922, -0.39894, -0.04027
];

/// Y'CbCr to RGB, BT.709 limited range: Y scale, then Cr to R, Cb and Cr to G, Cb to B.
const Y_SCALE: i32 = 76309; // 1.16438
const CR_TO_R: i32 = 117489; // 1.79274
const CB_TO_G: i32 = -13975; // -0.21325
const CR_TO_G: i32 = -34925; // -0.53291
const CB_TO_B: i32 = 138438; // 2.11240

/// Converts `rgb` (`width` x `height`, both even, packed RGB) into `out`: the Y plane, then the
/// Cb and Cr planes at half size, each chroma sample from the average of its 2x2 pixels.
pub(crate) fn rgb_to_i420(rgb: &[u8], width: usize, height: usize, out: &mut Vec<u8>) {
    let (cw, ch) = (width / 2, height / 2);
    out.resize(width * height + 2 * cw * ch, 0);
    let (y_plane, chroma) = out.split_at_mut(width * height);
    let (u_plane, v_plane) = chroma.split_at_mut(cw * ch);
    for (row, y_row) in rgb.chunks_exact(width * 3).zip(y_plane.chunks_exact_mut(width)) {
        for (p, y) in row.chunks_exact(3).zip(y_row.iter_mut()) {
            let [r, g, b] = [i32::from(p[0]), i32::from(p[1]), i32::from(p[2])];
            let luma = TO_YUV[0][0] * r + TO_YUV[0][1] * g + TO_YUV[0][2] * b;
            *y = ((luma + 16 * ONE + ONE / 2) >> 16).clamp(0, 255) as u8;
        }
    }
    for j in 0..ch {
        let top = &rgb[2 * j * width * 3..][..width * 3];
        let bottom = &rgb[(2 * j + 1) * width * 3..][..width * 3];
        for i in 0..cw {
            let mut sum = [0i32; 3];
            for row in [top, bottom] {
                for c in 0..3 {
                    sum[c] += i32::from(row[6 * i + c]) + i32::from(row[6 * i + 3 + c]);
                }
            }
            // The sums are four pixels: divide by 4 within the coefficients' shift.
            let chroma = |k: usize| {
                let v = TO_YUV[k][0] * sum[0] + TO_YUV[k][1] * sum[1] + TO_YUV[k][2] * sum[2];
                ((v + 4 * 128 * ONE + 2 * ONE) >> 18).clamp(0, 255) as u8
            };
            u_plane[j * cw + i] = chroma(1);
            v_plane[j * cw + i] = chroma(2);
        }
    }
}

/// Converts planar 4:2:0 YUV with the given strides into packed RGB (`width` x `height`).
pub(crate) fn i420_to_rgb(
    planes: (&[u8], &[u8], &[u8]),
    strides: (usize, usize, usize),
    width: usize,
    height: usize,
    rgb: &mut [u8],
) {
    let (y_plane, u_plane, v_plane) = planes;
    for (j, row) in rgb.chunks_exact_mut(width * 3).take(height).enumerate() {
        let y_row = &y_plane[j * strides.0..];
        let u_row = &u_plane[(j / 2) * strides.1..];
        let v_row = &v_plane[(j / 2) * strides.2..];
        for (i, p) in row.chunks_exact_mut(3).enumerate() {
            let y = (i32::from(y_row[i]) - 16) * Y_SCALE;
            let cb = i32::from(u_row[i / 2]) - 128;
            let cr = i32::from(v_row[i / 2]) - 128;
            let channel = |v: i32| ((v + ONE / 2) >> 16).clamp(0, 255) as u8;
            p[0] = channel(y + CR_TO_R * cr);
            p[1] = channel(y + CB_TO_G * cb + CR_TO_G * cr);
            p[2] = channel(y + CB_TO_B * cb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference BT.709 limited-range values of pure colours, and a round trip within 2 levels.
    #[test]
    fn converts_with_the_bt709_matrix_and_round_trips() {
        let colours: [([u8; 3], [u8; 3]); 5] = [
            ([255, 255, 255], [235, 128, 128]),
            ([0, 0, 0], [16, 128, 128]),
            ([255, 0, 0], [63, 102, 240]),
            ([0, 255, 0], [173, 42, 26]),
            ([0, 0, 255], [32, 240, 118]),
        ];
        for (rgb, expected) in colours {
            let frame: Vec<u8> = rgb.iter().copied().cycle().take(2 * 2 * 3).collect();
            let mut yuv = Vec::new();
            rgb_to_i420(&frame, 2, 2, &mut yuv);
            assert_eq!([yuv[0], yuv[4], yuv[5]], expected, "{rgb:?}");
            let mut back = vec![0u8; 12];
            i420_to_rgb((&yuv[..4], &yuv[4..5], &yuv[5..6]), (2, 1, 1), 2, 2, &mut back);
            for (a, b) in back[..3].iter().zip(rgb) {
                assert!((i16::from(*a) - i16::from(b)).abs() <= 2, "{rgb:?} came back as {:?}", &back[..3]);
            }
        }
    }
}
