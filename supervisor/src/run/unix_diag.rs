//! Which unix sockets are bound to a socket file, asked of the kernel: a dump of the unix
//! sockets of fence's network namespace with the file each is bound to (`sock_diag(7)`,
//! `NETLINK_SOCK_DIAG`, `UDIAG_SHOW_VFS`).
//!
//! A socket file names no socket by itself: it may have been renamed over another since it
//! was made (a process renames a host program's socket over the name its own bind just
//! made). The kernel's table says which socket a file belongs to.
//!
//! Why by hand: one fixed request and one attribute of the answer; the rust-netlink crates
//! bring a framework for every netlink family to read them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 0x2;
const NLMSG_DONE: u16 = 0x3;
const UDIAG_SHOW_VFS: u32 = 0x2;
const UNIX_DIAG_VFS: u16 = 1;
/// `nlmsghdr`, `unix_diag_req` and `unix_diag_msg` sizes.
const HEADER: usize = 16;
const REQUEST: usize = 24;
const MESSAGE: usize = 16;

/// What the kernel cannot tell here: no `sock_diag` for unix sockets (a kernel built
/// without `CONFIG_UNIX_DIAG`, a module that cannot be loaded).
#[derive(Debug, thiserror::Error)]
pub enum DiagError {
    #[error("no sock_diag for unix sockets here")]
    Unsupported,
    #[error("asking sock_diag: {0}")]
    Failed(io::Error),
}

/// The socket inodes (the `st_ino` of a socket's own descriptor) of the unix sockets of
/// fence's network namespace bound to the file `(dev, ino)` (`stat`'s numbers of the
/// socket file). The kernel reports the file's inode number in 32 bits: a socket bound to
/// another file whose number matches in those bits is listed too (callers take any
/// socket listed as a reason to refuse, never to allow).
pub fn sockets_bound_at(dev: u64, ino: u64) -> Result<Vec<u32>, DiagError> {
    // SAFETY: socket(2) with constant arguments; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(unsupported_or(io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor that we now own.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = [0u8; HEADER + REQUEST];
    req[0..4].copy_from_slice(&((HEADER + REQUEST) as u32).to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    // unix_diag_req: family, protocol, pad, every state, any inode, the file, any cookie.
    req[HEADER] = libc::AF_UNIX as u8;
    req[HEADER + 4..HEADER + 8].copy_from_slice(&u32::MAX.to_ne_bytes());
    req[HEADER + 12..HEADER + 16].copy_from_slice(&UDIAG_SHOW_VFS.to_ne_bytes());
    req[HEADER + 16..HEADER + 24].copy_from_slice(&[0xff; 8]);
    // SAFETY: sending our buffer on our socket; a netlink socket sends to the kernel.
    if unsafe { libc::send(sock.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) } < 0 {
        return Err(DiagError::Failed(io::Error::last_os_error()));
    }
    let want = (kernel_dev(dev), ino as u32);
    let mut found = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: receiving into our buffer of its length.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(DiagError::Failed(e));
        }
        match parse(&buf[..n as usize], want, &mut found)? {
            true => return Ok(found),
            false => continue,
        }
    }
}

/// Reads one datagram of the dump into `found`; true at its end.
fn parse(mut data: &[u8], want: (u32, u32), found: &mut Vec<u32>) -> Result<bool, DiagError> {
    let u32_at = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let u16_at = |b: &[u8], at: usize| -> Option<u16> {
        Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
    };
    let malformed = || DiagError::Failed(io::Error::from_raw_os_error(libc::EBADMSG));
    while data.len() >= HEADER {
        let len = u32_at(data, 0).ok_or_else(malformed)? as usize;
        let kind = u16_at(data, 4).ok_or_else(malformed)?;
        if len < HEADER || len > data.len() {
            return Err(malformed());
        }
        let message = &data[HEADER..len];
        match kind {
            NLMSG_DONE => return Ok(true),
            NLMSG_ERROR => {
                let code = u32_at(message, 0).ok_or_else(malformed)? as i32;
                let e = io::Error::from_raw_os_error(-code);
                return Err(unsupported_or(e));
            }
            _ => {
                let socket = u32_at(message, 4).ok_or_else(malformed)?;
                let mut attrs = message.get(MESSAGE..).unwrap_or_default();
                while attrs.len() >= 4 {
                    let alen = u16_at(attrs, 0).ok_or_else(malformed)? as usize;
                    let akind = u16_at(attrs, 2).ok_or_else(malformed)?;
                    if alen < 4 || alen > attrs.len() {
                        return Err(malformed());
                    }
                    if akind == UNIX_DIAG_VFS {
                        // unix_diag_vfs: the file's inode, then its device.
                        let vino = u32_at(attrs, 4).ok_or_else(malformed)?;
                        let vdev = u32_at(attrs, 8).ok_or_else(malformed)?;
                        if (vdev, vino) == want {
                            found.push(socket);
                        }
                    }
                    attrs = attrs.get(align(alen)..).unwrap_or_default();
                }
            }
        }
        data = data.get(align(len)..).unwrap_or_default();
    }
    Ok(false)
}

fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// `stat`'s device number as the kernel keeps it in a superblock (`MKDEV`: the major
/// number above 20 bits of minor), the form `unix_diag_vfs` reports.
fn kernel_dev(dev: u64) -> u32 {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    (major << 20) | (minor & 0xf_ffff)
}

fn unsupported_or(e: io::Error) -> DiagError {
    match e.raw_os_error() {
        Some(libc::EPROTONOSUPPORT | libc::ENOENT | libc::EOPNOTSUPP | libc::EAFNOSUPPORT) => {
            DiagError::Unsupported
        }
        _ => DiagError::Failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A socket bound to a file is found by the file's numbers, as the socket its own
    /// descriptor names; another file's numbers find nothing.
    #[test]
    fn the_socket_bound_to_a_file_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let file = std::fs::symlink_metadata(&path).unwrap();
        let socket = std::fs::metadata(format!("/proc/self/fd/{}", listener.as_raw_fd()))
            .unwrap()
            .ino() as u32;
        match sockets_bound_at(file.dev(), file.ino()) {
            Ok(found) => assert_eq!(found, [socket]),
            Err(DiagError::Unsupported) => {
                eprintln!("skipped: no sock_diag for unix sockets on this kernel");
                return;
            }
            Err(e) => panic!("{e}"),
        }
        let other = std::fs::symlink_metadata(dir.path()).unwrap();
        match sockets_bound_at(other.dev(), other.ino()) {
            Ok(found) => assert!(found.is_empty(), "{found:?}"),
            Err(e) => panic!("{e}"),
        }
    }
}
