//! The user's terminal, which the sandbox shares when fence runs on one: what the sandbox
//! may change there is put back when the session ends, and fence never stops for it.
//!
//! The command runs in the user's terminal session (an interactive shell in the sandbox
//! needs job control). A sandboxed process can make its own process group the terminal's
//! foreground one and turn `TOSTOP` on: fence, then in the background, would be stopped by
//! `SIGTTOU` at its next line on the terminal, the user's shell would report it stopped
//! and read the next command line — while the sandbox, still running and still the
//! terminal's foreground, read what the user typed. So fence ignores `SIGTTOU` and
//! `SIGTTIN` (a background write goes through, a background read fails with EIO): it stops
//! only with the sandbox, and the shell waits for both. The target gets every signal back
//! at its default before its exec (`shim::target_process`), so nothing inside inherits the
//! ignored signals. Security boundary: the shell's prompt never comes back while the
//! sandbox runs.
//!
//! At the end of the session the settings (`termios`: echo, canonical mode, control
//! characters) of every terminal the sandbox was handed (each of fence's standard
//! descriptors and `--pass-fd` ones, each device once) and its foreground process group
//! are put back as they were at the start, whatever the sandbox left (`stty -echo`, `intr ^A`, a foreground group of its
//! own, which would leave a calling shell without job control reading in the background),
//! unless the terminal's foreground is by then another group with processes in it: the
//! shell's, after Ctrl-Z and `bg`, or a job it brought forward since.
//! The line discipline, exclusive mode and stopped output cannot be changed from inside
//! at all (static seccomp filter).

use std::os::fd::RawFd;

/// The terminal as the session found it.
pub struct Terminal {
    fd: RawFd,
    settings: libc::termios,
    /// fence's process group, when it was the terminal's foreground one at the start.
    foreground: Option<libc::pid_t>,
    /// Whether the input the sandbox left unread was discarded (once).
    flushed: std::sync::atomic::AtomicBool,
}

/// Ignores `SIGTTOU` and `SIGTTIN` for fence (see the module's comment).
pub fn never_stop_for_the_terminal() {
    for sig in [libc::SIGTTOU, libc::SIGTTIN] {
        // SAFETY: signal() with SIG_IGN on a valid signal number.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
}

/// Every terminal the sandbox is handed (fence's standard descriptors and `--pass-fd`
/// ones), each once, put back when the session ends.
pub struct Terminals(Vec<Terminal>);

impl Terminals {
    /// The terminals among fence's standard descriptors and `passed`, each device once
    /// (stdin and stdout are most often the same terminal), with their settings.
    pub fn capture(passed: &[RawFd]) -> Terminals {
        let mut seen: Vec<libc::dev_t> = Vec::new();
        let mut all = Vec::new();
        for fd in (0..3).chain(passed.iter().copied()) {
            // SAFETY: stat is plain data; fstat fills it for an open descriptor.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd, &mut st) } != 0 || seen.contains(&st.st_rdev) {
                continue;
            }
            if let Some(t) = Terminal::capture(fd) {
                seen.push(st.st_rdev);
                all.push(t);
            }
        }
        Terminals(all)
    }

    /// fence's own descriptors of them.
    pub fn fds(&self) -> Vec<RawFd> {
        self.0.iter().map(|t| t.fd).collect()
    }

    /// [`Terminal::restore`] for each.
    pub fn restore(&self) {
        for t in &self.0 {
            t.restore();
        }
    }
}

impl Terminal {
    /// Descriptor `fd` when it is a terminal, with its settings; `None` otherwise.
    fn capture(fd: RawFd) -> Option<Terminal> {
        // SAFETY: isatty on a descriptor of fence's own.
        if unsafe { libc::isatty(fd) } != 1 {
            return None;
        }
        // SAFETY: termios is plain data; tcgetattr fills it for a terminal descriptor.
        let mut settings: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut settings) } != 0 {
            return None;
        }
        // SAFETY: tcgetpgrp and getpgrp take no pointers.
        let (pgrp, own) = unsafe { (libc::tcgetpgrp(fd), libc::getpgrp()) };
        Some(Terminal {
            fd,
            settings,
            foreground: (pgrp == own).then_some(own),
            flushed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Puts the settings and the foreground group back (once the sandbox is gone), unless
    /// the terminal has become someone else's meanwhile. Best effort: a terminal hung up
    /// in between takes nothing.
    pub fn restore(&self) {
        // SAFETY: tcgetpgrp and getpgrp take no pointers; kill with signal 0 sends nothing.
        let someone_elses = unsafe {
            let foreground = libc::tcgetpgrp(self.fd);
            foreground > 0
                && foreground != libc::getpgrp()
                && (libc::kill(-foreground, 0) == 0
                    || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
        };
        // The foreground group is another one with a process in it. The sandbox's are
        // gone by now, so it is the user's: the shell after Ctrl-Z and `bg` (or `kill %1`),
        // or a job it has brought to the foreground since. Taking the terminal from it
        // (fence ignores SIGTTOU, so nothing would stop it) would hand it to a group that
        // is about to vanish, and the shell's next read would fail and end it; the
        // settings are that job's own. Left alone.
        if someone_elses {
            return;
        }
        // SAFETY: termios is plain data; both calls act on fence's own descriptor, and
        // SIGTTOU is ignored, so a background fence is let through.
        unsafe {
            let mut now: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(self.fd, &mut now) == 0 && !same(&now, &self.settings) {
                libc::tcsetattr(self.fd, libc::TCSANOW, &self.settings);
            }
            if let Some(own) = self.foreground
                && libc::tcgetpgrp(self.fd) != own
            {
                libc::tcsetpgrp(self.fd, own);
            }
            // Input waiting unread goes: a terminal answers some queries with input of its
            // own (the cursor's position, the window's title, on some the clipboard), which
            // the sandbox asks for and leaves unread, and the shell would read as typed.
            // What the user typed ahead during the session goes with it.
            if !self.flushed.swap(true, std::sync::atomic::Ordering::SeqCst) {
                libc::tcflush(self.fd, libc::TCIFLUSH);
            }
        }
    }
}

/// On every way out of the session, errors included (a broken shim channel kills the
/// sandbox and returns early): a terminal left in raw mode or without echo would take the
/// user's next command line unseen. The sandbox is gone by then; a second restore after
/// the session's own changes nothing.
impl Drop for Terminal {
    fn drop(&mut self) {
        self.restore();
    }
}

/// The file status flags (`O_NONBLOCK`, `O_APPEND`…) of fence's standard streams and
/// `--pass-fd` descriptors as the session found them. They belong to the open files the
/// sandbox shares with whoever started fence (the user's shell, a CI runner's pipes), not
/// to a descriptor: a non-blocking terminal or pipe left behind makes the next reader
/// there fail with `EAGAIN`. Put back when the session ends, with the terminal's settings.
pub struct StreamFlags(Vec<(RawFd, libc::c_int)>);

impl StreamFlags {
    pub fn capture(passed: &[RawFd]) -> StreamFlags {
        StreamFlags(
            (0..3)
                .chain(passed.iter().copied())
                .filter_map(|fd| {
                    // SAFETY: F_GETFL on a descriptor of fence's own (an unused one fails).
                    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
                    (flags >= 0).then_some((fd, flags))
                })
                .collect(),
        )
    }

    /// Best effort, as [`Terminal::restore`]: a descriptor closed in between takes nothing.
    pub fn restore(&self) {
        for &(fd, flags) in &self.0 {
            // SAFETY: F_GETFL/F_SETFL on a descriptor of fence's own.
            unsafe {
                let now = libc::fcntl(fd, libc::F_GETFL);
                if now >= 0 && now != flags {
                    libc::fcntl(fd, libc::F_SETFL, flags);
                }
            }
        }
    }
}

/// As for [`Terminal`]: put back on every way out of the session.
impl Drop for StreamFlags {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Whether two terminal settings are the same, field by field (the struct has padding).
fn same(a: &libc::termios, b: &libc::termios) -> bool {
    a.c_iflag == b.c_iflag
        && a.c_oflag == b.c_oflag
        && a.c_cflag == b.c_cflag
        && a.c_lflag == b.c_lflag
        && a.c_line == b.c_line
        && a.c_cc == b.c_cc
        && a.c_ispeed == b.c_ispeed
        && a.c_ospeed == b.c_ospeed
}
