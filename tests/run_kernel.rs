//! The kernel-capability side of `fence run`: `fence doctor`, the Landlock ABI cap
//! (`FENCE_LANDLOCK_ABI_MAX`) with the compensations of older ABIs, failing closed at
//! start, and the flags that change what the kernel is asked for (`--read-only-worktree`,
//! `--no-write-watch`, `--pass-fd`). Every security claim is checked by its effect from
//! outside the sandbox.

mod support;

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use support::{PYTHON, Who, World, stderr, stdout};

fn assert_unchanged(path: &Path, text: &str) {
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        text,
        "{} changed",
        path.display()
    );
}

/// `fence run ARGS -- COMMAND…` with `FENCE_LANDLOCK_ABI_MAX=cap`.
fn run_capped(w: &World, cap: &str, flags: &[&str], command: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.push(OsStr::new("--"));
    args.extend(command.iter().map(OsStr::new));
    w.fence(&args)
        .env("FENCE_LANDLOCK_ABI_MAX", cap)
        .output()
        .expect("running fence")
}

fn doctor(extra_env: &[(&str, &str)]) -> (Output, serde_json::Value) {
    let mut cmd = Command::new(support::fence_binary());
    cmd.args(["doctor", "--json"])
        .env_remove("FENCE_LANDLOCK_ABI_MAX")
        .env_remove("FENCE_NO_NAMESPACES");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running fence doctor");
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor JSON: {e}: {}", stdout(&out)));
    (out, json)
}

#[test]
fn doctor_reports_this_kernel_and_exits_by_its_verdict() {
    let (out, report) = doctor(&[]);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(report["kernel"], release.trim());
    assert_eq!(report["landlock"]["abi"], shim::landlock_abi());
    let full = report["verdict"] == "full";
    assert_eq!(
        out.status.code(),
        Some(if full { 0 } else { 1 }),
        "{report}"
    );
    for feature in [
        "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP",
        "SECCOMP_ADDFD_FLAG_SEND",
        "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
        "cgroup.kill",
        "PIDFD_THREAD",
    ] {
        assert!(
            report["kernel_floors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["feature"] == feature),
            "{feature} missing from the kernel table"
        );
    }
    // The probes must agree with what the kernel says elsewhere.
    let notif = std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .unwrap_or_default()
        .contains("user_notif");
    assert_eq!(report["seccomp"]["user_notification"], notif);
    if notif {
        assert_eq!(report["seccomp"]["outer_listener"], false);
        assert_eq!(report["seccomp"]["sync_wake_up"]["how"], "probe");
    }
    // The kernel's unix socket table, as `ss -x` reads it (`/proc/net/unix` lists the same
    // sockets): probed, and present wherever the kernel has sock_diag for unix sockets.
    assert_eq!(report["unix_diag"]["how"], "probe", "{report}");
    let unix_diag_module = std::fs::read_to_string("/proc/modules")
        .unwrap_or_default()
        .contains("unix_diag");
    if unix_diag_module {
        assert_eq!(report["unix_diag"]["present"], true, "{report}");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(report["namespaces"]["pid"], true, "{report}");
        assert!(
            report["kill_if_fence_dies"]
                .as_str()
                .unwrap()
                .starts_with("pid namespace")
        );
    }

    let text = Command::new(support::fence_binary())
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(text.status.code(), out.status.code());
    let text = stdout(&text);
    for line in [
        "Landlock",
        "SYNC_WAKE_UP",
        "PIDFD_THREAD",
        "unix socket table",
        "if fence dies",
    ] {
        assert!(text.contains(line), "{line} missing: {text}");
    }
    let usage = Command::new(support::fence_binary())
        .args(["doctor", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(64));
}

#[test]
fn doctor_without_namespaces_names_the_weaker_death_mechanism() {
    let (out, report) = doctor(&[("FENCE_NO_NAMESPACES", "1")]);
    let mechanism = report["kill_if_fence_dies"].as_str().unwrap();
    assert!(!mechanism.starts_with("pid namespace"), "{report}");
    if mechanism.starts_with("parent-death signal") {
        assert_eq!(report["verdict"], "degraded");
        assert_eq!(out.status.code(), Some(1));
        assert!(
            report["not_enforced"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l.as_str().unwrap().contains("CPU loops")),
            "{report}"
        );
    }
}

#[test]
fn doctor_judges_an_older_abi_as_fence_run_would() {
    if shim::landlock_abi() < 3 {
        support::skip(
            "doctor_judges_an_older_abi_as_fence_run_would",
            "Landlock ABI below 3 here: no cap lowers it to 2",
        );
        return;
    }
    let (out, none) = doctor(&[("FENCE_LANDLOCK_ABI_MAX", "0")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(none["verdict"], "refuse");
    assert_eq!(none["landlock"]["abi_used"], 0);
    assert!(
        none["not_enforced"].to_string().contains("Linux 5.13"),
        "{none}"
    );

    let (_, two) = doctor(&[("FENCE_LANDLOCK_ABI_MAX", "2")]);
    assert_eq!(two["landlock"]["abi_used"], 2);
    let enforced = two["enforced"].to_string();
    if two["namespaces"]["pid"] == true {
        assert!(enforced.contains("no Landlock truncate right"), "{two}");
        assert_ne!(two["verdict"], "refuse", "{two}");
    }
    let (out, bare) = doctor(&[
        ("FENCE_LANDLOCK_ABI_MAX", "2"),
        ("FENCE_NO_NAMESPACES", "1"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(bare["verdict"], "refuse");
    assert!(
        bare["not_enforced"]
            .to_string()
            .contains("ABI 6, Linux 6.12"),
        "{bare}"
    );
}

fn doctor_inside_fence_sees_the_outer_listener(w: &World) {
    let fence = support::fence_binary().to_str().unwrap().to_string();
    let out = w.run(&[&fence, "doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)));
    assert_eq!(report["seccomp"]["outer_listener"], true, "{report}");
    assert_eq!(report["verdict"], "refuse");
    assert_eq!(out.status.code(), Some(1));
}

fn fence_inside_fence_exits_125_and_the_outer_session_goes_on(w: &World) {
    let fence = support::fence_binary().to_str().unwrap().to_string();
    w.write(
        "nested.sh",
        &format!(
            "{fence} run -- /usr/bin/touch inner-ran\necho inner=$? > status\necho after > after\n"
        ),
    );
    let out = w.run(&["/bin/sh", "nested.sh"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("status")).unwrap(),
        "inner=125\n"
    );
    assert!(
        stderr(&out).contains("cannot run inside another seccomp-notify sandbox"),
        "{}",
        stderr(&out)
    );
    assert!(!w.worktree.join("inner-ran").exists());
    assert!(w.worktree.join("after").exists(), "the outer session broke");
}

/// The file fence at a capped ABI: writes outside (absolute path, symlink), truncation
/// outside (path and `O_RDONLY|O_TRUNC`) and secrets stay out of reach; truncation inside
/// still works; the banner names the cap and the compensations.
fn file_fence_holds_at_capped_abi(w: &World, cap: &str) {
    let victim = w.write_outside("victim.txt", "original");
    std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
    std::fs::write(w.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    w.own(&w.home.join(".ssh"));
    w.own(&w.home.join(".ssh/id_ed25519"));
    w.write("inside.txt", "0123456789");
    let v = victim.display().to_string();
    let secret = w.home.join(".ssh/id_ed25519").display().to_string();
    w.write(
        "probe.py",
        &format!(
            r#"import os
v = {v:?}
def attempt(f):
    try:
        f()
    except OSError:
        pass
attempt(lambda: open(v, "w").write("x"))
attempt(lambda: os.symlink(v, "link"))
attempt(lambda: open("link", "a").write("x"))
attempt(lambda: os.truncate(v, 0))
attempt(lambda: os.close(os.open(v, os.O_RDONLY | os.O_TRUNC)))
attempt(lambda: print(open({secret:?}).read()))
os.truncate("inside.txt", 4)
"#
        ),
    );
    let out = run_capped(w, cap, &[], &[PYTHON, "probe.py"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_unchanged(&victim, "original");
    assert!(
        !stdout(&out).contains("PRIVATE-KEY-MATERIAL"),
        "secret leaked"
    );
    assert_unchanged(&w.worktree.join("inside.txt"), "0123");
    let cap_abi: i32 = cap.parse().unwrap();
    if shim::landlock_abi() > cap_abi {
        assert!(
            err.contains(&format!("Landlock ABI capped at {cap}")),
            "no cap banner: {err}"
        );
    }
    assert!(
        err.contains("no signal scope: pid namespace"),
        "signal compensation not named: {err}"
    );
    if shim::landlock_fence::effective_abi(shim::landlock_abi(), Some(cap_abi)) < 3 {
        assert!(
            err.contains("no TRUNCATE: fence performs truncate"),
            "{err}"
        );
    }
}

/// Without a signal scope, the pid namespace hides other processes, but a group signal
/// (`kill(0, …)`) would reach fence, which shares the sandbox's process group.
fn group_signal_does_not_reach_fence_at_capped_abi(w: &World, cap: &str) {
    w.write("s.sh", "kill -TERM 0\necho survived > done\n");
    // fence leads a process group of its own here, so a regression signals fence and not
    // the test harness.
    let out = w
        .fence(&["--", "/bin/sh", "s.sh"].map(OsStr::new))
        .env("FENCE_LANDLOCK_ABI_MAX", cap)
        .process_group(0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("done")).unwrap(),
        "survived\n"
    );
}

/// These tests run on worlds made for any kernel: without Landlock there is nothing to
/// cap (the refusal is `without_landlock_fence_refuses_and_degraded_says_so`).
fn has_landlock(test: &str) -> bool {
    if shim::landlock_abi() > 0 {
        return true;
    }
    support::skip(
        test,
        "no Landlock on this kernel: nothing to cap (the refusal is tested on its own)",
    );
    false
}

fn at_abi_2(w: &World) {
    if !has_landlock("at_abi_2") {
        return;
    }
    if w.who == Who::UnprivilegedWithoutNamespaces {
        refused_below_abi_6_without_namespaces(w, "2");
        return;
    }
    file_fence_holds_at_capped_abi(w, "2");
    group_signal_does_not_reach_fence_at_capped_abi(w, "2");
}

fn at_abi_5(w: &World) {
    if !has_landlock("at_abi_5") {
        return;
    }
    if w.who == Who::UnprivilegedWithoutNamespaces {
        refused_below_abi_6_without_namespaces(w, "5");
        return;
    }
    file_fence_holds_at_capped_abi(w, "5");
    group_signal_does_not_reach_fence_at_capped_abi(w, "5");
}

fn refused_below_abi_6_without_namespaces(w: &World, cap: &str) {
    let marker = w.worktree.join("ran");
    let out = run_capped(w, cap, &[], &["/usr/bin/touch", marker.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ABI 6, Linux 6.12"),
        "the refusal does not name the kernel: {}",
        stderr(&out)
    );
    assert!(!marker.exists(), "the command ran");

    // --allow-degraded keeps the file fence of that ABI and says what is missing. Reads are
    // not notified: only Landlock keeps the secret unreadable here.
    let victim = w.write_outside(&format!("victim-{cap}.txt"), "original");
    std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
    let key = w.home.join(".ssh/id_ed25519");
    std::fs::write(&key, "PRIVATE-KEY-MATERIAL").unwrap();
    w.own(&w.home.join(".ssh"));
    w.own(&key);
    let out = run_capped(
        w,
        cap,
        &["--allow-degraded"],
        &[
            "/bin/sh",
            "-c",
            &format!(
                "echo x > {}; cat {}; touch {}",
                victim.display(),
                key.display(),
                marker.display()
            ),
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(marker.exists(), "the degraded run did not run");
    assert_unchanged(&victim, "original");
    assert!(
        !stdout(&out).contains("PRIVATE-KEY-MATERIAL"),
        "the degraded run dropped Landlock: secret read"
    );
    assert!(
        err.contains("running degraded") && err.contains("ABI 6, Linux 6.12"),
        "{err}"
    );
}

fn at_abi_1_renames_across_directories_are_carried_out_by_fence(w: &World) {
    if !has_landlock("at_abi_1_renames_across_directories_are_carried_out_by_fence") {
        return;
    }
    if w.who == Who::UnprivilegedWithoutNamespaces {
        refused_below_abi_6_without_namespaces(w, "1");
        return;
    }
    std::fs::create_dir(w.worktree.join("a")).unwrap();
    std::fs::create_dir(w.worktree.join("b")).unwrap();
    w.own(&w.worktree.join("a"));
    w.own(&w.worktree.join("b"));
    w.write("a/x", "x");
    w.write("a/y", "y");
    let out = run_capped(
        w,
        "1",
        &[],
        &[
            "/bin/sh",
            "-c",
            "mv -T a/y a/z; python3 -c 'import os; os.rename(\"a/x\", \"b/x\")'",
        ],
    );
    // Landlock alone would refuse the second (EXDEV); the supervisor carries both out from
    // the paths it checked.
    assert!(w.worktree.join("a/z").exists(), "{}", stderr(&out));
    assert!(
        !w.worktree.join("a/x").exists() && w.worktree.join("b/x").exists(),
        "a cross-directory rename failed at ABI 1: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("no REFER: fence carries out renames"));
}

fn without_landlock_fence_refuses_and_degraded_says_so(w: &World) {
    let marker = w.worktree.join("ran");
    let out = run_capped(w, "0", &[], &["/usr/bin/touch", marker.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(125));
    let err = stderr(&out);
    assert!(
        err.contains("Landlock") && err.contains("Linux 5.13"),
        "{err}"
    );
    assert!(!marker.exists());

    let victim = w.write_outside("victim.txt", "original");
    w.write("inside.txt", "0123456789");
    // Without Landlock (and, without namespaces, without a read-only view) fence performs
    // truncate(2) itself on the file it checked.
    let script = format!(
        "echo x > {v}; python3 -c 'import os; os.truncate(\"{v}\", 0)'; python3 -c 'import os; os.truncate(\"inside.txt\", 3)'; touch ran",
        v = victim.display()
    );
    let out = run_capped(w, "0", &["--allow-degraded"], &["/bin/sh", "-c", &script]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(marker.exists(), "degraded run did not run");
    assert!(err.contains("advisory"), "degraded start not said: {err}");
    // The supervisor's check (and the read-only view, where there is one) still refuses.
    assert_unchanged(&victim, "original");
    assert_unchanged(&w.worktree.join("inside.txt"), "012");
}

fn read_only_worktree_refuses_writes_there_with_a_reason(w: &World) {
    let existing = w.write("existing.txt", "original");
    let out = w
        .fence(&[
            "--read-only-worktree".as_ref(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            "echo x > existing.txt; echo y > new.txt; mkdir d; echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"".as_ref(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_unchanged(&existing, "original");
    assert!(!w.worktree.join("new.txt").exists());
    assert!(!w.worktree.join("d").exists());
    assert_eq!(
        stdout(&out),
        "t\n",
        "the session TMPDIR is not writable: {err}"
    );
    assert!(
        err.contains("read-only worktree") && err.contains("rule fence.read-only-worktree"),
        "no reason given: {err}"
    );
}

fn no_write_watch_keeps_the_fence_without_reasons(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    let mode = std::fs::metadata(&victim).unwrap().mode();
    std::fs::create_dir_all(w.worktree.join(".git")).unwrap();
    w.own(&w.worktree.join(".git"));
    let config = w.write(".git/config", "[core]\n");
    let script = format!(
        "echo x > {v}; chmod 777 {v}; echo y > .git/config; echo inside > inside.txt",
        v = victim.display()
    );
    let out = w
        .fence(&[
            "--no-write-watch".as_ref(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            script.as_ref(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    if w.who == Who::UnprivilegedWithoutNamespaces {
        assert_eq!(out.status.code(), Some(125), "{err}");
        assert!(
            err.contains("--no-write-watch needs a mount namespace"),
            "{err}"
        );
        assert!(!w.worktree.join("inside.txt").exists());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_unchanged(&victim, "original");
    assert_eq!(std::fs::metadata(&victim).unwrap().mode(), mode);
    assert_unchanged(&config, "[core]\n");
    assert_unchanged(&w.worktree.join("inside.txt"), "inside\n");
    assert!(
        !err.contains("fence: blocked write"),
        "writes were notified under --no-write-watch: {err}"
    );

    // Metadata stays notified: through a descriptor from outside (or its /proc/self/fd
    // link) it reaches a mount the read-only view does not cover.
    let held = w.write_outside("held.txt", "");
    let mode = std::fs::metadata(&held).unwrap().mode();
    let out = with_fd_3(
        w,
        &["--no-write-watch", "--pass-fd", "3"],
        "chmod 777 /proc/self/fd/3; python3 -c 'import os; os.fchmod(3, 0o777)'",
        &held,
    );
    assert_eq!(
        std::fs::metadata(&held).unwrap().mode(),
        mode,
        "mode of an outside file changed through a held descriptor: {}",
        stderr(&out)
    );
}

/// Runs `fence run FLAGS -- sh -c SCRIPT` with `file` open for appending as descriptor 3.
fn with_fd_3(w: &World, flags: &[&str], script: &str, file: &Path) -> Output {
    let f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.extend(["--", "/bin/sh", "-c", script].map(OsStr::new));
    let mut cmd = w.fence(&args);
    let raw = std::os::fd::AsRawFd::as_raw_fd(&f);
    // SAFETY: dup2 and fcntl in the child between fork and exec, on a descriptor open in
    // the parent.
    unsafe {
        cmd.pre_exec(move || {
            // dup2 onto itself keeps close-on-exec: clear it explicitly.
            if libc::dup2(raw, 3) < 0 || libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    drop(f);
    out
}

fn pass_fd_keeps_only_the_named_descriptor(w: &World) {
    let passed = w.write_outside("passed.txt", "");
    let out = with_fd_3(w, &["--pass-fd", "3"], "echo through-3 >&3", &passed);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_unchanged(&passed, "through-3\n");

    let closed = w.write_outside("closed.txt", "");
    let out = with_fd_3(w, &[], "echo through-3 >&3", &closed);
    assert_ne!(out.status.code(), Some(0));
    assert_unchanged(&closed, "");

    let out = w
        .fence(&[
            "--pass-fd".as_ref(),
            "2".as_ref(),
            "--".as_ref(),
            "true".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("above 2"), "{}", stderr(&out));
    let out = w
        .fence(&[
            "--pass-fd".as_ref(),
            "57".as_ref(),
            "--".as_ref(),
            "true".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).contains("descriptor 57 is not open"),
        "{}",
        stderr(&out)
    );
}

/// At ABI 2 (no Landlock truncate right) a thread swapping the path between a file inside
/// and one outside during 10,000 `truncate` calls and `O_RDONLY|O_TRUNC` opens never
/// truncates the outside file.
fn truncate_race_at_abi_2_never_truncates_outside(w: &World) {
    let test = "truncate_race_at_abi_2_never_truncates_outside";
    if !has_landlock(test) {
        return;
    }
    if w.who == Who::UnprivilegedWithoutNamespaces {
        refused_below_abi_6_without_namespaces(w, "2");
        return;
    }
    if Command::new("cc").arg("--version").output().is_err() {
        support::skip(test, "no C compiler (cc)");
        return;
    }
    let victim = w.write_outside("victim.txt", "original");
    let inside = w.write("ok.txt", "inside");
    let src = format!(
        r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static char path[4096];
static const char *in = "{inside}", *out = "{outside}";
static volatile int stop;
static void spin(void) {{ __asm__ volatile("" ::: "memory"); for (volatile int i = 0; i < 200; i++) {{}} __asm__ volatile("" ::: "memory"); }}
static void *swap(void *arg) {{
    (void)arg;
    while (!stop) {{ strcpy(path, out); spin(); strcpy(path, in); spin(); }}
    return 0;
}}
int main(void) {{
    pthread_t t;
    int ok = 0, refused = 0;
    strcpy(path, in);
    pthread_create(&t, 0, swap, 0);
    for (int i = 0; i < 10000; i++) {{
        if (truncate(path, 0) == 0) ok++; else refused++;
        int fd = open(path, O_RDONLY | O_TRUNC);
        if (fd >= 0) close(fd);
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#,
        inside = inside.display(),
        outside = victim.display()
    );
    let bin = w.compile_c("race", &src);
    let out = run_capped(w, "2", &["--quiet-blocks"], &[bin.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_unchanged(&victim, "original");
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
        "race not exercised: {counts:?}"
    );
}

/// An abstract unix socket of the host is out of reach: the sandbox's own network
/// namespace has its own abstract names, and without one fence refuses the connect
/// (it performs connects from outside Landlock's domain, where the scope does not apply).
fn host_abstract_unix_socket_is_unreachable(w: &World) {
    use std::os::linux::net::SocketAddrExt;
    let name = format!(
        "fence-it-abstract-{}",
        std::process::id() as u64 * 1000 + w.who as u64
    );
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let dgram = std::os::unix::net::UnixDatagram::bind_addr(
        &std::os::unix::net::SocketAddr::from_abstract_name(format!("{name}-d").as_bytes())
            .unwrap(),
    )
    .unwrap();
    dgram.set_nonblocking(true).unwrap();
    let out = w.python(&format!(
        r#"import socket
for kind, name in [(socket.SOCK_STREAM, {n:?}), (socket.SOCK_DGRAM, {d:?})]:
    s = socket.socket(socket.AF_UNIX, kind)
    try:
        if kind == socket.SOCK_STREAM:
            s.connect("\0" + name); s.send(b"x")
        else:
            s.sendto(b"x", "\0" + name)
        print("reached", name)
    except OSError as e:
        print("refused", e.errno)
"#,
        n = name,
        d = format!("{name}-d")
    ));
    assert!(
        listener.accept().is_err(),
        "the host's abstract listener got a connection: {}",
        stdout(&out)
    );
    let mut buf = [0u8; 8];
    assert!(
        dgram.recv(&mut buf).is_err(),
        "the host's abstract datagram socket got a message: {}",
        stdout(&out)
    );
}

/// The start banner names how the sandbox ends if fence dies, when that is weaker than
/// the pid namespace, and says nothing otherwise.
fn start_banner_names_a_weaker_death_mechanism(w: &World) {
    let out = w.run(&["/bin/true"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    if w.who == Who::UnprivilegedWithoutNamespaces {
        assert!(
            err.contains("no pid namespace") && err.contains("if fence dies"),
            "{err}"
        );
    } else {
        assert!(!err.contains("if fence dies"), "{err}");
    }
}

both_ways!(
    doctor_inside_fence_sees_the_outer_listener,
    fence_inside_fence_exits_125_and_the_outer_session_goes_on,
    read_only_worktree_refuses_writes_there_with_a_reason,
    no_write_watch_keeps_the_fence_without_reasons,
    pass_fd_keeps_only_the_named_descriptor,
    host_abstract_unix_socket_is_unreachable,
    start_banner_names_a_weaker_death_mechanism,
);

// How fence treats the kernel it finds: these also run where fence refuses to start.
both_ways_on_any_kernel!(
    at_abi_2,
    at_abi_5,
    at_abi_1_renames_across_directories_are_carried_out_by_fence,
    without_landlock_fence_refuses_and_degraded_says_so,
    truncate_race_at_abi_2_never_truncates_outside,
);

/// SPEC §2: `fence doctor` warns when the worktree holds files with a link count above one
/// (a hard link made before any session, whose other name may lie outside: `fence run`
/// writes such a file as a private copy, and reads reach the shared file).
#[test]
fn doctor_warns_about_worktree_files_with_other_hard_links() {
    let outside = tempfile::tempdir().unwrap();
    let wt = tempfile::tempdir().unwrap();
    let wt_path = wt.path().canonicalize().unwrap();
    support::git(&wt_path, &["init", "-q"]);
    std::fs::write(outside.path().join("store-file"), "shared").unwrap();
    std::fs::hard_link(
        outside.path().join("store-file"),
        wt_path.join("linked.txt"),
    )
    .unwrap();
    std::fs::write(wt_path.join("plain.txt"), "own").unwrap();
    // Two names both in the worktree (a build's own links) share nothing outside.
    std::fs::create_dir(wt_path.join("target")).unwrap();
    std::fs::write(wt_path.join("target/app"), "bin").unwrap();
    std::fs::hard_link(wt_path.join("target/app"), wt_path.join("target/app-1234")).unwrap();
    let run = |json: bool| {
        let mut cmd = Command::new(support::fence_binary());
        cmd.arg("doctor");
        if json {
            cmd.arg("--json");
        }
        cmd.current_dir(&wt_path)
            .env_remove("FENCE_LANDLOCK_ABI_MAX")
            .env_remove("FENCE_NO_NAMESPACES")
            .output()
            .expect("running fence doctor")
    };
    let out = run(true);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shared = &report["worktree_hard_links"];
    assert_eq!(shared["count"], 1, "{shared}");
    assert_eq!(shared["examples"][0], "linked.txt", "{shared}");
    let text = stdout(&run(false));
    assert!(
        text.contains("files have other hard links") && text.contains("linked.txt"),
        "{text}"
    );
    std::fs::remove_file(wt_path.join("linked.txt")).unwrap();
    let report: serde_json::Value = serde_json::from_slice(&run(true).stdout).unwrap();
    assert_eq!(report["worktree_hard_links"]["count"], 0);
}
