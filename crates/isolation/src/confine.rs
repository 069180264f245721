//! What a process that runs untrusted work does to itself before it starts: no new privileges
//! (`PR_SET_NO_NEW_PRIVS`), a Landlock ruleset that leaves it read access to the system's
//! libraries and data and to the paths its work needs and nothing else (no write anywhere, no
//! signals or abstract sockets outside its own processes), and a seccomp filter that refuses the
//! system calls media work never makes (namespaces, tracing, modules, kernel keys, BPF) and, unless
//! the work needs the network, every socket.
//!
//! Both layers are inherited by every thread and process started afterwards, so they are applied
//! first thing, before any thread exists.

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What confined work may still reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Confinement {
    /// Files and directories it may read, besides the system's libraries and data.
    pub readable: Vec<PathBuf>,
    /// Whether it may open internet sockets (work that calls a provider). Without it, no socket
    /// of any family can be made.
    pub network: bool,
}

/// How much of a [`Confinement`] the running kernel enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enforced {
    /// The Landlock ruleset is enforced in full (false on kernels without Landlock, where only
    /// the seccomp filter and no-new-privileges hold).
    pub filesystem: bool,
}

/// Confinement could not be applied; the work must not run.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The Landlock ruleset could not be built or applied.
    #[error("landlock: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built or applied.
    #[error("seccomp: {0}")]
    Seccomp(String),
    /// `PR_SET_NO_NEW_PRIVS` failed.
    #[error("no_new_privs: {0}")]
    NoNewPrivs(std::io::Error),
}

/// System paths confined work reads: libraries and data (eSpeak NG's voices live under
/// `/usr/lib`), TLS roots and name resolution for work with the network, and the null and random
/// devices. Not `/proc` (other processes' environments) and not the rest of `/etc`.
const SYSTEM_READABLE: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/host.conf",
    "/etc/localtime",
    "/etc/ld.so.cache",
    "/dev/urandom",
    "/dev/null",
];

/// Applies `confinement` to the calling thread and everything it starts from now on.
pub fn confine_self(confinement: &Confinement) -> Result<Enforced, ConfineError> {
    // SAFETY: plain system call with constant arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(ConfineError::NoNewPrivs(std::io::Error::last_os_error()));
    }
    let status = restrict_filesystem(confinement).map_err(|e| ConfineError::Landlock(e.to_string()))?;
    let filter = syscall_filter(confinement.network)?;
    seccompiler::apply_filter(&filter).map_err(|e| ConfineError::Seccomp(e.to_string()))?;
    Ok(Enforced { filesystem: status.ruleset == RulesetStatus::FullyEnforced })
}

fn restrict_filesystem(confinement: &Confinement) -> Result<RestrictionStatus, landlock::RulesetError> {
    let abi = ABI::V7;
    let read = AccessFs::from_read(abi);
    let mut ruleset =
        Ruleset::default().set_compatibility(CompatLevel::BestEffort).handle_access(AccessFs::from_all(abi))?;
    if !confinement.network {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    ruleset
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?
        .create()?
        .add_rules(path_beneath_rules(SYSTEM_READABLE, read))?
        .add_rules(path_beneath_rules(["/dev/null"], AccessFs::WriteFile))?
        .add_rules(path_beneath_rules(&confinement.readable, read))?
        .restrict_self()
}

/// Namespaces a cloned process may not be given.
const NEW_NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// System calls refused outright: other processes' memory, namespaces and mounts, kernel modules
/// and keys, BPF and performance counters, the clock, swap and reboot.
const REFUSED_SYSCALLS: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_fanotify_init,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
];

/// Socket families work with the network may open (netlink for the resolver's address checks).
const NETWORK_FAMILIES: &[i32] = &[libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK];

fn syscall_filter(network: bool) -> Result<BpfProgram, ConfineError> {
    let fail = |e: &dyn std::fmt::Display| ConfineError::Seccomp(e.to_string());
    let arch = std::env::consts::ARCH.try_into().map_err(|e| fail(&e))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = REFUSED_SYSCALLS.iter().map(|&call| (call, Vec::new())).collect();
    let any_flag = |flag: u64| {
        SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
            .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    let clone_rules = NEW_NAMESPACE_FLAGS.iter().map(|&flag| any_flag(flag)).collect::<Result<Vec<_>, _>>();
    rules.insert(libc::SYS_clone, clone_rules.map_err(|e| fail(&e))?);
    if network {
        // A socket of any other family is refused.
        let other_family = NETWORK_FAMILIES
            .iter()
            .map(|&family| SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64))
            .collect::<Result<Vec<_>, _>>()
            .and_then(SeccompRule::new)
            .map_err(|e| fail(&e))?;
        rules.insert(libc::SYS_socket, vec![other_family]);
    } else {
        rules.insert(libc::SYS_socket, Vec::new());
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)
        .map_err(|e| fail(&e))?;
    let mut program: BpfProgram = filter.try_into().map_err(|e: seccompiler::BackendError| fail(&e))?;
    program = with_unfilterable_calls_refused(program);
    Ok(program)
}

/// Puts in front of `program`'s rules a check that answers `ENOSYS` to `clone3`, whose flags are
/// in memory a filter cannot read (the C library then falls back to `clone`, whose flags are
/// checked), and to the x32 system calls of x86-64, which would otherwise pass under other numbers.
fn with_unfilterable_calls_refused(program: BpfProgram) -> BpfProgram {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const BPF_JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const BPF_JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    /// The bit x32 system calls carry in their numbers.
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    // Offset of `nr` in `struct seccomp_data`.
    const SYSCALL_NR: u32 = 0;
    let enosys = libc::SECCOMP_RET_ERRNO | (libc::ENOSYS as u32 & libc::SECCOMP_RET_DATA);
    // The compiled program begins by checking the architecture (and killing on a mismatch), so
    // ours goes after those first three instructions, where the number is known to be native.
    let (head, tail) = program.split_at(3.min(program.len()));
    let mut out = head.to_vec();
    out.extend([
        sock_filter { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: SYSCALL_NR },
        sock_filter { code: BPF_JEQ_K, jt: 1, jf: 0, k: libc::SYS_clone3 as u32 },
        sock_filter { code: BPF_JGE_K, jt: 0, jf: 1, k: X32_SYSCALL_BIT },
        sock_filter { code: BPF_RET_K, jt: 0, jf: 0, k: enosys },
    ]);
    out.extend_from_slice(tail);
    out
}
