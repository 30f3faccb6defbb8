//! Shared setup for the `fence run` integration tests: worktrees and outside directories,
//! running `fence run` as root or as an unprivileged user, and loud skips.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BUILT_FENCE: &str = env!("CARGO_BIN_EXE_fence");

/// The `fence` binary every test user can run: the built one when everyone can reach it,
/// else a copy in a world-readable directory (a checkout under a private home, such as
/// /root, is out of the unprivileged user's reach). Copies of earlier runs whose test
/// process is gone are removed.
pub fn fence_binary() -> &'static Path {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| {
        let built = PathBuf::from(BUILT_FENCE);
        let reachable = built
            .ancestors()
            .skip(1)
            .all(|dir| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0));
        if reachable {
            return built;
        }
        let base = Path::new("/tmp/fence-it-bin");
        let _ = std::fs::create_dir_all(base);
        let _ = std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755));
        for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
            let pid = e.file_name().to_string_lossy().parse::<u32>().unwrap_or(0);
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        let dir = base.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).expect("copy directory");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.join("fence");
        std::fs::copy(&built, &copy).expect("copying fence");
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        copy
    })
}
pub const PYTHON: &str = "/usr/bin/python3";
pub const TEST_USER: &str = "fence-test";

/// Who runs `fence run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Root,
    Unprivileged,
    /// An unprivileged user on a host where no namespace can be made (FENCE_NO_NAMESPACES).
    UnprivilegedWithoutNamespaces,
}

/// Prints why a test does not run; the test then returns early (never a silent pass).
/// Written straight to descriptor 2, past the test harness's output capture, so a skip
/// shows in every run, not only in failing ones.
pub fn skip(test: &str, reason: &str) {
    use std::io::Write;
    let line = format!("SKIPPED {test}: {reason}\n");
    // SAFETY: dup of our own stderr; the new descriptor is owned by the File.
    let fd = unsafe { libc::dup(2) };
    if fd >= 0 {
        // SAFETY: `fd` is a fresh descriptor we own.
        let mut err = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let _ = err.write_all(line.as_bytes());
    }
}

/// The Landlock ABI `fence run` uses in these tests: the kernel's, lowered by
/// `FENCE_LANDLOCK_ABI_MAX` when the test run sets it.
pub fn effective_landlock_abi() -> i32 {
    let cap = std::env::var("FENCE_LANDLOCK_ABI_MAX")
        .ok()
        .and_then(|v| v.trim().parse().ok());
    shim::landlock_fence::effective_abi(shim::landlock_abi(), cap)
}

/// Whether this kernel has what `fence run` needs; prints a skip reason if not.
pub fn kernel_ready(test: &str) -> bool {
    let abi = effective_landlock_abi();
    let notif = std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .map(|a| a.contains("user_notif"))
        .unwrap_or(false);
    if abi < 1 {
        skip(
            test,
            "no Landlock on this kernel (fence run refuses; see run_kernel)",
        );
        return false;
    }
    if !notif {
        skip(test, "no seccomp user notification on this kernel");
        return false;
    }
    true
}

pub fn python_ready(test: &str) -> bool {
    if Path::new(PYTHON).exists() {
        true
    } else {
        skip(test, "/usr/bin/python3 is missing");
        false
    }
}

/// uid and gid of the unprivileged test user, created when missing (the tests run as root).
pub fn test_user() -> Option<(u32, u32)> {
    let lookup = || {
        let out = Command::new("id").args(["-u", TEST_USER]).output().ok()?;
        let uid = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        let out = Command::new("id").args(["-g", TEST_USER]).output().ok()?;
        let gid = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        Some((uid, gid))
    };
    if let Some(ids) = lookup() {
        return Some(ids);
    }
    // Several tests may race to create it; a second useradd fails harmlessly.
    let _ = Command::new("useradd")
        .args(["--create-home", "--shell", "/bin/sh", TEST_USER])
        .status();
    lookup()
}

/// One test's world: a worktree, a directory outside it, and who runs fence.
pub struct World {
    pub who: Who,
    pub worktree: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
    pub ids: Option<(u32, u32)>,
    _dirs: Vec<tempfile::TempDir>,
    _turn: Turn,
}

/// Tests that count the test user's tasks (RLIMIT_NPROC is checked against every task of
/// the user, machine-wide) run alone in their test binary: a test of the same user ending
/// meanwhile would free tasks the count relied on.
const ALONE: &[&str] = &["a_sandbox_at_fences_thread_limit_gets_refusals_not_a_dead_supervisor"];

/// Held by every world for its test's life: shared, or alone for the tests in [`ALONE`].
static TURNS: std::sync::RwLock<()> = std::sync::RwLock::new(());

enum Turn {
    Shared(#[allow(dead_code)] std::sync::RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, ()>),
}

impl Turn {
    fn take(test: &str) -> Turn {
        // A test that panicked poisons nothing worth refusing the others for.
        if ALONE.iter().any(|name| test.ends_with(name)) {
            Turn::Alone(
                TURNS
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            )
        } else {
            Turn::Shared(
                TURNS
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            )
        }
    }
}

impl World {
    /// `None` (with a printed reason) when the kernel or the user cannot be had.
    pub fn new(test: &str, who: Who) -> Option<World> {
        if !kernel_ready(test) {
            return None;
        }
        // Below ABI 6 fence needs pid and network namespaces for signals and abstract
        // sockets, and refuses without them (run_kernel tests that refusal).
        if who == Who::UnprivilegedWithoutNamespaces && effective_landlock_abi() < 6 {
            skip(
                test,
                "Landlock ABI below 6 without namespaces: fence run refuses (tested in run_kernel)",
            );
            return None;
        }
        World::new_on_any_kernel(test, who)
    }

    /// A world for tests of how fence treats the kernel it finds (refusals included):
    /// no check of Landlock or of the ABI, only of what the test itself needs.
    pub fn new_on_any_kernel(test: &str, who: Who) -> Option<World> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip(
                test,
                "the integration tests run as root (they create an unprivileged user)",
            );
            return None;
        }
        let ids = match who {
            Who::Root => None,
            Who::Unprivileged | Who::UnprivilegedWithoutNamespaces => match test_user() {
                Some(ids) => Some(ids),
                None => {
                    skip(
                        test,
                        "could not create the unprivileged user fence-test (useradd)",
                    );
                    return None;
                }
            },
        };
        let mk = || {
            let d = tempfile::Builder::new()
                .prefix("fence-it-")
                .tempdir_in("/tmp")
                .expect("tempdir");
            if let Some((uid, gid)) = ids {
                std::os::unix::fs::chown(d.path(), Some(uid), Some(gid)).expect("chown");
            }
            std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            d
        };
        let turn = Turn::take(test);
        let (w, o, h) = (mk(), mk(), mk());
        Some(World {
            who,
            worktree: w.path().canonicalize().unwrap(),
            outside: o.path().canonicalize().unwrap(),
            home: h.path().canonicalize().unwrap(),
            ids,
            _dirs: vec![w, o, h],
            _turn: turn,
        })
    }

    /// Writes a file in the worktree, owned by whoever runs fence.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.worktree.join(rel);
        std::fs::write(&p, text).unwrap();
        self.own(&p);
        p
    }

    /// Writes a program (a script) in the worktree, owned by whoever runs fence, mode 755.
    #[allow(dead_code)]
    pub fn write_executable(&self, rel: &str, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = self.write(rel, text);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// Makes directory `rel` in the worktree (and those above it), owned by the world's
    /// user.
    #[allow(dead_code)]
    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let p = self.worktree.join(rel);
        std::fs::create_dir_all(&p).unwrap();
        let mut dir = p.as_path();
        while dir != self.worktree {
            self.own(dir);
            dir = dir.parent().unwrap();
        }
        p
    }

    /// Writes a file outside the worktree, owned by whoever runs fence (so that only the
    /// fence, not file permissions, stands between the sandbox and it).
    pub fn write_outside(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.outside.join(rel);
        std::fs::write(&p, text).unwrap();
        self.own(&p);
        p
    }

    /// Compiles the C program `src` (`cc -O2 -pthread`) into the worktree as `name`,
    /// owned by the world's user; panics with the compiler's message when it fails.
    #[allow(dead_code)]
    pub fn compile_c(&self, name: &str, src: &str) -> PathBuf {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join(format!("{name}.c"));
        std::fs::write(&source, src).unwrap();
        let bin = self.worktree.join(name);
        let cc = Command::new("cc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&bin)
            .arg(&source)
            .output()
            .unwrap();
        assert!(
            cc.status.success(),
            "{}",
            String::from_utf8_lossy(&cc.stderr)
        );
        self.own(&bin);
        bin
    }

    pub fn own(&self, p: &Path) {
        if let Some((uid, gid)) = self.ids {
            std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
        }
    }

    /// A `fence run` command in the worktree, with a small clean environment.
    pub fn fence(&self, args: &[&OsStr]) -> Command {
        let mut cmd = Command::new(fence_binary());
        cmd.arg("run").args(args);
        cmd.current_dir(&self.worktree)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            cmd.uid(uid).gid(gid);
        }
        if self.who == Who::UnprivilegedWithoutNamespaces {
            cmd.env("FENCE_NO_NAMESPACES", "1");
        }
        // `FENCE_LANDLOCK_ABI_MAX=N cargo test …` runs every test at Landlock ABI N.
        if let Some(cap) = std::env::var_os("FENCE_LANDLOCK_ABI_MAX") {
            cmd.env("FENCE_LANDLOCK_ABI_MAX", cap);
        }
        cmd
    }

    /// Writes `script` to the worktree as `s.sh` and starts `fence run -- /bin/sh s.sh` with
    /// its output piped, for a test that changes the host while the session runs (the
    /// script waiting for a file `go` the test then writes).
    #[allow(dead_code)]
    pub fn start_script(&self, script: &str) -> std::process::Child {
        self.write("s.sh", script);
        self.fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting fence")
    }

    /// Lets a script from [`World::start_script`] go on (writes `go`), waits for the session
    /// and returns its output, once the script has shown it ran to its end (it writes
    /// `done`).
    #[allow(dead_code)]
    pub fn finish_script(&self, child: std::process::Child) -> Output {
        self.write("go", "");
        let out = child.wait_with_output().expect("waiting for fence");
        assert!(
            self.worktree.join("done").exists(),
            "the script did not run to its end: {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Runs `fence run -- ARGS` and returns its output.
    pub fn run(&self, args: &[&str]) -> Output {
        let mut all: Vec<&OsStr> = vec![OsStr::new("--")];
        all.extend(args.iter().map(OsStr::new));
        self.fence(&all).output().expect("running fence")
    }

    /// Runs a Python program (written to the worktree) under fence.
    pub fn python(&self, program: &str) -> Output {
        self.write("probe.py", program);
        self.run(&[PYTHON, "probe.py"])
    }
}

impl World {
    /// A command run as whoever runs fence in this world, in the worktree (tmux and the
    /// like, which start `fence run` themselves).
    pub fn command_as_runner(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.worktree)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("TERM", "xterm")
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            cmd.uid(uid).gid(gid);
        }
        if self.who == Who::UnprivilegedWithoutNamespaces {
            cmd.env("FENCE_NO_NAMESPACES", "1");
        }
        cmd
    }
}

/// Runs git outside the sandbox in `dir` (any owner, a fixed identity) and returns its
/// standard output, trimmed; panics with git's message when it fails.
#[allow(dead_code)]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Generates one test per `Who` for each listed function `fn(&World)`: as root, as an
/// unprivileged user, and as one without namespaces.
#[macro_export]
macro_rules! both_ways {
    ($($name:ident),* $(,)?) => {
        mod as_root {
            $(
                #[test]
                fn $name() {
                    if let Some(w) = $crate::support::World::new(concat!("as_root::", stringify!($name)), $crate::support::Who::Root) {
                        super::$name(&w);
                    }
                }
            )*
        }
        mod as_unprivileged_user {
            $(
                #[test]
                fn $name() {
                    if let Some(w) = $crate::support::World::new(concat!("as_unprivileged_user::", stringify!($name)), $crate::support::Who::Unprivileged) {
                        super::$name(&w);
                    }
                }
            )*
        }
        mod without_namespaces {
            $(
                #[test]
                fn $name() {
                    if let Some(w) = $crate::support::World::new(concat!("without_namespaces::", stringify!($name)), $crate::support::Who::UnprivilegedWithoutNamespaces) {
                        super::$name(&w);
                    }
                }
            )*
        }
    };
}

/// As [`both_ways!`], with worlds made by [`World::new_on_any_kernel`]: for tests that
/// check how fence treats the kernel it finds, refusals included.
#[macro_export]
macro_rules! both_ways_on_any_kernel {
    ($($name:ident),* $(,)?) => {
        mod any_kernel_as_root {
            $(
                #[test]
                fn $name() {
                    if let Some(w) = $crate::support::World::new_on_any_kernel(concat!("any_kernel_as_root::", stringify!($name)), $crate::support::Who::Root) {
                        super::$name(&w);
                    }
                }
            )*
        }
        mod any_kernel_as_unprivileged_user {
            $(
                #[test]
                fn $name() {
                    if let Some(w) = $crate::support::World::new_on_any_kernel(concat!("any_kernel_as_unprivileged_user::", stringify!($name)), $crate::support::Who::Unprivileged) {
                        super::$name(&w);
                    }
                }
            )*
        }
        mod any_kernel_without_namespaces {
            $(
                #[test]
                fn $name() {
                    if let Some(w) = $crate::support::World::new_on_any_kernel(concat!("any_kernel_without_namespaces::", stringify!($name)), $crate::support::Who::UnprivilegedWithoutNamespaces) {
                        super::$name(&w);
                    }
                }
            )*
        }
    };
}
