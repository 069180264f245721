//! listing-kit: listing photos and details to a brand-locked marketing kit an agent prints and
//! posts as it is: a press-ready flyer (PDF with trim and bleed, and a PNG of it), a square and a
//! portrait social post, a story, and captions for the MLS, portals, a website and social media.
//!
//! Every text the client gives and every text written here passes the Fair Housing check first;
//! each piece is one SVG layout rendered both to PNG and, for print, to PDF; every piece uses the
//! same colours, logo and typefaces, with text colours chosen for contrast.

pub mod brand;
pub mod canvas;
pub mod captions;
pub mod fair_housing;
pub mod photos;
pub mod pieces;
pub mod render;

use crate::listing::Listing;
use crate::{blocking, RecipeError, RecipeOutput};
use brand::{BrandSpec, Palette};
use captions::{Captions, STAGED_DISCLOSURE};
use domain::limits::{CAPTION_MAX_CHARS, MLS_REMARKS_MAX, MLS_REMARKS_MIN};
use domain::listing_kit::{KitFont, ListingKitRequest, Paper, KIT_MAX_PHOTOS};
use domain::validation::check_input_url;
use domain::ValidationError;
use engines::{Engines, OutputFile};
use fair_housing::{Finding, Policy};
use pieces::{Content, Design, Logo, BLEED_PT};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// MLS remarks limit when none is asked for, characters.
const DEFAULT_MLS_REMARKS: usize = 1000;
/// The flyer's PNG: the trim at 150 pixels per inch.
const FLYER_PNG_PPI: f64 = 150.0;
/// Longest side of the logo as placed.
const LOGO_SIDE: u32 = 1200;

/// One checked photo.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KitPhotoJob {
    /// The photo's URL.
    pub url: String,
    /// Its caption, checked.
    pub caption: Option<String>,
    /// Virtually staged.
    pub staged: bool,
}

/// A checked listing-kit request: the client's texts already rewritten where the Fair Housing
/// check flagged them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListingKitJob {
    /// 1 to 10 photos, the hero first.
    pub photos: Vec<KitPhotoJob>,
    /// The details, formatted and checked.
    pub listing: Listing,
    /// The brand.
    pub brand: BrandSpec,
    /// The flyer's paper.
    pub paper: Paper,
    /// Longest MLS remarks.
    pub mls_remarks_max: usize,
    /// The deployment's Fair Housing policy.
    pub policy: Policy,
    /// What the check changed in the client's texts.
    pub findings: Vec<Finding>,
}

/// Checks a request under `policy`; the error names the field.
pub fn prepare(request: ListingKitRequest, policy: Policy) -> Result<ListingKitJob, ValidationError> {
    let count = request.photos.len();
    if count == 0 || count > KIT_MAX_PHOTOS {
        return Err(ValidationError::new("photos", format!("give 1 to {KIT_MAX_PHOTOS} photos (got {count})")));
    }
    let mut findings = Vec::new();
    let photos = request
        .photos
        .into_iter()
        .enumerate()
        .map(|(i, photo)| {
            let url = check_input_url(&photo.url).map_err(|m| ValidationError::new(format!("photos[{i}].url"), m))?;
            let caption = photo.caption.map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "));
            if caption.as_ref().is_some_and(|c| c.chars().count() > CAPTION_MAX_CHARS) {
                return Err(ValidationError::new(
                    format!("photos[{i}].caption"),
                    format!("at most {CAPTION_MAX_CHARS} characters"),
                ));
            }
            let caption = caption
                .map(|c| fair_housing::clean(&c, &format!("photos[{i}].caption"), policy, &mut findings))
                .filter(|c| !c.is_empty());
            Ok(KitPhotoJob { url, caption, staged: photo.staged })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut listing = Listing::from_details(&request.details).map_err(|(field, m)| ValidationError::new(field, m))?;
    check_listing(&mut listing, policy, &mut findings);
    if !listing.describes_property() {
        return Err(ValidationError::new(
            "details",
            "give at least one detail of the property (address, price, beds, baths, headline, description, ...)",
        ));
    }
    let params = request.params;
    let mls_remarks_max = match params.mls_remarks_max {
        None => DEFAULT_MLS_REMARKS,
        Some(n) if (MLS_REMARKS_MIN..=MLS_REMARKS_MAX).contains(&n) => n as usize,
        Some(_) => {
            return Err(ValidationError::new(
                "params.mls_remarks_max",
                format!("between {MLS_REMARKS_MIN} and {MLS_REMARKS_MAX} characters"),
            ))
        }
    };
    Ok(ListingKitJob {
        photos,
        listing,
        brand: BrandSpec::from_request(params.brand)?,
        paper: params.paper.unwrap_or_default(),
        mls_remarks_max,
        policy,
        findings,
    })
}

/// Runs the client's free texts through the Fair Housing check, in place.
fn check_listing(listing: &mut Listing, policy: Policy, findings: &mut Vec<Finding>) {
    let mut check = |text: &mut Option<String>, field: &str| {
        if let Some(value) = text.take() {
            let cleaned = fair_housing::clean(&value, &format!("details.{field}"), policy, findings);
            *text = (!cleaned.is_empty()).then_some(cleaned);
        }
    };
    check(&mut listing.headline, "headline");
    check(&mut listing.description, "description");
    check(&mut listing.open_house, "open_house");
    check(&mut listing.lot_size, "lot_size");
    let features = std::mem::take(&mut listing.features);
    listing.features = features
        .iter()
        .enumerate()
        .filter_map(|(i, feature)| {
            let cleaned = fair_housing::clean(feature, &format!("details.features[{i}]"), policy, findings);
            (!cleaned.is_empty()).then_some(cleaned)
        })
        .collect();
}

/// Fetches the photos and the logo, then lays out, renders and writes the kit. A photo or logo
/// that cannot be fetched or decoded is the client's input (HTTP 400), unbilled.
pub async fn run(engines: &Engines, job: &ListingKitJob) -> Result<RecipeOutput, RecipeError> {
    let unusable = |field: String| move |e: engines::FetchError| RecipeError::InvalidInput(format!("{field}: {e}"));
    // One photo is fetched and decoded at a time, so memory holds one at full size.
    let mut photos = photos::Photos::default();
    for (i, photo) in job.photos.iter().enumerate() {
        let field = format!("photos[{i}]");
        let bytes = engines.fetcher().fetch(&field, &photo.url).await.map_err(unusable(field))?;
        photos = blocking(move || photos.add(bytes).map(|()| photos)).await?;
    }
    let logo = match &job.brand.logo_url {
        Some(url) => {
            let field = "params.brand.logo_url".to_string();
            Some(engines.fetcher().fetch(&field, url).await.map_err(unusable(field))?)
        }
        None => None,
    };
    let job = job.clone();
    blocking(move || make(&job, photos, logo)).await
}

/// The CPU-bound part: lay out, render.
fn make(job: &ListingKitJob, mut photos: photos::Photos, logo: Option<Vec<u8>>) -> Result<RecipeOutput, RecipeError> {
    let logo = logo.map(|bytes| prepare_logo(&bytes)).transpose()?;
    let staged = job.photos.iter().any(|p| p.staged);
    let mut findings = job.findings.clone();
    let captions = checked_captions(job, staged, &mut findings);
    let content = content(&job.listing, &captions, staged);
    let palette = Palette::of(&job.brand);

    let flyer = pieces::flyer(job.paper, &content, &palette, logo.as_ref(), &mut photos, job.photos.len());
    let square = pieces::social(1080.0, 1080.0, &content, &palette, logo.as_ref(), &mut photos);
    let portrait = pieces::social(1080.0, 1350.0, &content, &palette, logo.as_ref(), &mut photos);
    let story = pieces::story(&content, &palette, logo.as_ref(), &mut photos);
    if let Some(failure) = photos.failure() {
        return Err(RecipeError::Failed(failure.to_string()));
    }

    let flyer_tree = render::parse(&flyer.svg)?;
    let title = job.listing.address.clone().unwrap_or_else(|| "Listing flyer".into());
    let pdf = render::pdf(&flyer_tree, BLEED_PT, &title)?;
    let (trim_w, trim_h) = pieces::trim_size(job.paper);
    let scale = FLYER_PNG_PPI / 72.0;
    let (png_w, png_h) = ((trim_w * scale).round() as u32, (trim_h * scale).round() as u32);
    let flyer_png = render::png(&flyer_tree, png_w, png_h, (BLEED_PT, BLEED_PT), scale)?;
    drop(flyer_tree);
    let mut files = vec![OutputFile::pdf(pdf), OutputFile::image(flyer_png, "png", png_w, png_h)];
    for design in [&square, &portrait, &story] {
        let tree = render::parse(&design.svg)?;
        let (w, h) = (design.width as u32, design.height as u32);
        files.push(OutputFile::image(render::png(&tree, w, h, (0.0, 0.0), 1.0)?, "png", w, h));
    }

    let piece = |index: usize| json!({ "$output": index });
    let mut notes = resolution_notes(&flyer);
    for (name, design) in [("square", &square), ("portrait", &portrait), ("story", &story)] {
        notes.extend(stretch_notes(name, design));
    }
    let result = json!({
        "flyer": {
            "pdf": piece(0),
            "png": piece(1),
            "paper": job.paper,
            "trim_inches": [trim_w / 72.0, trim_h / 72.0],
            "bleed_inches": BLEED_PT / 72.0,
            "page_inches": [(trim_w + 2.0 * BLEED_PT) / 72.0, (trim_h + 2.0 * BLEED_PT) / 72.0],
            "png_ppi": FLYER_PNG_PPI,
            "photos": flyer.photos,
        },
        "notes": notes,
        "social": {"square": piece(2), "portrait": piece(3)},
        "story": piece(4),
        "captions": captions,
        "fair_housing": {"findings": findings},
        "staged_disclosure": staged.then_some(STAGED_DISCLOSURE),
        "brand": brand_view(job, &palette),
        "layout": {
            "flyer": boxes(&flyer),
            "square": boxes(&square),
            "portrait": boxes(&portrait),
            "story": boxes(&story),
            "story_safe_zone": pieces::story_safe_zone(),
        },
    });
    Ok(RecipeOutput { files, result })
}

/// The captions, each through the Fair Housing check.
fn checked_captions(job: &ListingKitJob, staged: bool, findings: &mut Vec<Finding>) -> Captions {
    let mut written = captions::write(&job.listing, staged, job.mls_remarks_max);
    // The kit's own tags are fixed words and the client's town ("#BlacksburgVA"): a name, like
    // the address, so they are left as written.
    let own_tags = captions::hashtags(&job.listing).join(" ");
    for (name, text) in [
        ("mls_remarks", &mut written.mls_remarks),
        ("portal", &mut written.portal),
        ("website", &mut written.website),
        ("social", &mut written.social),
        ("story_line", &mut written.story_line),
    ] {
        // Names (the address, the agent, the brokerage) are the client's and are not rewritten: a
        // caption is checked with them masked.
        let names = [&job.listing.address, &job.listing.agent_name, &job.listing.brokerage];
        let masked =
            names.into_iter().flatten().fold(text.replace(&own_tags, ""), |t, name| t.replace(name.as_str(), "Name"));
        if !fair_housing::is_clean(&masked, job.policy) {
            // Paragraphs are checked one by one so that line breaks survive.
            let cleaned: Vec<String> = text
                .split('\n')
                .map(|p| {
                    if p == own_tags {
                        p.to_string()
                    } else {
                        fair_housing::clean(p, &format!("captions.{name}"), job.policy, findings)
                    }
                })
                .collect();
            *text = cleaned.join("\n");
        }
    }
    written
}

/// What the templates print, from the checked listing.
fn content(listing: &Listing, captions: &Captions, staged: bool) -> Content {
    let reach: Vec<&str> = [&listing.phone, &listing.email].into_iter().flatten().map(String::as_str).collect();
    Content {
        price: listing.price.clone(),
        facts: listing.facts.clone(),
        address: listing.address.clone(),
        headline: listing.headline.clone(),
        description: listing.description.clone(),
        features: listing.features.clone(),
        open_house: listing.open_house.clone(),
        agent_name: listing.agent_name.clone(),
        brokerage: listing.brokerage.clone(),
        reach: (!reach.is_empty()).then(|| reach.join(" | ")),
        license: listing.license_number.as_ref().map(|l| format!("License #{}", l.trim_start_matches('#'))),
        story_line: captions.story_line.clone(),
        disclosure: staged.then(|| STAGED_DISCLOSURE.to_string()),
    }
}

/// The logo decoded, reduced and re-encoded as PNG (transparency kept); client bytes are never
/// placed as they came.
fn prepare_logo(bytes: &[u8]) -> Result<Logo, RecipeError> {
    let image = media::codecs::decode_image(bytes).map_err(|e| {
        RecipeError::InvalidInput(format!("params.brand.logo_url: not a usable PNG or JPEG image ({e})"))
    })?;
    let image = if image.width().max(image.height()) > LOGO_SIDE {
        image.resize(LOGO_SIDE, LOGO_SIDE, image::imageops::FilterType::CatmullRom)
    } else {
        image
    };
    let aspect = f64::from(image.width()) / f64::from(image.height().max(1));
    let png = media::codecs::encode_png(&image).map_err(|e| RecipeError::Failed(format!("the logo: {e}")))?;
    Ok(Logo { png, aspect })
}

/// A note for each flyer photo printed below 300 ppi: it is placed as it is, never enlarged.
fn resolution_notes(flyer: &Design) -> Vec<String> {
    flyer
        .photos
        .iter()
        .filter_map(|p| {
            let ppi = p.ppi?;
            (ppi < pieces::PRINT_PPI - 0.5).then(|| {
                format!(
                    "photos[{}] prints at {} ppi on the flyer ({}x{} px for a {:.2}x{:.2} in slot); it is not \
                     enlarged, and a larger original prints sharper",
                    p.photo,
                    ppi.round(),
                    p.pixels[0],
                    p.pixels[1],
                    p.slot.width / 72.0,
                    p.slot.height / 72.0
                )
            })
        })
        .collect()
}

/// A note for each photo shown on a screen piece from fewer pixels than the piece has.
fn stretch_notes(piece: &str, design: &Design) -> Vec<String> {
    design
        .photos
        .iter()
        .filter(|p| f64::from(p.pixels[0]) + 0.5 < p.slot.width)
        .map(|p| {
            format!(
                "photos[{}] fills the {piece} from {}x{} px (shown at {:.0}x{:.0}); a larger original is sharper",
                p.photo, p.pixels[0], p.pixels[1], p.slot.width, p.slot.height
            )
        })
        .collect()
}

fn brand_view(job: &ListingKitJob, palette: &Palette) -> Value {
    let contrast: serde_json::Map<String, Value> = palette
        .pairs()
        .into_iter()
        .map(|(name, ratio)| (name.replace(' ', "_"), json!((ratio * 100.0).round() / 100.0)))
        .collect();
    json!({
        "primary": canvas::hex(job.brand.primary),
        "accent": canvas::hex(job.brand.accent),
        "text_on_primary": canvas::hex(palette.on_primary),
        "font": match job.brand.font { KitFont::Inter => "inter", KitFont::Garamond => "garamond" },
        "logo": job.brand.logo_url.is_some(),
        "contrast": contrast,
    })
}

/// Each text line's box on a piece, by role.
fn boxes(design: &Design) -> Value {
    json!({
        "width": design.width,
        "height": design.height,
        "text": design.text_boxes.iter().map(|(role, rect)| json!({"role": role, "box": rect})).collect::<Vec<_>>(),
    })
}
