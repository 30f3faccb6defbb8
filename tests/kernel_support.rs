//! What fence does on the kernel it runs on: without Landlock it refuses to start (exit
//! 125, naming the missing feature) or, with `--allow-degraded`, runs with the seccomp
//! parts and says what is not enforced; at every Landlock ABI the file fence, the network
//! denial and the supervisor's immunity to signals hold; `fence doctor` reports the
//! kernel's Landlock state. Every claim is checked by its effect from outside the sandbox.
//!
//! The ABI is the one `fence run` uses: the kernel's, lowered by `FENCE_LANDLOCK_ABI_MAX`
//! when the test run sets it (`FENCE_LANDLOCK_ABI_MAX=0` is a kernel without Landlock), so
//! every branch runs on the development machine too. Below ABI 6 fence needs pid and
//! network namespaces to stand in for Landlock's scopes and refuses without them: the
//! tests expect that refusal where it applies. `vm-tests/run` boots other kernels and sets
//! `FENCE_VM_EXPECT` (the Landlock state the kernel must show), so that a guest whose
//! kernel is not what the matrix says fails instead of skipping
//! (`the_kernel_is_the_one_vm_tests_expects`).

mod support;

use std::path::Path;
use std::process::Output;

use support::{PYTHON, Who, World, python_ready, stderr, stdout};

const EVERYONE: [Who; 3] = [
    Who::Root,
    Who::Unprivileged,
    Who::UnprivilegedWithoutNamespaces,
];

/// The Landlock ABI `fence run` uses here; 0 when Landlock is absent (ENOSYS), left out of
/// the boot's LSM list (EOPNOTSUPP), or capped to 0.
fn abi() -> i32 {
    support::effective_landlock_abi()
}

fn seccomp_user_notification() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .is_ok_and(|a| a.split_whitespace().any(|w| w == "user_notif"))
}

/// Whether the test applies to this kernel; prints the reason when it does not.
fn applies(test: &str, wanted: bool, kernels: &str) -> bool {
    if !wanted {
        support::skip(
            test,
            &format!(
                "applies to {kernels}; this kernel has Landlock ABI {} (vm-tests boots those kernels)",
                abi()
            ),
        );
    }
    wanted
}

/// The worlds a test runs in (root, the unprivileged user, and that user without
/// namespaces), on any kernel.
fn worlds(test: &str) -> Vec<World> {
    EVERYONE
        .iter()
        .filter_map(|&who| World::new_on_any_kernel(&format!("{test} ({who:?})"), who))
        .collect()
}

fn assert_unchanged(path: &Path, text: &str) {
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        text,
        "{} changed",
        path.display()
    );
}

/// Whether fence refuses to start for `w` at this ABI: below ABI 6 (no signal and
/// abstract-socket scopes) without the pid and network namespaces that stand in for them.
fn refused_here(w: &World) -> bool {
    abi() < 6 && w.who == Who::UnprivilegedWithoutNamespaces
}

/// Checks a refusal where [`refused_here`]: exit 125, naming what is missing. Returns
/// whether fence refused (the caller then checks that nothing happened).
fn refusal_expected(w: &World, out: &Output) -> bool {
    if !refused_here(w) {
        return false;
    }
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(125),
        "fence ran at Landlock ABI {} without namespaces ({:?}): {err}",
        abi(),
        w.who
    );
    assert!(
        err.contains("signal") && err.contains("namespace"),
        "the refusal does not say why ({:?}): {err}",
        w.who
    );
    true
}

/// Fails the test when fence refused to start: at an ABI that Landlock has, fence runs
/// (compensating what the ABI lacks) rather than refusing.
fn assert_ran(w: &World, out: &Output) {
    assert_ne!(
        out.status.code(),
        Some(125),
        "fence refuses to run at Landlock ABI {} ({:?}): {}",
        abi(),
        w.who,
        stderr(out)
    );
}

#[test]
fn the_kernel_is_the_one_vm_tests_expects() {
    let test = "the_kernel_is_the_one_vm_tests_expects";
    let Ok(expect) = std::env::var("FENCE_VM_EXPECT") else {
        support::skip(
            test,
            "FENCE_VM_EXPECT is unset: this runs in vm-tests guests",
        );
        return;
    };
    // The kernel's own ABI, not the one fence uses: fence clamps to the newest ABI it
    // knows (NEWEST_USED_ABI), and a newer kernel must still be recognised as newer.
    let abi = shim::landlock_abi();
    let ok = match expect.as_str() {
        "none" => abi <= 0,
        e => match e.strip_prefix("min:") {
            Some(min) => abi >= min.parse::<i32>().expect("FENCE_VM_EXPECT min:N"),
            None => abi == e.parse::<i32>().expect("FENCE_VM_EXPECT: none, N or min:N"),
        },
    };
    assert!(
        ok,
        "this kernel has Landlock ABI {abi}, vm-tests expected {expect}"
    );
    assert!(
        seccomp_user_notification(),
        "no seccomp user notification on a kernel of the vm-tests matrix"
    );
}

#[test]
fn without_landlock_fence_run_refuses_naming_the_missing_feature() {
    let test = "without_landlock_fence_run_refuses_naming_the_missing_feature";
    if !applies(test, abi() <= 0, "kernels without Landlock") {
        return;
    }
    for w in worlds(test) {
        let out = w.run(&["/bin/sh", "-c", "echo ran > ran.txt"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(125), "{:?}: {err}", w.who);
        assert!(
            err.contains("Landlock") && err.contains("Linux "),
            "the refusal does not name Landlock and the kernel it needs ({:?}): {err}",
            w.who
        );
        assert!(
            !w.worktree.join("ran.txt").exists(),
            "the command ran although fence refused ({:?})",
            w.who
        );
    }
}

#[test]
fn without_landlock_allow_degraded_runs_and_says_what_is_not_enforced() {
    let test = "without_landlock_allow_degraded_runs_and_says_what_is_not_enforced";
    if !applies(test, abi() <= 0, "kernels without Landlock") {
        return;
    }
    for w in worlds(test) {
        let out = w
            .fence(&[
                "--allow-degraded".as_ref(),
                "--".as_ref(),
                "/bin/sh".as_ref(),
                "-c".as_ref(),
                "echo ran > ran.txt".as_ref(),
            ])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{:?}: {err}", w.who);
        assert_eq!(
            std::fs::read_to_string(w.worktree.join("ran.txt")).unwrap_or_default(),
            "ran\n",
            "the command did not run ({:?}): {err}",
            w.who
        );
        let lower = err.to_lowercase();
        assert!(
            lower.contains("landlock")
                && ["degraded", "not enforced", "advisory"]
                    .iter()
                    .any(|w| lower.contains(w)),
            "stderr does not say that the Landlock fence is not enforced ({:?}): {err}",
            w.who
        );
    }
}

/// Runs `fence run --allow-degraded -- ARGS`.
fn run_degraded(w: &World, args: &[&str]) -> Output {
    let mut all: Vec<&std::ffi::OsStr> = vec!["--allow-degraded".as_ref(), "--".as_ref()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    w.fence(&all).output().unwrap()
}

/// A connect to a listener on the host's loopback; returns whether the listener got a
/// connection (checked from outside: the sandbox's word is not taken).
fn loopback_connect_gets_through(w: &World, degraded: bool) -> (bool, Output) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    w.write(
        "probe.py",
        &format!(
            "import socket\ntry:\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    s.send(b'hello')\nexcept OSError as e:\n    print('refused', e)\n"
        ),
    );
    let out = if degraded {
        run_degraded(w, &[PYTHON, "probe.py"])
    } else {
        w.run(&[PYTHON, "probe.py"])
    };
    (listener.accept().is_ok(), out)
}

#[test]
fn without_landlock_allow_degraded_still_denies_the_network() {
    let test = "without_landlock_allow_degraded_still_denies_the_network";
    if !applies(test, abi() <= 0, "kernels without Landlock") || !python_ready(test) {
        return;
    }
    for w in worlds(test) {
        let (through, out) = loopback_connect_gets_through(&w, true);
        assert_eq!(out.status.code(), Some(0), "{:?}: {}", w.who, stderr(&out));
        assert!(
            !through,
            "the host's loopback listener got a connection ({:?})",
            w.who
        );
    }
}

#[test]
fn without_landlock_allow_degraded_still_checks_writes_outside() {
    let test = "without_landlock_allow_degraded_still_checks_writes_outside";
    if !applies(test, abi() <= 0, "kernels without Landlock") {
        return;
    }
    for w in worlds(test) {
        let victim = w.write_outside("victim.txt", "original");
        let created = w.outside.join("new.txt");
        let script = format!(
            "echo x > {}; echo x >> {}; echo ran > ran.txt\n",
            created.display(),
            victim.display()
        );
        let out = run_degraded(&w, &["/bin/sh", "-c", &script]);
        assert_eq!(
            std::fs::read_to_string(w.worktree.join("ran.txt")).unwrap_or_default(),
            "ran\n",
            "the script did not run ({:?}): {}",
            w.who,
            stderr(&out)
        );
        assert!(!created.exists(), "file created outside ({:?})", w.who);
        assert_unchanged(&victim, "original");
    }
}

#[test]
fn the_file_fence_holds_at_this_landlock_abi() {
    let test = "the_file_fence_holds_at_this_landlock_abi";
    if !applies(test, abi() >= 1, "kernels with Landlock") || !python_ready(test) {
        return;
    }
    for w in worlds(test) {
        let victim = w.write_outside("victim.txt", "original");
        let created = w.outside.join("new.txt");
        std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
        std::fs::write(w.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
        w.own(&w.home.join(".ssh"));
        w.own(&w.home.join(".ssh/id_ed25519"));
        std::os::unix::fs::symlink(&w.outside, w.worktree.join("escape")).unwrap();
        w.own(&w.worktree.join("escape"));
        // Below ABI 3 Landlock does not govern truncate: fence must compensate.
        let script = format!(
            "echo x > {created}\necho x >> {victim}\necho x > escape/victim.txt\necho x > escape/new2.txt\n\
             {PYTHON} -c 'import os,sys; os.truncate(sys.argv[1], 0)' {victim}\n\
             {PYTHON} -c 'import os,sys; os.truncate(sys.argv[1], 0)' escape/victim.txt\n\
             cat {home}/.ssh/id_ed25519\necho done > done.txt\n",
            created = created.display(),
            victim = victim.display(),
            home = w.home.display(),
        );
        let out = w.run(&["/bin/sh", "-c", &script]);
        if refusal_expected(&w, &out) {
            assert!(!w.worktree.join("done.txt").exists(), "{:?}", w.who);
        } else {
            assert_ran(&w, &out);
        }
        assert_eq!(
            std::fs::read_to_string(w.worktree.join("done.txt")).unwrap_or_default(),
            if refused_here(&w) { "" } else { "done\n" },
            "the script did not run to its end ({:?}): {}",
            w.who,
            stderr(&out)
        );
        assert!(!created.exists(), "file created outside ({:?})", w.who);
        assert!(
            !w.outside.join("new2.txt").exists(),
            "file created through a symlink ({:?})",
            w.who
        );
        assert_unchanged(&victim, "original");
        assert!(
            !stdout(&out).contains("PRIVATE-KEY-MATERIAL"),
            "secret read at Landlock ABI {} ({:?})",
            abi(),
            w.who
        );
    }
}

#[test]
fn the_network_is_denied_at_this_landlock_abi() {
    let test = "the_network_is_denied_at_this_landlock_abi";
    if !applies(test, abi() >= 1, "kernels with Landlock") || !python_ready(test) {
        return;
    }
    // Landlock has TCP rules from ABI 4 on; below that the seccomp socket filter and the
    // supervisor's connect check (or a network namespace) must hold alone.
    for w in worlds(test) {
        let (through, out) = loopback_connect_gets_through(&w, false);
        if !refusal_expected(&w, &out) {
            assert_ran(&w, &out);
        }
        assert!(
            !through,
            "the host's loopback listener got a connection at Landlock ABI {} ({:?})",
            abi(),
            w.who
        );
    }
}

#[test]
fn the_sandbox_cannot_signal_fence_at_this_landlock_abi() {
    let test = "the_sandbox_cannot_signal_fence_at_this_landlock_abi";
    if !applies(test, abi() >= 1, "kernels with Landlock") {
        return;
    }
    // Landlock scopes signals from ABI 6 on; below that a pid namespace hides fence, and
    // without one fence refuses to start, saying why.
    for w in worlds(test) {
        w.write(
            "s.sh",
            "while [ ! -s fence.pid ]; do sleep 0.02; done\nP=$(cat fence.pid)\nkill -KILL $P; kill -STOP $P; kill -TERM $P\necho survived > done\n",
        );
        let child = w
            .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        w.write("fence.pid", &format!("{}\n", child.id()));
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        if refusal_expected(&w, &out) {
            assert!(
                !w.worktree.join("done").exists(),
                "the script ran although fence refused ({:?})",
                w.who
            );
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(0),
            "fence did not finish normally at Landlock ABI {} ({:?}): {err}",
            abi(),
            w.who
        );
        assert_eq!(
            std::fs::read_to_string(w.worktree.join("done")).unwrap_or_default(),
            "survived\n",
            "{:?}",
            w.who
        );
    }
}

#[test]
fn doctor_reports_this_kernels_landlock_state() {
    let out = std::process::Command::new(support::fence_binary())
        .arg("doctor")
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !text.contains("unrecognized subcommand 'doctor'"),
        "`fence doctor` is not in this build: {text}"
    );
    let lower = text.to_lowercase();
    let landlock: Vec<&str> = lower.lines().filter(|l| l.contains("landlock")).collect();
    assert!(
        !landlock.is_empty(),
        "`fence doctor` says nothing of Landlock: {text}"
    );
    let abi = abi();
    if abi > 0 {
        let n = abi.to_string();
        assert!(
            landlock.iter().any(|l| l
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == n)),
            "`fence doctor` does not report Landlock ABI {abi}: {text}"
        );
    } else {
        assert!(
            landlock.iter().any(|l| [
                "not available",
                "unavailable",
                "missing",
                "absent",
                "disabled",
                "not enabled",
                "none",
                "no landlock",
            ]
            .iter()
            .any(|w| l.contains(w))),
            "`fence doctor` does not report that Landlock is missing: {text}"
        );
    }
    assert!(
        lower.contains("seccomp"),
        "`fence doctor` says nothing of seccomp: {text}"
    );
}
