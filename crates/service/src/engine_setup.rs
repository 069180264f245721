//! How a process assembles its engines: the catalog with its routes, the providers, and the
//! fetcher of the files providers make. The service's processes build them from their
//! configuration ([`crate::AppConfig`]); a job's process from the [`EngineSettings`] its parent
//! sends with each job, which carry a provider's credentials only for work that calls one.

use domain::catalog::Route;
use engines::{Catalog, Engines, FetchPolicy, InputFetcher};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Engines could not be built from their settings.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EngineSetupError(String);

/// What engines are built from, besides the fetcher of inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EngineSettings {
    /// A catalog file replacing the built-in catalog.
    pub catalog_file: Option<String>,
    /// Routes overriding the catalog's, by engine id.
    pub routes: Vec<(String, Route)>,
    /// The providers and their credentials.
    pub providers: providers::Settings,
    /// Whether files providers make may be fetched from private addresses.
    pub allow_private: bool,
}

impl EngineSettings {
    /// The catalog with the routes applied.
    pub fn catalog(&self) -> Result<Catalog, EngineSetupError> {
        let mut catalog = match &self.catalog_file {
            Some(path) => Catalog::from_file(path).map_err(|e| EngineSetupError(e.to_string()))?,
            None => Catalog::builtin(),
        };
        for (id, route) in &self.routes {
            catalog.set_route(id, route.clone()).map_err(|e| EngineSetupError(format!("ENGINE_ROUTES: {e}")))?;
        }
        Ok(catalog)
    }

    /// Whether any provider is configured (the work may then call one).
    pub fn calls_providers(&self) -> bool {
        self.providers.fal.is_some() || self.providers.replicate.is_some()
    }

    /// These settings with no provider: for work that calls none, so it never holds their keys.
    pub fn without_providers(&self) -> EngineSettings {
        EngineSettings {
            providers: providers::Settings { fal: None, replicate: None, ..self.providers.clone() },
            ..self.clone()
        }
    }

    /// Engines of these settings whose inputs come through `inputs`.
    pub fn build(&self, inputs: InputFetcher) -> Result<Engines, EngineSetupError> {
        let setup = |e: &dyn std::fmt::Display| EngineSetupError(e.to_string());
        if !self.calls_providers() {
            // No provider to call, so no HTTP client to build: building one loads the system's
            // trust store, which costs a job's process more than a short job itself.
            return Ok(Engines::new(self.catalog()?, inputs));
        }
        let upstream = providers::Providers::new(self.providers.clone()).map_err(|e| setup(&e))?;
        // Provider files on other hosts (fal's and Replicate's media hosts) come through the same
        // SSRF-safe fetcher as inputs, with limits fit for generated video.
        let provider_files = InputFetcher::new(FetchPolicy {
            max_bytes: engines::UPSTREAM_FILE_MAX_BYTES,
            timeout: Duration::from_secs(300),
            allow_private: self.allow_private,
            trusted_prefix: None,
        })
        .map_err(|e| setup(&e))?;
        Ok(Engines::new(self.catalog()?, inputs).with_upstream(upstream, provider_files))
    }
}
