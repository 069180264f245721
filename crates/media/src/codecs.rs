//! Still-image codecs: PNG and JPEG decoding with size limits checked before any pixel is
//! allocated, and encoding.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, Limits, RgbImage};

use crate::MediaError;
/// Largest width/height accepted from untrusted input; bounds decoder memory.
pub const MAX_IMAGE_DIM: u32 = 8192;

/// Most pixels accepted in one input image: 40 megapixels (a full-frame camera's 7,728 x 5,152 is
/// 39.8 MP). A flat 8192 x 8192 PNG is about 200 KB on the wire and 67 MP in memory; every engine
/// then multiplies that several times over, so the pixel count is checked from the header before
/// anything is decoded.
pub const MAX_IMAGE_PIXELS: u64 = 40_000_000;

/// Most frames an animation helper will produce; matches the video decode cap.
pub const MAX_ANIMATION_FRAMES: u32 = 1800;

/// Decodes PNG or JPEG bytes (format sniffed from the content).
///
/// Dimensions above [`MAX_IMAGE_DIM`] are rejected before pixel data is
/// allocated, so hostile headers cannot exhaust memory.
pub fn decode_image(bytes: &[u8]) -> Result<DynamicImage, MediaError> {
    if bytes.is_empty() {
        return Err(MediaError::InvalidInput("empty image data".into()));
    }
    let mut reader =
        ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|e| MediaError::Decode(e.to_string()))?;
    match reader.format() {
        Some(ImageFormat::Png | ImageFormat::Jpeg) => {}
        Some(other) => {
            return Err(MediaError::InvalidInput(format!("unsupported image format {other:?}; expected PNG or JPEG")))
        }
        None => return Err(MediaError::InvalidInput("unrecognised image data; expected PNG or JPEG".into())),
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_DIM);
    limits.max_image_height = Some(MAX_IMAGE_DIM);
    reader.limits(limits);
    let decoder = reader.into_decoder().map_err(|e| MediaError::Decode(e.to_string()))?;
    let (width, height) = image::ImageDecoder::dimensions(&decoder);
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_IMAGE_PIXELS {
        return Err(MediaError::InvalidInput(format!(
            "the image is {width}x{height} ({:.1} megapixels); the limit is {} megapixels",
            pixels as f64 / 1e6,
            MAX_IMAGE_PIXELS / 1_000_000
        )));
    }
    DynamicImage::from_decoder(decoder).map_err(|e| MediaError::Decode(e.to_string()))
}

/// Encodes any image as PNG, keeping alpha and 16-bit depth when present.
pub fn encode_png(img: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    if img.width() == 0 || img.height() == 0 {
        return Err(MediaError::InvalidInput("cannot encode an empty image".into()));
    }
    // PNG has no float samples; quantise those rather than failing.
    let converted;
    let img = match img {
        DynamicImage::ImageRgb32F(_) => {
            converted = DynamicImage::ImageRgb16(img.to_rgb16());
            &converted
        }
        DynamicImage::ImageRgba32F(_) => {
            converted = DynamicImage::ImageRgba16(img.to_rgba16());
            &converted
        }
        _ => img,
    };
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), ImageFormat::Png).map_err(|e| MediaError::Encode(e.to_string()))?;
    Ok(out)
}

/// Encodes an RGB image as baseline JPEG; `quality` is clamped to 1..=100.
pub fn encode_jpeg(img: &RgbImage, quality: u8) -> Result<Vec<u8>, MediaError> {
    if img.width() == 0 || img.height() == 0 {
        return Err(MediaError::InvalidInput("cannot encode an empty image".into()));
    }
    let (Ok(w), Ok(h)) = (u16::try_from(img.width()), u16::try_from(img.height())) else {
        return Err(MediaError::InvalidInput("a JPEG is at most 65535 pixels on a side".into()));
    };
    let mut out = Vec::new();
    // 4:2:0 chroma below quality 90, 4:4:4 from 90, as cameras and libjpeg do.
    jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100))
        .encode(img.as_raw(), w, h, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| MediaError::Encode(e.to_string()))?;
    Ok(out)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::test_pattern;
    use image::{GrayImage, Rgb, Rgba, RgbaImage};

    #[test]
    fn png_roundtrip_preserves_pixels() -> Result<(), MediaError> {
        let img = DynamicImage::ImageRgb8(test_pattern(33, 17));
        let png = encode_png(&img)?;
        let back = decode_image(&png)?;
        assert_eq!(back.to_rgb8(), img.to_rgb8());
        let rgba = DynamicImage::ImageRgba8(RgbaImage::from_pixel(5, 4, Rgba([1, 2, 3, 4])));
        assert_eq!(decode_image(&encode_png(&rgba)?)?.to_rgba8(), rgba.to_rgba8());
        Ok(())
    }

    #[test]
    fn jpeg_roundtrip_keeps_size_and_colour() -> Result<(), MediaError> {
        let img = RgbImage::from_pixel(40, 24, Rgb([200, 40, 60]));
        let jpg = encode_jpeg(&img, 90)?;
        let back = decode_image(&jpg)?.to_rgb8();
        assert_eq!(back.dimensions(), (40, 24));
        let p = back.get_pixel(20, 12).0;
        assert!(p[0].abs_diff(200) < 10 && p[1].abs_diff(40) < 10 && p[2].abs_diff(60) < 10);
        Ok(())
    }

    #[test]
    fn decode_rejects_garbage_and_oversized() {
        assert!(matches!(decode_image(b""), Err(MediaError::InvalidInput(_))));
        assert!(decode_image(b"definitely not an image").is_err());
        // A PNG header claiming 9000x10 must be refused by the limits.
        let big = DynamicImage::ImageLuma8(GrayImage::new(MAX_IMAGE_DIM + 8, 1));
        let png = encode_png(&big).map_err(|e| e.to_string());
        assert!(png.is_ok());
        if let Ok(png) = png {
            assert!(decode_image(&png).is_err());
        }
    }

    /// A PNG signature, an IHDR chunk claiming `width` x `height` greyscale pixels, and an empty
    /// IDAT: a header with no pixel data.
    fn png_header(width: u32, height: u32) -> Vec<u8> {
        let chunk = |kind: &[u8], data: &[u8]| {
            let body: Vec<u8> = kind.iter().chain(data).copied().collect();
            let crc = body.iter().fold(0xffff_ffffu32, |crc, &byte| {
                (0..8).fold(crc ^ u32::from(byte), |c, _| if c & 1 == 1 { (c >> 1) ^ 0xedb8_8320 } else { c >> 1 })
            }) ^ 0xffff_ffff;
            let mut out = (data.len() as u32).to_be_bytes().to_vec();
            out.extend(body);
            out.extend(crc.to_be_bytes());
            out
        };
        let mut header = width.to_be_bytes().to_vec();
        header.extend(height.to_be_bytes());
        header.extend([8, 0, 0, 0, 0]);
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend(chunk(b"IHDR", &header));
        png.extend(chunk(b"IDAT", &[]));
        png
    }

    #[test]
    fn the_pixel_count_is_checked_from_the_header_before_decoding() {
        // 8000 x 6000 is within the per-side limit but 48 megapixels.
        let error = decode_image(&png_header(8000, 6000)).unwrap_err().to_string();
        assert!(error.contains("8000x6000 (48.0 megapixels); the limit is 40 megapixels"), "{error}");
        // Under the limit, the same truncated file fails later, when its pixels are read.
        let error = decode_image(&png_header(6000, 6000)).unwrap_err().to_string();
        assert!(!error.contains("megapixels"), "{error}");
    }
}
