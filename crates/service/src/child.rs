//! The job child's side: the entry point of `api-server run-job` / `worker run-job`, which runs
//! one job with engines built from the same configuration as its parent (see [`crate::job_process`]).

use crate::job_process::{write_reply, ChildRequest, CHILD_COMMAND};
use crate::work::produce_here;
use crate::AppConfig;
use std::io::{Read, Write};

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
