//! Where outputs live: an `object_store` location (a local directory by default).

use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, PutPayload};
use std::sync::Arc;

/// Failure of the output store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No object under that path.
    #[error("no stored object at {0}")]
    NotFound(String),
    /// The store failed.
    #[error("output store failed: {0}")]
    Backend(String),
}

/// The store of task outputs; cheap to clone.
#[derive(Clone, Debug)]
pub struct OutputStore {
    inner: Arc<dyn ObjectStore>,
}

impl OutputStore {
    /// A store in the local directory `dir`, created when missing.
    pub fn local_dir(dir: &str) -> Result<OutputStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Backend(format!("{dir}: {e}")))?;
        let fs = LocalFileSystem::new_with_prefix(dir).map_err(|e| StoreError::Backend(e.to_string()))?;
        Ok(OutputStore { inner: Arc::new(fs) })
    }

    /// A store over any `object_store` backend.
    pub fn new(inner: Arc<dyn ObjectStore>) -> OutputStore {
        OutputStore { inner }
    }

    /// Writes `bytes` under `path` (such as `tasks/task_1/0.png`).
    pub async fn put(&self, path: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let path = Path::parse(path).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.inner.put(&path, PutPayload::from(bytes)).await.map_err(|e| StoreError::Backend(e.to_string()))?;
        Ok(())
    }

    /// Reads the object under `path`.
    pub async fn get(&self, path: &str) -> Result<Bytes, StoreError> {
        let parsed = Path::parse(path).map_err(|_| StoreError::NotFound(path.to_string()))?;
        match self.inner.get(&parsed).await {
            Ok(result) => result.bytes().await.map_err(|e| StoreError::Backend(e.to_string())),
            Err(object_store::Error::NotFound { .. }) => Err(StoreError::NotFound(path.to_string())),
            Err(e) => Err(StoreError::Backend(e.to_string())),
        }
    }
}
