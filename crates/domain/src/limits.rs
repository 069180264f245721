//! The limits of the request bodies, each stated once: the recipes check requests against these
//! constants, and the schemas derived from the request types (the OpenAPI document, the
//! connector's tool schemas) publish the same constants through the functions below.

/// Longest free-text listing detail (address, headline, agent's name...), characters.
pub const DETAIL_MAX_CHARS: usize = 120;
/// Longest listing description, characters.
pub const DESCRIPTION_MAX_CHARS: usize = 4000;
/// Most listing features.
pub const FEATURES_MAX: usize = 20;
/// Longest listing feature, characters.
pub const FEATURE_MAX_CHARS: usize = 80;
/// Longest licence number, characters.
pub const LICENSE_MAX_CHARS: usize = 60;
/// Earliest year built accepted.
pub const YEAR_BUILT_MIN: i64 = 1600;
/// Latest year built accepted.
pub const YEAR_BUILT_MAX: i64 = 2100;
/// Most bedrooms, and most bathrooms.
pub const ROOMS_MAX: f64 = 100.0;
/// Largest living area, square feet.
pub const SQUARE_FEET_MAX: f64 = 10_000_000.0;
/// Highest price, dollars.
pub const PRICE_MAX_USD: f64 = 1e12;
/// Largest lot, acres.
pub const LOT_ACRES_MAX: f64 = 1e6;
/// Longest caption of a listing photo, characters.
pub const CAPTION_MAX_CHARS: usize = 80;
/// Longest listing-enhance guidance (`notes` and `prompt` together), characters.
pub const NOTES_MAX_CHARS: usize = 2000;
/// Shortest reel, seconds.
pub const REEL_MIN_SECS: f64 = 6.0;
/// Longest reel, seconds.
pub const REEL_MAX_SECS: f64 = 30.0;
/// Shortest MLS remarks limit a kit accepts, characters.
pub const MLS_REMARKS_MIN: i64 = 100;
/// Longest MLS remarks limit a kit accepts, characters.
pub const MLS_REMARKS_MAX: i64 = 5000;
/// Fewest boundary points of a traced parcel.
pub const TRACE_POINTS_MIN: usize = 3;
/// Most boundary points of a traced parcel.
pub const TRACE_POINTS_MAX: usize = 1000;
/// Largest absolute longitude, degrees.
pub const LONGITUDE_MAX: f64 = 180.0;
/// Smallest tile pixel density (ordinary tiles).
pub const TILE_SCALE_MIN: f64 = 1.0;
/// Most photos a reel takes.
pub const REEL_MAX_PHOTOS: usize = 3;
/// Most photos a listing kit takes.
pub const KIT_MAX_PHOTOS: usize = 10;
/// Web-mercator's latitude limit, degrees.
pub const MERCATOR_MAX_LATITUDE: f64 = 85.051_128_78;
/// Finest web-mercator zoom.
pub const ZOOM_MAX: f64 = 23.0;
/// Coarsest planar scale, metres per pixel (a whole county on a small image).
pub const METERS_PER_PIXEL_MAX: f64 = 1000.0;
/// Largest tile pixel density (2 for @2x tiles).
pub const TILE_SCALE_MAX: f64 = 4.0;
/// Longest accepted prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 10_000;
/// Longest accepted http(s) URL.
pub const MAX_URL_CHARS: usize = 4_096;
/// Longest accepted `data:` URI (about 6 MB of base64, 4.5 MB of media).
pub const MAX_DATA_URI_CHARS: usize = 6 * 1024 * 1024;
/// A brand colour, `#RRGGBB`.
pub const COLOUR_PATTERN: &str = "^#[0-9A-Fa-f]{6}$";

/// Schemas of the limited fields, built from the constants above. Each is a marker type for
/// `#[schema(value_type = Marker, inline)]` (or `Option<Marker>`): attributes take only literals,
/// and a field's own doc comment stays its description.
#[cfg(feature = "openapi")]
pub mod schema {
    use super::*;
    use utoipa::openapi::schema::{AnyOfBuilder, ArrayBuilder, ObjectBuilder, OneOfBuilder, Type};
    use utoipa::openapi::{RefOr, Schema};

    /// Declares a marker type whose schema is the expression given.
    macro_rules! marker {
        ($(#[$doc:meta])* $name:ident => $schema:expr) => {
            $(#[$doc])*
            pub struct $name;

            impl utoipa::PartialSchema for $name {
                fn schema() -> RefOr<Schema> {
                    $schema.into()
                }
            }

            impl utoipa::ToSchema for $name {}
        };
    }

    fn text(max: usize) -> ObjectBuilder {
        ObjectBuilder::new().schema_type(Type::String).max_length(Some(max))
    }

    fn number(min: f64, max: f64) -> ObjectBuilder {
        ObjectBuilder::new().schema_type(Type::Number).minimum(Some(min)).maximum(Some(max))
    }

    /// A host the URL parser accepts: a dotted-quad IPv4 address, or names whose last label starts
    /// with a letter (a last label of digits, or `0x…`, makes the parser read an IPv4 address).
    /// Labels never have `-` in both their third and fourth places (the `xn--` of punycode, which
    /// the URL parser refuses unless it decodes; see `url_host::has_reserved_label`).
    pub(crate) const HOST: &str = "(((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|(([A-Za-z0-9-]{1,2}|[A-Za-z0-9-]{2}[A-Za-z0-9][A-Za-z0-9-]*|[A-Za-z0-9-]{2}-([A-Za-z0-9][A-Za-z0-9-]*)?)\\.)*([A-Za-z][A-Za-z0-9-]?|[A-Za-z][A-Za-z0-9-][A-Za-z0-9][A-Za-z0-9-]*|[A-Za-z][A-Za-z0-9-]-([A-Za-z0-9][A-Za-z0-9-]*)?))";
    /// A port in 0..=65535, as the URL parser accepts it.
    pub(crate) const PORT: &str = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";

    marker!(
        /// An input as the validator accepts it: an absolute http(s) URL or a base64 `data:` URI.
        InputUrl => AnyOfBuilder::new()
            .item(text(MAX_URL_CHARS).pattern(Some(format!("^https?://{HOST}(:{PORT})?(/[^\\s]*)?$"))))
            .item(text(MAX_DATA_URI_CHARS).pattern(Some("^data:[^,\\s]*;base64,[A-Za-z0-9+/=\\s]*$")))
    );
    marker!(
        /// A webhook receiver: an absolute http(s) URL.
        WebhookUrl => text(MAX_URL_CHARS).pattern(Some(format!("^https?://{HOST}(:{PORT})?(/[^\\s]*)?$")))
    );
    marker!(
        /// A prompt: something besides white space (it is trimmed before use).
        Prompt => text(MAX_PROMPT_CHARS).pattern(Some("\\S"))
    );
    marker!(
        /// A free-text listing detail.
        DetailText => text(DETAIL_MAX_CHARS)
    );
    marker!(
        /// The listing description.
        Description => text(DESCRIPTION_MAX_CHARS)
    );
    marker!(
        /// A licence number.
        LicenseNumber => text(LICENSE_MAX_CHARS)
    );
    marker!(
        /// An email address.
        Email => text(DETAIL_MAX_CHARS).pattern(Some(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$"))
    );
    marker!(
        /// Bedrooms or bathrooms.
        Rooms => number(0.0, ROOMS_MAX)
    );
    marker!(
        /// A living area, square feet.
        SquareFeet => number(0.0, SQUARE_FEET_MAX)
    );
    marker!(
        /// A year built.
        YearBuilt => ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(YEAR_BUILT_MIN)).maximum(Some(YEAR_BUILT_MAX))
    );
    marker!(
        /// Listing features as short phrases.
        Features => ArrayBuilder::new().max_items(Some(FEATURES_MAX)).items(text(FEATURE_MAX_CHARS))
    );
    marker!(
        /// A dollar amount: a number or text as written.
        Price => OneOfBuilder::new()
            .item(number(0.0, PRICE_MAX_USD))
            .item(text(DETAIL_MAX_CHARS))
    );
    marker!(
        /// A lot size: a number of acres or text as written.
        LotSize => OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Number).exclusive_minimum(Some(0.0)).maximum(Some(LOT_ACRES_MAX)))
            .item(text(DETAIL_MAX_CHARS))
    );
    marker!(
        /// A brand colour, `#RRGGBB`.
        Colour => ObjectBuilder::new().schema_type(Type::String).pattern(Some(COLOUR_PATTERN))
    );
    marker!(
        /// A reel's length, seconds.
        ReelSeconds => number(REEL_MIN_SECS, REEL_MAX_SECS)
    );
    marker!(
        /// A kit's MLS remarks limit, characters.
        MlsRemarksMax => ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(MLS_REMARKS_MIN)).maximum(Some(MLS_REMARKS_MAX))
    );
    marker!(
        /// Listing-enhance guidance.
        Notes => text(NOTES_MAX_CHARS)
    );
    marker!(
        /// Ground metres per pixel.
        MetersPerPixel => ObjectBuilder::new().schema_type(Type::Number).exclusive_minimum(Some(0.0)).maximum(Some(METERS_PER_PIXEL_MAX))
    );
    marker!(
        /// A latitude in web-mercator's range, degrees.
        Latitude => number(-MERCATOR_MAX_LATITUDE, MERCATOR_MAX_LATITUDE)
    );
    marker!(
        /// A longitude, degrees.
        Longitude => number(-LONGITUDE_MAX, LONGITUDE_MAX)
    );
    marker!(
        /// A web-mercator zoom.
        Zoom => number(0.0, ZOOM_MAX)
    );
    marker!(
        /// A tile pixel density.
        TileScale => number(TILE_SCALE_MIN, TILE_SCALE_MAX)
    );
    marker!(
        /// A reel's photos.
        ReelPhotos => ArrayBuilder::new()
            .items(photo(false))
            .min_items(Some(1))
            .max_items(Some(REEL_MAX_PHOTOS))
    );
    marker!(
        /// A kit's photos.
        KitPhotos => ArrayBuilder::new()
            .items(photo(true))
            .min_items(Some(1))
            .max_items(Some(KIT_MAX_PHOTOS))
    );
    marker!(
        /// A traced parcel's boundary points.
        TracePoints => ArrayBuilder::new()
            .items(pixel_point())
            .min_items(Some(TRACE_POINTS_MIN))
            .max_items(Some(TRACE_POINTS_MAX))
    );

    /// A photo: a URL, or an object with `url`, `caption` and, where allowed, `staged`.
    pub(crate) fn photo(staged_allowed: bool) -> RefOr<Schema> {
        use utoipa::openapi::schema::AdditionalProperties;
        let uri = <InputUrl as utoipa::PartialSchema>::schema;
        let mut object = ObjectBuilder::new().property("url", uri()).property("caption", text(CAPTION_MAX_CHARS));
        if staged_allowed {
            object = object.property("staged", ObjectBuilder::new().schema_type(Type::Boolean));
        }
        let description = if staged_allowed {
            "A photo URL, or {\"url\": .., \"caption\": .., \"staged\": ..}"
        } else {
            "A photo URL, or {\"url\": .., \"caption\": ..}"
        };
        OneOfBuilder::new()
            .item(uri())
            .item(object.required("url").additional_properties(Some(AdditionalProperties::FreeForm(false))))
            .description(Some(description))
            .into()
    }

    /// A point in image pixels: `[x, y]` or `{"x": .., "y": ..}`.
    pub(crate) fn pixel_point() -> RefOr<Schema> {
        use utoipa::openapi::schema::AdditionalProperties;
        let number = || ObjectBuilder::new().schema_type(Type::Number);
        OneOfBuilder::new()
            .item(ArrayBuilder::new().items(number()).min_items(Some(2)).max_items(Some(2)))
            .item(
                ObjectBuilder::new()
                    .property("x", number())
                    .property("y", number())
                    .required("x")
                    .required("y")
                    .additional_properties(Some(AdditionalProperties::FreeForm(false))),
            )
            .description(Some("A point in image pixels: [x, y] or {\"x\": .., \"y\": ..}"))
            .into()
    }
}

#[cfg(all(test, feature = "openapi"))]
mod tests {
    use super::schema::{HOST, PORT};
    use crate::validation::check_input_url;
    use proptest::prelude::*;

    proptest! {
        /// Every http(s) URL the published schema allows, the validator accepts.
        #[test]
        fn urls_the_schema_allows_are_accepted(
            url in proptest::string::string_regex(&format!("https?://{HOST}(:{PORT})?(/[!-~]{{0,12}})?")).unwrap()
        ) {
            prop_assert!(check_input_url(&url).is_ok(), "{url}");
        }
    }
}
