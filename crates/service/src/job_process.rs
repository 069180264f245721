//! Where a job's media work runs: in a child process per job, which the operating system holds
//! to a memory limit and which is killed at the deadline of the job's family (the default of
//! api-server and worker), or in this process (tests and tools).
//!
//! The child is this same executable started with [`CHILD_COMMAND`]: it reads a
//! [`ChildRequest`] on its standard input, runs the work with engines built from the same
//! configuration, and writes one JSON header line followed by the files' bytes on its standard
//! output. Nothing but the reply crosses back, so a job that exhausts its memory, hangs or
//! crashes takes only its own process down.

use crate::execution::{produce_here, Finished, JobFailure};
use crate::stored_job::StoredJob;
use crate::{AppConfig, ServiceError};
use domain::{OutputKind, Usd};
use engines::OutputFile;
use isolation::{Ending, Limits};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

/// The argument that makes api-server or worker run one job as a child (see [`child_main`]).
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

/// Deadlines of jobs by the kind of work: engine families by their catalog name
/// (`video_upscaling`) and recipes by theirs (`listing-kit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlines {
    seconds: BTreeMap<String, u64>,
}

/// The default deadline of each kind of work, seconds: room for the largest accepted input on
/// one core, with a margin.
pub const DEFAULT_DEADLINES: [(&str, u64); 15] = [
    ("image_generation", 120),
    ("image_editing", 120),
    ("background_removal", 300),
    ("image_upscaling", 300),
    ("image_to_video", 300),
    ("text_to_video", 300),
    ("video_to_video", 900),
    ("video_upscaling", 900),
    ("lip_sync", 900),
    ("text_to_speech", 120),
    ("music", 120),
    ("listing-enhance", 300),
    ("lot-trace", 120),
    ("reel", 600),
    ("listing-kit", 300),
];

/// The deadline of work of a kind the table does not name (a catalog's new family).
const FALLBACK_DEADLINE_SECS: u64 = 600;

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines { seconds: DEFAULT_DEADLINES.iter().map(|(k, v)| (k.to_string(), *v)).collect() }
    }
}

impl Deadlines {
    /// The defaults with `overrides` applied: `NAME=SECONDS` pairs separated by commas
    /// (`video_upscaling=1200,reel=300`). An unknown name or a zero is an error naming it.
    pub fn with_overrides(overrides: &str) -> Result<Deadlines, String> {
        let mut deadlines = Deadlines::default();
        for pair in overrides.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, secs) = pair.split_once('=').ok_or_else(|| format!("{pair:?} is not NAME=SECONDS"))?;
            let name = name.trim();
            let slot = deadlines.seconds.get_mut(name).ok_or_else(|| {
                let known: Vec<&str> = DEFAULT_DEADLINES.iter().map(|(k, _)| *k).collect();
                format!("{name:?} is not a kind of work (one of {})", known.join(", "))
            })?;
            *slot = secs
                .trim()
                .parse()
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| format!("{pair:?}: seconds must be at least 1"))?;
        }
        Ok(deadlines)
    }

    /// The deadline of `work`.
    pub fn of(&self, work: &str) -> Duration {
        Duration::from_secs(self.seconds.get(work).copied().unwrap_or(FALLBACK_DEADLINE_SECS))
    }

    /// `NAME=SECONDS` pairs, for the start-up log.
    pub fn describe(&self) -> String {
        self.seconds.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
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

/// Runs one job as a child: reads the request on standard input, runs it with engines built from
/// the environment's configuration, writes the reply on standard output. The exit status is 0
/// whenever a reply was written, including a failed job's.
pub fn child_main() -> std::process::ExitCode {
    match run_child() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{CHILD_COMMAND}: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run_child() -> Result<(), String> {
    let engines = AppConfig::from_env().and_then(|c| c.build_engines()).map_err(|e| e.to_string())?;
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).map_err(|e| format!("reading the request: {e}"))?;
    let request: ChildRequest = serde_json::from_slice(&input).map_err(|e| format!("unreadable request: {e}"))?;
    drop(input);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let outcome = runtime.block_on(produce_here(&engines, &request.job, request.price));
    let mut stdout = std::io::stdout().lock();
    write_reply(&mut stdout, outcome).and_then(|()| stdout.flush()).map_err(|e| format!("writing the reply: {e}"))
}

fn write_reply(out: &mut impl Write, outcome: Result<Finished, JobFailure>) -> std::io::Result<()> {
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
    work: &str,
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
            work,
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
            Ending::DeadlineExceeded => return Ok(Err(JobFailure::past_deadline(work, deadline))),
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
        tracing::warn!(task, work, crashes, %crash, stderr = %done.stderr_tail.trim(), "job process crashed");
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
    fn deadlines_default_and_take_overrides_by_name() {
        let deadlines = Deadlines::with_overrides(" video_upscaling=1200, reel=30 ").unwrap();
        assert_eq!(deadlines.of("video_upscaling"), Duration::from_secs(1200));
        assert_eq!(deadlines.of("reel"), Duration::from_secs(30));
        assert_eq!(deadlines.of("lot-trace"), Duration::from_secs(120));
        assert_eq!(deadlines.of("a_new_family"), Duration::from_secs(FALLBACK_DEADLINE_SECS));
        for (bad, says) in
            [("vidoe=3", "vidoe"), ("reel=0", "at least 1"), ("reel", "NAME=SECONDS"), ("reel=x", "reel=x")]
        {
            let error = Deadlines::with_overrides(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn every_family_and_recipe_has_a_default_deadline() {
        let recipes = [
            recipes::listing_enhance::RECIPE,
            recipes::lot_trace::RECIPE,
            recipes::reel::RECIPE,
            recipes::listing_kit::RECIPE,
        ];
        let kinds = domain::catalog::Family::PUBLIC.iter().map(|family| family.name()).chain(recipes);
        for kind in kinds {
            // A kind missing here would silently get the fallback instead of its own deadline.
            assert!(DEFAULT_DEADLINES.iter().any(|(k, _)| *k == kind), "{kind} has no deadline of its own");
        }
    }

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
