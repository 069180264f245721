//! Where a job's media work runs: in a child process per job, which the operating system holds
//! to a memory limit and which is killed at the deadline of the job's family (the default of
//! api-server and worker), or in this process (tests and tools).
//!
//! The child is this same executable started with [`CHILD_COMMAND`]: it reads a
//! [`ChildRequest`] on its standard input, runs the work with engines built from the same
//! configuration, and writes one JSON header line followed by the files' bytes on its standard
//! output. Nothing but the reply crosses back, so a job that exhausts its memory, hangs or
//! crashes takes only its own process down. The parent reads the reply as it streams and writes
//! each file into the output store as its bytes arrive ([`ReplyReader`]): it never holds a whole
//! output, however large.

use crate::engine_setup::EngineSettings;
use crate::stored_job::{output_path, StoredJob, StoredOutput};
use crate::work::{Finished, JobFailure, Outputs};
use crate::ServiceError;
use bytes::Bytes;
use domain::{JobKind, OutputKind, Usd};
use engines::{OutputStore, PrefetchedInputs, StoreError};
use isolation::{Ending, Limits};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// The argument that makes api-server or worker run one job as a child (see [`crate::child_main`]).
pub const CHILD_COMMAND: &str = "run-job";

/// Where jobs run.
#[derive(Clone, Debug)]
pub enum JobIsolation {
    /// In this process, under a deadline only (blocking work that overruns it is abandoned, not
    /// stopped). For tests and tools.
    InProcess,
    /// Each job in its own child process under a memory limit and a deadline.
    ChildProcess(Box<ChildJobs>),
}

/// How child job processes are started and held.
#[derive(Clone, Debug)]
pub struct ChildJobs {
    /// The program started for each job.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The address-space limit of each child, MiB.
    pub memory_limit_mb: u64,
    /// Crashes of a job's process after which the job is failed as a poison job.
    pub crash_limit: u32,
    /// What each child builds its engines from (a provider's credentials go only to work that
    /// may call one).
    pub engines: EngineSettings,
}

impl ChildJobs {
    /// This executable started with [`CHILD_COMMAND`].
    pub fn this_executable(
        memory_limit_mb: u64,
        crash_limit: u32,
        engines: EngineSettings,
    ) -> std::io::Result<ChildJobs> {
        Ok(ChildJobs {
            program: std::env::current_exe()?,
            args: vec![CHILD_COMMAND.to_string()],
            memory_limit_mb,
            crash_limit,
            engines,
        })
    }
}

/// What the parent sends a child on its standard input (never through its environment or
/// arguments, which other processes of the machine can read).
#[derive(Serialize, Deserialize)]
pub(crate) struct ChildRequest {
    pub(crate) job: StoredJob,
    pub(crate) price: Usd,
    /// What the child builds its engines from.
    pub(crate) engines: EngineSettings,
    /// The job's inputs, fetched by the parent.
    pub(crate) inputs: PrefetchedInputs,
    /// The directory holding them: the only place outside the system's files the child may read.
    pub(crate) input_dir: Option<PathBuf>,
    /// Threads the job's media work may use (set by [`produce_in_child`]).
    pub(crate) threads: usize,
}

/// Job processes this process is running now.
static RUNNING_JOBS: AtomicUsize = AtomicUsize::new(0);

/// One running job process, counted while it lives.
struct RunningJob;

impl RunningJob {
    /// Counts a job process in, and says how many threads it may use: every core when no other
    /// job runs here, one otherwise (the other jobs have the rest, and more threads than cores
    /// would only add switching). A job started alone keeps its threads if others start later.
    fn start() -> (RunningJob, usize) {
        let others = RUNNING_JOBS.fetch_add(1, Ordering::SeqCst);
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        (RunningJob, if others == 0 { cores } else { 1 })
    }
}

impl Drop for RunningJob {
    fn drop(&mut self) {
        RUNNING_JOBS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Open files a job's process may hold: its pipes, its inputs, a synthesizer's pipes, with room.
const CHILD_OPEN_FILES: u64 = 256;
/// Processes and threads of the service's user while a job's process runs (the kernel counts the
/// user's, and does not hold a privileged user to it): room for the service's own threads, not
/// for a fork bomb.
const CHILD_USER_PROCESSES: u64 = 4096;
/// Processes and threads of one job's process and what it starts (eSpeak NG), held by a pids
/// group where the service runs as root (which `RLIMIT_NPROC` does not hold): room for the job's
/// runtime threads and its helpers, none for a fork bomb.
const CHILD_JOB_PROCESSES: u64 = 256;

/// The command that starts a job's process: `child`'s program with an environment of its own
/// that holds no setting of the service (so no secret), only what programs need to run.
pub(crate) fn child_command(child: &ChildJobs) -> std::process::Command {
    let mut command = std::process::Command::new(&child.program);
    command.args(&child.args).env_clear();
    for name in ["PATH", "LANG", "LC_ALL", "TZ"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    // One allocator arena: each extra one reserves 64 MiB of the address-space limit, and a job
    // runs its work on one thread at a time.
    command.env("MALLOC_ARENA_MAX", "1");
    command
}

/// The limits of a job's process running under `deadline`: its memory, its time (wall clock,
/// and CPU time for every core over that span), its open files, its user's processes, and the
/// size of any file it writes.
pub(crate) fn child_limits(child: &ChildJobs, deadline: Duration) -> Limits {
    let memory_bytes = child.memory_limit_mb.saturating_mul(1 << 20);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get) as u64;
    Limits {
        memory_bytes: Some(memory_bytes),
        // The reply is made in the child's memory, so it cannot honestly be larger.
        max_output_bytes: usize::try_from(memory_bytes).unwrap_or(usize::MAX),
        cpu_seconds: Some(deadline.as_secs().saturating_add(1).saturating_mul(cores)),
        open_files: Some(CHILD_OPEN_FILES),
        file_size_bytes: Some(memory_bytes),
        processes: Some(CHILD_USER_PROCESSES),
        job_processes: Some(CHILD_JOB_PROCESSES),
        ..Limits::new(deadline, 0)
    }
}

/// The header line of a child's reply; the files' bytes follow it, in order.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ChildReply {
    Produced { files: Vec<FileHeader>, cost: Usd, sandbox: bool, result: Option<serde_json::Value> },
    Failed(JobFailure),
}

#[derive(Serialize, Deserialize)]
struct FileHeader {
    kind: OutputKind,
    extension: String,
    width: Option<u32>,
    height: Option<u32>,
    duration_secs: Option<f64>,
    len: usize,
}

/// Writes a child's reply: the header line, then the files' bytes in order.
pub(crate) fn write_reply(out: &mut impl Write, outcome: Result<Finished, JobFailure>) -> std::io::Result<()> {
    let (header, files) = match outcome {
        Ok(Finished { outputs: Outputs::Files(files), cost, sandbox, result }) => {
            let headers = files
                .iter()
                .map(|f| FileHeader {
                    kind: f.kind,
                    extension: f.extension.to_string(),
                    width: f.width,
                    height: f.height,
                    duration_secs: f.duration_secs,
                    len: f.bytes.len(),
                })
                .collect();
            (ChildReply::Produced { files: headers, cost, sandbox, result }, files)
        }
        Ok(Finished { outputs: Outputs::Stored(_), .. }) => {
            return Err(std::io::Error::other("a child's outputs are sent back, not stored by it"));
        }
        Err(failure) => (ChildReply::Failed(failure), Vec::new()),
    };
    serde_json::to_writer(&mut *out, &header)?;
    out.write_all(b"\n")?;
    for file in files {
        out.write_all(&file.bytes)?;
    }
    Ok(())
}

/// Longest reply header accepted (it lists the files and a recipe's result, never media).
const MAX_HEADER_BYTES: usize = 4 << 20;
/// Chunks of output on their way to the store: bounds the memory between the child's pipe and the
/// store's uploads.
const UPLOAD_QUEUE_CHUNKS: usize = 16;

/// Where a job's outputs are stored, and under which names.
#[derive(Clone, Debug)]
pub(crate) struct OutputTarget {
    pub(crate) store: OutputStore,
    pub(crate) task_id: String,
    pub(crate) attempt: i32,
}

/// A step of the upload of a child's files.
enum Upload {
    Begin(String),
    Bytes(Bytes),
    End,
}

/// Reads a child's reply as it streams through [`std::io::Write`]: the header line, then each
/// file's bytes, handed on to [`upload`] as they come. A malformed reply is refused (the child is
/// then killed) with the reason kept.
struct ReplyReader {
    target: OutputTarget,
    uploads: mpsc::Sender<Upload>,
    header: Vec<u8>,
    reply: Option<ChildReply>,
    /// The file being received, and its bytes still to come.
    file: usize,
    left: usize,
    refused: Option<String>,
}

impl ReplyReader {
    fn new(target: OutputTarget, uploads: mpsc::Sender<Upload>) -> ReplyReader {
        ReplyReader { target, uploads, header: Vec::new(), reply: None, file: 0, left: 0, refused: None }
    }

    fn files(&self) -> &[FileHeader] {
        match &self.reply {
            Some(ChildReply::Produced { files, .. }) => files,
            _ => &[],
        }
    }

    fn send(&self, upload: Upload) -> std::io::Result<()> {
        // The uploader stops only when the store failed; its error is reported from there.
        self.uploads.blocking_send(upload).map_err(|_| std::io::Error::other("the output store stopped"))
    }

    /// Starts the files from `self.file` on, ending at once those that are empty.
    fn begin_files(&mut self) -> std::io::Result<()> {
        while let Some(header) = self.files().get(self.file) {
            let (len, extension) = (header.len, header.extension.clone());
            self.send(Upload::Begin(output_path(&self.target.task_id, self.target.attempt, self.file, &extension)))?;
            if len > 0 {
                self.left = len;
                return Ok(());
            }
            self.send(Upload::End)?;
            self.file += 1;
        }
        Ok(())
    }

    fn refuse(&mut self, why: String) -> std::io::Error {
        let error = std::io::Error::other(why.clone());
        self.refused = Some(why);
        error
    }

    fn read_header(&mut self, line: &[u8]) -> std::io::Result<()> {
        let reply: ChildReply =
            serde_json::from_slice(line).map_err(|e| self.refuse(format!("unreadable reply header: {e}")))?;
        if let ChildReply::Produced { files, .. } = &reply {
            if let Some(unknown) = files.iter().find(|f| engines::known_extension(&f.extension).is_none()) {
                return Err(self.refuse(format!("unknown output extension {:?}", unknown.extension)));
            }
        }
        self.reply = Some(reply);
        self.begin_files()
    }

    /// The outcome the reply reported, once it was read whole.
    fn finish(self) -> Result<Result<Finished, JobFailure>, String> {
        if let Some(why) = self.refused {
            return Err(why);
        }
        let (files, cost, sandbox, result) = match self.reply {
            None => return Err("no reply header".into()),
            Some(ChildReply::Failed(failure)) => return Ok(Err(failure)),
            Some(ChildReply::Produced { files, cost, sandbox, result }) => (files, cost, sandbox, result),
        };
        if self.file < files.len() {
            let missing = self.left + files[self.file + 1..].iter().map(|f| f.len).sum::<usize>();
            return Err(format!("the reply is {missing} bytes short"));
        }
        let stored = files
            .into_iter()
            .enumerate()
            .map(|(index, file)| StoredOutput {
                path: output_path(&self.target.task_id, self.target.attempt, index, &file.extension),
                kind: file.kind,
                content_type: engines::content_type_of(&file.extension).to_string(),
                width: file.width,
                height: file.height,
                duration_secs: file.duration_secs,
            })
            .collect();
        Ok(Ok(Finished { outputs: Outputs::Stored(stored), cost, sandbox, result }))
    }
}

impl Write for ReplyReader {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        if self.reply.is_none() {
            let newline = rest.iter().position(|&b| b == b'\n');
            let line_end = newline.unwrap_or(rest.len());
            if self.header.len() + line_end > MAX_HEADER_BYTES {
                return Err(self.refuse(format!("the reply header is longer than {MAX_HEADER_BYTES} bytes")));
            }
            self.header.extend_from_slice(&rest[..line_end]);
            let Some(newline) = newline else { return Ok(buf.len()) };
            let line = std::mem::take(&mut self.header);
            self.read_header(&line)?;
            rest = &rest[newline + 1..];
        }
        while !rest.is_empty() {
            if self.file >= self.files().len() {
                return Err(self.refuse(format!("{} unexpected bytes after the reply", rest.len())));
            }
            let take = self.left.min(rest.len());
            self.send(Upload::Bytes(Bytes::copy_from_slice(&rest[..take])))?;
            rest = &rest[take..];
            self.left -= take;
            if self.left == 0 {
                self.send(Upload::End)?;
                self.file += 1;
                self.begin_files()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes the files a [`ReplyReader`] hands on into the store, each as it streams. A file whose
/// end never came (the child crashed, or its reply was refused) is given up, never completed.
async fn upload(store: OutputStore, mut uploads: mpsc::Receiver<Upload>) -> Result<(), StoreError> {
    let mut writing = None;
    let outcome = async {
        while let Some(step) = uploads.recv().await {
            match step {
                Upload::Begin(path) => writing = Some(store.writer(&path)?),
                Upload::Bytes(bytes) => match writing.as_mut() {
                    Some(writer) => writer.write(bytes).await?,
                    None => return Err(StoreError::Backend("output bytes before their file".into())),
                },
                Upload::End => {
                    if let Some(writer) = writing.take() {
                        writer.finish().await?;
                    }
                }
            }
        }
        Ok(())
    }
    .await;
    if let Some(unfinished) = writing {
        unfinished.abort().await;
    }
    outcome
}

/// One run of a child whose reply streams into the store: how the child ended, what its reply
/// said, and how the upload went.
async fn run_streaming(
    command: std::process::Command,
    input: Vec<u8>,
    limits: Limits,
    target: &OutputTarget,
) -> Result<(isolation::Finished, Result<Result<Finished, JobFailure>, String>, Result<(), StoreError>), ServiceError> {
    let (sender, receiver) = mpsc::channel(UPLOAD_QUEUE_CHUNKS);
    let uploading = tokio::spawn(upload(target.store.clone(), receiver));
    let (done, reader) = isolation::run(command, input, limits, ReplyReader::new(target.clone(), sender))
        .await
        .map_err(|e| ServiceError::Internal(format!("job process: {e}")))?;
    let reply = reader.finish();
    let uploaded = uploading.await.map_err(|e| ServiceError::Internal(format!("output upload stopped: {e}")))?;
    Ok((done, reply, uploaded))
}

/// Runs `job` in child processes under `child`'s limits and `deadline`: a crash is run again
/// until `crash_limit` crashes, then failed as a poison job; running out of memory or time fails
/// the job at once. Only a child that cannot be started is our own failure.
pub(crate) async fn produce_in_child(
    child: &ChildJobs,
    mut request: ChildRequest,
    target: &OutputTarget,
    kind: JobKind,
    deadline: Duration,
) -> Result<Result<Finished, JobFailure>, ServiceError> {
    let task = target.task_id.as_str();
    let (_running, threads) = RunningJob::start();
    request.threads = threads;
    let input = serde_json::to_vec(&request).map_err(|e| ServiceError::Internal(e.to_string()))?;
    let limits = child_limits(child, deadline);
    let mut crashes = 0;
    loop {
        let (done, reply, uploaded) =
            run_streaming(child_command(child), input.clone(), limits.clone(), target).await?;
        tracing::info!(
            task,
            work = %kind,
            ending = %done.describe(),
            peak_rss_kib = done.peak_rss_kib,
            elapsed_ms = done.elapsed.as_millis() as u64,
            "job process ended"
        );
        crate::metrics::job_peak_memory(&kind.to_string(), done.peak_rss_kib);
        let failed = |message: String| Ok(Err(JobFailure::job(message)));
        // A store that failed (after its own retries) fails the job, whatever the child did.
        if let Err(e) = uploaded {
            return Ok(Err(JobFailure::unstored(task, &e.to_string())));
        }
        let crash = match done.ending {
            Ending::Exited(0) | Ending::OutputRefused => match reply {
                Ok(outcome) => return Ok(outcome),
                Err(e) => format!("its reply was unreadable ({e})"),
            },
            Ending::DeadlineExceeded => return Ok(Err(JobFailure::past_deadline(kind, deadline))),
            _ if done.ran_out_of_memory() => {
                return failed(format!(
                    "the job needed more than its memory limit of {} MB and was stopped",
                    child.memory_limit_mb
                ));
            }
            Ending::OutputTooLarge => {
                return failed(format!("the job's output exceeded {} MB and was stopped", child.memory_limit_mb));
            }
            Ending::Cancelled => return Err(ServiceError::Internal("job process cancelled".into())),
            Ending::Exited(_) | Ending::Signalled(_) => done.describe(),
        };
        crashes += 1;
        tracing::warn!(task, work = %kind, crashes, %crash, stderr = %done.stderr_tail.trim(), "job process crashed");
        if crashes >= child.crash_limit {
            return failed(format!(
                "the job crashed its process {crashes} times (last: {crash}); it is failed as a poison job and not run again"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job alone on its worker may use every core; one started beside it gets one thread; when
    /// the first ends, the next job alone gets every core again.
    #[test]
    fn a_job_alone_on_its_worker_gets_every_core() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let (first, threads) = RunningJob::start();
        assert_eq!(threads, cores);
        let (second, threads) = RunningJob::start();
        assert_eq!(threads, 1);
        drop(first);
        drop(second);
        assert_eq!(RunningJob::start().1, cores);
    }
    use engines::OutputFile;

    /// Streams `reply` through a reader in small chunks, as a pipe delivers them, into a store in
    /// a fresh directory; the outcome read, and the store.
    async fn stream(reply: Vec<u8>) -> (Result<Result<Finished, JobFailure>, String>, OutputStore) {
        let dir = std::env::temp_dir().join(storage::new_id("reply-test"));
        let store = OutputStore::local_dir(&dir.to_string_lossy()).unwrap();
        let target = OutputTarget { store: store.clone(), task_id: "task_1".into(), attempt: 2 };
        let (sender, receiver) = mpsc::channel(UPLOAD_QUEUE_CHUNKS);
        let uploading = tokio::spawn(upload(store.clone(), receiver));
        let outcome = tokio::task::spawn_blocking(move || {
            let mut reader = ReplyReader::new(target, sender);
            for chunk in reply.chunks(3) {
                if reader.write_all(chunk).is_err() {
                    break;
                }
            }
            reader.finish()
        })
        .await
        .unwrap();
        uploading.await.unwrap().unwrap();
        (outcome, store)
    }

    fn reply_of(outcome: Result<Finished, JobFailure>) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_reply(&mut bytes, outcome).unwrap();
        bytes
    }

    #[tokio::test]
    async fn a_job_process_sees_no_setting_of_the_service() {
        let child = ChildJobs {
            program: "/usr/bin/env".into(),
            args: Vec::new(),
            memory_limit_mb: 256,
            crash_limit: 1,
            engines: crate::AppConfig::from_env().unwrap().engine_settings(),
        };
        let limits = child_limits(&child, Duration::from_secs(30));
        assert_eq!(limits.open_files, Some(CHILD_OPEN_FILES));
        assert_eq!(limits.file_size_bytes, Some(256 << 20));
        assert!(limits.cpu_seconds.is_some_and(|s| s >= 31));
        let (done, stdout) = isolation::run(child_command(&child), Vec::new(), limits, Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::Exited(0), "{done:?}");
        let names: Vec<String> = String::from_utf8_lossy(&stdout)
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name.to_string()))
            .collect();
        assert!(names.iter().any(|n| n == "MALLOC_ARENA_MAX"), "{names:?}");
        for name in &names {
            assert!(
                ["PATH", "LANG", "LC_ALL", "TZ", "MALLOC_ARENA_MAX"].contains(&name.as_str()),
                "{name} reached the job"
            );
        }
    }

    #[tokio::test]
    async fn a_reply_streams_into_the_store_and_a_malformed_one_is_refused() {
        let finished = Finished {
            outputs: Outputs::Files(vec![
                OutputFile::image(vec![1, 2, 3], "png", 1, 1),
                OutputFile::audio(Vec::new(), 0.0),
                OutputFile::audio(vec![4, 5], 0.5),
            ]),
            cost: Usd::from_units(1234),
            sandbox: true,
            result: Some(serde_json::json!({"a": 1})),
        };
        let bytes = reply_of(Ok(finished));
        let (outcome, store) = stream(bytes.clone()).await;
        let back = outcome.unwrap().unwrap();
        let Outputs::Stored(stored) = back.outputs else { panic!("not stored") };
        let paths: Vec<&str> = stored.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["tasks/task_1/2-0.png", "tasks/task_1/2-1.wav", "tasks/task_1/2-2.wav"]);
        assert_eq!(store.get(&stored[0].path).await.unwrap().as_ref(), [1, 2, 3]);
        assert!(store.get(&stored[1].path).await.unwrap().is_empty());
        assert_eq!(store.get(&stored[2].path).await.unwrap().as_ref(), [4, 5]);
        assert_eq!(stored[2].content_type, "audio/wav");
        assert_eq!(back.cost, Usd::from_units(1234));
        assert!(back.sandbox);

        // A reply cut short stores no half file; one too long is refused.
        let (short, store) = stream(bytes[..bytes.len() - 1].to_vec()).await;
        assert!(short.unwrap_err().contains("1 bytes short"));
        assert!(store.get("tasks/task_1/2-2.wav").await.is_err(), "an unfinished file was completed");
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(stream(longer).await.0.unwrap_err().contains("unexpected"));
        let mut unknown = reply_of(Ok(Finished {
            outputs: Outputs::Files(vec![OutputFile::image(vec![1], "png", 1, 1)]),
            cost: Usd::ZERO,
            sandbox: false,
            result: None,
        }));
        let at = unknown.windows(5).position(|w| w == b"\"png\"").unwrap();
        unknown[at + 1..at + 4].copy_from_slice(b"exe");
        assert!(stream(unknown).await.0.unwrap_err().contains("unknown output extension"));
        let endless_header = vec![b'{'; MAX_HEADER_BYTES + 10];
        assert!(stream(endless_header).await.0.unwrap_err().contains("longer than"));

        let failed = reply_of(Err(JobFailure::input("audio_url: too short".into())));
        let failure = stream(failed).await.0.unwrap().unwrap_err();
        assert_eq!(failure.message, "audio_url: too short");
    }
}
