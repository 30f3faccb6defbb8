//! Closing a descriptor whose last close waits in the kernel, without making the session's
//! end wait for it.
//!
//! The last close of an inotify instance (the `--no-write-watch` watch, `made_protected`)
//! frees its marks only after an SRCU grace period, and waits for it: 6 to 16 ms on a
//! 2-vCPU guest, against well under a millisecond for everything else a session does once
//! its command has ended. Closed by fence itself, that wait comes before fence can exit; at
//! fence's exit, the kernel would wait the same way before fence's parent learns of it.
//!
//! Here a child process takes a copy of the descriptor, fence closes its own (not the last
//! one, so at once), and the child makes the last close as it exits, when fence has
//! closed a pipe to say so. Nothing waits for the child: it stays a zombie until fence
//! exits, and whoever then adopts it (init, or the closest subreaper) reaps it. Scheduling,
//! not confinement: the child holds nothing but the descriptor and never runs code of the
//! sandbox.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Closes `fd`, leaving the kernel's wait at its last close to a child process. Where no
/// child can be made, fence closes it itself and waits.
pub fn close_in_child(fd: OwnedFd) {
    let Ok((read_end, write_end)) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) else {
        return drop(fd);
    };
    let kept = [fd.as_raw_fd(), read_end.as_raw_fd()];
    // SAFETY: fence is multi-threaded; the child makes only async-signal-safe calls
    // (close_range, read, _exit) on values computed before the fork.
    match unsafe { libc::fork() } {
        0 => {
            close_all_but(kept);
            let mut byte = 0u8;
            // Returns at the end of the pipe, once fence has closed its copy of `fd` and
            // then the pipe's write end (the child's own copy was closed above).
            // SAFETY: a read of one byte into a local.
            unsafe { libc::read(kept[1], (&mut byte as *mut u8).cast(), 1) };
            // SAFETY: leaving the child at once, without the parent's atexit handlers.
            unsafe { libc::_exit(0) }
        }
        -1 => drop(fd),
        _ => {
            // The order matters: fence's copy first, so that the child's is the last.
            drop(fd);
            drop(write_end);
            drop(read_end);
        }
    }
}

/// Closes every descriptor of this process but the two of `kept` (async-signal-safe: only
/// the close_range system call).
fn close_all_but(kept: [RawFd; 2]) {
    let (low, high) = (kept[0].min(kept[1]), kept[0].max(kept[1]));
    let ranges = [
        (0, low - 1),
        (low + 1, high - 1),
        (high + 1, libc::c_int::MAX),
    ];
    for (first, last) in ranges {
        if first <= last && last >= 0 {
            // SAFETY: close_range on descriptor numbers of this (child) process only.
            unsafe { libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0u32) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;

    /// fence's copy is closed at once and the child's soon after: a pipe's write end
    /// handed over leaves its read end at the end of the pipe.
    #[test]
    fn the_descriptor_is_closed_and_fence_keeps_no_copy() {
        // SAFETY: a fresh pipe's two descriptors, owned below.
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let w_raw = w.as_raw_fd();
        close_in_child(w);
        // fence's copy is closed: its number is free here.
        // SAFETY: fcntl on a number; EBADF expected.
        assert_eq!(unsafe { libc::fcntl(w_raw, libc::F_GETFD) }, -1);
        // The child's copy goes with the child: the read end then sees the end of the
        // pipe (a write end still held anywhere would keep this read waiting).
        let mut pfd = libc::pollfd {
            fd: r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, 10_000) };
        assert_eq!(ready, 1, "the child kept its copy of the descriptor");
        assert_ne!(pfd.revents & libc::POLLHUP, 0);
    }
}
