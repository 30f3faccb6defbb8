//! fence's shim: the stages that run inside the sandbox between fork and exec.
//!
//! The supervisor starts the shim by re-executing the `fence` binary (`fence __shim`) as
//! the first process of the sandbox's namespaces. Stages, one file each:
//! - [`init_process`]: receives the spec over the [`channel`], prepares the namespaces it
//!   is first in ([`mount_view`]), forks the target, forwards signals, reaps, passes on the
//!   exit status;
//! - [`target_process`]: drops capabilities, sets no_new_privs, applies the Landlock fence
//!   ([`landlock_fence`]) and the seccomp programs ([`seccomp_filters`]), hands the
//!   notification listener to the supervisor, closes descriptors and executes the target.

mod bpf_peephole;
pub mod channel;
pub mod init_process;
pub mod landlock_fence;
pub mod mount_aliases;
pub mod mount_view;
pub mod protected_paths;
pub mod seccomp_filters;
mod sys;
pub mod target_process;

pub use channel::{
    Channel, FromShim, NET_STAGE, Namespaces, PID_MAX_STAGE, PassFd, SHIM_CHANNEL_FD, SHIM_NAME,
    SandboxSpec, SpareDir, SparePool, ToShim, UNSHARE_NET_ARG,
};

/// Landlock ABI of the running kernel (0 when Landlock is missing or disabled).
pub fn landlock_abi() -> i32 {
    sys::landlock_abi_version()
}
