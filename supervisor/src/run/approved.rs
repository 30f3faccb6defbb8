//! Writes a person approved beyond the fence, carried out by the supervisor itself.
//!
//! An approved write outside Landlock's bounds cannot be `CONTINUE`d (Landlock would refuse
//! it, and a `CONTINUE` would act on memory the target can still change), and a protected
//! path must not be reachable by a swapped path either. So the supervisor performs the call
//! from the values it checked and showed: the resolved path, opened again with
//! `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (the checked path holds no symlink, so
//! one swapped in since fails the call instead of leading elsewhere), on a thread that has
//! taken the target's fsuid, fsgid, groups and umask and holds no capabilities. An opened
//! file reaches the target with `SECCOMP_IOCTL_NOTIF_ADDFD` (`SECCOMP_ADDFD_FLAG_SEND`:
//! installed and answered in one step). This is a security boundary.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::acting::{TargetCredentials, act_as};
use super::listener::{Listener, Notification, Response};
use super::metadata::{self, MetadataOp};
use super::path_resolve::Caller;
use super::target_memory::{PATH_MAX, TargetMemory};
use super::view::View;

pub use super::fence::BoundedDirs;

/// The objects a rename or link the supervisor carries out moves, as its check pinned and
/// judged them ([`super::view::pin`]): the source, and for an exchange the object at the
/// destination too, which moves to the source's name.
///
/// Security boundary: the move is made by name, and a thread of the sandbox may swap
/// another object in at the source's name between the check and the move (a symlink,
/// with `RENAME_EXCHANGE` in a folder granted whole, which the kernel lets it make). So
/// after the move the object at each new name in a held folder (one the sandbox may not
/// change: `held_to`, and for an exchange `held_from`) is compared with the one pinned;
/// one that is not it is taken away from that name at once ([`set_aside`]), and the call
/// fails with EAGAIN. The objects are pinned when the call is to be carried out, and must
/// then be as the check saw them by path (a folder or not, a symlink to the same target):
/// `changed` when one is not (EAGAIN, with nothing done). With `required`, a move whose
/// object cannot be pinned is not made: it fails with the errno the pinning met
/// (`absent`: ENOENT, ENOTDIR…), as the kernel would fail it then.
#[derive(Debug, Default)]
pub struct Moved {
    pub source: Option<super::view::Pinned>,
    pub exchanged: Option<super::view::Pinned>,
    pub required: bool,
    /// The errno pinning met where nothing could be pinned (ENOENT, ENOTDIR…).
    pub absent: Option<i32>,
    pub changed: bool,
    pub held_to: bool,
    pub held_from: bool,
    /// The source's folder is one the sandbox may write: a wrong object is moved there.
    pub back_to_source: bool,
}

/// A call to carry out once approved, with every argument already checked.
#[derive(Debug)]
pub enum Operation {
    Open {
        path: PathBuf,
        flags: i32,
        mode: u32,
        /// The check found nothing at `path`: a create is tried as a new file first.
        missing: bool,
    },
    Truncate {
        path: PathBuf,
        length: i64,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        flags: u32,
        moved: Moved,
    },
    Link {
        from: PathBuf,
        to: PathBuf,
        moved: Moved,
    },
    Unlink {
        path: PathBuf,
        dir: bool,
    },
    Mkdir {
        path: PathBuf,
        mode: u32,
    },
    /// A `mkdir` made from a spare folder where one fits ([`super::spare_folders`]), else
    /// as `Mkdir`; one made from a spare is added to `bounded` (the fence's
    /// [`super::fence::Fence::bounded`]) under `path`.
    MkdirFromSpare {
        path: PathBuf,
        mode: u32,
        spares: std::sync::Arc<super::spare_folders::Spares>,
        bounded: BoundedDirs,
    },
    Symlink {
        target: Vec<u8>,
        path: PathBuf,
    },
    Mknod {
        path: PathBuf,
        mode: u32,
        dev: u64,
    },
    /// An open through the caller's own descriptor link (`/proc/<tgid>/fd/N`) of an object
    /// without a path (`/dev/stdout` on a pipe): the caller's descriptor `fd` is fetched
    /// (`pidfd_getfd`) and reopened only if it is an anonymous pipe (a descriptor swapped in
    /// since the check, naming a file or a named FIFO, is refused).
    Reopen {
        fd: i32,
        flags: i32,
    },
    /// An open of one of the caller's own settings in /proc (`/proc/<tgid>/coredump_filter`,
    /// `oom_score_adj`, `comm`): in fence's view, whose /proc numbers processes as the
    /// checked path does, whatever the sandbox's own /proc shows.
    OwnProcess {
        path: PathBuf,
        flags: i32,
    },
    /// A metadata change on a path (its last component followed or not).
    Metadata {
        path: PathBuf,
        follow_last: bool,
        op: MetadataOp,
    },
    /// A metadata change on the object behind a descriptor the check fetched.
    MetadataFd {
        object: OwnedFd,
        op: MetadataOp,
    },
    /// A file with other hard links, which may lie outside the fence, replaced by a private
    /// copy before it is written ([`super::private_copy`]); then `then` is carried out, or
    /// without one the call goes to the kernel (`CONTINUE`: Landlock bounds it).
    PrivateCopy {
        path: PathBuf,
        /// The copy gets the contents (not for an open that truncates).
        keep_data: bool,
        /// For a metadata change: made where the caller owns the file, too.
        for_metadata: bool,
        then: Option<Box<Operation>>,
    },
    /// The first name of an unnamed file (`O_TMPFILE`), fetched from the caller: linked at
    /// `to` from fence's own descriptor of it.
    LinkUnnamed {
        object: OwnedFd,
        to: PathBuf,
    },
    /// git's rename of `lock` over the worktree's `config`, whose change the check found to
    /// be a branch's bookkeeping ([`super::git_config_change`]): `text`, the bytes checked,
    /// is written into `config` (in fence's view, where it is no read-only mount), and
    /// `lock` removed, as the rename would have.
    RewriteConfig {
        lock: PathBuf,
        config: PathBuf,
        text: Vec<u8>,
    },
}

impl Operation {
    /// Whether carrying the call out may wait on another process: a reopen of a pipe or
    /// FIFO through the caller's descriptor link waits for its other end, a truncate for a
    /// lease on the file to be given up. An open hands a wait to a thread of its own
    /// ([`perform`]); every other operation returns at once.
    pub fn may_wait(&self) -> bool {
        // A private copy takes as long as its file does to copy.
        matches!(
            self,
            Operation::Reopen { .. } | Operation::Truncate { .. } | Operation::PrivateCopy { .. }
        )
    }
}

/// Builds the operation for a bounded filesystem call whose paths resolved to `paths` (in
/// the call's order; for a link, the new name) and, for a link, `source`. `None` when the
/// call cannot be carried out by the supervisor (it is then refused).
pub fn operation_for(
    n: &Notification,
    mem: &TargetMemory<'_>,
    paths: &[PathBuf],
    source: Option<&Path>,
) -> Option<Operation> {
    let a = n.args;
    let first = paths.first()?.clone();
    let op = match n.nr {
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => Operation::Open {
            path: first,
            flags: a[1] as i32,
            mode: a[2] as u32,
            missing: false,
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => Operation::Open {
            path: first,
            flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            mode: a[1] as u32,
            missing: false,
        },
        libc::SYS_openat => Operation::Open {
            path: first,
            flags: a[2] as i32,
            mode: a[3] as u32,
            missing: false,
        },
        libc::SYS_truncate => Operation::Truncate {
            path: first,
            length: a[1] as i64,
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => Operation::Rename {
            from: first,
            to: paths.get(1)?.clone(),
            flags: 0,
            moved: Moved::default(),
        },
        libc::SYS_renameat => Operation::Rename {
            from: first,
            to: paths.get(1)?.clone(),
            flags: 0,
            moved: Moved::default(),
        },
        libc::SYS_renameat2 => Operation::Rename {
            from: first,
            to: paths.get(1)?.clone(),
            flags: a[4] as u32,
            moved: Moved::default(),
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_link => Operation::Link {
            from: source?.to_path_buf(),
            to: first,
            moved: Moved::default(),
        },
        libc::SYS_linkat => Operation::Link {
            from: source?.to_path_buf(),
            to: first,
            moved: Moved::default(),
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_unlink => Operation::Unlink {
            path: first,
            dir: false,
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rmdir => Operation::Unlink {
            path: first,
            dir: true,
        },
        libc::SYS_unlinkat => Operation::Unlink {
            path: first,
            dir: a[2] & libc::AT_REMOVEDIR as u64 != 0,
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mkdir => Operation::Mkdir {
            path: first,
            mode: a[1] as u32,
        },
        libc::SYS_mkdirat => Operation::Mkdir {
            path: first,
            mode: a[2] as u32,
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_symlink => Operation::Symlink {
            target: mem.c_string(a[0], PATH_MAX).ok()?,
            path: first,
        },
        libc::SYS_symlinkat => Operation::Symlink {
            target: mem.c_string(a[0], PATH_MAX).ok()?,
            path: first,
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mknod => Operation::Mknod {
            path: first,
            mode: a[1] as u32,
            dev: a[2],
        },
        libc::SYS_mknodat => Operation::Mknod {
            path: first,
            mode: a[2] as u32,
            dev: a[3],
        },
        _ => return None,
    };
    Some(op)
}

/// The reopen of an object behind the caller's descriptor link `link`, for an open call
/// (`open`, `creat`, `openat`); `None` for any other call.
pub fn reopen_for(n: &Notification, link: &Path) -> Option<Operation> {
    let fd = link.file_name()?.to_str()?.parse().ok()?;
    let a = n.args;
    let flags = match n.nr {
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => a[1] as i32,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
        libc::SYS_openat => a[2] as i32,
        _ => return None,
    };
    Some(Operation::Reopen { fd, flags })
}

/// Carries out `op` for the caller of `n` and returns the answer to send (or
/// [`Response::Sent`] when ADDFD already answered).
pub fn perform(
    listener: &std::sync::Arc<Listener>,
    n: &Notification,
    caller: Caller,
    op: Operation,
    view: View,
) -> Response {
    let Ok((creds, umask, kept)) = super::caller_context::of_thread_kept(caller.tid) else {
        return Response::Error(libc::EPERM);
    };
    let umask = umask.unwrap_or(0o022);
    // Credentials and umask just read by tid: trusted only while the call still waits.
    if !kept && !listener.is_valid(n.id) {
        return Response::Error(libc::EPERM);
    }
    match op {
        Operation::Open {
            path,
            flags,
            mode,
            missing,
        } => {
            let open = CarriedOpen {
                creds,
                umask,
                view,
                path,
                flags,
                mode,
            };
            // A create of a name the check found missing is tried first as a new file
            // (O_EXCL): one that is made is a regular file, whose open never waits, and is
            // handed over with no more calls. One made since is opened as asked (unless
            // the caller asked O_EXCL itself).
            let new_file = flags & libc::O_CREAT != 0
                && flags & libc::O_PATH == 0
                && (missing || flags & libc::O_EXCL != 0);
            if !new_file {
                return open_as_asked(listener, n, open);
            }
            match open.open_with(flags | libc::O_EXCL) {
                Ok(file) => answer_with(listener, n.id, n.tid, &file, flags),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) && flags & libc::O_EXCL == 0 => {
                    open_as_asked(listener, n, open)
                }
                Err(e) => errno_response(e),
            }
        }
        Operation::OwnProcess { path, flags } => {
            let open = CarriedOpen {
                creds,
                umask,
                view: View::Fence,
                path,
                flags,
                mode: 0,
            };
            open_as_asked(listener, n, open)
        }
        Operation::Reopen { fd, flags } => {
            // The very object the caller holds at that number now, not the number: the
            // supervisor's own open is outside Landlock, so whatever it reopens must be
            // the anonymous pipe it checks, never a file or FIFO swapped in after the check.
            let pipe = match super::pidfd::open(caller).and_then(|p| super::pidfd::get_fd(&p, fd)) {
                Ok(pipe) => pipe,
                Err(_) => return Response::Error(libc::EBADF),
            };
            let opened = act_as(&creds, move || reopen_pipe(&pipe, flags | libc::O_CLOEXEC));
            match opened {
                Ok(file) => answer_with(listener, n.id, n.tid, &file, flags),
                Err(e) => errno_response(e),
            }
        }
        Operation::Metadata {
            path,
            follow_last,
            op,
        } => {
            let mem = TargetMemory::new(listener, n);
            metadata::perform_on_checked_path(&mem, &creds, view, &path, follow_last, &op)
        }
        Operation::MetadataFd { object, op } => {
            let mem = TargetMemory::new(listener, n);
            metadata::apply_on_fetched(&mem, &creds, object, &op)
        }
        Operation::MkdirFromSpare {
            path,
            mode,
            spares,
            bounded,
        } => {
            let (fsuid, fsgid) = (creds.fsuid, creds.fsgid);
            value_response(act_as(&creds, move || {
                own_umask(umask)?;
                let (parent, name) = parent_of(view, &path)?;
                let new = super::spare_folders::NewFolder {
                    parent: &parent,
                    name: &name,
                    mode,
                    umask,
                    fsuid,
                    fsgid,
                };
                // The bounded folders are written under their lock for the whole move: a
                // call checked meanwhile finds the new folder bounded or not made yet,
                // and a removal of its name waits to forget it until it is there.
                let mut bounded = bounded.write().unwrap_or_else(|e| e.into_inner());
                if let Some(id) = spares.make_dir(&new) {
                    // Before the caller is answered: what it makes beneath goes to the kernel.
                    bounded.insert(path, super::fence::Granted::new(id));
                    return Ok(());
                }
                drop(bounded);
                // SAFETY: our open descriptor and a NUL-terminated name.
                if unsafe { libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), mode) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            }))
        }
        Operation::PrivateCopy {
            path,
            keep_data,
            for_metadata,
            then,
        } => {
            let copied = act_as(&creds, move || {
                super::private_copy::make(view, &path, keep_data, for_metadata)
            });
            match (copied, then) {
                (Err(e), _) => errno_response(e),
                (Ok(()), Some(then)) => perform(listener, n, caller, *then, view),
                (Ok(()), None) => Response::Continue,
            }
        }
        Operation::LinkUnnamed { object, to } => value_response(act_as(&creds, move || {
            let (dir, name) = parent_of(view, &to)?;
            let source = CString::new(format!("/proc/self/fd/{}", object.as_raw_fd()))?;
            // SAFETY: NUL-terminated names; our own descriptors.
            let ret = unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    source.as_ptr(),
                    dir.as_raw_fd(),
                    name.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            };
            if ret != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })),
        Operation::RewriteConfig { lock, config, text } => {
            value_response(act_as(&creds, move || {
                rewrite_config(&lock, &config, &text)
            }))
        }
        other => value_response(act_as(&creds, move || {
            own_umask(umask)?;
            perform_path_call(other, view)
        })),
    }
}

/// An open to carry out for the caller: the checked path, the caller's flags and mode, and
/// the credentials, umask and view to open it with.
struct CarriedOpen {
    creds: TargetCredentials,
    umask: u32,
    view: View,
    path: PathBuf,
    flags: i32,
    mode: u32,
}

impl CarriedOpen {
    /// Opens the path with `flags` (close-on-exec for the supervisor's copy), as the target.
    fn open_with(&self, flags: i32) -> io::Result<OwnedFd> {
        let (path, view, mode, umask) = (self.path.clone(), self.view, self.mode, self.umask);
        act_as(&self.creds, move || {
            own_umask(umask)?;
            open_checked(view, &path, flags | libc::O_CLOEXEC, mode)
        })
    }
}

/// An open as the caller asked it. Made without waiting first (O_NONBLOCK), so that the
/// caller's thread — the notification loop — is never held by an open: only a FIFO's (its
/// other end missing) or a leased file's can wait, and those go to a thread of their own.
/// An O_PATH open neither waits nor takes O_NONBLOCK.
fn open_as_asked(
    listener: &std::sync::Arc<Listener>,
    n: &Notification,
    open: CarriedOpen,
) -> Response {
    let flags = open.flags;
    let asked_nonblock = flags & (libc::O_NONBLOCK | libc::O_PATH) != 0;
    let probe_flags = if asked_nonblock {
        flags
    } else {
        flags | libc::O_NONBLOCK
    };
    let first = open.open_with(probe_flags);
    let waits = !asked_nonblock
        && match &first {
            // A writer without a reader (ENXIO), a lease being broken (EWOULDBLOCK).
            Err(e) => matches!(e.raw_os_error(), Some(libc::ENXIO | libc::EWOULDBLOCK)),
            // A reader of a FIFO waits for a writer, which the probe did not; a
            // device other than the few that never wait at open (a serial line
            // waits for its carrier) is opened as asked.
            Ok(file) => match kind_of(file) {
                Kind::Fifo => flags & libc::O_ACCMODE == libc::O_RDONLY,
                Kind::Device(rdev) => !never_waits_at_open(rdev),
                Kind::Other => false,
            },
        };
    if waits {
        // The probe stays open until the blocking open returns: a FIFO reader that
        // came and went would release a waiting writer into a pipe without a
        // reader (EPIPE); one still open is what a reader waiting in open is.
        let probe = first.ok();
        return open_on_a_thread(listener, n, open, probe);
    }
    match first.and_then(|file| {
        if !asked_nonblock {
            clear_nonblock(&file, flags)?;
        }
        Ok(file)
    }) {
        Ok(file) => answer_with(listener, n.id, n.tid, &file, flags),
        Err(e) => errno_response(e),
    }
}

/// Sends `file` to the caller of call `id` as the result of its open (close-on-exec as its
/// `flags` ask): [`Response::Sent`], or the error to answer instead.
fn answer_with(
    listener: &Listener,
    id: u64,
    tid: libc::pid_t,
    file: &OwnedFd,
    flags: i32,
) -> Response {
    match listener.add_fd_and_answer(id, tid, file, flags & libc::O_CLOEXEC != 0) {
        Ok(_) => Response::Sent,
        Err(e) => Response::Error(e.raw_os_error().unwrap_or(libc::EPERM)),
    }
}

/// An open that waits (a FIFO's other end): carried out on a thread of its own, which
/// answers when it returns; the caller answers nothing more ([`Response::Sent`]).
fn open_on_a_thread(
    listener: &std::sync::Arc<Listener>,
    n: &Notification,
    open: CarriedOpen,
    probe: Option<OwnedFd>,
) -> Response {
    let listener = listener.clone();
    let id = n.id;
    let tid = n.tid;
    let spawned = std::thread::Builder::new()
        .name("fence-open".into())
        .spawn(move || {
            let opened = open.open_with(open.flags);
            drop(probe);
            let response = match opened {
                Ok(file) => answer_with(&listener, id, tid, &file, open.flags),
                Err(e) => errno_response(e),
            };
            listener.respond(id, response);
        });
    match spawned {
        Ok(_) => Response::Sent,
        Err(_) => Response::Error(libc::EAGAIN),
    }
}

/// What an opened file is, as far as waiting at open goes.
enum Kind {
    Fifo,
    Device(libc::dev_t),
    Other,
}

fn kind_of(file: &OwnedFd) -> Kind {
    // SAFETY: fstat fills a zeroed stat buffer for our descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
        return Kind::Other;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => Kind::Fifo,
        libc::S_IFCHR | libc::S_IFBLK => Kind::Device(st.st_rdev),
        _ => Kind::Other,
    }
}

/// Devices whose open returns at once whatever the flags: the memory devices (/dev/null,
/// zero, full, random, urandom: major 1), /dev/tty and /dev/ptmx (major 5) and pseudo-
/// terminals (majors 136–143). These are most of the devices a sandbox writes.
fn never_waits_at_open(rdev: libc::dev_t) -> bool {
    let major = libc::major(rdev);
    major == 1 || major == 5 || (136..=143).contains(&major)
}

/// Takes back the O_NONBLOCK the supervisor added, so the caller's descriptor has the
/// flags it asked for: of those F_SETFL sets, the ones open honours (`open` ignores
/// O_ASYNC, which F_SETFL would turn on), set at once with no F_GETFL first.
fn clear_nonblock(file: &OwnedFd, flags: i32) -> io::Result<()> {
    let settable = libc::O_APPEND | libc::O_DIRECT | libc::O_NOATIME;
    // SAFETY: F_SETFL on our own descriptor.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & settable) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn perform_path_call(op: Operation, view: View) -> io::Result<()> {
    // SAFETY (all calls below): descriptors are ours and open; names are NUL-terminated
    // CStrings that live for the call.
    let ret = unsafe {
        match op {
            Operation::Truncate { path, length } => {
                let fd = open_checked(view, &path, libc::O_PATH | libc::O_CLOEXEC, 0)?;
                let link = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
                libc::truncate(link.as_ptr(), length)
            }
            Operation::Rename {
                from,
                to,
                flags,
                moved,
            } => return rename_checked(view, &from, &to, flags, &moved),
            Operation::Link { from, to, moved } => return link_checked(view, &from, &to, &moved),
            Operation::Unlink { path, dir } => {
                let (d, name) = parent_of(view, &path)?;
                let flags = if dir { libc::AT_REMOVEDIR } else { 0 };
                libc::unlinkat(d.as_raw_fd(), name.as_ptr(), flags)
            }
            Operation::Mkdir { path, mode } => {
                let (d, name) = parent_of(view, &path)?;
                libc::mkdirat(d.as_raw_fd(), name.as_ptr(), mode)
            }
            Operation::Symlink { target, path } => {
                let (d, name) = parent_of(view, &path)?;
                let target = CString::new(target)?;
                libc::symlinkat(target.as_ptr(), d.as_raw_fd(), name.as_ptr())
            }
            Operation::Mknod { path, mode, dev } => {
                let (d, name) = parent_of(view, &path)?;
                libc::mknodat(d.as_raw_fd(), name.as_ptr(), mode, dev)
            }
            Operation::Open { .. }
            | Operation::MkdirFromSpare { .. }
            | Operation::Reopen { .. }
            | Operation::OwnProcess { .. }
            | Operation::Metadata { .. }
            | Operation::MetadataFd { .. }
            | Operation::PrivateCopy { .. }
            | Operation::LinkUnnamed { .. }
            | Operation::RewriteConfig { .. } => {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
        }
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `RENAME_EXCHANGE` of `renameat2`.
const RENAME_EXCHANGE: u32 = 2;

/// The device and inode of `name` in the open folder `dir`, not followed.
fn identity_at(dir: &OwnedFd, name: &CStr) -> Option<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: a NUL-terminated name relative to our descriptor, and room for one stat.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    // SAFETY: fstatat filled it when it returned 0.
    (r == 0)
        .then(|| unsafe { st.assume_init() })
        .map(|st| (st.st_dev, st.st_ino))
}

fn renameat2(fdir: &OwnedFd, fname: &CStr, tdir: &OwnedFd, tname: &CStr, flags: u32) -> i32 {
    // SAFETY: NUL-terminated names relative to our descriptors.
    unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            fdir.as_raw_fd(),
            fname.as_ptr(),
            tdir.as_raw_fd(),
            tname.as_ptr(),
            flags,
        ) as i32
    }
}

/// A rename carried out from the checked parents and names, then shown to have moved the
/// objects its check judged ([`Moved`]) into each held folder it reaches.
fn rename_checked(view: View, from: &Path, to: &Path, flags: u32, moved: &Moved) -> io::Result<()> {
    let exchange = flags & RENAME_EXCHANGE != 0;
    if moved.changed {
        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
    }
    if moved.required && (moved.source.is_none() || (exchange && moved.exchanged.is_none())) {
        return Err(io::Error::from_raw_os_error(
            moved.absent.unwrap_or(libc::ENOENT),
        ));
    }
    let (fdir, fname) = parent_of(view, from)?;
    let (tdir, tname) = parent_of(view, to)?;
    if renameat2(&fdir, &fname, &tdir, &tname, flags) != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut wrong = false;
    if moved.held_to && is_other(&moved.source, &tdir, &tname) {
        set_aside(&tdir, &tname, moved.back_to_source.then_some(&fdir));
        wrong = true;
    }
    if exchange && moved.held_from && is_other(&moved.exchanged, &fdir, &fname) {
        set_aside(&fdir, &fname, (!moved.held_to).then_some(&tdir));
        wrong = true;
    }
    if wrong {
        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
    }
    Ok(())
}

/// Whether `name` in `dir` is not the object `pin` pinned.
fn is_other(pin: &Option<super::view::Pinned>, dir: &OwnedFd, name: &CStr) -> bool {
    pin.as_ref()
        .is_some_and(|p| identity_at(dir, name) != Some(p.id))
}

/// Takes an object a move wrongly brought to a guarded name (`dir`/`name`) away from it: a
/// symlink is removed (the sandbox made it, and can make it again); anything else is moved
/// to `out`, the folder the sandbox may write that it came from, under a new name
/// (`.fence-undone-RANDOM`), where nothing it holds is followed by the user's git; with no
/// such folder, beside itself under that name; a file that can be moved nowhere is removed.
fn set_aside(dir: &OwnedFd, name: &CStr, out: Option<&OwnedFd>) {
    const RENAME_NOREPLACE: u32 = 1;
    let mut buf = [0u8; 1];
    // SAFETY: a NUL-terminated name relative to our descriptor, and a buffer of the length
    // given.
    let is_link = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    } >= 0;
    // SAFETY: as above; a symlink is no folder.
    if is_link && unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } == 0 {
        return;
    }
    for to in [out.unwrap_or(dir), dir] {
        for attempt in 0..8u64 {
            // (The attempt's number set in: a clock read twice in a row may say the same.)
            let v = super::made_protected::random() ^ attempt;
            let Ok(aside) = CString::new(format!(".fence-undone-{v:016x}")) else {
                return;
            };
            if renameat2(dir, name, to, &aside, RENAME_NOREPLACE) == 0 {
                return;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                break;
            }
        }
    }
    // SAFETY: a NUL-terminated name relative to our descriptor; fails on a folder.
    unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
}

/// A hard link carried out from the checked parents and names, then shown to name the
/// object its check judged ([`Moved`]) when made in a held folder; a new name for another
/// is removed again.
fn link_checked(view: View, from: &Path, to: &Path, moved: &Moved) -> io::Result<()> {
    if moved.changed {
        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
    }
    if moved.required && moved.source.is_none() {
        return Err(io::Error::from_raw_os_error(
            moved.absent.unwrap_or(libc::ENOENT),
        ));
    }
    let (fdir, fname) = parent_of(view, from)?;
    let (tdir, tname) = parent_of(view, to)?;
    // SAFETY: NUL-terminated names relative to our descriptors.
    let r = unsafe {
        libc::linkat(
            fdir.as_raw_fd(),
            fname.as_ptr(),
            tdir.as_raw_fd(),
            tname.as_ptr(),
            0,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    if moved.held_to && is_other(&moved.source, &tdir, &tname) {
        // SAFETY: a NUL-terminated name relative to our descriptor: the name just made, in
        // a folder the sandbox cannot change.
        unsafe { libc::unlinkat(tdir.as_raw_fd(), tname.as_ptr(), 0) };
        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
    }
    Ok(())
}

/// `PIPEFS_MAGIC`: the file system of anonymous pipes (`pipe(2)`), which have no path.
const PIPEFS_MAGIC: libc::c_long = 0x5049_5045;

/// Opens `pipe` (a descriptor fetched from the caller) anew with `flags`, as the kernel
/// does for an open of `/proc/self/fd/N`: a new open file of the same pipe, in the
/// direction asked. Security boundary: only an anonymous pipe is reopened. A named FIFO is
/// a file with a path, which only the write check of that path may open for writing (the
/// supervisor's open is outside Landlock); a socket cannot be opened (ENXIO, as the kernel
/// answers); anything else is refused. The reopened object is checked to be the pipe
/// fetched, so what is handed over is what was checked.
fn reopen_pipe(pipe: &OwnedFd, flags: i32) -> io::Result<OwnedFd> {
    let st = nix::sys::stat::fstat(pipe).map_err(io::Error::from)?;
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => {}
        libc::S_IFSOCK => return Err(io::Error::from_raw_os_error(libc::ENXIO)),
        _ => return Err(io::Error::from_raw_os_error(libc::EACCES)),
    }
    let fs = nix::sys::statfs::fstatfs(pipe).map_err(io::Error::from)?;
    if fs.filesystem_type().0 as libc::c_long != PIPEFS_MAGIC {
        return Err(io::Error::from_raw_os_error(libc::EACCES));
    }
    // Our own descriptor's link: nothing the sandbox can swap. `thread-self`, since this may
    // run on a thread acting with the target's credentials.
    let link = CString::new(format!("/proc/thread-self/fd/{}", pipe.as_raw_fd()))?;
    // Creating or truncating make no sense on a pipe; O_NOFOLLOW would refuse the link.
    let flags = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC | libc::O_NOFOLLOW);
    // SAFETY: open of a NUL-terminated path; the result is checked below.
    let fd = unsafe { libc::open(link.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOCTTY) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that we now own.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    let again = nix::sys::stat::fstat(&file).map_err(io::Error::from)?;
    if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) {
        return Err(io::Error::from_raw_os_error(libc::EACCES));
    }
    Ok(file)
}

/// `openat2(path, flags, mode, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` in `view`: the
/// checked, fully resolved path and nothing a symlink swapped in since could lead to.
pub fn open_checked(view: View, path: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    // Without a mount view (where both views are one), beneath the writable root as it was
    // when the session started (`view::pin_writable_roots`: the folder Landlock's rules
    // hold, wherever its path now leads; security boundary).
    if let Some((root, rel)) = super::view::pinned_root_of(path) {
        return open_at_checked(root, rel, flags, mode, libc::RESOLVE_BENEATH);
    }
    let (dirfd, in_root) = view.base();
    open_at_checked(dirfd, path, flags, mode, in_root)
}

pub(super) fn open_at_checked(
    dirfd: RawFd,
    path: &Path,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: open_how is plain data.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    // openat2 refuses what openat ignores beside O_PATH; O_NOCTTY: a terminal opened for the
    // target must never become the supervisor's controlling terminal.
    // Bits open(2) ignores and openat2 refuses (EINVAL) are dropped, as open would.
    let valid = libc::O_ACCMODE
        | libc::O_CREAT
        | libc::O_EXCL
        | libc::O_NOCTTY
        | libc::O_TRUNC
        | libc::O_APPEND
        | libc::O_NONBLOCK
        | libc::O_DSYNC
        | libc::O_SYNC
        | libc::O_DIRECT
        | libc::O_LARGEFILE
        | libc::O_DIRECTORY
        | libc::O_NOFOLLOW
        | libc::O_NOATIME
        | libc::O_CLOEXEC
        | libc::O_PATH
        | libc::O_TMPFILE;
    let flags = if flags & libc::O_PATH != 0 {
        flags & (libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
    } else {
        (flags & valid) | libc::O_NOCTTY
    };
    how.flags = flags as u64;
    if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 {
        how.mode = u64::from(mode & 0o7777);
    }
    how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS | resolve;
    // SAFETY: a valid open_how with its size, a NUL-terminated path.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// The parent directory of `path` (opened as checked in `view`) and the last component's
/// name.
/// Writes `text` into the existing `config` (its inode, mode and owner kept) and removes
/// `lock`, in fence's view.
fn rewrite_config(lock: &Path, config: &Path, text: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    // A repository's first config (made in the session) is made with the lock file's
    // permissions, as git's rename would have left it, but never writable by others (a
    // lock made under `umask 0` would let another account set `core.fsmonitor`).
    let mode = std::fs::symlink_metadata(lock)?.permissions().mode() & 0o644;
    let (dir, name) = parent_of(View::Fence, config)?;
    // SAFETY: openat on our directory descriptor with a NUL-terminated name; the result
    // is owned below.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_WRONLY
                | libc::O_CREAT
                | libc::O_TRUNC
                | libc::O_NOFOLLOW
                | libc::O_NONBLOCK
                | libc::O_CLOEXEC,
            mode,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor, owned from here on.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    if !file.metadata()?.is_file() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    file.write_all(text)?;
    let (dir, name) = parent_of(View::Fence, lock)?;
    // SAFETY: our directory descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(super) fn parent_of(view: View, path: &Path) -> io::Result<(OwnedFd, CString)> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let dir = open_checked(
        view,
        parent,
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )?;
    Ok((dir, CString::new(name.as_bytes())?))
}

/// Gives this (acting) thread a filesystem context of its own and the target's umask, so a
/// created file gets the mode the target's own call would have given it.
pub(super) fn own_umask(umask: u32) -> io::Result<()> {
    thread_local! {
        /// This thread's fs context is its own already (a thread that acts inline, see
        /// `acting`, comes here once per call).
        static OWN_FS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// The umask this thread last set (most calls in a row come with the same one).
        static SET: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
    }
    // SAFETY: unshare(CLONE_FS) copies this thread's fs context (cwd, root, umask); it
    // touches no other thread of the supervisor.
    if !OWN_FS.get() {
        if unsafe { libc::unshare(libc::CLONE_FS) } != 0 {
            return Err(io::Error::last_os_error());
        }
        OWN_FS.set(true);
    }
    if SET.get() != Some(umask) {
        // SAFETY: umask has no failure mode; after the unshare it acts on this thread only.
        unsafe { libc::umask(umask as libc::mode_t) };
        SET.set(Some(umask));
    }
    Ok(())
}

fn errno_response(e: io::Error) -> Response {
    Response::Error(e.raw_os_error().unwrap_or(libc::EPERM))
}

fn value_response(r: io::Result<()>) -> Response {
    match r {
        Ok(()) => Response::Value(0),
        Err(e) => errno_response(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_swapped_into_a_checked_path_fails_the_open() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::create_dir(root.join("elsewhere")).unwrap();
        let checked = root.join("real/file");
        let fd = open_checked(
            View::Fence,
            &checked,
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        );
        assert!(fd.is_ok());
        std::fs::remove_file(&checked).unwrap();
        std::fs::remove_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("real")).unwrap();
        let err = open_checked(
            View::Fence,
            &checked,
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        )
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
        assert!(!root.join("elsewhere/file").exists());
    }

    #[test]
    fn path_calls_act_on_the_checked_parent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        perform_path_call(
            Operation::Mkdir {
                path: root.join("d"),
                mode: 0o755,
            },
            View::Fence,
        )
        .unwrap();
        std::fs::write(root.join("d/a"), "x").unwrap();
        perform_path_call(
            Operation::Rename {
                from: root.join("d/a"),
                to: root.join("b"),
                flags: 0,
                moved: Moved::default(),
            },
            View::Fence,
        )
        .unwrap();
        assert!(root.join("b").exists());
        perform_path_call(
            Operation::Unlink {
                path: root.join("b"),
                dir: false,
            },
            View::Fence,
        )
        .unwrap();
        perform_path_call(
            Operation::Unlink {
                path: root.join("d"),
                dir: true,
            },
            View::Fence,
        )
        .unwrap();
        assert!(!root.join("d").exists());
    }
}
