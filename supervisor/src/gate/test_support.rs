//! What the gate's tests share: the built `fence` binary, and whether it can sandbox here.

use std::path::PathBuf;

/// The `fence` binary built beside the unit-test binary (`cargo test` builds it for the
/// integration tests), for tests that need a real sandbox.
pub fn built_fence() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let fence = exe
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap()
        .join("fence");
    assert!(
        fence.exists(),
        "{} is missing: build it first (cargo build -p fence)",
        fence.display()
    );
    fence
}

/// Whether this kernel can run `fence run`; prints a loud skip reason when not.
pub fn sandbox_available(test: &str) -> bool {
    let seccomp = std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .is_ok_and(|a| a.contains("user_notif"));
    let ok = shim::landlock_abi() >= 3 && seccomp;
    if !ok {
        skip(test, "no Landlock ABI 3 or no seccomp user notification");
    }
    ok
}

/// Says why a test does not run, straight to descriptor 2 (past the harness's capture,
/// so the skip shows in every run).
fn skip(test: &str, reason: &str) {
    use std::io::Write;
    // SAFETY: dup of our own stderr; the new descriptor is owned by the File.
    let fd = unsafe { libc::dup(2) };
    if fd >= 0 {
        // SAFETY: `fd` is a fresh descriptor we own.
        let mut err = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let _ = writeln!(err, "SKIPPED {test}: {reason}");
    }
}
