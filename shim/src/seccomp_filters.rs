//! The seccomp programs the target runs under.
//!
//! Two parts (SPEC §3): a static part that the kernel decides alone (kill foreign
//! architectures and the x32 ABI, refuse calls that weaken the fence), and a notification
//! part whose calls go to the supervisor (exec, connect, writes).
//!
//! seccompiler builds the rule chains. It has no `SECCOMP_RET_USER_NOTIF` action, so the
//! notification rules are built with `SeccompAction::Trace(NOTIFY_MARK)` as a placeholder
//! and every `ret TRACE|NOTIFY_MARK` instruction is then patched to `ret USER_NOTIF`
//! ([`compile_group`]). It has no `SECCOMP_FILTER_FLAG_NEW_LISTENER` either, so programs
//! are installed with the raw `seccomp(2)` call ([`crate::sys`]). Different error numbers
//! need different programs (seccompiler has one match action per filter), so each group of
//! rules is its own program and they are chained ([`chain`]). Both parts go into one
//! filter, [`fenced_program`], behind a binary search on the call number (seccompiler's
//! own dispatch is a linear scan).

use std::collections::BTreeMap;

use crate::bpf_peephole;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

/// `RWF_NOAPPEND` (Linux 6.9): a `pwritev2` at its offset even on an `O_APPEND` file.
const RWF_NOAPPEND: u64 = 0x20;

/// Placeholder trace value marking the returns that become `SECCOMP_RET_USER_NOTIF`.
const NOTIFY_MARK: u32 = 0x0fe7;

/// x32 system calls carry this bit in their number; x32 is not a fence ABI.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

// System calls newer than the libc crate's tables (same numbers on every architecture).
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;
const SYS_OPEN_TREE_ATTR: i64 = 467;
const SYS_FILE_SETATTR: i64 = 469;

/// ioctl requests that change an inode's flags or extended attributes (`chattr`: no-dump,
/// no-atime, project id…) on a descriptor opened for reading only: metadata that neither
/// Landlock nor the notified metadata calls see (FS_IOC_SETFLAGS, its 32-bit twin,
/// FS_IOC_FSSETXATTR, FS_IOC_SETVERSION and its 32-bit twin, and ext4's own
/// EXT4_IOC_SETVERSION and its 32-bit twin, which set the inode's generation).
pub const INODE_FLAG_IOCTLS: [u64; 7] = [
    0x4008_6602,
    0x4004_6602,
    0x401c_5820,
    0x4008_7602,
    0x4004_7602,
    0x4008_6604,
    0x4004_6604,
];

/// ioctl requests that cut, zero, punch or swap what a file holds through a descriptor
/// open for writing, past `O_APPEND` (the kernel checks only the inode's append-only
/// attribute): a log handed in for appending (fence started with `>> log`) would lose what
/// it held, as with the `ftruncate` and `fallocate` the supervisor refuses on it. XFS's
/// and the generic reservation calls that punch (FS_IOC_UNRESVSP and its 64-bit form,
/// FS_IOC_ZERO_RANGE; FREESP/ALLOCSP and their 64-bit forms, which set the size before
/// Linux 5.17) and ext4's block swap with another file (EXT4_IOC_MOVE_EXT). Tools other
/// than defragmenters and XFS's own do not use them.
pub const CONTENT_REWRITING_IOCTLS: [u64; 7] = [
    0x4030_5829, // FS_IOC_UNRESVSP
    0x4030_582b, // FS_IOC_UNRESVSP64
    0x4030_5839, // FS_IOC_ZERO_RANGE
    0x4030_580a, // XFS_IOC_ALLOCSP
    0x4030_580b, // XFS_IOC_FREESP
    0x4030_5824, // XFS_IOC_ALLOCSP64
    0x4030_5825, // XFS_IOC_FREESP64
];

/// ext4's `EXT4_IOC_MOVE_EXT`: see [`CONTENT_REWRITING_IOCTLS`].
const EXT4_IOC_MOVE_EXT: u64 = 0xc028_660f;

/// ioctl requests that make, remove or change objects of the file system through a
/// descriptor opened for reading only, which Landlock's path hooks never see: btrfs
/// subvolumes and snapshots (a subvolume or a snapshot is a new directory, made in the
/// folder the descriptor names, outside the worktree or at a protected name inside it, and
/// a snapshot copies a subvolume whose secrets are hidden; the read-only flag of a
/// subvolume, its received UUID), an fscrypt policy on an empty folder (nothing can be
/// made in it without the key afterwards), fscrypt keys (the file system's keyring, as
/// `add_key`/`keyctl` are the kernel's), fs-verity (a file made read-only for good) and a
/// FAT file's attributes. None needs more than the descriptor's owner, and no agent needs
/// them. Cloning (`FICLONE`, same magic as btrfs) needs a descriptor open for writing and
/// stays.
pub const FILESYSTEM_OBJECT_IOCTLS: [u64; 14] = [
    0x5000_9401, // BTRFS_IOC_SNAP_CREATE
    0x5000_940e, // BTRFS_IOC_SUBVOL_CREATE
    0x5000_940f, // BTRFS_IOC_SNAP_DESTROY
    0x5000_9417, // BTRFS_IOC_SNAP_CREATE_V2
    0x5000_9418, // BTRFS_IOC_SUBVOL_CREATE_V2
    0x4008_941a, // BTRFS_IOC_SUBVOL_SETFLAGS
    0x5000_943f, // BTRFS_IOC_SNAP_DESTROY_V2
    0xc0c8_9425, // BTRFS_IOC_SET_RECEIVED_SUBVOL
    0x800c_6613, // FS_IOC_SET_ENCRYPTION_POLICY
    0xc050_6617, // FS_IOC_ADD_ENCRYPTION_KEY
    0xc040_6618, // FS_IOC_REMOVE_ENCRYPTION_KEY
    0xc040_6619, // FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS
    0x4080_6685, // FS_IOC_ENABLE_VERITY
    0x4004_7211, // FAT_IOCTL_SET_ATTRIBUTES
];

/// Namespace flags that `clone` must not carry (CLONE_NEWTIME shares its bit with the
/// exit-signal byte of `clone`, so it is checked on `unshare` only).
const CLONE_NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// Open flags that make an `open` a write: any of these sends it to the supervisor.
/// `O_TRUNC` counts even with `O_RDONLY` (it still truncates).
pub const WRITE_OPEN_FLAGS: [u64; 6] = [
    libc::O_WRONLY as u64,
    libc::O_RDWR as u64,
    libc::O_CREAT as u64,
    libc::O_TRUNC as u64,
    libc::O_APPEND as u64,
    // __O_TMPFILE without O_DIRECTORY: the bit that distinguishes O_TMPFILE.
    0o20000000,
];

#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    #[error("seccomp filters are not defined for the {0} architecture")]
    UnsupportedArch(&'static str),
    #[error("building the seccomp program failed: {0}")]
    Build(String),
}

/// Which socket families the sandbox may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketFamilies {
    /// `AF_UNIX` only: no network at all.
    UnixOnly,
    /// `AF_UNIX`, `AF_INET`, `AF_INET6` with inet stream sockets only: used without a
    /// network namespace when Landlock refuses every TCP bind and connect the target makes
    /// itself, so that only those the supervisor performs happen.
    UnixAndInet,
    /// `AF_UNIX`, `AF_INET`, `AF_INET6`, inet datagram (UDP) sockets included: the sandbox
    /// has its own network namespace, whose only interface is its own loopback. A datagram
    /// names its destination in calls no filter can read (`sendmsg`), but in that namespace
    /// the kernel has no route to anything but the sandbox's loopback, so a test suite's
    /// UDP server and client on 127.0.0.1 work and nothing leaves.
    OwnNetwork,
}

impl SocketFamilies {
    /// Whether inet datagram sockets of the sandbox's own are real ones (the sandbox's own
    /// network namespace), not refused or stood in for.
    fn own_datagrams(self) -> bool {
        self == SocketFamilies::OwnNetwork
    }
}

/// The terminal requests sent to the supervisor while watched (`tcsetpgrp`, the
/// `tcsetattr` family, `tcflush`): `supervisor/src/run/foreground.rs` answers them.
pub const GUARDED_TERMINAL_REQUESTS: [u64; 11] = [
    libc::TIOCSPGRP,
    libc::TCSETS,
    libc::TCSETSW,
    libc::TCSETSF,
    libc::TCSETA,
    libc::TCSETAW,
    libc::TCSETAF,
    libc::TCSETS2,
    libc::TCSETSW2,
    libc::TCSETSF2,
    libc::TCFLSH,
];

/// What the static program refuses besides the fixed deny list: the stand-ins for Landlock
/// rights an older ABI lacks ([`crate::landlock_fence::Compensation`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StaticGuards {
    /// Landlock below ABI 3 does not govern truncation: refuse `open`/`openat` with
    /// `O_TRUNC` and `O_RDONLY` (Landlock checks only read access for it, yet the file is
    /// truncated). `openat2` is refused at every ABI (see [`static_program`]).
    pub truncating_opens: bool,
    /// No Landlock signal scope: refuse `kill(0, …)`. The sandbox shares fence's process
    /// group, which a pid namespace does not hide from a group signal. Turning `O_ASYNC`
    /// on is refused too (a terminal's signals go to its foreground process group).
    pub group_kill: bool,
    /// No IPC namespace of its own: refuse System V shared memory, message queues and
    /// semaphores and POSIX message queues, which would be the host's. Their objects are
    /// named by key or by id (small, guessable integers), not by paths Landlock sees: a
    /// process of the same user could write into another program's shared memory, read its
    /// messages or remove its semaphores.
    pub host_ipc: bool,
    /// No pid namespace: the user's processes outside the sandbox can be named by pid, so
    /// setting another process's limits or priorities is refused ([`other_process_rules`]).
    pub host_pids: bool,
    /// Opens are not notified (`--no-write-watch`): refuse a set-id mode on a creating
    /// `open`/`openat` here ([`setid_open_calls`]); when they are notified the supervisor
    /// refuses it from the same register.
    pub setid_opens: bool,
    /// The supervisor reads the target's memory without privilege over it (no user
    /// namespace, an ordinary user): `prctl(PR_SET_DUMPABLE, 0)` (ssh-agent and gpg-agent
    /// make it) would make every later notified call of that process unreadable, each
    /// refused. It is answered as done without being done ([`undumpable_rules`]).
    pub keep_dumpable: bool,
}

/// `prctl(PR_SET_DUMPABLE, SUID_DUMP_DISABLE)`: answered 0 (done) without being run where
/// [`StaticGuards::keep_dumpable`] holds. The process stays readable to its own user, as
/// any process of the user is; inside the sandbox nothing may trace it (ptrace and
/// process_vm_* are refused), and no set-id exec makes it undumpable under no_new_privs.
fn undumpable_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    let dumpable = cond(0, Len::Dword, Op::Eq, libc::PR_SET_DUMPABLE as u64);
    let disable = cond(1, Len::Qword, Op::Eq, 0);
    [(libc::SYS_prctl, vec![rule(vec![dumpable, disable])])]
        .into_iter()
        .collect()
}

/// The System V IPC and POSIX message queue calls refused without an IPC namespace
/// (`shmdt` only detaches what the process already has).
const HOST_IPC_CALLS: [i64; 17] = [
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semctl,
    libc::SYS_semtimedop,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
];

/// `MSG_FASTOPEN`: a TCP connect carried by `sendto`/`sendmsg`, which no connect hook of
/// Landlock sees and no `connect` notification reports.
const MSG_FASTOPEN: u64 = 0x2000_0000;
/// The socket type is the low four bits of `socket`'s second argument (the rest are
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`).
const SOCK_TYPE_MASK: u64 = 0xf;

/// What a group of rules does to a call that matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnMatch {
    Errno(i32),
    Notify,
}

/// One rule table and its answer; a call is judged by the groups in order, and the first
/// that matches answers.
type Group = (BTreeMap<i64, Vec<SeccompRule>>, OnMatch);

/// The groups of the static part, in order.
///
/// With `dns` (`--allow-dns`), inet `SOCK_DGRAM` sockets with protocol 0 or UDP pass (even
/// where inet sockets are otherwise refused): the notified calls send their creation to
/// the supervisor, which never gives the sandbox a real UDP socket ([`notified_table`]).
/// In the sandbox's own network namespace ([`SocketFamilies::OwnNetwork`]) they pass too.
fn static_groups(families: SocketFamilies, guards: StaticGuards, dns: bool) -> Vec<Group> {
    let mut eperm = denied_with_eperm();
    if guards.group_kill {
        // kill's pid is an int: compare the low 32 bits.
        eperm.insert(
            libc::SYS_kill,
            vec![rule(vec![cond(0, Len::Dword, Op::Eq, 0)])],
        );
        // O_ASYNC on a terminal without a signal owner makes the terminal's foreground
        // process group the owner: fence's own job, or the user's shell when fence runs
        // in the background. Without a signal scope nothing stops the signal `F_SETSIG`
        // chose (SIGKILL included) from reaching that group, which a pid namespace does
        // not hide (the group is recorded, not looked up by number). Refused: `ioctl
        // (FIOASYNC)` whatever its argument (a pointer BPF cannot read), and `F_SETFL`
        // with `O_ASYNC` (the flags are an int).
        eperm
            .entry(libc::SYS_ioctl)
            .or_default()
            .push(rule(vec![cond(1, Len::Dword, Op::Eq, libc::FIOASYNC)]));
        eperm.entry(libc::SYS_fcntl).or_default().push(rule(vec![
            cond(1, Len::Dword, Op::Eq, libc::F_SETFL as u64),
            cond(
                2,
                Len::Dword,
                Op::MaskedEq(libc::O_ASYNC as u64),
                libc::O_ASYNC as u64,
            ),
        ]));
    }
    if guards.host_pids {
        eperm.extend(other_process_rules());
    }
    if guards.setid_opens {
        add_setid_rules(&mut eperm, &setid_open_calls());
    }
    if guards.host_ipc {
        for nr in HOST_IPC_CALLS {
            eperm.insert(nr, Vec::new());
        }
    }
    if families == SocketFamilies::UnixAndInet {
        eperm
            .entry(libc::SYS_setsockopt)
            .or_default()
            .extend(reuseport_rules());
    }
    let mut groups = vec![(eperm, OnMatch::Errno(libc::EPERM))];
    // clone3 keeps its flags in memory, where BPF cannot see the namespace ones. openat2
    // keeps its flags and mode there too: a racing thread could turn a checked read into
    // a create (of a protected name that does not exist yet) or add a set-id bit after the
    // supervisor read them. Both are refused as a kernel without them would (ENOSYS); libc
    // and the programs that try openat2 first fall back to clone and openat.
    // Legacy AIO keeps each write's flags in memory too (`aio_rw_flags`: RWF_NOAPPEND
    // would overwrite a file handed in for appending): refused as a kernel built without
    // it would, as io_uring is.
    let enosys: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_clone3, vec![]),
        (libc::SYS_openat2, vec![]),
        (libc::SYS_io_setup, vec![]),
    ]
    .into_iter()
    .collect();
    groups.push((enosys, OnMatch::Errno(libc::ENOSYS)));
    if guards.truncating_opens {
        groups.push((truncating_read_opens(), OnMatch::Errno(libc::EACCES)));
    }
    groups.push((
        socket_family_rules(families, dns),
        OnMatch::Errno(libc::EAFNOSUPPORT),
    ));
    let udp = dns || families.own_datagrams();
    groups.push((
        inet_protocol_rules(udp),
        OnMatch::Errno(libc::EPROTONOSUPPORT),
    ));
    groups.push((socket_type_rules(udp), OnMatch::Errno(libc::EACCES)));
    let mut unsupported = fastopen_rules();
    // pwritev2(RWF_NOAPPEND) writes at an offset of a file opened for appending: refused
    // as a kernel without the flag does (a file handed in with `>> log` stays append-only).
    unsupported.insert(
        libc::SYS_pwritev2,
        vec![rule(vec![cond(
            5,
            Len::Dword,
            Op::MaskedEq(RWF_NOAPPEND),
            RWF_NOAPPEND,
        )])],
    );
    groups.push((unsupported, OnMatch::Errno(libc::EOPNOTSUPP)));
    if guards.keep_dumpable {
        groups.push((undumpable_rules(), OnMatch::Errno(0)));
    }
    groups
}

/// The static part alone, as one program: installed by itself only when there is no
/// listener (`--allow-degraded` without user notification, never with `--allow-dns`);
/// otherwise [`fenced_program`] carries it.
pub fn static_program(
    families: SocketFamilies,
    guards: StaticGuards,
    dns: bool,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    assemble_static(families, guards, dns, true)
}

/// [`static_program`]; with `tidy` false, without the peephole pass (the tests compare
/// both).
fn assemble_static(
    families: SocketFamilies,
    guards: StaticGuards,
    dns: bool,
    tidy: bool,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    let arch = target_arch()?;
    let programs = static_groups(families, guards, dns)
        .into_iter()
        .map(|(rules, on_match)| compile_group(rules, on_match, arch))
        .collect::<Result<Vec<_>, _>>()?;
    let mut program = architecture_guard();
    program.extend(chain(programs));
    if tidy {
        program = bpf_peephole::shorten(program);
    }
    checked_len(program, "static")
}

/// What [`fenced_program`] is a function of: equal settings give the same program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FencedSettings {
    pub families: SocketFamilies,
    pub guards: StaticGuards,
    pub watch_writes: bool,
    pub loopback_table: bool,
    pub dns: bool,
}

/// [`fenced_program`] for `settings`.
pub fn fenced_program_for(settings: FencedSettings) -> Result<Vec<libc::sock_filter>, FilterError> {
    fenced_program(
        settings.families,
        settings.guards,
        settings.watch_writes,
        settings.loopback_table,
        settings.dns,
    )
}

/// The one program the target runs under: the static part, then the notified calls, in a
/// single filter installed with the listener.
///
/// seccompiler compares the call number with each of its system calls in turn, so a call
/// that has rules (every `openat`, `ioctl`, `clone`, `socket`…) used to run through some
/// 260 instructions of the static and notification programs before its own rules. Here a
/// binary search on the call number (about 7 comparisons) leads to that call's own rules,
/// which are seccompiler's programs for that one call, chained in the order of the groups
/// ([`chain`]). The answer is the one the two stacked filters gave: the static part's
/// refusals come first (an `ERRNO` of an older filter also beat `USER_NOTIF` of a newer
/// one), and a call no group names is allowed without running any rule. The kernel's
/// per-filter cache of always-allowed calls (Linux 5.11) skips the program for calls
/// without rules, as before: the search reads only the call number and the architecture.
pub fn fenced_program(
    families: SocketFamilies,
    guards: StaticGuards,
    watch_writes: bool,
    loopback_table: bool,
    dns: bool,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    assemble_fenced(families, guards, watch_writes, loopback_table, dns, true)
}

/// [`fenced_program`]; with `tidy` false, seccompiler's programs as they come (the tests
/// compare both).
fn assemble_fenced(
    families: SocketFamilies,
    guards: StaticGuards,
    watch_writes: bool,
    loopback_table: bool,
    dns: bool,
    tidy: bool,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    let arch = target_arch()?;
    let mut groups = static_groups(families, guards, dns);
    groups.push((
        notified_table(watch_writes, loopback_table, dns),
        OnMatch::Notify,
    ));
    let mut numbers: Vec<i64> = groups
        .iter()
        .flat_map(|(rules, _)| rules.keys().copied())
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let mut leaves = Vec::with_capacity(numbers.len());
    for nr in numbers {
        let programs = groups
            .iter()
            .filter_map(|(rules, on_match)| {
                rules.get(&nr).map(|r| {
                    compile_group([(nr, r.clone())].into(), *on_match, arch)
                        .map(without_arch_check)
                        .map(|p| if tidy { without_call_check(p, nr) } else { p })
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let nr = u32::try_from(nr).map_err(|_| FilterError::Build(format!("call {nr}")))?;
        leaves.push((nr, chain(programs)));
    }
    let mut program = architecture_guard();
    program.push(stmt(BPF_LD | BPF_W | BPF_ABS, 0)); // seccomp_data.nr
    program.extend(search(&leaves));
    if tidy {
        program = bpf_peephole::shorten(program);
    }
    checked_len(program, "seccomp")
}

/// A binary search on the call number in the accumulator: each call of `leaves` (sorted,
/// distinct) reaches its own instructions; any other call is allowed.
fn search(leaves: &[(u32, Vec<libc::sock_filter>)]) -> Vec<libc::sock_filter> {
    match leaves {
        [] => vec![stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW)],
        [(nr, body)] => {
            let mut out = vec![
                jump(BPF_JMP | BPF_JEQ | BPF_K, *nr, 1, 0),
                stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW),
            ];
            out.extend_from_slice(body);
            out
        }
        _ => {
            let (below, above) = leaves.split_at(leaves.len() / 2);
            let below = search(below);
            // nr >= the first of `above`: over the jump into the lower half's code.
            let mut out = vec![
                jump(BPF_JMP | BPF_JGE | BPF_K, above[0].0, 0, 1),
                stmt(BPF_JMP | BPF_JA, below.len() as u32),
            ];
            out.extend(below);
            out.extend(search(above));
            out
        }
    }
}

/// seccompiler opens each program with its architecture check (load the architecture,
/// compare, kill on a mismatch). Inside [`fenced_program`] the architecture guard at the
/// top has already decided that, so each call's program drops its copy: its jumps are all
/// forward and relative, so nothing points into the three instructions removed. A program
/// that does not open that way is kept whole.
fn without_arch_check(program: Vec<libc::sock_filter>) -> Vec<libc::sock_filter> {
    let opens_with_check = matches!(
        program.as_slice(),
        [load, cmp, kill, ..]
            if load.code == BPF_LD | BPF_W | BPF_ABS
                && load.k == 4
                && cmp.code == BPF_JMP | BPF_JEQ | BPF_K
                && cmp.jt == 1
                && cmp.jf == 0
                && kill.code == BPF_RET | BPF_K
                && kill.k == libc::SECCOMP_RET_KILL_PROCESS
    );
    if opens_with_check {
        program[3..].to_vec()
    } else {
        program
    }
}

/// seccompiler's program for one call opens by loading the call number and comparing it
/// with that call's (a mismatch skipping to "allow"). Inside [`fenced_program`] the search
/// has just found that number, and nothing between changes the accumulator, so the two
/// instructions are dropped: nothing jumps to them (jumps point forward), and the
/// comparison would always hold. A program that does not open that way is kept whole.
fn without_call_check(program: Vec<libc::sock_filter>, nr: i64) -> Vec<libc::sock_filter> {
    let opens_with_check = matches!(
        program.as_slice(),
        [load, cmp, ..]
            if load.code == BPF_LD | BPF_W | BPF_ABS
                && load.k == 0
                && cmp.code == BPF_JMP | BPF_JEQ | BPF_K
                && i64::from(cmp.k) == nr
                && cmp.jt == 0
    );
    if opens_with_check {
        program[2..].to_vec()
    } else {
        program
    }
}

fn checked_len(
    program: Vec<libc::sock_filter>,
    what: &str,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    if program.len() > BPF_MAX_LEN {
        return Err(FilterError::Build(format!(
            "{what} program of {} instructions",
            program.len()
        )));
    }
    Ok(program)
}

/// seccompiler's program for one group. It has no `SECCOMP_RET_USER_NOTIF` action: a
/// notifying group is built with the `Trace(NOTIFY_MARK)` placeholder, whose returns are
/// then patched.
fn compile_group(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    on_match: OnMatch,
    arch: TargetArch,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    let action = match on_match {
        OnMatch::Errno(e) => SeccompAction::Errno(e as u32),
        OnMatch::Notify => SeccompAction::Trace(NOTIFY_MARK),
    };
    let mut program = to_libc(compile(rules, action, arch)?);
    if on_match == OnMatch::Notify {
        let placeholder = libc::SECCOMP_RET_TRACE | NOTIFY_MARK;
        let mut patched = 0;
        for insn in &mut program {
            if insn.code == (BPF_RET | BPF_K) && insn.k == placeholder {
                insn.k = libc::SECCOMP_RET_USER_NOTIF;
                patched += 1;
            }
        }
        if patched == 0 {
            return Err(FilterError::Build("no notification return to patch".into()));
        }
    }
    Ok(program)
}

/// Joins programs into one: every "allow" of a program but the last becomes a forward
/// jump to the start of the next one, so a call is allowed only when every program lets
/// it through — the same answer as stacking them, for one filter's cost.
fn chain(programs: Vec<Vec<libc::sock_filter>>) -> Vec<libc::sock_filter> {
    let count = programs.len();
    let mut out = Vec::new();
    for (i, mut program) in programs.into_iter().enumerate() {
        if i + 1 < count {
            let len = program.len();
            for (j, insn) in program.iter_mut().enumerate() {
                if insn.code == (BPF_RET | BPF_K) && insn.k == libc::SECCOMP_RET_ALLOW {
                    *insn = stmt(BPF_JMP | BPF_JA, (len - j - 1) as u32);
                }
            }
        }
        out.extend(program);
    }
    out
}

/// `open`/`openat` whose flags carry `O_TRUNC` with an access mode that does not write:
/// `O_RDONLY`, and 3 (neither reading nor writing, which Linux accepts), for which Landlock
/// asks no write right either.
fn truncating_read_opens() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mask = (libc::O_ACCMODE | libc::O_TRUNC) as u64;
    let values = [
        (libc::O_RDONLY | libc::O_TRUNC) as u64,
        (libc::O_ACCMODE | libc::O_TRUNC) as u64,
    ];
    let rules_for = |arg: u8| {
        values
            .iter()
            .map(|&value| rule(vec![cond(arg, Len::Dword, Op::MaskedEq(mask), value)]))
            .collect::<Vec<_>>()
    };
    let mut rules = BTreeMap::new();
    rules.insert(libc::SYS_openat, rules_for(2));
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_open, rules_for(1));
    rules
}

/// The program whose matching calls are sent to the supervisor. With `watch_writes`
/// false (`--no-write-watch`) the writes Landlock bounds go straight to the kernel, with
/// no blocked reason ([`LANDLOCK_BOUNDED_WRITES`]).
///
/// With `loopback_table`, `bind` and `listen` are notified too: the sandbox has no network
/// namespace, and the supervisor performs every inet bind (on loopback only) and listen,
/// recording the sockets it bound (SPEC §4).
///
/// With `dns` (`--allow-dns`): `socket` for an inet datagram socket (the supervisor answers
/// with its own stand-in, see `fence::run::dns_call`), `recvfrom` with a source-address
/// argument (a resolver checks where an answer came from, which the stand-in must report),
/// `bind` (a resolver may bind its socket to the wildcard first) and `setsockopt` at the IP
/// levels.
pub fn notification_program(
    watch_writes: bool,
    loopback_table: bool,
    dns: bool,
) -> Result<Vec<libc::sock_filter>, FilterError> {
    compile_group(
        notified_table(watch_writes, loopback_table, dns),
        OnMatch::Notify,
        target_arch()?,
    )
}

fn notified_table(
    watch_writes: bool,
    loopback_table: bool,
    dns: bool,
) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut calls = notified_calls();
    // The terminal calls that take its foreground or change it for whoever holds it
    // (`tcsetpgrp`, `tcsetattr`, `tcflush`): the supervisor lets them run only while the
    // foreground of the user's terminal is the sandbox's (`supervisor/src/run/
    // foreground.rs`). Requests are compared as the kernel reads them, 32 bits.
    calls.insert(
        libc::SYS_ioctl,
        GUARDED_TERMINAL_REQUESTS
            .iter()
            .map(|&req| rule(vec![cond(1, Len::Dword, Op::Eq, req)]))
            .collect(),
    );
    // Without a pid namespace a process could join one of the user's process groups (the
    // shell's, to be in the terminal's foreground with it): the supervisor looks (rare: a
    // shell's job control).
    calls.insert(libc::SYS_setpgid, Vec::new());
    if watch_writes {
        // The supervisor carries creates out with the caller's umask, which it keeps
        // between calls and must hear of when it changes; a pathname unix bind makes a
        // name, which it carries out too (the address is in memory: BPF cannot tell a
        // pathname from an inet or abstract one, so every bind is notified).
        calls.insert(libc::SYS_umask, Vec::new());
        calls.insert(libc::SYS_bind, Vec::new());
        // The supervisor keeps each thread's working directory between its writes and must
        // hear of a change (`fence::run::kept_thread`); the calls run unchanged.
        calls.insert(libc::SYS_chdir, Vec::new());
        calls.insert(libc::SYS_fchdir, Vec::new());
    } else {
        calls.retain(|nr, _| !LANDLOCK_BOUNDED_WRITES.contains(nr));
    }
    if loopback_table || dns {
        calls.insert(libc::SYS_bind, Vec::new());
    }
    if loopback_table {
        calls.insert(libc::SYS_listen, Vec::new());
    }
    if dns {
        calls.insert(libc::SYS_socket, inet_datagram_sockets());
        calls.insert(
            libc::SYS_recvfrom,
            vec![rule(vec![cond(4, Len::Qword, Op::Ne, 0)])],
        );
        // IP-level options (glibc's resolver gives up when IP_RECVERR fails, musl sets
        // IPV6_V6ONLY): a stand-in accepts them without effect.
        calls.insert(
            libc::SYS_setsockopt,
            [libc::SOL_IP, libc::SOL_IPV6]
                .into_iter()
                .map(|level| rule(vec![cond(1, Len::Dword, Op::Eq, level as u64)]))
                .collect(),
        );
    }
    calls
}

const BPF_LD: u16 = 0x00;
const BPF_W: u16 = 0x00;
const BPF_ABS: u16 = 0x20;
const BPF_JMP: u16 = 0x05;
const BPF_JEQ: u16 = 0x10;
const BPF_JGE: u16 = 0x30;
const BPF_JA: u16 = 0x00;
const BPF_MAX_LEN: usize = 4096;
const BPF_K: u16 = 0x00;
const BPF_RET: u16 = 0x06;

/// A classic BPF instruction without jump offsets.
pub(crate) fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A classic BPF conditional jump.
pub(crate) fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Kills the process on a foreign architecture (i386 `int 0x80`) or an x32 call number.
/// seccompiler checks the architecture but not the x32 bit, whose calls would otherwise
/// fall through to "allow" under their x32 numbers.
fn architecture_guard() -> Vec<libc::sock_filter> {
    #[cfg(target_arch = "x86_64")]
    {
        const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        vec![
            stmt(BPF_LD | BPF_W | BPF_ABS, 4), // seccomp_data.arch
            jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
            stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
            stmt(BPF_LD | BPF_W | BPF_ABS, 0), // seccomp_data.nr
            jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
            stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        ]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = X32_SYSCALL_BIT;
        Vec::new()
    }
}

fn target_arch() -> Result<TargetArch, FilterError> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| FilterError::UnsupportedArch(std::env::consts::ARCH))
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    on_match: SeccompAction,
    arch: TargetArch,
) -> Result<BpfProgram, FilterError> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, on_match, arch)
        .map_err(|e| FilterError::Build(e.to_string()))?;
    BpfProgram::try_from(filter).map_err(|e| FilterError::Build(e.to_string()))
}

fn to_libc(program: BpfProgram) -> Vec<libc::sock_filter> {
    program
        .into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect()
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> SeccompCondition {
    // Argument indexes used here are all below 6, the only way `new` fails.
    SeccompCondition::new(arg, len, op, value)
        .unwrap_or_else(|_| unreachable!("argument index {arg} < 6"))
}

fn rule(conditions: Vec<SeccompCondition>) -> SeccompRule {
    // Rules here always have at least one condition, the only way `new` fails.
    SeccompRule::new(conditions).unwrap_or_else(|_| unreachable!("rule has conditions"))
}

/// One rule per flag: the call matches when any flag in `flags` is set in argument `arg`.
fn any_flag(arg: u8, flags: &[u64]) -> Vec<SeccompRule> {
    flags
        .iter()
        .map(|&f| rule(vec![cond(arg, Len::Dword, Op::MaskedEq(f), f)]))
        .collect()
}

/// Calls refused with EPERM: no agent needs them and each weakens the fence.
pub fn denied_with_eperm() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        SYS_OPEN_TREE_ATTR,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_setns,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_iopl,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_ioperm,
        // file_setattr (6.17): FS_IOC_FSSETXATTR by path.
        SYS_FILE_SETATTR,
    ]
    .into_iter()
    .map(|nr| (nr, Vec::new()))
    .collect();

    // ioctl: the kernel reads the request as 32 bits, so compare only those (a Dword
    // comparison loads the low half): TIOCSTI | 1<<32 must not slip past (CVE-2019-10063).
    // TIOCSETD, TIOCEXCL and TCXONC change the terminal for good: a line discipline such
    // as N_NULL swallows everything typed and shown after fence returns, exclusive mode
    // makes every later open of the user's terminal fail with EBUSY (sudo's, ssh's
    // prompts), and output stopped by tcflow(TCOOFF) stays stopped under the user's shell.
    rules.insert(
        libc::SYS_ioctl,
        [
            libc::TIOCSTI,
            libc::TIOCLINUX,
            libc::TIOCSETD,
            libc::TIOCEXCL,
            libc::TCXONC,
        ]
        .into_iter()
        .chain(INODE_FLAG_IOCTLS)
        .chain(FILESYSTEM_OBJECT_IOCTLS)
        .chain(CONTENT_REWRITING_IOCTLS)
        .chain([EXT4_IOC_MOVE_EXT])
        .map(|req| rule(vec![cond(1, Len::Dword, Op::Eq, req)]))
        .collect(),
    );
    // Set-user-ID and set-group-ID bits, on files created or by chmod: a setuid program left
    // in the worktree outlives the sandbox, and runs with its owner's rights for whoever
    // starts it (root's, when fence runs as root). The mode is a register of each call, so
    // this holds whatever the path or a racing thread does. `open`/`openat` are left to the
    // supervisor, which is sent every creating open ([`StaticGuards::setid_opens`]).
    add_setid_rules(&mut rules, &setid_mode_calls());
    // A file lease (`F_SETLEASE`) on a file outside, which an open for reading lets a
    // process take on any file of its own user (root: of root's, `/etc/passwd`): every
    // host program that then opens it for writing or truncates it waits until the holder
    // lets go, up to `lease-break-time` (45 s). Programs in a sandbox have no use for one.
    rules.insert(
        libc::SYS_fcntl,
        vec![rule(vec![cond(
            1,
            Len::Dword,
            Op::Eq,
            libc::F_SETLEASE as u64,
        )])],
    );
    rules.insert(libc::SYS_clone, any_flag(0, &CLONE_NAMESPACE_FLAGS));
    let mut unshare_flags = CLONE_NAMESPACE_FLAGS.to_vec();
    unshare_flags.push(libc::CLONE_NEWTIME as u64);
    rules.insert(libc::SYS_unshare, any_flag(0, &unshare_flags));
    // personality: only the query (0xffffffff) and PER_LINUX pass.
    rules.insert(
        libc::SYS_personality,
        vec![rule(vec![
            cond(0, Len::Dword, Op::Ne, 0xffff_ffff),
            cond(0, Len::Dword, Op::Ne, 0),
        ])],
    );
    rules
}

/// Limits and priorities of other processes, refused where the user's processes outside
/// the sandbox are in reach (no pid namespace): Landlock's scopes do not cover them.
/// RLIMIT_CPU set on another process kills it (SIGXCPU, then SIGKILL), RLIMIT_FSIZE makes
/// its writes fail; PRIO_USER renices all of the user's processes; SCHED_IDLE set on a
/// process starves it as surely as a nice of 19, and `sched_setattr` sets a nice value too.
/// The calling thread's own (pid or who 0, as setrlimit, nice, ionice and chrt use them)
/// stay settable. Threads name themselves by thread id where BPF cannot tell them from
/// another process (`pthread_setschedparam` calls `sched_setscheduler(tid, …)`): so that
/// call is refused only for SCHED_IDLE, and `sched_setparam` (a priority within the current
/// policy: 0 for every policy an unprivileged process can hold) and CPU affinity (thread
/// pools pin their own threads; a pinned process still runs) stay open.
fn other_process_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules = BTreeMap::new();
    rules.insert(
        libc::SYS_prlimit64,
        vec![rule(vec![
            cond(0, Len::Dword, Op::Ne, 0),
            cond(2, Len::Qword, Op::Ne, 0),
        ])],
    );
    rules.insert(
        libc::SYS_setpriority,
        vec![
            rule(vec![cond(0, Len::Dword, Op::Ne, libc::PRIO_PROCESS as u64)]),
            rule(vec![cond(1, Len::Dword, Op::Ne, 0)]),
        ],
    );
    rules.insert(
        libc::SYS_ioprio_set,
        vec![
            // which: IOPRIO_WHO_PROCESS
            rule(vec![cond(0, Len::Dword, Op::Ne, 1)]),
            rule(vec![cond(1, Len::Dword, Op::Ne, 0)]),
        ],
    );
    // policy: SCHED_IDLE, with or without SCHED_RESET_ON_FORK.
    let without_reset_on_fork = !(libc::SCHED_RESET_ON_FORK as u64) & 0xffff_ffff;
    rules.insert(
        libc::SYS_sched_setscheduler,
        vec![rule(vec![
            cond(0, Len::Dword, Op::Ne, 0),
            cond(
                1,
                Len::Dword,
                Op::MaskedEq(without_reset_on_fork),
                libc::SCHED_IDLE as u64,
            ),
        ])],
    );
    rules.insert(
        libc::SYS_sched_setattr,
        vec![rule(vec![cond(0, Len::Dword, Op::Ne, 0)])],
    );
    rules
}

/// Adds to `rules` the refusal of a set-id mode for each of `calls` (see
/// [`setid_mode_calls`]).
fn add_setid_rules(rules: &mut BTreeMap<i64, Vec<SeccompRule>>, calls: &[(i64, u8, Option<u8>)]) {
    for &(nr, mode_arg, created_by) in calls {
        let mut list = Vec::new();
        for bit in [libc::S_ISUID as u64, libc::S_ISGID as u64] {
            let mode = cond(mode_arg, Len::Dword, Op::MaskedEq(bit), bit);
            match created_by {
                // open/openat: the mode counts only with O_CREAT or O_TMPFILE.
                Some(flags_arg) => {
                    for flag in [libc::O_CREAT as u64, libc::O_TMPFILE as u64] {
                        list.push(rule(vec![
                            cond(flags_arg, Len::Dword, Op::MaskedEq(flag), flag),
                            mode.clone(),
                        ]));
                    }
                }
                None => list.push(rule(vec![mode])),
            }
        }
        rules.entry(nr).or_default().extend(list);
    }
}

/// `open` and `openat` with O_CREAT or O_TMPFILE and a set-id mode: refused here only where
/// they are not notified (`--no-write-watch`); every read-only open would otherwise pay for
/// these rules.
fn setid_open_calls() -> Vec<(i64, u8, Option<u8>)> {
    let mut calls = vec![(libc::SYS_openat, 3, Some(2))];
    #[cfg(target_arch = "x86_64")]
    calls.push((libc::SYS_open, 2, Some(1)));
    calls
}

/// Calls that take a file mode: (number, index of the mode argument, index of the flags
/// argument when the mode applies only to a file the call creates).
fn setid_mode_calls() -> Vec<(i64, u8, Option<u8>)> {
    let mut calls = vec![
        (libc::SYS_mknodat, 2, None),
        (libc::SYS_fchmod, 1, None),
        (libc::SYS_fchmodat, 2, None),
        (libc::SYS_fchmodat2, 2, None),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_creat, 1, None),
        (libc::SYS_mknod, 1, None),
        (libc::SYS_chmod, 1, None),
    ]);
    calls
}

/// `socket` calls creating an inet datagram socket (any protocol: the static program has
/// already refused those other than 0 and UDP).
fn inet_datagram_sockets() -> Vec<SeccompRule> {
    [libc::AF_INET, libc::AF_INET6]
        .into_iter()
        .map(|family| {
            rule(vec![
                cond(0, Len::Dword, Op::Eq, family as u64),
                cond(
                    1,
                    Len::Dword,
                    Op::MaskedEq(SOCK_TYPE_MASK),
                    libc::SOCK_DGRAM as u64,
                ),
            ])
        })
        .collect()
}

/// `setsockopt(…, SOL_SOCKET, SO_REUSEPORT, …)`, refused where the sandbox shares the
/// host's loopback (the loopback table): a listener of the sandbox's with the option set,
/// on the port of a host service of the same user that set it too, would join that
/// service's group and take part of its connections. The supervisor performs every bind
/// there after clearing the option, but a thread of the sandbox could set it again on the
/// shared socket between the two steps; with the option out of reach no step is needed.
/// Level and name are registers.
fn reuseport_rules() -> Vec<SeccompRule> {
    vec![rule(vec![
        cond(1, Len::Dword, Op::Eq, libc::SOL_SOCKET as u64),
        cond(2, Len::Dword, Op::Eq, libc::SO_REUSEPORT as u64),
    ])]
}

/// Families refused with EAFNOSUPPORT. With `dns` and no inet otherwise, inet sockets of
/// the datagram type alone pass (to be notified).
fn socket_family_rules(families: SocketFamilies, dns: bool) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut family = vec![cond(0, Len::Dword, Op::Ne, libc::AF_UNIX as u64)];
    let mut socket = Vec::new();
    if families != SocketFamilies::UnixOnly || dns {
        family.push(cond(0, Len::Dword, Op::Ne, libc::AF_INET as u64));
        family.push(cond(0, Len::Dword, Op::Ne, libc::AF_INET6 as u64));
    }
    if families == SocketFamilies::UnixOnly && dns {
        for f in [libc::AF_INET, libc::AF_INET6] {
            for kind in (0..=SOCK_TYPE_MASK).filter(|&t| t != libc::SOCK_DGRAM as u64) {
                socket.push(rule(vec![
                    cond(0, Len::Dword, Op::Eq, f as u64),
                    cond(1, Len::Dword, Op::MaskedEq(SOCK_TYPE_MASK), kind),
                ]));
            }
        }
    }
    socket.push(rule(family));
    [
        (libc::SYS_socket, socket),
        (
            libc::SYS_socketpair,
            vec![rule(vec![cond(
                0,
                Len::Dword,
                Op::Ne,
                libc::AF_UNIX as u64,
            )])],
        ),
    ]
    .into_iter()
    .collect()
}

/// The notified calls `--no-write-watch` stops notifying: the writes Landlock bounds
/// (opens for writing, creates, renames, links, unlinks, mkdir, rmdir, symlink, mknod).
/// Metadata calls and `truncate` stay notified: Landlock does not govern them (truncate
/// below ABI 3), and through a descriptor inherited from outside, or its
/// `/proc/self/fd/N` link, they reach a mount the read-only view does not cover. They are
/// rare, so keeping them costs nothing measurable.
#[cfg(target_arch = "x86_64")]
const LANDLOCK_BOUNDED_WRITES: [i64; 17] = [
    libc::SYS_open,
    libc::SYS_creat,
    libc::SYS_rename,
    libc::SYS_link,
    libc::SYS_unlink,
    libc::SYS_mkdir,
    libc::SYS_rmdir,
    libc::SYS_symlink,
    libc::SYS_mknod,
    libc::SYS_openat,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_linkat,
    libc::SYS_unlinkat,
    libc::SYS_mkdirat,
    libc::SYS_symlinkat,
    libc::SYS_mknodat,
];
#[cfg(not(target_arch = "x86_64"))]
const LANDLOCK_BOUNDED_WRITES: [i64; 8] = [
    libc::SYS_openat,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_linkat,
    libc::SYS_unlinkat,
    libc::SYS_mkdirat,
    libc::SYS_symlinkat,
    libc::SYS_mknodat,
];

/// Inet sockets only with protocol 0 or TCP: `IPPROTO_MPTCP` and SCTP get
/// EPROTONOSUPPORT (programs then fall back to TCP), since Landlock's TCP rules and the
/// supervisor's checks are written for TCP.
/// With `udp`, UDP too (the datagram sockets the supervisor stands in for under
/// `--allow-dns`, or those of the sandbox's own network namespace).
fn inet_protocol_rules(udp: bool) -> BTreeMap<i64, Vec<SeccompRule>> {
    let rules = [libc::AF_INET, libc::AF_INET6]
        .into_iter()
        .map(|family| {
            let mut conds = vec![
                cond(0, Len::Dword, Op::Eq, family as u64),
                cond(2, Len::Dword, Op::Ne, 0),
                cond(2, Len::Dword, Op::Ne, libc::IPPROTO_TCP as u64),
            ];
            if udp {
                conds.push(cond(2, Len::Dword, Op::Ne, libc::IPPROTO_UDP as u64));
            }
            rule(conds)
        })
        .collect();
    [(libc::SYS_socket, rules)].into_iter().collect()
}

/// Socket types refused with EACCES:
/// - inet sockets other than `SOCK_STREAM` (UDP, ICMP, raw, packet-type): a datagram
///   names its destination in every call, where no connect check sees it;
/// - `AF_UNIX` sockets other than stream and seqpacket (`SOCK_DGRAM`, and `SOCK_RAW`, which
///   the kernel makes a datagram socket), from `socket` and `socketpair`: a datagram socket, connected
///   or not, can send to any pathname socket named in `sendmsg`'s message header, which
///   lives in memory that BPF cannot read (stream and seqpacket sockets refuse a name
///   there). Below Landlock ABI 9 nothing else would keep a datagram from an ssh-agent or
///   `/dev/log`-like socket outside the worktree; refusing the socket type costs no
///   notification on the `sendmsg` path that every stream socket also uses.
///
/// With `udp`, inet `SOCK_DGRAM` passes: under `--allow-dns` its creation is notified, and
/// the supervisor answers with a unix `SOCK_SEQPACKET` stand-in whose other end only it
/// holds; otherwise it is the sandbox's own network namespace, which bounds it.
fn socket_type_rules(udp: bool) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut socket: Vec<SeccompRule> = Vec::new();
    let passes = |t: u64| t == libc::SOCK_STREAM as u64 || (udp && t == libc::SOCK_DGRAM as u64);
    for family in [libc::AF_INET, libc::AF_INET6] {
        for kind in (0..=SOCK_TYPE_MASK).filter(|&t| !passes(t)) {
            socket.push(rule(vec![
                cond(0, Len::Dword, Op::Eq, family as u64),
                cond(1, Len::Dword, Op::MaskedEq(SOCK_TYPE_MASK), kind),
            ]));
        }
    }
    // Unix sockets: stream and seqpacket only, by a list of what passes. The kernel makes
    // a `SOCK_RAW` unix socket a datagram one (`unix_create`), which sends wherever
    // `sendmsg` names: refusing `SOCK_DGRAM` alone would leave that spelling open.
    let unix_passes = |t: u64| t == libc::SOCK_STREAM as u64 || t == libc::SOCK_SEQPACKET as u64;
    let unix_other = || {
        (0..=SOCK_TYPE_MASK)
            .filter(|&t| !unix_passes(t))
            .map(|kind| {
                rule(vec![
                    cond(0, Len::Dword, Op::Eq, libc::AF_UNIX as u64),
                    cond(1, Len::Dword, Op::MaskedEq(SOCK_TYPE_MASK), kind),
                ])
            })
            .collect::<Vec<_>>()
    };
    socket.extend(unix_other());
    [
        (libc::SYS_socket, socket),
        (libc::SYS_socketpair, unix_other()),
    ]
    .into_iter()
    .collect()
}

/// `MSG_FASTOPEN` on `sendto`, `sendmsg` and `sendmmsg` (the flags are a register
/// argument in each): refused with EOPNOTSUPP, and programs fall back to `connect`.
fn fastopen_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    [
        (libc::SYS_sendto, 3),
        (libc::SYS_sendmsg, 2),
        (libc::SYS_sendmmsg, 3),
    ]
    .into_iter()
    .map(|(nr, arg)| (nr, any_flag(arg, &[MSG_FASTOPEN])))
    .collect()
}

/// Calls sent to the supervisor. `sendmsg` and `sendmmsg` are not among them: their
/// address lives in memory BPF cannot read, so each call would need a notification (and
/// the shim hands the listener over with `sendmsg` after this program is installed). An
/// address there matters only on a datagram socket: unix datagram sockets are refused by
/// the static program ([`socket_type_rules`]), and so are inet ones except in the
/// sandbox's own network namespace (whose routes reach only its loopback) and the
/// `--allow-dns` stand-ins (unix sockets whose other end is the supervisor's); TCP ignores
/// the address of a connected socket, and unix stream and seqpacket sockets refuse one.
pub fn notified_calls() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_connect,
        libc::SYS_renameat,
        libc::SYS_renameat2,
        libc::SYS_linkat,
        libc::SYS_unlinkat,
        libc::SYS_mkdirat,
        libc::SYS_symlinkat,
        libc::SYS_mknodat,
        libc::SYS_truncate,
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchmodat2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
    ]
    .into_iter()
    .map(|nr| (nr, Vec::new()))
    .collect();
    #[cfg(target_arch = "x86_64")]
    for nr in [
        libc::SYS_creat,
        libc::SYS_rename,
        libc::SYS_link,
        libc::SYS_unlink,
        libc::SYS_mkdir,
        libc::SYS_rmdir,
        libc::SYS_symlink,
        libc::SYS_mknod,
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ] {
        rules.insert(nr, Vec::new());
    }
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_open, any_flag(1, &WRITE_OPEN_FLAGS));
    rules.insert(libc::SYS_openat, any_flag(2, &WRITE_OPEN_FLAGS));
    // Changes through a descriptor that Landlock does not govern for files opened before
    // the ruleset (fence's standard streams, `--pass-fd`): the supervisor carries them out
    // on the fetched descriptor, keeping a file handed in for appending append-only.
    rules.insert(libc::SYS_ftruncate, Vec::new());
    rules.insert(libc::SYS_fallocate, Vec::new());
    rules.insert(
        libc::SYS_fcntl,
        vec![rule(vec![
            cond(1, Len::Dword, Op::Eq, libc::F_SETFL as u64),
            cond(2, Len::Dword, Op::MaskedEq(libc::O_APPEND as u64), 0),
        ])],
    );
    // sendto with a destination address (argument 4 non-null): performed by the supervisor
    // with the address it checked (defence in depth: the datagram sockets that would use
    // the address are refused by the static program).
    rules.insert(
        libc::SYS_sendto,
        vec![rule(vec![cond(4, Len::Qword, Op::Ne, 0)])],
    );
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_uring_ptrace_and_mount_are_denied() {
        let table = denied_with_eperm();
        for nr in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_ptrace,
            libc::SYS_mount,
            libc::SYS_setns,
            libc::SYS_bpf,
            SYS_FILE_SETATTR,
        ] {
            assert!(
                table.get(&nr).is_some_and(|r| r.is_empty()),
                "syscall {nr} not denied outright"
            );
        }
        assert!(!table.contains_key(&libc::SYS_read));
    }

    #[test]
    fn exec_writes_and_connect_are_notified_but_not_sendmsg() {
        let table = notified_calls();
        for nr in [
            libc::SYS_execve,
            libc::SYS_execveat,
            libc::SYS_connect,
            libc::SYS_unlinkat,
            libc::SYS_fchmodat,
        ] {
            assert!(table.contains_key(&nr), "syscall {nr} not notified");
        }
        assert!(!table.contains_key(&libc::SYS_sendmsg));
        assert!(!table.contains_key(&libc::SYS_read));
    }

    #[test]
    fn notification_program_returns_user_notif_and_never_trace() {
        let program = notification_program(true, false, false).unwrap();
        let rets: Vec<u32> = program
            .iter()
            .filter(|i| i.code == BPF_RET | BPF_K)
            .map(|i| i.k)
            .collect();
        assert!(rets.contains(&libc::SECCOMP_RET_USER_NOTIF));
        assert!(
            rets.iter()
                .all(|&k| k & 0xffff_0000 != libc::SECCOMP_RET_TRACE)
        );
    }

    /// A small classic-BPF interpreter for seccomp programs: enough to run ours on a
    /// `seccomp_data` and see the kernel's answer.
    fn run(program: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        run_counted(program, arch, nr, args).0
    }

    /// [`run`], also returning how many instructions the call ran through.
    fn run_counted(
        program: &[libc::sock_filter],
        arch: u32,
        nr: u32,
        args: [u64; 6],
    ) -> (u32, usize) {
        let word = |off: u32| -> u32 {
            match off {
                0 => nr,
                4 => arch,
                o if (16..64).contains(&o) => {
                    let a = args[((o - 16) / 8) as usize];
                    if (o - 16) % 8 == 0 {
                        a as u32
                    } else {
                        (a >> 32) as u32
                    }
                }
                _ => panic!("load at {off}"),
            }
        };
        let (mut acc, mut pc, mut steps) = (0u32, 0usize, 0usize);
        loop {
            let i = &program[pc];
            steps += 1;
            match i.code {
                c if c == BPF_LD | BPF_W | BPF_ABS => acc = word(i.k),
                c if c == BPF_RET | BPF_K => return (i.k, steps),
                c if c == BPF_JMP | BPF_JA => pc += i.k as usize,
                c if c == BPF_JMP | BPF_JEQ | BPF_K => {
                    pc += if acc == i.k { i.jt } else { i.jf } as usize
                }
                c if c == BPF_JMP | BPF_JGE | BPF_K => {
                    pc += if acc >= i.k { i.jt } else { i.jf } as usize
                }
                c if c == BPF_JMP | 0x20 => pc += if acc > i.k { i.jt } else { i.jf } as usize,
                c if c == 0x04 | 0x50 => acc &= i.k, // ALU AND K
                other => panic!("instruction {other:#x} not interpreted"),
            }
            pc += 1;
        }
    }

    /// The shortened program answers every call as seccompiler's own did: every call
    /// number with zero arguments, and each call with rules under arguments built from
    /// every constant the programs compare with (alone, in each position, with the high
    /// word set, and in random combinations), for each setting that changes the rules.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn shortened_program_answers_as_seccompilers() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        const I386: u32 = 3 | 0x4000_0000;
        let none = StaticGuards::default();
        let all = StaticGuards {
            truncating_opens: true,
            group_kill: true,
            host_ipc: true,
            host_pids: true,
            setid_opens: true,
            keep_dumpable: true,
        };
        let singles = [
            StaticGuards {
                truncating_opens: true,
                ..none
            },
            StaticGuards {
                group_kill: true,
                ..none
            },
            StaticGuards {
                host_ipc: true,
                ..none
            },
            StaticGuards {
                host_pids: true,
                ..none
            },
            StaticGuards {
                setid_opens: true,
                ..none
            },
            StaticGuards {
                keep_dumpable: true,
                ..none
            },
        ];
        let mut settings = Vec::new();
        for families in [
            SocketFamilies::UnixOnly,
            SocketFamilies::UnixAndInet,
            SocketFamilies::OwnNetwork,
        ] {
            for switches in 0..8 {
                for guards in [none, all] {
                    settings.push((
                        families,
                        guards,
                        switches & 1 != 0,
                        switches & 2 != 0,
                        switches & 4 != 0,
                    ));
                }
            }
            for guards in singles {
                settings.push((families, guards, true, false, false));
            }
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut programs = Vec::new();
        for (families, guards, watch, table, dns) in settings {
            let setting = format!("{families:?} {guards:?} watch {watch} table {table} dns {dns}");
            programs.push((
                assemble_fenced(families, guards, watch, table, dns, false).unwrap(),
                assemble_fenced(families, guards, watch, table, dns, true).unwrap(),
                setting.clone(),
            ));
            // The static part alone (installed by itself without a listener).
            if watch && !table {
                programs.push((
                    assemble_static(families, guards, dns, false).unwrap(),
                    assemble_static(families, guards, dns, true).unwrap(),
                    format!("static {setting}"),
                ));
            }
        }
        for (raw, short, setting) in programs {
            assert!(
                short.len() * 10 < raw.len() * 7,
                "{} instructions from {}",
                short.len(),
                raw.len()
            );
            let same = |arch: u32, nr: u32, args: [u64; 6]| {
                assert_eq!(
                    run(&short, arch, nr, args),
                    run(&raw, arch, nr, args),
                    "call {nr} {args:x?} (arch {arch:#x}) under {setting}"
                );
            };
            for nr in 0..=480 {
                same(X86_64, nr, [0; 6]);
                same(X86_64, nr | X32_SYSCALL_BIT, [0; 6]);
                same(I386, nr, [0; 6]);
            }
            let mut constants: Vec<u64> = raw.iter().map(|i| u64::from(i.k)).collect();
            constants.extend([0, 1, u64::from(u32::MAX), u64::MAX]);
            constants.sort_unstable();
            constants.dedup();
            let numbers: Vec<u32> = raw
                .iter()
                .filter(|i| i.code == BPF_JMP | BPF_JEQ | BPF_K && i.k < 1024)
                .map(|i| i.k)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            for &nr in &numbers {
                for &c in &constants {
                    for high in [0, 1u64 << 32] {
                        same(X86_64, nr, [c | high; 6]);
                        for pos in 0..6 {
                            let mut args = [0; 6];
                            args[pos] = c | high;
                            same(X86_64, nr, args);
                        }
                    }
                }
                for _ in 0..100 {
                    let mut pick = || {
                        let a = constants[(random() % constants.len() as u64) as usize];
                        let b = constants[(random() % constants.len() as u64) as usize];
                        let high = if random() % 4 == 0 { random() << 32 } else { 0 };
                        (a | b) ^ high
                    };
                    let args = [pick(), pick(), pick(), pick(), pick(), pick()];
                    same(X86_64, nr, args);
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn static_program_answers_like_the_deny_list() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        const I386: u32 = 3 | 0x4000_0000;
        let p = static_program(SocketFamilies::UnixOnly, StaticGuards::default(), false).unwrap();
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
        assert_eq!(call(libc::SYS_read, [0; 6]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(call(libc::SYS_io_uring_setup, [0; 6]), errno(libc::EPERM));
        assert_eq!(call(libc::SYS_ptrace, [0; 6]), errno(libc::EPERM));
        // Calls that rewrite a file past O_APPEND.
        for req in CONTENT_REWRITING_IOCTLS
            .into_iter()
            .chain([EXT4_IOC_MOVE_EXT])
        {
            assert_eq!(
                call(libc::SYS_ioctl, [1, req, 0, 0, 0, 0]),
                errno(libc::EPERM),
                "{req:#x}"
            );
        }
        // Per-write flags the filter cannot see (legacy AIO), and RWF_NOAPPEND.
        assert_eq!(call(libc::SYS_io_setup, [0; 6]), errno(libc::ENOSYS));
        assert_eq!(
            call(libc::SYS_pwritev2, [1, 0, 1, 0, 0, 0x20]),
            errno(libc::EOPNOTSUPP)
        );
        assert_eq!(
            call(libc::SYS_pwritev2, [1, 0, 1, 0, 0, 0x10]),
            libc::SECCOMP_RET_ALLOW
        );
        // Set-id bits: refused on chmod and on files created; a plain mode and an open
        // without O_CREAT (whose mode register is unused) pass.
        let creat = libc::O_CREAT as u64 | libc::O_WRONLY as u64;
        assert_eq!(
            call(libc::SYS_fchmodat, [0, 0, 0o4755, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_fchmod, [3, 0o2755, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_chmod, [0, 0o6755, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_fchmodat, [0, 0, 0o755, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        // open/openat with a set-id mode: the supervisor's (they are notified), unless
        // opens are not (`setid_opens`).
        assert_eq!(
            call(libc::SYS_openat, [0, 0, creat, 0o4755, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(libc::SYS_creat, [0, 0o4700, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_mknodat, [0, 0, 0o104755, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_openat, [0, 0, 0, 0o4755, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(call(libc::SYS_clone3, [0; 6]), errno(libc::ENOSYS));
        assert_eq!(
            call(libc::SYS_socket, [libc::AF_INET as u64, 1, 0, 0, 0, 0]),
            errno(libc::EAFNOSUPPORT)
        );
        assert_eq!(
            call(libc::SYS_socket, [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        let tiocsti_high = libc::TIOCSTI | (1 << 32);
        assert_eq!(
            call(libc::SYS_ioctl, [0, tiocsti_high, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_ioctl, [0, libc::TCGETS, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        let newuser = libc::CLONE_NEWUSER as u64 | libc::SIGCHLD as u64;
        assert_eq!(
            call(libc::SYS_clone, [newuser, 0, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(libc::SYS_personality, [0xffff_ffff, 0, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(libc::SYS_personality, [0x0040000, 0, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            run(&p, X86_64, 39 | X32_SYSCALL_BIT, [0; 6]),
            libc::SECCOMP_RET_KILL_PROCESS
        );
        assert_eq!(run(&p, I386, 20, [0; 6]), libc::SECCOMP_RET_KILL_PROCESS);
        let inet =
            static_program(SocketFamilies::UnixAndInet, StaticGuards::default(), false).unwrap();
        assert_eq!(
            run(
                &inet,
                X86_64,
                libc::SYS_socket as u32,
                [libc::AF_INET6 as u64, 1, 0, 0, 0, 0]
            ),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(
                &inet,
                X86_64,
                libc::SYS_socket as u32,
                [libc::AF_NETLINK as u64, 3, 0, 0, 0, 0]
            ),
            errno(libc::EAFNOSUPPORT)
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn inet_is_tcp_stream_only_and_unix_datagrams_are_refused() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let p =
            static_program(SocketFamilies::UnixAndInet, StaticGuards::default(), false).unwrap();
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let socket = |family: i32, kind: i32, proto: i32| {
            run(
                &p,
                X86_64,
                libc::SYS_socket as u32,
                [family as u64, kind as u64, proto as u64, 0, 0, 0],
            )
        };
        let allow = libc::SECCOMP_RET_ALLOW;
        let stream = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        assert_eq!(socket(libc::AF_INET, stream, 0), allow);
        assert_eq!(socket(libc::AF_INET6, stream, libc::IPPROTO_TCP), allow);
        assert_eq!(socket(libc::AF_UNIX, stream, 0), allow);
        assert_eq!(socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0), allow);
        assert_eq!(
            socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_MPTCP),
            errno(libc::EPROTONOSUPPORT)
        );
        assert_eq!(
            socket(libc::AF_INET6, libc::SOCK_STREAM, libc::IPPROTO_SCTP),
            errno(libc::EPROTONOSUPPORT)
        );
        for kind in [libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_SEQPACKET, 10] {
            assert_eq!(socket(libc::AF_INET, kind, 0), errno(libc::EACCES));
            assert_eq!(
                socket(libc::AF_INET6, kind | libc::SOCK_CLOEXEC, 0),
                errno(libc::EACCES)
            );
        }
        // SOCK_RAW is a datagram socket to the kernel's unix family; no type but stream
        // and seqpacket passes, with or without flags, from socket or socketpair.
        for kind in [libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_RDM, 0, 10, 15] {
            for flags in [0, libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK] {
                assert_eq!(
                    socket(libc::AF_UNIX, kind | flags, 0),
                    errno(libc::EACCES),
                    "{kind}"
                );
                assert_eq!(
                    run(
                        &p,
                        X86_64,
                        libc::SYS_socketpair as u32,
                        [libc::AF_UNIX as u64, (kind | flags) as u64, 0, 0, 0, 0]
                    ),
                    errno(libc::EACCES),
                    "{kind}"
                );
            }
        }
        assert_eq!(
            run(
                &p,
                X86_64,
                libc::SYS_socketpair as u32,
                [
                    libc::AF_UNIX as u64,
                    libc::SOCK_SEQPACKET as u64,
                    0,
                    0,
                    0,
                    0
                ]
            ),
            allow
        );
        assert_eq!(
            socket(libc::AF_PACKET, libc::SOCK_RAW, 0),
            errno(libc::EAFNOSUPPORT)
        );
        assert_eq!(
            socket(libc::AF_NETLINK, libc::SOCK_RAW, 0),
            errno(libc::EAFNOSUPPORT)
        );
        let fastopen = libc::MSG_FASTOPEN as u64 | libc::MSG_NOSIGNAL as u64;
        let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
        assert_eq!(
            call(libc::SYS_sendto, [3, 0, 1, fastopen, 0x1000, 16]),
            errno(libc::EOPNOTSUPP)
        );
        assert_eq!(
            call(libc::SYS_sendmsg, [3, 0x1000, fastopen, 0, 0, 0]),
            errno(libc::EOPNOTSUPP)
        );
        assert_eq!(
            call(libc::SYS_sendmmsg, [3, 0x1000, 1, fastopen, 0, 0]),
            errno(libc::EOPNOTSUPP)
        );
        assert_eq!(
            call(
                libc::SYS_sendmsg,
                [3, 0x1000, libc::MSG_NOSIGNAL as u64, 0, 0, 0]
            ),
            allow
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn reuseport_is_out_of_reach_only_where_the_host_loopback_is_shared() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let allow = libc::SECCOMP_RET_ALLOW;
        let setsockopt = |p: &[libc::sock_filter], level: i32, name: i32| {
            run(
                p,
                X86_64,
                libc::SYS_setsockopt as u32,
                [3, level as u64, name as u64, 0x1000, 4, 0],
            )
        };
        for (families, reuseport) in [
            (SocketFamilies::UnixAndInet, errno(libc::EPERM)),
            (SocketFamilies::OwnNetwork, allow),
            (SocketFamilies::UnixOnly, allow),
        ] {
            for watch in [true, false] {
                let p =
                    fenced_program(families, StaticGuards::default(), watch, false, false).unwrap();
                assert_eq!(
                    setsockopt(&p, libc::SOL_SOCKET, libc::SO_REUSEPORT),
                    reuseport,
                    "{families:?}"
                );
                // The upper half of the registers is not the kernel's: an int.
                assert_eq!(
                    run(
                        &p,
                        X86_64,
                        libc::SYS_setsockopt as u32,
                        [
                            3,
                            (1 << 32) | libc::SOL_SOCKET as u64,
                            (1 << 32) | libc::SO_REUSEPORT as u64,
                            0x1000,
                            4,
                            0
                        ],
                    ),
                    reuseport,
                    "{families:?}"
                );
                assert_eq!(setsockopt(&p, libc::SOL_SOCKET, libc::SO_REUSEADDR), allow);
                assert_eq!(setsockopt(&p, libc::IPPROTO_TCP, libc::SO_REUSEPORT), allow);
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn udp_sockets_are_made_only_in_the_sandboxs_own_network_namespace() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let allow = libc::SECCOMP_RET_ALLOW;
        let dgram = (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC) as u64;
        for (families, udp) in [
            (SocketFamilies::UnixOnly, errno(libc::EAFNOSUPPORT)),
            (SocketFamilies::UnixAndInet, errno(libc::EACCES)),
            (SocketFamilies::OwnNetwork, allow),
        ] {
            let p = fenced_program(families, StaticGuards::default(), true, false, false).unwrap();
            let socket = |family: i32, kind: u64, proto: i32| {
                run(
                    &p,
                    X86_64,
                    libc::SYS_socket as u32,
                    [family as u64, kind, proto as u64, 0, 0, 0],
                )
            };
            for family in [libc::AF_INET, libc::AF_INET6] {
                assert_eq!(socket(family, dgram, 0), udp, "{families:?}");
                let explicit = socket(family, dgram, libc::IPPROTO_UDP);
                assert_eq!(explicit == allow, udp == allow, "{families:?}");
                // Ping sockets, UDP-Lite, raw and packet-type sockets stay refused.
                assert_ne!(socket(family, dgram, libc::IPPROTO_ICMP), allow);
                assert_ne!(socket(family, dgram, libc::IPPROTO_UDPLITE), allow);
                assert_ne!(socket(family, libc::SOCK_RAW as u64, 0), allow);
                assert_ne!(socket(family, libc::SOCK_SEQPACKET as u64, 0), allow);
            }
            assert_eq!(
                socket(libc::AF_UNIX, libc::SOCK_DGRAM as u64, 0),
                errno(libc::EACCES)
            );
            assert_eq!(
                socket(libc::AF_PACKET, libc::SOCK_DGRAM as u64, 0),
                errno(libc::EAFNOSUPPORT)
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn with_allow_dns_inet_datagram_sockets_are_notified_and_nothing_else_widens() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let allow = libc::SECCOMP_RET_ALLOW;
        let notif = libc::SECCOMP_RET_USER_NOTIF;
        let dgram = (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
        let stream = libc::SOCK_STREAM as u64;
        for families in [
            SocketFamilies::UnixOnly,
            SocketFamilies::UnixAndInet,
            SocketFamilies::OwnNetwork,
        ] {
            let p = static_program(families, StaticGuards::default(), true).unwrap();
            let socket = |family: i32, kind: u64, proto: i32| {
                run(
                    &p,
                    X86_64,
                    libc::SYS_socket as u32,
                    [family as u64, kind, proto as u64, 0, 0, 0],
                )
            };
            for family in [libc::AF_INET, libc::AF_INET6] {
                assert_eq!(socket(family, dgram, 0), allow);
                assert_eq!(socket(family, dgram, libc::IPPROTO_UDP), allow);
                assert_eq!(
                    socket(family, dgram, libc::IPPROTO_ICMP),
                    errno(libc::EPROTONOSUPPORT)
                );
                assert_eq!(
                    socket(family, dgram, libc::IPPROTO_UDPLITE),
                    errno(libc::EPROTONOSUPPORT)
                );
                let raw = socket(family, libc::SOCK_RAW as u64, 0);
                assert_ne!(raw, allow, "raw sockets stay refused");
                let expected_stream = if families == SocketFamilies::UnixOnly {
                    errno(libc::EAFNOSUPPORT)
                } else {
                    allow
                };
                assert_eq!(socket(family, stream, 0), expected_stream);
            }
            assert_eq!(
                socket(libc::AF_UNIX, libc::SOCK_DGRAM as u64, 0),
                errno(libc::EACCES)
            );
            assert_eq!(
                socket(libc::AF_NETLINK, libc::SOCK_DGRAM as u64, 0),
                errno(libc::EAFNOSUPPORT)
            );
        }
        let without =
            static_program(SocketFamilies::UnixAndInet, StaticGuards::default(), false).unwrap();
        assert_eq!(
            run(
                &without,
                X86_64,
                libc::SYS_socket as u32,
                [libc::AF_INET as u64, dgram, 0, 0, 0, 0]
            ),
            errno(libc::EACCES)
        );
        let n = notification_program(true, false, true).unwrap();
        let call = |nr: i64, args: [u64; 6]| run(&n, X86_64, nr as u32, args);
        assert_eq!(
            call(libc::SYS_socket, [libc::AF_INET6 as u64, dgram, 0, 0, 0, 0]),
            notif
        );
        assert_eq!(
            call(libc::SYS_socket, [libc::AF_INET as u64, stream, 0, 0, 0, 0]),
            allow
        );
        assert_eq!(
            call(libc::SYS_socket, [libc::AF_UNIX as u64, dgram, 0, 0, 0, 0]),
            allow
        );
        assert_eq!(
            call(libc::SYS_recvfrom, [3, 0, 1, 0, 0x1000, 0x2000]),
            notif
        );
        assert_eq!(call(libc::SYS_recvfrom, [3, 0, 1, 0, 0, 0]), allow);
        assert_eq!(call(libc::SYS_bind, [0; 6]), notif);
        assert_eq!(call(libc::SYS_listen, [0; 6]), allow);
        let (sol_ip, recverr) = (libc::SOL_IP as u64, libc::IP_RECVERR as u64);
        assert_eq!(
            call(libc::SYS_setsockopt, [3, sol_ip, recverr, 0, 4, 0]),
            notif
        );
        let sol_tcp = libc::SOL_TCP as u64;
        assert_eq!(call(libc::SYS_setsockopt, [3, sol_tcp, 1, 0, 4, 0]), allow);
        let plain = notification_program(true, false, false).unwrap();
        assert_eq!(
            run(
                &plain,
                X86_64,
                libc::SYS_recvfrom as u32,
                [3, 0, 1, 0, 0x1000, 0x2000]
            ),
            allow
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn listen_is_notified_only_for_the_loopback_table_and_bind_while_writes_are_watched() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let notif = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        // (writes watched, loopback table) -> (bind, listen)
        for (watch, table, bind, listen) in [
            (true, false, notif, allow),
            (true, true, notif, notif),
            (false, false, allow, allow),
            (false, true, notif, notif),
        ] {
            let p = notification_program(watch, table, false).unwrap();
            assert_eq!(run(&p, X86_64, libc::SYS_bind as u32, [0; 6]), bind);
            assert_eq!(run(&p, X86_64, libc::SYS_listen as u32, [0; 6]), listen);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn chdir_is_notified_exactly_while_writes_are_watched() {
        // The supervisor keeps cwds only while writes are watched, and must then hear of
        // every change (fence::run::kept_thread).
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        for (watch, table, dns) in [
            (true, false, false),
            (true, true, true),
            (false, true, true),
        ] {
            let p = notification_program(watch, table, dns).unwrap();
            let want = if watch {
                libc::SECCOMP_RET_USER_NOTIF
            } else {
                libc::SECCOMP_RET_ALLOW
            };
            for nr in [libc::SYS_chdir, libc::SYS_fchdir] {
                assert_eq!(run(&p, X86_64, nr as u32, [0; 6]), want, "{nr} {watch}");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn notification_program_sends_writes_and_execs_but_not_reads() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let p = notification_program(true, false, false).unwrap();
        let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
        let notif = libc::SECCOMP_RET_USER_NOTIF;
        assert_eq!(call(libc::SYS_execve, [0; 6]), notif);
        assert_eq!(
            call(libc::SYS_openat, [0, 0, libc::O_RDONLY as u64, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(
                libc::SYS_openat,
                [0, 0, (libc::O_RDONLY | libc::O_TRUNC) as u64, 0, 0, 0]
            ),
            notif
        );
        assert_eq!(
            call(libc::SYS_openat, [0, 0, libc::O_APPEND as u64, 0, 0, 0]),
            notif
        );
        assert_eq!(
            call(libc::SYS_sendto, [3, 0, 1, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(call(libc::SYS_sendto, [3, 0, 1, 0, 0x1000, 16]), notif);
        assert_eq!(
            call(libc::SYS_sendmsg, [3, 0, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        // Descriptor changes Landlock does not govern for inherited files; F_SETFL that
        // keeps O_APPEND, and other fcntl commands, go to the kernel.
        // The terminal's foreground group, whatever the high word of the request; other
        // terminal requests go to the kernel.
        assert_eq!(
            call(libc::SYS_ioctl, [0, libc::TIOCSPGRP, 0, 0, 0, 0]),
            notif
        );
        assert_eq!(
            call(libc::SYS_ioctl, [0, libc::TIOCSPGRP | 1 << 32, 0, 0, 0, 0]),
            notif
        );
        assert_eq!(
            call(libc::SYS_ioctl, [0, libc::TIOCGPGRP, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        for req in [
            libc::TCSETS,
            libc::TCSETSW,
            libc::TCSETAF,
            libc::TCSETS2,
            libc::TCFLSH,
        ] {
            assert_eq!(call(libc::SYS_ioctl, [0, req, 0, 0, 0, 0]), notif);
        }
        assert_eq!(
            call(libc::SYS_ioctl, [0, libc::TCGETS, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(call(libc::SYS_ftruncate, [1, 6, 0, 0, 0, 0]), notif);
        assert_eq!(call(libc::SYS_fallocate, [1, 3, 0, 4096, 0, 0]), notif);
        let setfl = libc::F_SETFL as u64;
        assert_eq!(call(libc::SYS_fcntl, [1, setfl, 0o4000, 0, 0, 0]), notif);
        assert_eq!(
            call(libc::SYS_fcntl, [1, setfl, libc::O_APPEND as u64, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(libc::SYS_fcntl, [1, libc::F_GETFL as u64, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
    }

    /// Without a signal scope, `O_ASYNC` is never turned on (`ioctl(FIOASYNC)`, `F_SETFL`
    /// with it, whatever the high words); with one, the process may, and other status
    /// flags and ioctls pass.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn o_async_is_refused_without_a_signal_scope() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let unscoped = StaticGuards {
            group_kill: true,
            ..StaticGuards::default()
        };
        let setfl = libc::F_SETFL as u64;
        let o_async = libc::O_ASYNC as u64;
        for (guards, refused) in [(unscoped, true), (StaticGuards::default(), false)] {
            let p = static_program(SocketFamilies::UnixOnly, guards, false).unwrap();
            let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
            for args in [
                [0, libc::FIOASYNC, 0x7fff_0000, 0, 0, 0],
                [0, libc::FIOASYNC | 1 << 32, 0, 0, 0, 0],
            ] {
                let got = call(libc::SYS_ioctl, args);
                assert_eq!(got == eperm, refused, "ioctl {args:?}: {got:#x}");
            }
            for args in [
                [0, setfl, o_async, 0, 0, 0],
                [0, setfl, o_async | libc::O_APPEND as u64, 0, 0, 0],
                [
                    0,
                    setfl | 1 << 32,
                    o_async | libc::O_NONBLOCK as u64,
                    0,
                    0,
                    0,
                ],
                [0, setfl, o_async | 1 << 32, 0, 0, 0],
            ] {
                let got = call(libc::SYS_fcntl, args);
                assert_eq!(got == eperm, refused, "fcntl {args:?}: {got:#x}");
            }
            // Other flags and requests are not refused here.
            assert_ne!(
                call(libc::SYS_fcntl, [0, setfl, libc::O_APPEND as u64, 0, 0, 0]),
                eperm
            );
            assert_ne!(call(libc::SYS_ioctl, [0, libc::FIONBIO, 0, 0, 0, 0]), eperm);
        }
    }

    /// No file lease is taken, whatever the high word of the command; other fcntl
    /// commands pass the static part.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn file_leases_are_refused() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let p = static_program(SocketFamilies::UnixOnly, StaticGuards::default(), false).unwrap();
        let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
        let setlease = libc::F_SETLEASE as u64;
        for cmd in [setlease, setlease | 1 << 32] {
            assert_eq!(
                call(libc::SYS_fcntl, [3, cmd, libc::F_RDLCK as u64, 0, 0, 0]),
                libc::SECCOMP_RET_ERRNO | libc::EPERM as u32
            );
        }
        for cmd in [libc::F_GETLEASE, libc::F_SETLK, libc::F_GETFL] {
            assert_eq!(
                call(libc::SYS_fcntl, [3, cmd as u64, 0, 0, 0, 0]),
                libc::SECCOMP_RET_ALLOW
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn below_abi_3_truncating_read_opens_are_refused_and_openat2_always() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let guarded = static_program(
            SocketFamilies::UnixOnly,
            StaticGuards {
                truncating_opens: true,
                group_kill: false,
                host_ipc: false,
                host_pids: false,
                setid_opens: false,
                keep_dumpable: false,
            },
            false,
        )
        .unwrap();
        let plain =
            static_program(SocketFamilies::UnixOnly, StaticGuards::default(), false).unwrap();
        let rdonly_trunc = (libc::O_RDONLY | libc::O_TRUNC) as u64;
        let wronly_trunc = (libc::O_WRONLY | libc::O_TRUNC) as u64;
        let openat = |p: &[libc::sock_filter], flags: u64| {
            run(p, X86_64, libc::SYS_openat as u32, [0, 0, flags, 0, 0, 0])
        };
        assert_eq!(openat(&guarded, rdonly_trunc), errno(libc::EACCES));
        // Access mode 3 (neither read nor write) truncates too, with no write right asked.
        let mode3_trunc = (libc::O_ACCMODE | libc::O_TRUNC) as u64;
        assert_eq!(openat(&guarded, mode3_trunc), errno(libc::EACCES));
        assert_eq!(
            openat(&guarded, mode3_trunc | libc::O_CLOEXEC as u64),
            errno(libc::EACCES)
        );
        assert_eq!(
            openat(&guarded, libc::O_ACCMODE as u64),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            openat(&guarded, (libc::O_RDWR | libc::O_TRUNC) as u64),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(
                &guarded,
                X86_64,
                libc::SYS_open as u32,
                [0, rdonly_trunc, 0, 0, 0, 0]
            ),
            errno(libc::EACCES)
        );
        // A write-mode truncating open is Landlock's (write right) and the supervisor's.
        assert_eq!(openat(&guarded, wronly_trunc), libc::SECCOMP_RET_ALLOW);
        assert_eq!(
            openat(&guarded, libc::O_RDONLY as u64),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(&guarded, X86_64, libc::SYS_openat2 as u32, [0; 6]),
            errno(libc::ENOSYS)
        );
        assert_eq!(openat(&plain, rdonly_trunc), libc::SECCOMP_RET_ALLOW);
        assert_eq!(
            run(&plain, X86_64, libc::SYS_openat2 as u32, [0; 6]),
            errno(libc::ENOSYS)
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn without_signal_scope_kill_of_the_process_group_is_refused() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let p = static_program(
            SocketFamilies::UnixOnly,
            StaticGuards {
                truncating_opens: false,
                group_kill: true,
                host_ipc: true,
                host_pids: true,
                setid_opens: true,
                keep_dumpable: false,
            },
            false,
        )
        .unwrap();
        let kill = |pid: u64| run(&p, X86_64, libc::SYS_kill as u32, [pid, 9, 0, 0, 0, 0]);
        assert_eq!(kill(0), libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        // The upper half of an int argument is ignored by the kernel.
        assert_eq!(kill(1 << 32), libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        assert_eq!(kill(42), libc::SECCOMP_RET_ALLOW);
        assert_eq!(kill((-42i64) as u64), libc::SECCOMP_RET_ALLOW);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn without_a_pid_namespace_other_processes_limits_and_priorities_are_refused() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let allow = libc::SECCOMP_RET_ALLOW;
        let limit = 0x7fff_0000;
        for host_pids in [false, true] {
            let guards = StaticGuards {
                host_pids,
                ..StaticGuards::default()
            };
            let p = static_program(SocketFamilies::UnixOnly, guards, false).unwrap();
            let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
            let other = if host_pids { eperm } else { allow };
            // Own limits and priorities pass; another process's, or the whole user's, only
            // where a pid namespace confines them.
            assert_eq!(call(libc::SYS_prlimit64, [0, 0, limit, 0, 0, 0]), allow);
            assert_eq!(call(libc::SYS_prlimit64, [42, 0, 0, limit, 0, 0]), allow);
            assert_eq!(call(libc::SYS_prlimit64, [42, 0, limit, 0, 0, 0]), other);
            assert_eq!(call(libc::SYS_setpriority, [0, 0, 10, 0, 0, 0]), allow);
            assert_eq!(call(libc::SYS_setpriority, [0, 42, 10, 0, 0, 0]), other);
            assert_eq!(call(libc::SYS_setpriority, [2, 0, 10, 0, 0, 0]), other);
            assert_eq!(call(libc::SYS_ioprio_set, [1, 0, 0x6000, 0, 0, 0]), allow);
            assert_eq!(call(libc::SYS_ioprio_set, [3, 0, 0x6000, 0, 0, 0]), other);
            assert_eq!(call(libc::SYS_ioprio_set, [1, 42, 0x6000, 0, 0, 0]), other);
            let setscheduler = |pid: u64, policy: u64| {
                call(libc::SYS_sched_setscheduler, [pid, policy, 0x1000, 0, 0, 0])
            };
            let (idle, batch) = (libc::SCHED_IDLE as u64, libc::SCHED_BATCH as u64);
            let reset = libc::SCHED_RESET_ON_FORK as u64;
            assert_eq!(setscheduler(0, idle), allow);
            assert_eq!(setscheduler(42, idle), other);
            assert_eq!(setscheduler(42, idle | reset), other);
            // A thread's own policy by its id (pthread_setschedparam).
            assert_eq!(setscheduler(42, libc::SCHED_OTHER as u64), allow);
            assert_eq!(setscheduler(42, batch | reset), allow);
            assert_eq!(setscheduler(42, libc::SCHED_FIFO as u64), allow);
            let setattr = |pid: u64| call(libc::SYS_sched_setattr, [pid, 0x1000, 0, 0, 0, 0]);
            assert_eq!(setattr(0), allow);
            assert_eq!(setattr(42), other);
            assert_eq!(
                call(libc::SYS_sched_setparam, [42, 0x1000, 0, 0, 0, 0]),
                allow
            );
            assert_eq!(
                call(libc::SYS_sched_setaffinity, [42, 8, 0x1000, 0, 0, 0]),
                allow
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn without_write_watch_set_id_creating_opens_are_refused_here() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let allow = libc::SECCOMP_RET_ALLOW;
        let creat = libc::O_CREAT as u64 | libc::O_WRONLY as u64;
        let tmpfile = libc::O_TMPFILE as u64 | libc::O_RDWR as u64;
        for setid_opens in [false, true] {
            let guards = StaticGuards {
                setid_opens,
                ..StaticGuards::default()
            };
            let p = static_program(SocketFamilies::UnixOnly, guards, false).unwrap();
            let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
            let setid = if setid_opens { eperm } else { allow };
            assert_eq!(call(libc::SYS_openat, [0, 0, creat, 0o4755, 0, 0]), setid);
            assert_eq!(call(libc::SYS_openat, [0, 0, tmpfile, 0o2700, 0, 0]), setid);
            assert_eq!(call(libc::SYS_open, [0, creat, 0o2755, 0, 0, 0]), setid);
            assert_eq!(call(libc::SYS_openat, [0, 0, creat, 0o755, 0, 0]), allow);
            assert_eq!(call(libc::SYS_openat, [0, 0, 0, 0o4755, 0, 0]), allow);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn without_an_ipc_namespace_system_v_ipc_and_message_queues_are_refused() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        for host_ipc in [false, true] {
            let guards = StaticGuards {
                host_ipc,
                ..StaticGuards::default()
            };
            let p = static_program(SocketFamilies::UnixOnly, guards, false).unwrap();
            for nr in HOST_IPC_CALLS {
                let answer = run(&p, X86_64, nr as u32, [1, 0, 0, 0, 0, 0]);
                if host_ipc {
                    assert_eq!(answer, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32, "{nr}");
                } else {
                    assert_eq!(answer, libc::SECCOMP_RET_ALLOW, "{nr}");
                }
            }
            let shmdt = run(&p, X86_64, libc::SYS_shmdt as u32, [0; 6]);
            assert_eq!(shmdt, libc::SECCOMP_RET_ALLOW);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn without_write_watch_landlock_bounded_writes_are_not_notified() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let p = notification_program(false, false, false).unwrap();
        let call = |nr: i64, args: [u64; 6]| run(&p, X86_64, nr as u32, args);
        let notif = libc::SECCOMP_RET_USER_NOTIF;
        for nr in [
            libc::SYS_execve,
            libc::SYS_connect,
            libc::SYS_fchmodat,
            libc::SYS_fchmod,
            libc::SYS_fchown,
            libc::SYS_utimensat,
            libc::SYS_fsetxattr,
            libc::SYS_truncate,
        ] {
            assert_eq!(call(nr, [0; 6]), notif, "syscall {nr}");
        }
        for nr in [
            libc::SYS_unlinkat,
            libc::SYS_renameat2,
            libc::SYS_mkdirat,
            libc::SYS_mknodat,
            libc::SYS_creat,
        ] {
            assert_eq!(call(nr, [0; 6]), libc::SECCOMP_RET_ALLOW, "syscall {nr}");
        }
        assert_eq!(
            call(libc::SYS_openat, [0, 0, libc::O_WRONLY as u64, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
    }

    /// The answer of the two programs stacked as separate filters, the static one installed
    /// first: the kernel takes the action of highest precedence (the lowest as a signed
    /// value), the newer filter's on a tie.
    fn stacked(static_answer: u32, notify_answer: u32) -> u32 {
        let action = |k: u32| (k & 0xffff_0000) as i32;
        if action(static_answer) < action(notify_answer) {
            static_answer
        } else {
            notify_answer
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn one_filter_answers_like_the_stacked_static_and_notification_programs() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        const I386: u32 = 3 | 0x4000_0000;
        // Argument values that exercise every rule: flags of open, clone and unshare,
        // families, types and protocols of socket, ioctl requests, personalities, pids,
        // send flags, a non-null sendto address, upper halves set.
        let values: Vec<u64> = [
            0u64,
            1,
            2,
            3,
            5,
            6,
            10,
            16,
            42,
            0o100,
            0o1000,
            0o2000,
            0o1001,
            0o20000000,
            0o20200000,
            0x11,
            libc::TIOCSTI,
            libc::TIOCLINUX,
            libc::TIOCSETD,
            libc::TIOCEXCL,
            libc::TCXONC,
            0x4008_6602,
            0x401c_5820,
            0x5000_940e,
            0x800c_6613,
            libc::IPPROTO_TCP as u64,
            libc::IPPROTO_MPTCP as u64,
            libc::CLONE_NEWNS as u64,
            libc::CLONE_NEWUSER as u64 | 0x11,
            libc::CLONE_NEWNET as u64,
            libc::CLONE_NEWTIME as u64,
            MSG_FASTOPEN,
            0xffff_ffff,
            1 << 32,
            (1 << 32) | libc::TIOCSTI,
            u64::MAX,
        ]
        .to_vec();
        let mut arg_sets = Vec::new();
        for &a in &values {
            for &b in &values {
                arg_sets.push([a, b, b, a, 0, 0]);
                arg_sets.push([a, b, a, b, b, 0]);
            }
        }
        // --allow-dns: inet datagram sockets (protocol 0 or UDP, with and without
        // SOCK_NONBLOCK/SOCK_CLOEXEC), IP-level socket options, receives with an address.
        for family in [libc::AF_INET, libc::AF_INET6, libc::AF_UNIX] {
            for ty in [2u64, 2 | 0o4000, 2 | 0o2000000, 1, 3] {
                for proto in [0u64, libc::IPPROTO_UDP as u64, libc::IPPROTO_TCP as u64] {
                    arg_sets.push([family as u64, ty, proto, 0, 0, 0]);
                }
            }
        }
        for level in [
            libc::SOL_IP,
            libc::SOL_IPV6,
            libc::SOL_SOCKET,
            libc::SOL_TCP,
        ] {
            arg_sets.push([3, level as u64, 1, 0x1000, 4, 0]);
        }
        for families in [
            SocketFamilies::UnixOnly,
            SocketFamilies::UnixAndInet,
            SocketFamilies::OwnNetwork,
        ] {
            for (truncating_opens, group_kill) in
                [(false, false), (true, false), (false, true), (true, true)]
            {
                let guards = StaticGuards {
                    truncating_opens,
                    group_kill,
                    host_ipc: group_kill,
                    host_pids: truncating_opens,
                    setid_opens: group_kill,
                    keep_dumpable: truncating_opens,
                };
                for (watch_writes, loopback_table, dns) in [
                    (true, false, false),
                    (false, false, false),
                    (true, true, false),
                    (false, true, false),
                    (true, false, true),
                    (true, true, true),
                    (false, true, true),
                ] {
                    let one = fenced_program(families, guards, watch_writes, loopback_table, dns)
                        .unwrap();
                    let st = static_program(families, guards, dns).unwrap();
                    let nt = notification_program(watch_writes, loopback_table, dns).unwrap();
                    for nr in (0..480u32).chain([X32_SYSCALL_BIT | 1, X32_SYSCALL_BIT | 257]) {
                        // A call no rule names reads no argument: one set is enough.
                        let named = static_groups(families, guards, dns)
                            .iter()
                            .any(|(rules, _)| rules.contains_key(&i64::from(nr)))
                            || notified_table(watch_writes, loopback_table, dns)
                                .contains_key(&i64::from(nr));
                        let sets = if named { &arg_sets[..] } else { &arg_sets[..1] };
                        for args in sets {
                            let expected =
                                stacked(run(&st, X86_64, nr, *args), run(&nt, X86_64, nr, *args));
                            assert_eq!(
                                run(&one, X86_64, nr, *args),
                                expected,
                                "call {nr} args {args:x?} ({families:?}, {guards:?}, \
                                 watch {watch_writes}, table {loopback_table}, dns {dns})"
                            );
                        }
                    }
                    assert_eq!(run(&one, I386, 5, [0; 6]), libc::SECCOMP_RET_KILL_PROCESS);
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn calls_with_rules_run_a_short_path() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let one = fenced_program(
            SocketFamilies::UnixAndInet,
            StaticGuards::default(),
            true,
            false,
            false,
        )
        .unwrap();
        let st =
            static_program(SocketFamilies::UnixAndInet, StaticGuards::default(), false).unwrap();
        let nt = notification_program(true, false, false).unwrap();
        let read_only_open = [0, 0, libc::O_RDONLY as u64 | 0o2000000, 0, 0, 0];
        let nr = libc::SYS_openat as u32;
        let (answer, steps) = run_counted(&one, X86_64, nr, read_only_open);
        assert_eq!(answer, libc::SECCOMP_RET_ALLOW);
        let before = run_counted(&st, X86_64, nr, read_only_open).1
            + run_counted(&nt, X86_64, nr, read_only_open).1;
        assert!(
            steps * 4 < before,
            "read-only openat: {steps} instructions, {before} in two linear programs"
        );
        for (nr, args) in [
            (libc::SYS_ioctl, [1, libc::TCGETS, 0, 0, 0, 0]),
            (libc::SYS_clone, [0x11, 0, 0, 0, 0, 0]),
            (libc::SYS_kill, [42, 15, 0, 0, 0, 0]),
        ] {
            let (answer, steps) = run_counted(&one, X86_64, nr as u32, args);
            assert_eq!(answer, libc::SECCOMP_RET_ALLOW, "call {nr}");
            // An allowed ioctl passes a comparison with each refused request (terminal
            // injection and lasting terminal changes, file system objects made or changed
            // through a descriptor, blocks punched or swapped past O_APPEND) and each
            // terminal request the supervisor looks at: 104 instructions.
            assert!(steps < 110, "call {nr}: {steps} instructions");
        }
    }
}
