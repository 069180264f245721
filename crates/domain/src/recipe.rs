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
    /// Refuses any field given a value that `recipe` does not use (named in `used`); empty
    /// strings, lists and objects count as not given.
    pub fn only(&self, recipe: &str, used: &[&str]) -> Result<(), ValidationError> {
        let given = [
            ("prompt", self.prompt.as_ref().is_some_and(|p| !p.is_empty())),
            ("image_url", self.image_url.is_some()),
            ("params", self.params.as_ref().is_some_and(|p| !p.is_empty())),
            ("photos", self.photos.as_ref().is_some_and(|p| !p.is_empty())),
            ("details", self.details.as_ref().is_some_and(|d| !d.is_empty())),
            ("points", self.points.as_ref().is_some_and(|p| !p.is_empty())),
            ("notes", self.notes.as_ref().is_some_and(|n| !n.is_empty())),
        ];
        match given.iter().find(|(name, set)| *set && !used.contains(name)) {
            Some((name, _)) => Err(ValidationError::new(*name, format!("not used by the {recipe} recipe"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unused_fields_are_named_and_empty_ones_ignored() {
        let request: RecipeRequest =
            serde_json::from_value(json!({"image_url": "https://e.com/a.jpg", "photos": [], "points": [[1, 2]]}))
                .unwrap();
        assert_eq!(request.only("listing-enhance", &["image_url"]).unwrap_err().field, "points");
        assert!(request.only("lot-trace", &["image_url", "points"]).is_ok());
    }
}
