//! The listing kit as a printer and a social-media manager would check it: the flyer's PDF read
//! back with poppler (page, trim and bleed boxes, embedded fonts, placed image resolution), every
//! PNG's size, text inside the trim's safety margin and the story's safe zone, contrast, the staged
//! disclosure on every piece, and the Fair Housing rewrite carried into every text. Two very
//! different brands and a listing with most details missing are rendered to
//! `target/tmp/listing-kit-*` for a person to look at.

use base64::Engine as _;
use engines::{Catalog, Engines, FetchPolicy, InputFetcher};
use recipes::listing_kit::{fair_housing::Policy, prepare, run};
use recipes::RecipeOutput;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn engines() -> Engines {
    Engines::new(Catalog::builtin(), InputFetcher::new(FetchPolicy::default()).expect("fetcher"))
}

fn data_uri(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn photo(name: &str) -> String {
    let path = format!("{}/../media/tests/photos/{name}", env!("CARGO_MANIFEST_DIR"));
    data_uri("image/jpeg", &std::fs::read(path).expect("test photo"))
}

/// A 3000 x 2000 photo-like JPEG (sky, a house-shaped block, lawn), large enough for 300 ppi.
fn large_photo() -> String {
    let image = image::RgbImage::from_fn(3000, 2000, |x, y| {
        let house = (900..2100).contains(&x) && (700..1500).contains(&y);
        let roof = y < 700 && y + (x as i32 - 1500).unsigned_abs() / 2 > 400 && (900..2100).contains(&x);
        let window = house && ((x / 150) % 3 == 1) && ((y / 150) % 2 == 1);
        if window {
            image::Rgb([250, 226, 150])
        } else if house {
            image::Rgb([214, 206, 196])
        } else if roof {
            image::Rgb([92, 64, 58])
        } else if y > 1500 {
            image::Rgb([70, (120 + (x % 37)) as u8, 60])
        } else {
            image::Rgb([(120 + y / 20) as u8, (170 + y / 25) as u8, 235])
        }
    });
    data_uri("image/jpeg", &media::codecs::encode_jpeg(&image, 90).expect("jpeg"))
}

/// A transparent PNG logo: a roof mark and a bar.
fn logo() -> String {
    let image = image::RgbaImage::from_fn(600, 200, |x, y| {
        let mark = y > 40 && y < 160 && y + (x as i32 - 100).unsigned_abs() > 100 && x < 200;
        let bar = x > 230 && x < 580 && (80..120).contains(&y);
        if mark || bar {
            image::Rgba([20, 120, 110, 255])
        } else {
            image::Rgba([0, 0, 0, 0])
        }
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgba8(image)
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .expect("png");
    data_uri("image/png", &bytes)
}

fn full_details() -> Value {
    json!({
        "address": "42 Harbor Lane, Mystic, CT 06355", "price": 525000, "beds": 3, "baths": 2.5,
        "square_feet": 1850, "lot_size": 0.25, "year_built": 1998,
        "headline": "Waterfront colonial with a private dock",
        "description": "Sunlit rooms open to the water through a wall of glass. Perfect for families who love \
            the outdoors. The kitchen was redone in 2021 with quartz counters and a six-burner range. Walking \
            distance to St. Mary's Church and the village green. Call Dana at (860) 555-0142 for a tour.",
        "features": ["Private dock", "Quartz counters", "Two-car garage", "Heated sunroom", "Man cave over the garage"],
        "open_house": "Saturday, June 7, 1-3 pm", "agent_name": "Dana Reyes", "phone": "(860) 555-0142",
        "email": "dana@shoreline.example", "brokerage": "Shoreline Realty", "license_number": "RES.0801234",
    })
}

async fn kit(body: Value) -> RecipeOutput {
    let request = serde_json::from_value(body).expect("request");
    let job = prepare(request, Policy::default()).expect("prepared");
    run(&engines(), &job).await.expect("kit")
}

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

/// Writes every file of `output` as `target/tmp/listing-kit-{name}-{piece}` and returns the PDF's path.
fn save(name: &str, output: &RecipeOutput) -> PathBuf {
    let pieces = ["flyer.pdf", "flyer.png", "square.png", "portrait.png", "story.png"];
    assert_eq!(output.files.len(), pieces.len());
    for (file, piece) in output.files.iter().zip(pieces) {
        std::fs::write(out_dir().join(format!("listing-kit-{name}-{piece}")), &file.bytes).expect("write");
    }
    out_dir().join(format!("listing-kit-{name}-flyer.pdf"))
}

fn poppler(tool: &str, args: &[&str]) -> String {
    let output = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} (poppler-utils) is needed to read the PDF back: {e}"));
    assert!(output.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `pdfinfo -box`'s `name` box as [x0, y0, x1, y1].
fn page_box(info: &str, name: &str) -> [f64; 4] {
    let line = info.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name} in {info}"));
    let numbers: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    [numbers[0], numbers[1], numbers[2], numbers[3]]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.01
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(bytes).expect("png decodes");
    (image.width(), image.height())
}

/// The PDF as a printer's preflight reads it, for a `trim` in points.
fn check_pdf(pdf: &Path, trim: (f64, f64)) {
    let pdf = pdf.to_str().expect("path");
    let info = poppler("pdfinfo", &["-box", pdf]);
    assert!(info.contains("Pages:           1"), "{info}");
    let (w, h) = trim;
    let media = page_box(&info, "MediaBox:");
    let bleed = page_box(&info, "BleedBox:");
    let trim_box = page_box(&info, "TrimBox:");
    assert!(close(media[2] - media[0], w + 18.0) && close(media[3] - media[1], h + 18.0), "page {media:?}");
    assert_eq!(bleed, media);
    assert!(close(trim_box[0], 9.0) && close(trim_box[1], 9.0), "trim {trim_box:?}");
    assert!(close(trim_box[2] - trim_box[0], w) && close(trim_box[3] - trim_box[1], h), "trim {trim_box:?}");

    let fonts = poppler("pdffonts", &[pdf]);
    let rows: Vec<&str> = fonts.lines().skip(2).filter(|l| !l.trim().is_empty()).collect();
    assert!(!rows.is_empty(), "the flyer's text is text, with fonts: {fonts}");
    for row in rows {
        // name type... encoding emb sub uni object ID: "emb" is the fourth column from the end.
        let columns: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(columns[columns.len() - 5], "yes", "font not embedded: {row}");
    }
}

/// `pdfimages -list` rows as (width, height, x-ppi).
fn pdf_images(pdf: &Path) -> Vec<(u32, u32, f64)> {
    let list = poppler("pdfimages", &["-list", pdf.to_str().expect("path")]);
    list.lines()
        .skip(2)
        .filter_map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            if c.len() < 14 || c[2] != "image" {
                return None;
            }
            Some((c[3].parse().ok()?, c[4].parse().ok()?, c[12].parse().ok()?))
        })
        .collect()
}

fn inside(outer: [f64; 4], b: &Value) -> bool {
    let (x, y, w, h) = (
        b["x"].as_f64().unwrap(),
        b["y"].as_f64().unwrap(),
        b["width"].as_f64().unwrap(),
        b["height"].as_f64().unwrap(),
    );
    x >= outer[0] - 1e-6 && y >= outer[1] - 1e-6 && x + w <= outer[2] + 1e-6 && y + h <= outer[3] + 1e-6
}

/// Every line of text 0.25 in inside the flyer's trim, inside the story's safe zone, and on the
/// canvas of the social posts.
fn check_text_placement(output: &RecipeOutput, trim: (f64, f64)) {
    let layout = &output.result["layout"];
    let safe_trim = [18.0, 18.0, trim.0 - 18.0, trim.1 - 18.0];
    for line in layout["flyer"]["text"].as_array().unwrap() {
        assert!(inside(safe_trim, &line["box"]), "flyer text outside the safety margin: {line}");
    }
    let zone = &layout["story_safe_zone"];
    assert!(close(zone["y"].as_f64().unwrap(), 269.0) && close(zone["height"].as_f64().unwrap(), 1248.0 - 269.0));
    let zone = [0.0, 268.8, 1080.0, 1248.0];
    for line in layout["story"]["text"].as_array().unwrap() {
        assert!(inside(zone, &line["box"]), "story text outside the safe zone: {line}");
    }
    for piece in ["square", "portrait"] {
        let size = [0.0, 0.0, 1080.0, layout[piece]["height"].as_f64().unwrap()];
        for line in layout[piece]["text"].as_array().unwrap() {
            assert!(inside(size, &line["box"]), "{piece} text off the canvas: {line}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_details_stay_inside_every_piece() {
    let long = |word: &str| std::iter::repeat_n(word, 40).collect::<Vec<_>>().join(" ")[..120].to_string();
    for (name, price) in [("longest-amount", json!(987654321.5)), ("longest-worded", json!(long("Offers")))] {
        let output = kit(json!({
            "photos": [photo("coffee.jpg"), {"url": photo("rocket.jpg"), "staged": true}],
            "details": {
                "price": price, "address": long("Boulevard"), "headline": long("Magnificent"),
                "open_house": long("Saturday"), "agent_name": long("Bartholomew"), "brokerage": long("Realty"),
                "phone": long("555"), "email": "a@b.co", "license_number": "X".repeat(60),
                "beds": 99.5, "baths": 99.75, "square_feet": 9999999, "lot_size": long("acres"),
                "description": long("Wonderful ").repeat(30), "features": vec![long("Feature")[..80].to_string(); 20],
            },
            "params": {"brand": {"font": "garamond"}, "paper": "a4"},
        }))
        .await;
        check_text_placement(&output, (595.276, 841.89));
        save(name, &output);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flyer_is_press_ready_and_every_piece_has_its_size() {
    for (paper, trim) in [("letter", (612.0, 792.0)), ("a4", (595.276, 841.89))] {
        let output = kit(json!({
            "photos": [large_photo(), photo("coffee.jpg"), {"url": photo("chelsea.jpg"), "staged": true}, photo("rocket.jpg")],
            "details": full_details(),
            "params": {"paper": paper, "brand": {"primary": "#1F3A5F", "accent": "#C8A24A", "logo_url": logo()}},
        }))
        .await;
        let pdf = save(&format!("navy-{paper}"), &output);
        check_pdf(&pdf, trim);
        // The hero is placed at 300 ppi from the large photo; the small ones as they are, and said so.
        let images = pdf_images(&pdf);
        assert!(images.iter().any(|&(w, _, ppi)| w > 2500 && ppi >= 299.0), "{images:?}");
        let placed = output.result["flyer"]["photos"].as_array().unwrap();
        assert_eq!(placed.len(), 4);
        assert!(placed[0]["ppi"].as_f64().unwrap() >= 299.5);
        let notes: Vec<&Value> = output.result["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n.as_str().unwrap().contains("on the flyer"))
            .collect();
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].as_str().unwrap().contains("not enlarged"));

        let scale = 150.0 / 72.0;
        assert_eq!(
            png_size(&output.files[1].bytes),
            ((trim.0 * scale).round() as u32, (trim.1 * scale).round() as u32)
        );
        assert_eq!(png_size(&output.files[2].bytes), (1080, 1080));
        assert_eq!(png_size(&output.files[3].bytes), (1080, 1350));
        assert_eq!(png_size(&output.files[4].bytes), (1080, 1920));

        check_text_placement(&output, trim);
        let layout = &output.result["layout"];
        // The staged disclosure is on every piece and in every caption.
        for piece in ["flyer", "square", "portrait", "story"] {
            let roles: Vec<&str> =
                layout[piece]["text"].as_array().unwrap().iter().map(|l| l["role"].as_str().unwrap()).collect();
            assert!(roles.contains(&"disclosure"), "{piece} has no staging disclosure");
        }
        for (name, text) in output.result["captions"].as_object().unwrap() {
            if name != "story_line" {
                assert!(text.as_str().unwrap().contains("One or more photos virtually staged."), "{name}");
            }
        }
        for (name, ratio) in output.result["brand"]["contrast"].as_object().unwrap() {
            assert!(ratio.as_f64().unwrap() >= 4.5, "{name}: {ratio}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_housing_findings_are_rewritten_everywhere_and_listed() {
    let output = kit(json!({"photos": [photo("coffee.jpg")], "details": full_details()})).await;
    let findings = output.result["fair_housing"]["findings"].as_array().unwrap();
    let originals: Vec<&str> = findings.iter().map(|f| f["original"].as_str().unwrap()).collect();
    assert!(originals.contains(&"Perfect for families"), "{originals:?}");
    assert!(originals.iter().any(|o| o.contains("St. Mary's Church")), "{originals:?}");
    assert!(originals.contains(&"Man cave"), "{originals:?}");
    let categories: Vec<&str> = findings.iter().map(|f| f["category"].as_str().unwrap()).collect();
    for category in ["familial_status", "religion", "sex"] {
        assert!(categories.contains(&category), "{categories:?}");
    }
    for (name, text) in output.result["captions"].as_object().unwrap() {
        let text = text.as_str().unwrap();
        for flagged in ["families", "Church", "Man cave", "man cave"] {
            assert!(!text.contains(flagged), "{flagged} in {name}: {text}");
        }
    }
    assert!(output.result["captions"]["website"].as_str().unwrap().contains("bonus room over the garage"));
}

/// The kit's own tags name the client's town, which the check leaves alone however its words
/// read ("#BoysTownOR" names a town, not whom the home is for), also when another line of the
/// caption is rewritten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kits_own_tags_survive_the_check() {
    let mut details = full_details();
    details["address"] = json!("210 Clay St, Boys Town, OR 97000");
    for headline in ["Waterfront colonial with a private dock", "Waterfront colonial, perfect for families"] {
        details["headline"] = json!(headline);
        let output = kit(json!({"photos": [photo("coffee.jpg")], "details": details})).await;
        let social = output.result["captions"]["social"].as_str().unwrap();
        assert!(social.contains("#BoysTownOR #BoysTownRealEstate"), "{social}");
        assert!(!social.contains("families"), "{social}");
        let findings = output.result["fair_housing"]["findings"].as_array().unwrap();
        assert!(
            findings.iter().all(|f| !f["original"].as_str().unwrap().to_lowercase().contains("boys")),
            "{findings:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_light_serif_brand_and_a_sparse_listing_render() {
    // A pale primary (dark text on it), a teal accent, the serif, and a logo.
    let output = kit(json!({
        "photos": [photo("chelsea.jpg"), photo("astronaut.jpg")],
        "details": {
            "price": "Offers over $1.2M", "address": "7 Linden Court, Ashby, MA",
            "headline": "Quiet brick Tudor on a leafy close", "beds": 4, "baths": 3,
            "agent_name": "Priya Natarajan", "brokerage": "Linden & Co.",
        },
        "params": {"brand": {"primary": "#F4E1D2", "accent": "#0B6E6E", "font": "garamond", "logo_url": logo()}},
    }))
    .await;
    let pdf = save("blush-garamond", &output);
    check_pdf(&pdf, (612.0, 792.0));
    let fonts = poppler("pdffonts", &[pdf.to_str().unwrap()]);
    assert!(fonts.contains("EBGaramond"), "{fonts}");
    assert_eq!(output.result["brand"]["text_on_primary"], "#1a1c20");

    // Only a price: the rest is left out, never "null".
    let sparse = kit(json!({"photos": [photo("rocket.jpg")], "details": {"price": 389000}})).await;
    save("sparse", &sparse);
    for (name, text) in sparse.result["captions"].as_object().unwrap() {
        let text = text.as_str().unwrap();
        assert!(!text.contains("null") && !text.contains("None"), "{name}: {text}");
    }
    assert_eq!(sparse.result["captions"]["story_line"], "Just listed at $389,000");
    assert_eq!(sparse.result["flyer"]["photos"].as_array().unwrap().len(), 1);
}
