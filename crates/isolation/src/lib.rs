//! Runs a piece of work in a child process that the operating system holds to a memory limit
//! (`RLIMIT_AS`) and that is killed at a wall-clock deadline, and reports how it ended: its exit,
//! the tail of its error stream and its peak resident memory. Its standard output is handed to a
//! writer of the caller's as it is read, never gathered here, so a large output costs the parent no
//! more memory than the writer keeps.
//!
//! A child that runs past its deadline, writes more output than allowed, or is cancelled (its
//! future dropped) is killed with `SIGKILL`, with every process it started (it leads its own
//! process group); it also dies with the thread that started it
//! (`PR_SET_PDEATHSIG`), so a parent that is killed leaves no work behind. Linux only.
//!
//! [`confine`] is the other half: what the child does to itself before it touches its work.

pub mod confine;
pub mod pids;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a child may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Address-space limit (`RLIMIT_AS`) in bytes; `None` leaves the inherited limit.
    pub memory_bytes: Option<u64>,
    /// Wall-clock time after which the child is killed.
    pub deadline: Duration,
    /// Most bytes read from the child's standard output; beyond it the child is killed.
    pub max_output_bytes: usize,
    /// CPU time (`RLIMIT_CPU`), seconds, summed over its threads; `None` leaves the inherited limit.
    pub cpu_seconds: Option<u64>,
    /// Open files (`RLIMIT_NOFILE`); `None` leaves the inherited limit.
    pub open_files: Option<u64>,
    /// Largest file it may write (`RLIMIT_FSIZE`), bytes; `None` leaves the inherited limit.
    pub file_size_bytes: Option<u64>,
    /// Processes and threads of its user (`RLIMIT_NPROC`; the kernel counts the whole user's, and
    /// does not hold a privileged user to it); `None` leaves the inherited limit.
    pub processes: Option<u64>,
    /// Processes and threads of the child and everything it starts, held by a group of the
    /// kernel's pids controller when this process may make one (it runs as root, where
    /// `processes` does not apply; see [`pids`]); `None`: no group.
    pub job_processes: Option<u64>,
}

impl Limits {
    /// A deadline and an output cap, every other limit inherited.
    pub fn new(deadline: Duration, max_output_bytes: usize) -> Limits {
        Limits {
            memory_bytes: None,
            deadline,
            max_output_bytes,
            cpu_seconds: None,
            open_files: None,
            file_size_bytes: None,
            processes: None,
            job_processes: None,
        }
    }
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this status code.
    Exited(i32),
    /// A signal it did not ask for ended it (a crash, or a kill from outside).
    Signalled(i32),
    /// It ran past [`Limits::deadline`] and was killed.
    DeadlineExceeded,
    /// It wrote more than [`Limits::max_output_bytes`] and was killed.
    OutputTooLarge,
    /// The writer of its output refused a write (its error is the writer's to report), and the
    /// child was killed.
    OutputRefused,
    /// Its run was cancelled and it was killed.
    Cancelled,
}

/// A finished child.
#[derive(Clone, Debug)]
pub struct Finished {
    /// How it ended.
    pub ending: Ending,
    /// Bytes of standard output handed to the writer.
    pub output_bytes: u64,
    /// The last [`STDERR_TAIL_BYTES`] of its error stream.
    pub stderr_tail: String,
    /// Its peak resident memory, kibibytes (`ru_maxrss`).
    pub peak_rss_kib: u64,
    /// Wall-clock time from start to end.
    pub elapsed: Duration,
}

/// How much of a child's error stream is kept.
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;

impl Finished {
    /// Whether the child died because an allocation failed under its memory limit: the Rust
    /// runtime aborts with "memory allocation of N bytes failed".
    pub fn ran_out_of_memory(&self) -> bool {
        self.ending == Ending::Signalled(libc::SIGABRT) && self.stderr_tail.contains("memory allocation of")
    }

    /// A short description of the ending for messages and logs.
    pub fn describe(&self) -> String {
        match self.ending {
            Ending::Exited(code) => format!("exited with status {code}"),
            Ending::Signalled(signal) => format!("killed by signal {signal} ({})", signal_name(signal)),
            Ending::DeadlineExceeded => "killed at its deadline".into(),
            Ending::OutputTooLarge => "killed for writing too much output".into(),
            Ending::OutputRefused => "killed when its output was refused".into(),
            Ending::Cancelled => "cancelled".into(),
        }
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "signal",
    }
}

/// A child could not be started or watched.
#[derive(Debug, thiserror::Error)]
pub enum IsolationError {
    /// The program could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for the child failed.
    #[error("cannot wait for the child process: {0}")]
    Wait(std::io::Error),
    /// The thread running the child was lost.
    #[error("the thread watching the child process stopped: {0}")]
    Watcher(String),
}

/// Why the watched child was killed, if it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KillReason {
    Deadline,
    Output,
    OutputRefused,
    Cancel,
}

/// Shared between the thread waiting for the child and whoever may kill it. Once `reaped` is set
/// the pid may belong to another process, so nothing signals it any more.
#[derive(Default)]
struct Watch {
    state: Mutex<WatchState>,
    changed: Condvar,
}

#[derive(Default)]
struct WatchState {
    pid: Option<libc::pid_t>,
    exited: bool,
    killed: Option<KillReason>,
    cancelled: bool,
}

impl Watch {
    fn lock(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Kills the child unless it has already exited; the first reason is the one reported.
    fn kill(&self, reason: KillReason) {
        let mut state = self.lock();
        if reason == KillReason::Cancel {
            state.cancelled = true;
        }
        if let (Some(pid), false) = (state.pid, state.exited) {
            kill_group(pid);
            state.killed.get_or_insert(reason);
        }
        self.changed.notify_all();
    }
}

/// Runs `command` with `input` on its standard input under `limits`, on a blocking thread, writing
/// its standard output to `output` as it comes; returns how it ended and the writer. Dropping the
/// returned future kills the child.
pub async fn run<W: Write + Send + 'static>(
    command: Command,
    input: Vec<u8>,
    limits: Limits,
    output: W,
) -> Result<(Finished, W), IsolationError> {
    let watch = Arc::new(Watch::default());
    let guard = CancelOnDrop(watch.clone());
    let result = tokio::task::spawn_blocking(move || run_blocking(command, &input, &limits, &watch, output))
        .await
        .map_err(|e| IsolationError::Watcher(e.to_string()))?;
    drop(guard);
    result
}

struct CancelOnDrop(Arc<Watch>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.kill(KillReason::Cancel);
    }
}

fn run_blocking<W: Write + Send>(
    mut command: Command,
    input: &[u8],
    limits: &Limits,
    watch: &Arc<Watch>,
    mut output: W,
) -> Result<(Finished, W), IsolationError> {
    let started = Instant::now();
    let rlimits = [
        (libc::RLIMIT_AS, limits.memory_bytes),
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_FSIZE, limits.file_size_bytes),
        (libc::RLIMIT_NPROC, limits.processes),
        (libc::RLIMIT_CORE, Some(0)),
    ];
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Kept until the child is reaped, then removed.
    let group = limits.job_processes.and_then(pids::PidsGroup::create);
    let procs_fd = group.as_ref().map(pids::PidsGroup::procs_fd);
    // SAFETY: only async-signal-safe calls (setpgid, write, setrlimit, prctl, getppid) run between
    // fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        let parent = libc::getpid();
        command.pre_exec(move || limit_self(&rlimits, procs_fd, parent));
    }
    if watch.lock().cancelled {
        return Err(IsolationError::Watcher("cancelled before start".into()));
    }
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command.spawn().map_err(|source| IsolationError::Spawn { program, source })?;
    let pid = child.id() as libc::pid_t;
    {
        let mut state = watch.lock();
        state.pid = Some(pid);
        if state.cancelled {
            drop(state);
            watch.kill(KillReason::Cancel);
        }
    }
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    std::thread::scope(|scope| {
        let input_writer = scope.spawn(move || {
            if let Some(mut stdin) = stdin {
                // A child that stops reading (it crashed) closes the pipe: not our error.
                let _ = stdin.write_all(input);
            }
        });
        let output_reader = scope.spawn(move || {
            let copied = copy_capped(stdout, limits.max_output_bytes, watch, &mut output);
            (copied, output)
        });
        let error_reader = scope.spawn(move || read_tail(stderr));
        let deadline_watcher = scope.spawn(move || watch_deadline(watch, started + limits.deadline));
        let waited = wait_and_reap(pid, watch);
        let _ = input_writer.join();
        let (output_bytes, output) =
            output_reader.join().map_err(|_| IsolationError::Watcher("the output's writer panicked".into()))?;
        let stderr_tail = error_reader.join().unwrap_or_default();
        let _ = deadline_watcher.join();
        let (status, peak_rss_kib) = waited?;
        let killed = watch.lock().killed;
        let ending = match killed {
            Some(KillReason::Deadline) => Ending::DeadlineExceeded,
            Some(KillReason::Output) => Ending::OutputTooLarge,
            Some(KillReason::OutputRefused) => Ending::OutputRefused,
            Some(KillReason::Cancel) => Ending::Cancelled,
            None if libc::WIFSIGNALED(status) => Ending::Signalled(libc::WTERMSIG(status)),
            None => Ending::Exited(libc::WEXITSTATUS(status)),
        };
        Ok((Finished { ending, output_bytes, stderr_tail, peak_rss_kib, elapsed: started.elapsed() }, output))
    })
}

/// A resource and its limit, `None` to leave it inherited.
type ResourceLimit = (libc::__rlimit_resource_t, Option<u64>);

/// In the child, before `exec`: its own process group, its resource limits (no core files), and
/// death with the parent thread.
fn limit_self(limits: &[ResourceLimit], pids_group: Option<libc::c_int>, parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: plain system call.
    if unsafe { libc::setpgid(0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if let Some(procs_fd) = pids_group {
        pids::join(procs_fd)?;
    }
    for &(resource, value) in limits {
        let Some(value) = value else { continue };
        let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
        // SAFETY: plain system call on a valid struct.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: plain system calls.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The parent may have gone between fork and prctl.
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
    Ok(())
}

/// Kills the child's process group (the child and whatever it started).
fn kill_group(pid: libc::pid_t) {
    // SAFETY: `pid` is our unreaped child and leads its own group, so the group id is ours.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}

/// Waits for the child to exit without reaping it, marks it exited (so nothing signals its pid
/// any more), then reaps it with its resource usage.
fn wait_and_reap(pid: libc::pid_t, watch: &Watch) -> Result<(i32, u64), IsolationError> {
    loop {
        // SAFETY: zeroed siginfo is a valid out-parameter.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waiting on our own child.
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(IsolationError::Wait(error));
        }
    }
    {
        let mut state = watch.lock();
        // Whatever the child left running (a helper it started) goes with it, so no pipe stays
        // open; the group's id is still reserved by the unreaped child.
        kill_group(pid);
        state.exited = true;
    }
    watch.changed.notify_all();
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: reaping our own exited child.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return Ok((status, u64::try_from(usage.ru_maxrss).unwrap_or(0)));
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(IsolationError::Wait(error));
        }
    }
}

fn watch_deadline(watch: &Watch, deadline: Instant) {
    let mut state = watch.lock();
    while !state.exited {
        let now = Instant::now();
        if now >= deadline {
            drop(state);
            watch.kill(KillReason::Deadline);
            return;
        }
        state = watch.changed.wait_timeout(state, deadline - now).unwrap_or_else(std::sync::PoisonError::into_inner).0;
    }
}

/// Copies the child's output to `output` in chunks until it ends, killing the child when it writes
/// more than `max` bytes or `output` refuses a write; returns the bytes copied.
fn copy_capped(stdout: Option<std::process::ChildStdout>, max: usize, watch: &Watch, output: &mut impl Write) -> u64 {
    let Some(mut stdout) = stdout else { return 0 };
    let max = u64::try_from(max).unwrap_or(u64::MAX);
    let mut copied: u64 = 0;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match stdout.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // Only what fits under the cap is handed on.
        let allowed = usize::try_from(max - copied).unwrap_or(usize::MAX).min(n);
        if output.write_all(&buffer[..allowed]).is_err() {
            watch.kill(KillReason::OutputRefused);
            break;
        }
        copied += allowed as u64;
        if allowed < n {
            watch.kill(KillReason::Output);
            // Read nothing more: the child is being killed and its pipe closes with it.
            break;
        }
    }
    let _ = output.flush();
    copied
}

fn read_tail(stderr: Option<std::process::ChildStderr>) -> String {
    let Some(mut stderr) = stderr else { return String::new() };
    let mut tail: Vec<u8> = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(n @ 1..) = stderr.read(&mut buffer) {
        tail.extend_from_slice(&buffer[..n]);
        if tail.len() > 2 * STDERR_TAIL_BYTES {
            tail.drain(..tail.len() - STDERR_TAIL_BYTES);
        }
    }
    if tail.len() > STDERR_TAIL_BYTES {
        tail.drain(..tail.len() - STDERR_TAIL_BYTES);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(script);
        command
    }

    fn limits(deadline_ms: u64) -> Limits {
        Limits::new(Duration::from_millis(deadline_ms), 1024)
    }

    #[tokio::test]
    async fn output_input_and_exit_status_pass_through() {
        let (done, stdout) =
            run(shell("cat; echo oops >&2; exit 3"), b"hello".to_vec(), limits(10_000), Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::Exited(3));
        assert_eq!(stdout, b"hello");
        assert_eq!(done.output_bytes, 5);
        assert_eq!(done.stderr_tail.trim(), "oops");
        assert!(done.peak_rss_kib > 0);
    }

    #[tokio::test]
    async fn a_child_past_its_deadline_is_killed() {
        let (done, _) = run(shell("sleep 30"), Vec::new(), limits(300), Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::DeadlineExceeded);
        assert!(done.elapsed < Duration::from_secs(10), "{:?}", done.elapsed);
    }

    #[tokio::test]
    async fn too_much_output_kills_the_child() {
        let (done, stdout) = run(shell("yes"), Vec::new(), limits(10_000), Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::OutputTooLarge);
        assert_eq!(stdout.len(), 1024);
    }

    /// A writer that takes `room` bytes, then refuses.
    struct Refusing {
        room: usize,
    }

    impl Write for Refusing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.room {
                return Err(std::io::Error::other("no room"));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_refused_output_kills_the_child() {
        let limits = Limits { max_output_bytes: 1 << 30, ..limits(10_000) };
        let (done, _) = run(shell("yes"), Vec::new(), limits, Refusing { room: 100 }).await.unwrap();
        assert_eq!(done.ending, Ending::OutputRefused);
        assert!(done.elapsed < Duration::from_secs(5), "{:?}", done.elapsed);
    }

    #[tokio::test]
    async fn a_signal_from_outside_is_a_crash() {
        let (done, _) = run(shell("kill -SEGV $$"), Vec::new(), limits(10_000), Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::Signalled(libc::SIGSEGV));
        assert!(done.describe().contains("SIGSEGV"));
    }

    /// Not a test on its own: the child of `the_memory_limit_is_the_operating_systems`, which
    /// re-runs this test binary with `ISOLATION_PROBE_MB` set.
    #[test]
    fn allocation_probe() {
        if let Some(mb) = std::env::var("ISOLATION_PROBE_MB").ok().and_then(|v| v.parse::<usize>().ok()) {
            let block = vec![1u8; mb << 20];
            println!("allocated {}", block.iter().map(|&b| usize::from(b)).sum::<usize>() >> 20);
        }
    }

    fn probe(mb: usize) -> Command {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.args(["tests::allocation_probe", "--exact", "--nocapture", "--test-threads=1"]);
        command.env("ISOLATION_PROBE_MB", mb.to_string());
        command
    }

    #[tokio::test]
    async fn the_memory_limit_is_the_operating_systems() {
        let limits = Limits { memory_bytes: Some(256 << 20), max_output_bytes: 1 << 20, ..limits(60_000) };
        let (small, stdout) = run(probe(16), Vec::new(), limits.clone(), Vec::new()).await.unwrap();
        assert_eq!(small.ending, Ending::Exited(0), "{small:?}");
        assert!(String::from_utf8_lossy(&stdout).contains("allocated 16"), "{small:?}");
        assert!(!small.ran_out_of_memory());

        let (large, stdout) = run(probe(1024), Vec::new(), limits, Vec::new()).await.unwrap();
        assert!(large.ran_out_of_memory(), "{large:?}");
        assert!(!String::from_utf8_lossy(&stdout).contains("allocated"), "{large:?}");
    }

    /// Not a test on its own: the child of `a_confined_child_reaches_only_what_it_was_given`,
    /// which re-runs this test binary with `ISOLATION_CONFINE_PROBE` naming a readable directory
    /// and a forbidden file. It confines itself as a job's process does and reports what it can
    /// still do, one `name=value` line each.
    #[test]
    fn confinement_probe() {
        let Ok(paths) = std::env::var("ISOLATION_CONFINE_PROBE") else { return };
        let (allowed, forbidden) = paths.split_once(':').unwrap();
        let enforced =
            confine::confine_self(&confine::Confinement { readable: vec![allowed.into()], network: false }).unwrap();
        let limit = |resource| {
            let mut value = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: valid out-parameter.
            unsafe { libc::getrlimit(resource, &mut value) };
            value.rlim_cur
        };
        // SAFETY: plain system calls.
        let (no_new_privs, seccomp, socket, unshare) = unsafe {
            (
                libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
                libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0),
                libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0),
                libc::unshare(libc::CLONE_NEWUSER),
            )
        };
        let report = [
            format!("filesystem={}", enforced.filesystem),
            format!("no_new_privs={no_new_privs}"),
            format!("seccomp={seccomp}"),
            format!("socket={}", socket >= 0),
            format!("unshare={}", unshare == 0),
            format!("allowed={}", std::fs::read(format!("{allowed}/input")).is_ok()),
            format!("forbidden={}", std::fs::read(forbidden).is_ok()),
            format!("proc={}", std::fs::read("/proc/1/environ").is_ok()),
            format!("write={}", std::fs::write(format!("{allowed}/written"), b"x").is_ok()),
            format!("spawn={}", Command::new("/bin/true").status().is_ok_and(|s| s.success())),
            format!("nofile={}", limit(libc::RLIMIT_NOFILE)),
            format!("cpu={}", limit(libc::RLIMIT_CPU)),
            format!("fsize={}", limit(libc::RLIMIT_FSIZE)),
            format!("nproc={}", limit(libc::RLIMIT_NPROC)),
        ];
        println!("\n{}", report.join("\n"));
    }

    #[tokio::test]
    async fn a_confined_child_reaches_only_what_it_was_given() {
        let dir = std::env::temp_dir().join(format!("isolation-confine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("input"), b"photo").unwrap();
        let secret = std::env::temp_dir().join(format!("isolation-secret-{}", std::process::id()));
        std::fs::write(&secret, b"database").unwrap();
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.args(["tests::confinement_probe", "--exact", "--nocapture", "--test-threads=1"]);
        command.env("ISOLATION_CONFINE_PROBE", format!("{}:{}", dir.display(), secret.display()));
        let limits = Limits {
            cpu_seconds: Some(30),
            open_files: Some(64),
            file_size_bytes: Some(1 << 20),
            processes: Some(4096),
            ..Limits::new(Duration::from_secs(60), 1 << 16)
        };
        let (done, stdout) = run(command, Vec::new(), limits, Vec::new()).await.unwrap();
        let report = String::from_utf8_lossy(&stdout);
        assert_eq!(done.ending, Ending::Exited(0), "{done:?} {report}");
        for expected in [
            "filesystem=true",
            "no_new_privs=1",
            "seccomp=2",
            "socket=false",
            "unshare=false",
            "allowed=true",
            "forbidden=false",
            "proc=false",
            "write=false",
            "spawn=true",
            "nofile=64",
            "cpu=30",
            "fsize=1048576",
            "nproc=4096",
        ] {
            assert!(report.lines().any(|line| line == expected), "{expected} missing from:\n{report}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&secret);
    }

    #[tokio::test]
    async fn a_child_cannot_start_processes_past_its_cap_even_as_root() {
        if !pids::available() {
            // SAFETY: plain system call.
            let root = unsafe { libc::geteuid() } == 0;
            eprintln!("no writable pids hierarchy (root: {root}): RLIMIT_NPROC is the only process limit here");
            return;
        }
        let forks = "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do sleep 1 & done; wait";
        let capped = Limits { job_processes: Some(8), ..limits(30_000) };
        let (done, _) = run(shell(forks), Vec::new(), capped, Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::Exited(2), "{done:?}");
        assert!(done.stderr_tail.contains("fork"), "{done:?}");
        // The same script runs to its end without the cap, and no group is left behind.
        let (done, _) = run(shell(forks), Vec::new(), limits(30_000), Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::Exited(0), "{done:?}");
        let leftover = ["/sys/fs/cgroup/pids/media-jobs", "/sys/fs/cgroup/media-jobs"]
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok())
            .flatten()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_name().to_string_lossy().starts_with(&format!("{}-", std::process::id())))
            .count();
        assert_eq!(leftover, 0, "groups are removed with their child");
    }

    #[tokio::test]
    async fn whatever_the_child_started_ends_with_it() {
        let marker = std::env::temp_dir().join(format!("isolation-orphan-{}", std::process::id()));
        let script = format!("(sleep 2; touch {}) & exit 0", marker.display());
        let (done, _) = run(shell(&script), Vec::new(), limits(60_000), Vec::new()).await.unwrap();
        assert_eq!(done.ending, Ending::Exited(0));
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!marker.exists(), "a process the child started outlived it");
    }

    #[tokio::test]
    async fn dropping_the_run_kills_the_child() {
        let marker = std::env::temp_dir().join(format!("isolation-cancel-{}", std::process::id()));
        let script = format!("sleep 2; touch {}", marker.display());
        let running = run(shell(&script), Vec::new(), limits(60_000), Vec::new());
        assert!(tokio::time::timeout(Duration::from_millis(300), running).await.is_err());
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!marker.exists(), "the child outlived its cancelled run");
    }
}
