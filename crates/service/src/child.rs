//! The job child's side: the entry point of `api-server run-job` / `worker run-job`, which runs
//! one job with engines built from the settings its parent sends (see [`crate::job_process`]).
//!
//! Before it builds anything, the child confines itself ([`isolation::confine`]): no new
//! privileges, read access to the system's files and its job's inputs only, no writes, and no
//! sockets unless its work may call a provider. Its environment holds none of the service's
//! settings (the parent starts it with a cleared one), so it learns only what its request says.

use crate::job_process::{write_reply, ChildRequest, CHILD_COMMAND};
use crate::work::produce_here;
use engines::{FetchPolicy, InputFetcher};
use isolation::confine::{confine_self, Confinement};
use std::io::{Read, Write};

/// Runs one job as a child: reads the request on standard input, confines itself, runs the job
/// with engines built from the request's settings, writes the reply on standard output. The exit
/// status is 0 whenever a reply was written, including a failed job's.
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
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).map_err(|e| format!("reading the request: {e}"))?;
    let request: ChildRequest = serde_json::from_slice(&input).map_err(|e| format!("unreadable request: {e}"))?;
    drop(input);
    media::set_job_threads(request.threads);
    let confinement = Confinement {
        readable: request
            .input_dir
            .iter()
            .cloned()
            .chain(request.engines.catalog_file.iter().map(Into::into))
            .collect(),
        network: request.engines.calls_providers(),
    };
    confine_self(&confinement).map_err(|e| format!("confining the job: {e}"))?;
    // Inputs come from the files the parent fetched; this fetcher never downloads.
    let inputs = InputFetcher::prefetched_only(FetchPolicy::default(), request.inputs);
    let engines = request.engines.build(inputs).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let outcome = runtime.block_on(produce_here(&engines, &request.job, request.price));
    let mut stdout = std::io::stdout().lock();
    write_reply(&mut stdout, outcome).and_then(|()| stdout.flush()).map_err(|e| format!("writing the reply: {e}"))
}
