//! Colour-space conversions shared by the image operations.

/// sRGB (D65) to CIELAB, where Euclidean distance tracks perceived difference.
pub fn srgb_to_lab(rgb: [u8; 3]) -> [f32; 3] {
    let lin = |c: u8| {
        let c = f32::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (lin(rgb[0]), lin(rgb[1]), lin(rgb[2]));
    let x = (0.412_456_4 * r + 0.357_576_1 * g + 0.180_437_5 * b) / 0.950_47;
    let y = 0.212_672_9 * r + 0.715_152_2 * g + 0.072_175 * b;
    let z = (0.019_333_9 * r + 0.119_192 * g + 0.950_304_1 * b) / 1.088_83;
    let f = |t: f32| {
        if t > 0.008_856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// CIEDE2000 colour difference between two CIELAB colours (Sharma, Wu and Dalal, 2005), with
/// unit weights (k_L = k_C = k_H = 1).
///
/// About 1 is a just-noticeable difference; unlike Euclidean Lab distance it weighs lightness,
/// chroma and hue as the eye does, including the blue-region hue rotation.
pub fn ciede2000(lab1: [f32; 3], lab2: [f32; 3]) -> f32 {
    let [l1, a1, b1] = lab1.map(f64::from);
    let [l2, a2, b2] = lab2.map(f64::from);
    let pow25_7 = 25.0f64.powi(7);

    // a* is stretched for near-neutral colours, where the eye resolves hue better than Lab does.
    let c_mean = (a1.hypot(b1) + a2.hypot(b2)) / 2.0;
    let g = 0.5 * (1.0 - (c_mean.powi(7) / (c_mean.powi(7) + pow25_7)).sqrt());
    let (a1p, a2p) = ((1.0 + g) * a1, (1.0 + g) * a2);
    let (c1p, c2p) = (a1p.hypot(b1), a2p.hypot(b2));
    let hue = |b: f64, a: f64| if a == 0.0 && b == 0.0 { 0.0 } else { b.atan2(a).to_degrees().rem_euclid(360.0) };
    let (h1p, h2p) = (hue(b1, a1p), hue(b2, a2p));
    let neutral = c1p * c2p == 0.0;

    let dl = l2 - l1;
    let dc = c2p - c1p;
    let dh_angle = if neutral {
        0.0
    } else if h2p - h1p > 180.0 {
        h2p - h1p - 360.0
    } else if h2p - h1p < -180.0 {
        h2p - h1p + 360.0
    } else {
        h2p - h1p
    };
    let dh = 2.0 * (c1p * c2p).sqrt() * (dh_angle / 2.0).to_radians().sin();

    let l_mean = (l1 + l2) / 2.0;
    let cp_mean = (c1p + c2p) / 2.0;
    let h_mean = if neutral {
        h1p + h2p
    } else if (h1p - h2p).abs() <= 180.0 {
        (h1p + h2p) / 2.0
    } else if h1p + h2p < 360.0 {
        (h1p + h2p + 360.0) / 2.0
    } else {
        (h1p + h2p - 360.0) / 2.0
    };
    let t = 1.0 - 0.17 * (h_mean - 30.0).to_radians().cos()
        + 0.24 * (2.0 * h_mean).to_radians().cos()
        + 0.32 * (3.0 * h_mean + 6.0).to_radians().cos()
        - 0.20 * (4.0 * h_mean - 63.0).to_radians().cos();
    let hue_offset = (h_mean - 275.0) / 25.0;
    let d_theta = 30.0 * (-hue_offset * hue_offset).exp();
    let rc = 2.0 * (cp_mean.powi(7) / (cp_mean.powi(7) + pow25_7)).sqrt();
    let l50 = (l_mean - 50.0).powi(2);
    let sl = 1.0 + 0.015 * l50 / (20.0 + l50).sqrt();
    let sc = 1.0 + 0.045 * cp_mean;
    let sh = 1.0 + 0.015 * cp_mean * t;
    let rt = -rc * (2.0 * d_theta).to_radians().sin();
    let (tl, tc, th) = (dl / sl, dc / sc, dh / sh);
    (tl * tl + tc * tc + th * th + rt * tc * th).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ciede2000_matches_sharma_test_data() {
        // Pairs and expected differences from Sharma, Wu and Dalal (2005), table 1: blue-region
        // hue rotation, neutral colours, the a* hue discontinuity and large differences.
        let pairs: [([f32; 3], [f32; 3], f32); 10] = [
            ([50.0, 2.6772, -79.7751], [50.0, 0.0, -82.7485], 2.0425),
            ([50.0, 3.1571, -77.2803], [50.0, 0.0, -82.7485], 2.8615),
            ([50.0, 0.0, 0.0], [50.0, -1.0, 2.0], 2.3669),
            ([50.0, 2.49, -0.001], [50.0, -2.49, 0.0009], 7.1792),
            ([50.0, 2.5, 0.0], [73.0, 25.0, -18.0], 27.1492),
            ([50.0, 2.5, 0.0], [61.0, -5.0, 29.0], 22.8977),
            ([50.0, 2.5, 0.0], [56.0, -27.0, -3.0], 31.9030),
            ([60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644),
            ([22.7233, 20.0904, -46.6940], [23.0331, 14.9730, -42.5619], 2.0373),
            ([90.9257, -0.5406, -0.9208], [88.6381, -0.8985, -0.7239], 1.5381),
        ];
        for (lab1, lab2, expected) in pairs {
            let forward = ciede2000(lab1, lab2);
            assert!((forward - expected).abs() < 1e-3, "{lab1:?} {lab2:?}: {forward} != {expected}");
            assert!((ciede2000(lab2, lab1) - forward).abs() < 1e-4, "not symmetric for {lab1:?} {lab2:?}");
        }
        assert_eq!(ciede2000([40.0, 10.0, -5.0], [40.0, 10.0, -5.0]), 0.0);
    }

    #[test]
    fn srgb_to_lab_maps_white_black_and_grey() {
        let white = srgb_to_lab([255, 255, 255]);
        assert!((white[0] - 100.0).abs() < 0.01 && white[1].abs() < 0.01 && white[2].abs() < 0.01, "{white:?}");
        assert!(srgb_to_lab([0, 0, 0])[0].abs() < 1e-3);
        let grey = srgb_to_lab([119, 119, 119]);
        assert!((grey[0] - 50.0).abs() < 0.5 && grey[1].abs() < 0.01 && grey[2].abs() < 0.01, "{grey:?}");
    }
}
