//! A cap on the processes and threads of one child and everything it starts, through the
//! kernel's pids controller. `RLIMIT_NPROC` counts a whole user's processes and does not hold a
//! privileged user to it at all, so a service running as root has no other way to stop a child
//! from forking without bound. A group is made per child under `media-jobs/` in the pids
//! hierarchy (cgroup v1's `pids` mount, or cgroup v2 with the `pids` controller), the child joins
//! it between fork and exec, and the group is removed when the child has ended.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where groups are made: cgroup v1's pids hierarchy, then cgroup v2's root.
const ROOTS: [&str; 2] = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];
/// The folder of this service's groups under a root.
const PARENT: &str = "media-jobs";

/// One child's group; removed on drop.
pub(crate) struct PidsGroup {
    dir: PathBuf,
    /// `cgroup.procs`, opened before the fork: the child writes its pid to it.
    procs: File,
}

impl PidsGroup {
    /// A new group allowing `max` processes and threads, when this process may make one (it runs
    /// as root and a pids hierarchy is mounted writable); `None` otherwise.
    pub(crate) fn create(max: u64) -> Option<PidsGroup> {
        // SAFETY: plain system call.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        ROOTS.iter().find_map(|root| PidsGroup::create_under(Path::new(root), max).ok())
    }

    fn create_under(root: &Path, max: u64) -> std::io::Result<PidsGroup> {
        let v2 = root.join("cgroup.controllers").exists();
        if v2 && !std::fs::read_to_string(root.join("cgroup.controllers"))?.split_whitespace().any(|c| c == "pids") {
            return Err(std::io::Error::other("no pids controller"));
        }
        if !v2 && !root.join("pids.max").exists() && !root.join("cgroup.procs").exists() {
            return Err(std::io::Error::other("not a pids hierarchy"));
        }
        let parent = root.join(PARENT);
        std::fs::create_dir_all(&parent)?;
        if v2 {
            // Children of a v2 group get a controller only when their parent hands it down.
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+pids");
            std::fs::write(parent.join("cgroup.subtree_control"), "+pids")?;
        }
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        let name = format!("{}-{}", std::process::id(), SEQUENCE.fetch_add(1, Ordering::Relaxed));
        let dir = parent.join(name);
        std::fs::create_dir(&dir)?;
        let made = (|| {
            std::fs::write(dir.join("pids.max"), max.to_string())?;
            std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"))
        })();
        match made {
            Ok(procs) => Ok(PidsGroup { dir, procs }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// The descriptor the child writes its pid to (see [`join`]).
    pub(crate) fn procs_fd(&self) -> libc::c_int {
        self.procs.as_raw_fd()
    }
}

impl Drop for PidsGroup {
    fn drop(&mut self) {
        // The child and its group were killed and reaped before; a descendant may take a moment
        // to leave.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Moves the calling process into the group behind `procs_fd`. Runs between fork and exec, so it
/// only formats into a stack buffer and makes one system call.
pub(crate) fn join(procs_fd: libc::c_int) -> std::io::Result<()> {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    // SAFETY: plain system call.
    let mut pid = u64::try_from(unsafe { libc::getpid() }).unwrap_or(0);
    loop {
        at -= 1;
        digits[at] = b'0' + (pid % 10) as u8;
        pid /= 10;
        if pid == 0 {
            break;
        }
    }
    let text = &digits[at..];
    // SAFETY: writing a valid buffer to a descriptor this process holds open.
    let written = unsafe { libc::write(procs_fd, text.as_ptr().cast(), text.len()) };
    if written < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process can make groups: true when it runs as root on a writable pids hierarchy.
pub fn available() -> bool {
    PidsGroup::create(1).is_some()
}
