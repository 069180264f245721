//! Where outputs live: an `object_store` location, a local directory by default or an
//! S3-compatible bucket by configuration.

use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, PutPayload};
use std::sync::Arc;

/// An object opened for reading: its size and its bytes as they stream.
pub struct StoredObject {
    /// Its size, bytes.
    pub size: u64,
    /// Its bytes, in the backend's chunks.
    pub chunks: futures::stream::BoxStream<'static, Result<Bytes, StoreError>>,
}

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

/// Size of each part of a streamed write: what a [`StoreWriter`] buffers before it uploads.
pub const STREAMED_PART_BYTES: usize = 8 << 20;
/// Parts of one streamed write uploading at once.
const STREAMED_PARTS_IN_FLIGHT: usize = 2;

/// An object being written in parts (see [`OutputStore::writer`]).
#[derive(Debug)]
pub struct StoreWriter {
    inner: object_store::buffered::BufWriter,
}

impl StoreWriter {
    /// Appends `bytes`; waits while earlier parts are still uploading.
    pub async fn write(&mut self, bytes: Bytes) -> Result<(), StoreError> {
        self.inner.put(bytes).await.map_err(|e| StoreError::Backend(e.to_string()))
    }

    /// Completes the object.
    pub async fn finish(mut self) -> Result<(), StoreError> {
        use tokio::io::AsyncWriteExt;
        self.inner.shutdown().await.map_err(|e| StoreError::Backend(e.to_string()))
    }

    /// Gives the object up, removing the parts uploaded so far.
    pub async fn abort(mut self) {
        // An abort that fails leaves parts the store expires by itself; there is no object either way.
        let _ = self.inner.abort().await;
    }
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

    /// A store at `url`: `s3://BUCKET[/PREFIX]` (S3 or any S3-compatible service, configured by the
    /// usual `AWS_*` variables such as `AWS_ENDPOINT`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP`), or `file:///DIR`.
    pub fn from_url(url: &str) -> Result<OutputStore, StoreError> {
        let parsed = url::Url::parse(url).map_err(|e| StoreError::Backend(format!("output store URL {url:?}: {e}")))?;
        match parsed.scheme() {
            "file" => Self::local_dir(parsed.path()),
            "s3" | "s3a" => {
                let bucket = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url)
                    .build()
                    .map_err(|e| StoreError::Backend(format!("output store {url}: {e}")))?;
                let prefix = parsed.path().trim_matches('/');
                if prefix.is_empty() {
                    Ok(OutputStore { inner: Arc::new(bucket) })
                } else {
                    Ok(OutputStore { inner: Arc::new(object_store::prefix::PrefixStore::new(bucket, prefix)) })
                }
            }
            other => {
                Err(StoreError::Backend(format!("unsupported output store scheme {other:?}; use s3:// or file://")))
            }
        }
    }

    /// A store over any `object_store` backend.
    pub fn new(inner: Arc<dyn ObjectStore>) -> OutputStore {
        OutputStore { inner }
    }

    /// Writes `bytes` under `path` (such as `tasks/task_1/0.png`).
    pub async fn put(&self, path: &str, bytes: impl Into<bytes::Bytes>) -> Result<(), StoreError> {
        let path = Path::parse(path).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.inner.put(&path, PutPayload::from(bytes.into())).await.map_err(|e| StoreError::Backend(e.to_string()))?;
        Ok(())
    }

    /// A streaming write of the object at `path`: bytes are uploaded as they come, in parts once
    /// they pass [`STREAMED_PART_BYTES`], so an object of any size is never held whole. The object
    /// appears when [`StoreWriter::finish`] succeeds; a writer dropped unfinished leaves none.
    pub fn writer(&self, path: &str) -> Result<StoreWriter, StoreError> {
        let path = Path::parse(path).map_err(|e| StoreError::Backend(e.to_string()))?;
        let inner = object_store::buffered::BufWriter::with_capacity(self.inner.clone(), path, STREAMED_PART_BYTES)
            .with_max_concurrency(STREAMED_PARTS_IN_FLIGHT);
        Ok(StoreWriter { inner })
    }

    /// Removes the object at `path`; a missing one is not an error.
    pub async fn delete(&self, path: &str) -> Result<(), StoreError> {
        let path = Path::parse(path).map_err(|e| StoreError::Backend(e.to_string()))?;
        match self.inner.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::Backend(e.to_string())),
        }
    }

    /// Removes every object whose path starts with the folder `prefix` (such as `inputs/task_1`);
    /// the number removed.
    pub async fn delete_folder(&self, prefix: &str) -> Result<usize, StoreError> {
        use futures::TryStreamExt;
        let prefix = Path::parse(prefix).map_err(|e| StoreError::Backend(e.to_string()))?;
        let objects: Vec<_> = self
            .inner
            .list(Some(&prefix))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        for location in &objects {
            match self.inner.delete(location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(StoreError::Backend(e.to_string())),
            }
        }
        Ok(objects.len())
    }

    /// Opens the object under `path` to be read as it streams: its size, and its bytes in the
    /// chunks the backend delivers, so a reader never holds the whole object.
    pub async fn open(&self, path: &str) -> Result<StoredObject, StoreError> {
        use futures::StreamExt;
        let parsed = Path::parse(path).map_err(|_| StoreError::NotFound(path.to_string()))?;
        match self.inner.get(&parsed).await {
            Ok(result) => {
                let size = result.meta.size;
                let chunks = result.into_stream().map(|chunk| chunk.map_err(|e| StoreError::Backend(e.to_string())));
                Ok(StoredObject { size, chunks: chunks.boxed() })
            }
            Err(object_store::Error::NotFound { .. }) => Err(StoreError::NotFound(path.to_string())),
            Err(e) => Err(StoreError::Backend(e.to_string())),
        }
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
