//! One layout, two renderings: a piece's SVG is parsed once (with the shipped fonts) and drawn
//! to PNG with resvg, and, for print, converted to a PDF page with svg2pdf, whose page boxes
//! say where the trim and the bleed are. Text stays text in the PDF, with its fonts embedded.

use crate::RecipeError;
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, TextStr};
use resvg::tiny_skia::{Pixmap, Transform};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use svg2pdf::usvg::{fontdb, Options, Tree};

fn failed(what: &str, e: impl std::fmt::Display) -> RecipeError {
    RecipeError::Failed(format!("{what}: {e}"))
}

/// The shipped fonts, loaded once.
fn fonts() -> Arc<fontdb::Database> {
    static FONTS: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = fontdb::Database::new();
            for bytes in media::text::FONT_FILES {
                db.load_font_data(bytes.to_vec());
            }
            Arc::new(db)
        })
        .clone()
}

/// Parses a piece's SVG.
pub fn parse(svg: &str) -> Result<Tree, RecipeError> {
    let options = Options { fontdb: fonts(), font_family: "Inter".into(), ..Options::default() };
    Tree::from_str(svg, &options).map_err(|e| failed("laying out a piece", e))
}

/// Draws `tree` to a `width` x `height` PNG, showing the part of it from `origin` on at `scale`
/// pixels per unit.
pub fn png(tree: &Tree, width: u32, height: u32, origin: (f64, f64), scale: f64) -> Result<Vec<u8>, RecipeError> {
    let mut pixmap =
        Pixmap::new(width, height).ok_or_else(|| failed("drawing a piece", format!("no {width}x{height} canvas")))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    let s = scale as f32;
    let transform = Transform::from_row(s, 0.0, 0.0, s, -(origin.0 as f32) * s, -(origin.1 as f32) * s);
    resvg::render(tree, transform, &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| failed("encoding a piece", e))
}

/// A one-page PDF of `tree` (in points): the page is the whole tree, the bleed box the same, and
/// the trim box `bleed` in from every edge.
pub fn pdf(tree: &Tree, bleed: f64, title: &str) -> Result<Vec<u8>, RecipeError> {
    let (chunk, svg_ref) =
        svg2pdf::to_chunk(tree, svg2pdf::ConversionOptions::default()).map_err(|e| failed("writing the PDF", e))?;
    let mut next = Ref::new(1);
    let catalog = next.bump();
    let pages = next.bump();
    let page_ref = next.bump();
    let contents = next.bump();
    let info = next.bump();
    let mut renumbered = HashMap::new();
    let chunk = chunk.renumber(|old| *renumbered.entry(old).or_insert_with(|| next.bump()));
    let svg_ref = renumbered.get(&svg_ref).copied().ok_or_else(|| failed("writing the PDF", "lost the page"))?;

    let (w, h) = (tree.size().width(), tree.size().height());
    let b = bleed as f32;
    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(pages);
    pdf.pages(pages).kids([page_ref]).count(1);
    let mut page = pdf.page(page_ref);
    page.media_box(Rect::new(0.0, 0.0, w, h));
    page.bleed_box(Rect::new(0.0, 0.0, w, h));
    page.trim_box(Rect::new(b, b, w - b, h - b));
    page.parent(pages);
    page.contents(contents);
    page.resources().x_objects().pair(Name(b"Piece"), svg_ref);
    page.finish();
    let mut content = Content::new();
    content.transform([w, 0.0, 0.0, h, 0.0, 0.0]).x_object(Name(b"Piece"));
    pdf.stream(contents, &content.finish());
    pdf.extend(&chunk);
    pdf.document_info(info).title(TextStr(title)).producer(TextStr("listing-kit"));
    Ok(pdf.finish())
}
