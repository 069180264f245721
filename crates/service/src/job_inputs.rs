//! A job's inputs, fetched before its work starts: by the worker, under the job's total fetch
//! budget, into files of a directory of the job's own that the work reads them from. So an input
//! that cannot be had fails the job before any expensive or paid step, a server that stalls holds
//! a worker slot for the budget at most, and the job's process needs no network or store access
//! of its own.

use crate::work::JobFailure;
use engines::{FetchError, InputFetcher, PrefetchedInputs};
use futures::{StreamExt, TryStreamExt};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where and how long inputs are fetched.
#[derive(Clone, Debug)]
pub struct InputSettings {
    /// The directory under which each job's inputs get a directory of their own.
    pub dir: PathBuf,
    /// How long all of a job's inputs together may take to fetch.
    pub budget: Duration,
}

/// Inputs fetched at once for one job: enough to overlap a few slow hosts, few enough that the
/// memory of the downloads in flight stays a small multiple of the input size limit.
const PARALLEL_FETCHES: usize = 3;

/// A job's fetched inputs; their directory is removed when this is dropped.
#[derive(Debug, Default)]
pub(crate) struct FetchedInputs {
    dir: Option<PathBuf>,
    files: PrefetchedInputs,
}

impl FetchedInputs {
    /// The file of each fetched URL.
    pub(crate) fn files(&self) -> &PrefetchedInputs {
        &self.files
    }

    /// The directory holding them, when there are any.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
}

impl Drop for FetchedInputs {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Why a job's inputs are not there.
#[derive(Debug)]
pub(crate) enum InputsError {
    /// An input could not be fetched (or not all within the budget): the job's failure.
    Unfetchable(FetchError),
    /// They could not be kept: our failure.
    Keeping(JobFailure),
}

/// Fetches `urls` (field label and URL) with `fetcher` into a directory of `job`'s under
/// `settings.dir`, within `settings.budget`. A URL given twice is fetched once; `data:` URIs carry
/// their bytes and are left to the work.
pub(crate) async fn fetch(
    fetcher: &InputFetcher,
    settings: &InputSettings,
    job: &str,
    urls: Vec<(String, String)>,
) -> Result<FetchedInputs, InputsError> {
    let keeping =
        |e: std::io::Error| InputsError::Keeping(JobFailure::job(format!("cannot keep the job's inputs: {e}")));
    let mut unique: Vec<(String, String)> = Vec::with_capacity(urls.len());
    for (label, url) in urls {
        if engines::fetch::needs_fetching(&url) && !unique.iter().any(|(_, seen)| *seen == url) {
            unique.push((label, url));
        }
    }
    if unique.is_empty() {
        return Ok(FetchedInputs::default());
    }
    let dir = settings.dir.join(job);
    std::fs::create_dir_all(&dir).map_err(keeping)?;
    let mut fetched = FetchedInputs { dir: Some(dir.clone()), files: PrefetchedInputs::default() };
    let downloads = futures::stream::iter(unique.into_iter().enumerate())
        .map(|(index, (label, url))| {
            let file = dir.join(index.to_string());
            async move {
                let bytes = fetcher.fetch(&label, &url).await.map_err(InputsError::Unfetchable)?;
                tokio::fs::write(&file, &bytes).await.map_err(keeping)?;
                Ok::<_, InputsError>((url, file))
            }
        })
        .buffer_unordered(PARALLEL_FETCHES)
        .try_collect::<HashMap<String, PathBuf>>();
    match tokio::time::timeout(settings.budget, downloads).await {
        Ok(files) => fetched.files.files = files?,
        Err(_) => {
            return Err(InputsError::Unfetchable(FetchError {
                url_label: "inputs".into(),
                reason: format!("could not all be fetched within the job's {} s budget", settings.budget.as_secs()),
                transient: true,
            }));
        }
    }
    Ok(fetched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engines::FetchPolicy;

    /// A server that answers each request with one byte of a promised megabyte every
    /// `every_ms` milliseconds: never stalled long enough for the stall limit, never done.
    async fn trickling_server(every_ms: u64) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut request = [0u8; 4096];
                    let _ = socket.read(&mut request).await;
                    let head = "HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n";
                    if socket.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    loop {
                        tokio::time::sleep(Duration::from_millis(every_ms)).await;
                        if socket.write_all(b"x").await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        format!("http://{address}/photo.png")
    }

    #[tokio::test]
    async fn a_jobs_inputs_together_get_one_budget_and_their_files_go_with_them() {
        let policy = FetchPolicy { allow_private: true, timeout: Duration::from_secs(60), ..FetchPolicy::default() };
        let fetcher = InputFetcher::new(policy).unwrap();
        let settings = InputSettings {
            dir: std::env::temp_dir().join(storage::new_id("job-inputs")),
            budget: Duration::from_millis(1500),
        };
        let slow = trickling_server(200).await;
        let urls = vec![("image_url".to_string(), slow.clone()), ("params.mask_url".to_string(), slow)];
        let started = std::time::Instant::now();
        let Err(InputsError::Unfetchable(error)) = fetch(&fetcher, &settings, "task_1-1", urls).await else {
            panic!("a trickling input passed its budget")
        };
        assert!(error.to_string().contains("within the job's 1 s budget"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert!(!settings.dir.join("task_1-1").exists(), "the partial inputs were left behind");

        let inline = vec![("image_url".to_string(), "data:image/png;base64,AAAA".to_string())];
        let fetched = fetch(&fetcher, &settings, "task_2-1", inline).await.unwrap();
        assert!(fetched.dir().is_none(), "data: URIs need no fetching");
    }
}
