//! BT.709 limited-range conversion between packed RGB and planar 4:2:0 YUV (I420), the form the
//! H.264 encoder takes and the decoder gives, on yuvutils-rs's SIMD kernels (AVX2/SSE/NEON with
//! a scalar fallback). The coefficients are the ones the files' BT.709 colour tags promise players.

use yuvutils_rs::{
    rgb_to_yuv420, yuv420_to_rgb, BufferStoreMut, YuvConversionMode, YuvError, YuvPlanarImage, YuvPlanarImageMut,
    YuvRange, YuvStandardMatrix,
};

use crate::MediaError;

fn conversion_error(e: YuvError) -> MediaError {
    MediaError::Encode(format!("YUV conversion: {e}"))
}

fn dimension(value: usize) -> Result<u32, MediaError> {
    u32::try_from(value).map_err(|_| MediaError::InvalidInput(format!("picture dimension {value} is too large")))
}

/// Converts `rgb` (`width` x `height`, both even, packed RGB) into `out`: the Y plane, then the
/// Cb and Cr planes at half size.
pub(crate) fn rgb_to_i420(rgb: &[u8], width: usize, height: usize, out: &mut Vec<u8>) -> Result<(), MediaError> {
    let (cw, ch) = (width.div_ceil(2), height.div_ceil(2));
    out.resize(width * height + 2 * cw * ch, 0);
    let (y_plane, chroma) = out.split_at_mut(width * height);
    let (u_plane, v_plane) = chroma.split_at_mut(cw * ch);
    let mut image = YuvPlanarImageMut {
        y_plane: BufferStoreMut::Borrowed(y_plane),
        y_stride: dimension(width)?,
        u_plane: BufferStoreMut::Borrowed(u_plane),
        u_stride: dimension(cw)?,
        v_plane: BufferStoreMut::Borrowed(v_plane),
        v_stride: dimension(cw)?,
        width: dimension(width)?,
        height: dimension(height)?,
    };
    rgb_to_yuv420(
        &mut image,
        rgb,
        dimension(width * 3)?,
        YuvRange::Limited,
        YuvStandardMatrix::Bt709,
        YuvConversionMode::Balanced,
    )
    .map_err(conversion_error)
}

/// Converts planar 4:2:0 YUV with the given strides into packed RGB (`width` x `height`).
pub(crate) fn i420_to_rgb(
    planes: (&[u8], &[u8], &[u8]),
    strides: (usize, usize, usize),
    width: usize,
    height: usize,
    rgb: &mut [u8],
) -> Result<(), MediaError> {
    let image = YuvPlanarImage {
        y_plane: planes.0,
        y_stride: dimension(strides.0)?,
        u_plane: planes.1,
        u_stride: dimension(strides.1)?,
        v_plane: planes.2,
        v_stride: dimension(strides.2)?,
        width: dimension(width)?,
        height: dimension(height)?,
    };
    yuv420_to_rgb(&image, rgb, dimension(width * 3)?, YuvRange::Limited, YuvStandardMatrix::Bt709)
        .map_err(|e| MediaError::Decode(format!("YUV conversion: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BT.709 limited-range Y'CbCr of one RGB pixel, in floating point.
    fn reference(rgb: [u8; 3]) -> [f64; 3] {
        let [r, g, b] = rgb.map(|c| f64::from(c) / 255.0);
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        [16.0 + 219.0 * y, 128.0 + 224.0 * (b - y) / 1.8556, 128.0 + 224.0 * (r - y) / 1.5748]
    }

    /// Pure colours within one level of the reference values, and a round trip within 2 levels.
    #[test]
    fn converts_with_the_bt709_matrix_and_round_trips() {
        for rgb in [[255, 255, 255], [0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255], [200, 120, 40]] {
            let frame: Vec<u8> = rgb.iter().copied().cycle().take(2 * 2 * 3).collect();
            let mut yuv = Vec::new();
            rgb_to_i420(&frame, 2, 2, &mut yuv).expect("converts");
            for (got, want) in [yuv[0], yuv[4], yuv[5]].into_iter().zip(reference(rgb)) {
                assert!((f64::from(got) - want).abs() <= 1.0, "{rgb:?}: {got} against {want:.2}");
            }
            let mut back = vec![0u8; 12];
            i420_to_rgb((&yuv[..4], &yuv[4..5], &yuv[5..6]), (2, 1, 1), 2, 2, &mut back).expect("converts");
            for (a, b) in back[..3].iter().zip(rgb) {
                assert!((i16::from(*a) - i16::from(b)).abs() <= 2, "{rgb:?} came back as {:?}", &back[..3]);
            }
        }
    }

    /// A frame wide enough for the SIMD paths: every luma sample within one level of the
    /// reference, every chroma sample within one level of the reference of its 2x2 block's mean.
    #[test]
    fn wide_frames_match_the_reference() {
        let (w, h) = (70usize, 6usize);
        let pixel = |x: usize, y: usize| [(x * 3 + y * 7) as u8, (255 - x * 2) as u8, (x * y * 5 % 256) as u8];
        let frame: Vec<u8> = (0..h).flat_map(|y| (0..w).flat_map(move |x| pixel(x, y))).collect();
        let mut yuv = Vec::new();
        rgb_to_i420(&frame, w, h, &mut yuv).expect("converts");
        for y in 0..h {
            for x in 0..w {
                let want = reference(pixel(x, y))[0];
                let got = f64::from(yuv[y * w + x]);
                assert!((got - want).abs() <= 1.0, "Y at {x},{y}: {got} against {want:.2}");
            }
        }
        let (cw, ch) = (w / 2, h / 2);
        for j in 0..ch {
            for i in 0..cw {
                let mut mean = [0.0; 3];
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let r = reference(pixel(2 * i + dx, 2 * j + dy));
                    (0..3).for_each(|k| mean[k] += r[k] / 4.0);
                }
                let cb = f64::from(yuv[w * h + j * cw + i]);
                let cr = f64::from(yuv[w * h + cw * ch + j * cw + i]);
                assert!(
                    (cb - mean[1]).abs() <= 1.5 && (cr - mean[2]).abs() <= 1.5,
                    "chroma at {i},{j}: {cb},{cr} against {mean:?}"
                );
            }
        }
    }
}
