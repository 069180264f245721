//! The engine catalog: every live engine id with its family, inputs, parameters and price rule.
//!
//! The built-in catalog (`data/catalog.json`) is compiled in; an operator may replace it with a
//! file of the same shape (`ENGINE_CATALOG_FILE`) to correct families, prices or parameters.

use domain::EngineSpec;
use serde::Deserialize;
use std::collections::BTreeMap;

const BUILTIN: &str = include_str!("../data/catalog.json");

/// Why a catalog could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be read.
    #[error("cannot read engine catalog {path}: {source}")]
    Read {
        /// File path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The JSON does not describe a catalog.
    #[error("engine catalog is not valid: {0}")]
    Invalid(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    engines: Vec<EngineSpec>,
    #[serde(default)]
    recipe_engines: Vec<EngineSpec>,
}

/// The live engines, keyed by id, and the engines only recipes use.
#[derive(Clone, Debug)]
pub struct Catalog {
    engines: BTreeMap<String, EngineSpec>,
    recipe_engines: BTreeMap<String, EngineSpec>,
}

impl Catalog {
    /// The catalog compiled into the binary.
    pub fn builtin() -> Catalog {
        // The built-in file is checked by this crate's tests, so it always parses.
        Self::parse(BUILTIN).unwrap_or_else(|e| panic!("built-in engine catalog is broken: {e}"))
    }

    /// Loads an operator's catalog file.
    pub fn from_file(path: &str) -> Result<Catalog, CatalogError> {
        let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Read { path: path.into(), source })?;
        Self::parse(&text)
    }

    /// Parses and checks catalog JSON.
    pub fn parse(json: &str) -> Result<Catalog, CatalogError> {
        let file: CatalogFile = serde_json::from_str(json).map_err(|e| CatalogError::Invalid(e.to_string()))?;
        let mut engines = BTreeMap::new();
        let mut recipe_engines = BTreeMap::new();
        let all =
            file.engines.into_iter().map(|s| (s, false)).chain(file.recipe_engines.into_iter().map(|s| (s, true)));
        for (spec, recipe_only) in all {
            spec.check().map_err(CatalogError::Invalid)?;
            let id = spec.id.clone();
            if engines.contains_key(&id) || recipe_engines.contains_key(&id) {
                return Err(CatalogError::Invalid(format!("engine {id} is listed twice")));
            }
            if recipe_only {
                recipe_engines.insert(id, spec)
            } else {
                engines.insert(id, spec)
            };
        }
        Ok(Catalog { engines, recipe_engines })
    }

    /// The public engine `id`, if live (what `model` may name).
    pub fn get(&self, id: &str) -> Option<&EngineSpec> {
        self.engines.get(id)
    }

    /// The engine `id` a recipe runs on, which clients cannot name directly.
    pub fn recipe_engine(&self, id: &str) -> Option<&EngineSpec> {
        self.recipe_engines.get(id)
    }

    /// Any engine, public or recipe-only (what a queued job may name).
    pub fn get_any(&self, id: &str) -> Option<&EngineSpec> {
        self.engines.get(id).or_else(|| self.recipe_engines.get(id))
    }

    /// Every live engine, ordered by id.
    pub fn engines(&self) -> impl Iterator<Item = &EngineSpec> {
        self.engines.values()
    }

    /// Number of live engines.
    pub fn len(&self) -> usize {
        self.engines.len()
    }

    /// Whether no engine is live.
    pub fn is_empty(&self) -> bool {
        self.engines.is_empty()
    }

    /// Runs engine `id` on `route` instead of the catalog's (`ENGINE_ROUTES`).
    pub fn set_route(&mut self, id: &str, route: domain::catalog::Route) -> Result<(), CatalogError> {
        let spec = self.engines.get_mut(id).or_else(|| self.recipe_engines.get_mut(id)).ok_or_else(|| {
            CatalogError::Invalid(format!("a route names engine {id:?}, which the catalog does not have"))
        })?;
        if spec.family == domain::Family::Recipe {
            return Err(CatalogError::Invalid(format!("{id} is a recipe; recipes run here, not at a provider")));
        }
        spec.route = route;
        Ok(())
    }

    /// Every engine with its route, public and recipe-only.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &domain::catalog::Route)> {
        self.engines.values().chain(self.recipe_engines.values()).map(|spec| (spec.id.as_str(), &spec.route))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::Family;

    /// The 41 engine ids of the interface contract, in its order.
    pub const CONTRACT_IDS: [&str; 41] = [
        "alpha-ultra",
        "beta-image",
        "gamma-image",
        "delta-4",
        "alpha-schnell",
        "alpha-dev",
        "epsilon-v3",
        "zeta",
        "zeta-max",
        "delta-edit",
        "beta-edit",
        "gamma-image-edit",
        "inpaint",
        "bg-remove",
        "upscale-clarity",
        "upscale-epsilon",
        "eta-lite-i2v",
        "theta-i2v",
        "eta-pro-i2v",
        "iota-i2v",
        "kappa-i2v",
        "lambda-i2v",
        "lambda-t2v",
        "lambda-fast",
        "theta-t2v",
        "eta-t2v",
        "mu-video",
        "video-upscale",
        "lipsync",
        "tts",
        "nu-gen45",
        "nu-aleph",
        "hub-lambda31",
        "hub-theta3",
        "hub-beta-omni",
        "hub-nano-pro",
        "hub-delta5",
        "hub-gamma-image2",
        "xi-t2v",
        "alpha2",
        "omicron2",
    ];

    #[test]
    fn builtin_catalog_has_exactly_the_contract_ids() {
        let catalog = Catalog::builtin();
        let mut ids: Vec<&str> = catalog.engines().map(|e| e.id.as_str()).collect();
        let mut expected = CONTRACT_IDS.to_vec();
        ids.sort_unstable();
        expected.sort_unstable();
        assert_eq!(ids, expected);
    }

    #[test]
    fn every_family_is_served() {
        let catalog = Catalog::builtin();
        for family in Family::PUBLIC {
            assert!(catalog.engines().any(|e| e.family == family), "{family:?}");
        }
        let enhance = catalog.recipe_engine("listing-enhance").expect("listing-enhance recipe engine");
        assert_eq!(enhance.family, Family::Recipe);
        assert!(catalog.get("listing-enhance").is_none(), "recipe engines are not public models");
    }

    #[test]
    fn duplicates_and_bad_rules_are_refused() {
        let one = r#"{"id":"x","family":"music","title":"t","inputs":{"prompt":"required"},
            "params":{"duration":{"type":"integer","min":1,"max":5,"default":2}},"price":{"per":"second","usd":"0.01"}}"#;
        assert!(Catalog::parse(&format!(r#"{{"engines":[{one}]}}"#)).is_ok());
        assert!(Catalog::parse(&format!(r#"{{"engines":[{one},{one}]}}"#)).is_err());
        let no_duration = r#"{"engines":[{"id":"x","family":"music","title":"t","inputs":{},"price":{"per":"second","usd":"0.01"}}]}"#;
        assert!(Catalog::parse(no_duration).is_err());
    }
}
