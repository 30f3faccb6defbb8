//! The kernel features `fence run` needs, checked before anything starts.

/// Missing features, each with the kernel that brings it. Empty when all are present.
pub fn missing_features(landlock_abi: i32) -> Vec<String> {
    let mut missing = Vec::new();
    if landlock_abi <= 0 {
        missing.push(
            "Landlock (Linux 5.13 or later with Landlock enabled: lsm=...,landlock)".to_string(),
        );
    } else if landlock_abi < shim::landlock_fence::MIN_LANDLOCK_ABI {
        missing.push(format!(
            "Landlock ABI {} (this kernel has ABI {landlock_abi}; ABI 3 needs Linux 6.2)",
            shim::landlock_fence::MIN_LANDLOCK_ABI
        ));
    }
    if !seccomp_user_notification() {
        missing.push(
            "seccomp user notification (Linux 5.0 or later; 6.6 for synchronous wake-ups)"
                .to_string(),
        );
    }
    missing
}

/// Whether the kernel offers `SECCOMP_RET_USER_NOTIF`.
fn seccomp_user_notification() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .map(|a| a.split_whitespace().any(|w| w == "user_notif"))
        .unwrap_or(false)
}
