//! Where a job's media work runs: in a child process per job, which the operating system holds
//! to a memory limit and which is killed at the deadline of the job's family (the default of
//! api-server and worker), or in this process (tests and tools).
//!
//! The child is this same executable started with [`CHILD_COMMAND`]: it reads a
//! [`ChildRequest`] on its standard input, runs the work with engines built from the same
//! configuration, and writes one JSON header line followed by the files' bytes on its standard
//! output. Nothing but the reply crosses back, so a job that exhausts its memory, hangs or
//! crashes takes only its own process down.

use crate::stored_job::StoredJob;
use crate::work::{Finished, JobFailure};
use crate::ServiceError;
use domain::{JobKind, OutputKind, Usd};
use engines::OutputFile;
use isolation::{Ending, Limits};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// The argument that makes api-server or worker run one job as a child (see [`crate::child_main`]).
pub const CHILD_COMMAND: &str = "run-job";

/// Where jobs run.
#[derive(Clone, Debug)]
pub enum JobIsolation {
    /// In this process, under a deadline only (blocking work that overruns it is abandoned, not
    /// stopped). For tests and tools.
    InProcess,
    /// Each job in its own child process under a memory limit and a deadline.
    ChildProcess(ChildJobs),
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
}

impl ChildJobs {
    /// This executable started with [`CHILD_COMMAND`].
    pub fn this_executable(memory_limit_mb: u64, crash_limit: u32) -> std::io::Result<ChildJobs> {
        Ok(ChildJobs {
            program: std::env::current_exe()?,
            args: vec![CHILD_COMMAND.to_string()],
            memory_limit_mb,
            crash_limit,
        })
    }
}

/// What the parent sends a child.
#[derive(Serialize, Deserialize)]
pub(crate) struct ChildRequest {
    pub(crate) job: StoredJob,
    pub(crate) price: Usd,
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
        Ok(finished) => {
            let headers = finished
                .files
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
            let reply = ChildReply::Produced {
                files: headers,
                cost: finished.cost,
                sandbox: finished.sandbox,
                result: finished.result,
            };
            (reply, finished.files)
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

fn read_reply(stdout: &[u8]) -> Result<Result<Finished, JobFailure>, String> {
    let newline = stdout.iter().position(|&b| b == b'\n').ok_or("no reply header")?;
    let header: ChildReply =
        serde_json::from_slice(&stdout[..newline]).map_err(|e| format!("unreadable reply header: {e}"))?;
    let (headers, cost, sandbox, result) = match header {
        ChildReply::Failed(failure) => return Ok(Err(failure)),
        ChildReply::Produced { files, cost, sandbox, result } => (files, cost, sandbox, result),
    };
    let mut rest = &stdout[newline + 1..];
    let mut files = Vec::with_capacity(headers.len());
    for header in headers {
        if header.len > rest.len() {
            return Err(format!("the reply is {} bytes short", header.len - rest.len()));
        }
        let extension = engines::known_extension(&header.extension)
            .ok_or_else(|| format!("unknown output extension {:?}", header.extension))?;
        let (bytes, after) = rest.split_at(header.len);
        rest = after;
        files.push(OutputFile {
            bytes: bytes.to_vec(),
            kind: header.kind,
            extension,
            width: header.width,
            height: header.height,
            duration_secs: header.duration_secs,
        });
    }
    if !rest.is_empty() {
        return Err(format!("{} unexpected bytes after the reply", rest.len()));
    }
    Ok(Ok(Finished { files, cost, sandbox, result }))
}

/// Runs `job` in child processes under `child`'s limits and `deadline`: a crash is run again
/// until `crash_limit` crashes, then failed as a poison job; running out of memory or time fails
/// the job at once. Only a child that cannot be started is our own failure.
pub(crate) async fn produce_in_child(
    child: &ChildJobs,
    request: &ChildRequest,
    task: &str,
    kind: JobKind,
    deadline: Duration,
) -> Result<Result<Finished, JobFailure>, ServiceError> {
    let input = serde_json::to_vec(request).map_err(|e| ServiceError::Internal(e.to_string()))?;
    let memory_bytes = child.memory_limit_mb.saturating_mul(1 << 20);
    let limits = Limits {
        memory_bytes: Some(memory_bytes),
        deadline,
        // The reply is made in the child's memory, so it cannot honestly be larger.
        max_output_bytes: usize::try_from(memory_bytes).unwrap_or(usize::MAX),
    };
    let mut crashes = 0;
    loop {
        let mut command = std::process::Command::new(&child.program);
        // One allocator arena: each extra one reserves 64 MiB of the address-space limit, and a job
        // runs its work on one thread at a time.
        command.args(&child.args).env("MALLOC_ARENA_MAX", "1");
        let done = isolation::run(command, input.clone(), limits.clone())
            .await
            .map_err(|e| ServiceError::Internal(format!("job process: {e}")))?;
        tracing::info!(
            task,
            work = %kind,
            ending = %done.describe(),
            peak_rss_kib = done.peak_rss_kib,
            elapsed_ms = done.elapsed.as_millis() as u64,
            "job process ended"
        );
        let failed = |message: String| Ok(Err(JobFailure::job(message)));
        let crash = match done.ending {
            Ending::Exited(0) => match read_reply(&done.stdout) {
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

    #[test]
    fn a_reply_round_trips_and_a_short_one_is_refused() {
        let finished = Finished {
            files: vec![OutputFile::image(vec![1, 2, 3], "png", 1, 1), OutputFile::audio(vec![4, 5], 0.5)],
            cost: Usd::from_units(1234),
            sandbox: true,
            result: Some(serde_json::json!({"a": 1})),
        };
        let mut bytes = Vec::new();
        write_reply(&mut bytes, Ok(finished)).unwrap();
        let back = read_reply(&bytes).unwrap().unwrap();
        assert_eq!(back.files.len(), 2);
        assert_eq!(back.files[0].bytes, [1, 2, 3]);
        assert_eq!(back.files[1].bytes, [4, 5]);
        assert_eq!(back.files[1].extension, "wav");
        assert_eq!(back.cost, Usd::from_units(1234));
        assert!(back.sandbox);
        assert!(read_reply(&bytes[..bytes.len() - 1]).unwrap_err().contains("short"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(read_reply(&longer).unwrap_err().contains("unexpected"));

        let mut failed = Vec::new();
        write_reply(&mut failed, Err(JobFailure::input("audio_url: too short".into()))).unwrap();
        let failure = read_reply(&failed).unwrap().unwrap_err();
        assert_eq!(failure.message, "audio_url: too short");
    }
}
