//! The request body shared by the recipe endpoints, and the check that a recipe gets only the
//! fields it uses.

use crate::validation::ValidationError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Body of the recipe endpoints; which fields each recipe needs is checked by the recipe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RecipeRequest {
    /// Text prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Input image (absolute http(s) URL or `data:` URI).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(format = "uri"))]
    pub image_url: Option<String>,
    /// Recipe-specific parameters.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub params: Option<Map<String, Value>>,
    /// Input photos (listing-kit, reel).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<Object>>))]
    pub photos: Option<Vec<Value>>,
    /// Listing details (listing-kit, reel).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub details: Option<Map<String, Value>>,
    /// Boundary points in image pixels (lot-trace).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<Object>>))]
    pub points: Option<Vec<Value>>,
    /// Extra edit guidance.
    #[serde(default)]
    pub notes: Option<String>,
}

impl RecipeRequest {
    /// Refuses any field set in the request that `recipe` does not use (named in `used`).
    pub fn only(&self, recipe: &str, used: &[&str]) -> Result<(), ValidationError> {
        let given = [
            ("prompt", self.prompt.is_some()),
            ("image_url", self.image_url.is_some()),
            ("params", self.params.is_some()),
            ("photos", self.photos.is_some()),
            ("details", self.details.is_some()),
            ("points", self.points.is_some()),
            ("notes", self.notes.is_some()),
        ];
        match given.iter().find(|(name, set)| *set && !used.contains(name)) {
            Some((name, _)) => Err(ValidationError::new(*name, format!("not used by the {recipe} recipe"))),
            None => Ok(()),
        }
    }
}
