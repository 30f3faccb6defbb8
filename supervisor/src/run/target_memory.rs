//! The one place that reads the target's memory. Every read is followed by a validity
//! check of the notification by the caller's use of [`TargetMemory`]: a tid can be reused
//! after its thread is gone, so bytes read are trusted only while the call still waits.

use std::io;

use super::listener::{Listener, Notification};

/// Longest path the kernel accepts (PATH_MAX), including the NUL.
pub const PATH_MAX: usize = 4096;
/// Most argv entries read for an exec judgement; more makes the exec refused.
pub const MAX_ARGS: usize = 8192;
/// Most argv bytes read for an exec judgement.
pub const MAX_ARGV_BYTES: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("target memory unreadable: {0}")]
    Unreadable(io::Error),
    #[error("the call is no longer pending")]
    Stale,
    #[error("string longer than {0} bytes")]
    TooLong(usize),
}

/// Reads of one notified call's memory.
pub struct TargetMemory<'a> {
    listener: &'a Listener,
    notif: &'a Notification,
}

impl<'a> TargetMemory<'a> {
    pub fn new(listener: &'a Listener, notif: &'a Notification) -> Self {
        TargetMemory { listener, notif }
    }

    fn checked<T>(&self, value: T) -> Result<T, MemoryError> {
        if self.listener.is_valid(self.notif.id) {
            Ok(value)
        } else {
            Err(MemoryError::Stale)
        }
    }

    /// Reads exactly `len` bytes at `addr`.
    pub fn bytes(&self, addr: u64, len: usize) -> Result<Vec<u8>, MemoryError> {
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            let n = read_raw(self.notif.tid, addr + done as u64, &mut buf[done..])?;
            if n == 0 {
                return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                    libc::EFAULT,
                )));
            }
            done += n;
        }
        self.checked(buf)
    }

    /// Reads a NUL-terminated string of at most `max` bytes (without the NUL).
    pub fn c_string(&self, addr: u64, max: usize) -> Result<Vec<u8>, MemoryError> {
        let s = self.c_string_unchecked(addr, max)?;
        self.checked(s)
    }

    fn c_string_unchecked(&self, addr: u64, max: usize) -> Result<Vec<u8>, MemoryError> {
        if addr == 0 {
            return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                libc::EFAULT,
            )));
        }
        let mut out = Vec::new();
        let mut cursor = addr;
        loop {
            // Read at most to the end of the page, so an unmapped next page cannot fail a
            // short string that ends before it; and start small: most paths are short, and
            // the copy is part of every notification's cost.
            let to_page_end = 4096 - (cursor as usize % 4096);
            let want = if out.is_empty() {
                to_page_end.min(256)
            } else {
                to_page_end
            };
            let mut chunk = vec![0u8; want];
            let n = read_raw(self.notif.tid, cursor, &mut chunk)?;
            if n == 0 {
                return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                    libc::EFAULT,
                )));
            }
            if let Some(nul) = chunk[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..nul]);
                if out.len() > max {
                    return Err(MemoryError::TooLong(max));
                }
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
            if out.len() > max {
                return Err(MemoryError::TooLong(max));
            }
            cursor += n as u64;
        }
    }

    /// Reads a NULL-terminated array of string pointers (argv), bounded by
    /// [`MAX_ARGS`] and [`MAX_ARGV_BYTES`].
    pub fn string_array(&self, addr: u64) -> Result<Vec<Vec<u8>>, MemoryError> {
        let mut out = Vec::new();
        if addr == 0 {
            return self.checked(out);
        }
        let mut total = 0;
        for i in 0..MAX_ARGS {
            let mut ptr = [0u8; 8];
            let n = read_raw(self.notif.tid, addr + (i * 8) as u64, &mut ptr)?;
            if n != 8 {
                return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                    libc::EFAULT,
                )));
            }
            let p = u64::from_ne_bytes(ptr);
            if p == 0 {
                return self.checked(out);
            }
            let s = self.c_string_unchecked(p, MAX_ARGV_BYTES)?;
            total += s.len() + 1;
            if total > MAX_ARGV_BYTES {
                return Err(MemoryError::TooLong(MAX_ARGV_BYTES));
            }
            out.push(s);
        }
        Err(MemoryError::TooLong(MAX_ARGS))
    }
}

/// One `process_vm_readv` of up to `buf.len()` bytes.
fn read_raw(tid: libc::pid_t, addr: u64, buf: &mut [u8]) -> Result<usize, MemoryError> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` describes `buf`, which is writable for its length; `remote` is only
    // read by the kernel in the other process, with its own fault handling.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        Err(MemoryError::Unreadable(io::Error::last_os_error()))
    } else {
        Ok(n as usize)
    }
}
