//! The one place that reads the target's memory. Every read is followed by a validity
//! check of the notification by the caller's use of [`TargetMemory`]: a tid can be reused
//! after its thread is gone, so bytes read are trusted only while the call still waits.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

use super::listener::{Listener, Notification};

/// Longest path the kernel accepts (PATH_MAX), including the NUL.
pub const PATH_MAX: usize = 4096;
/// Most argv bytes read for an exec judgement: the kernel's own ceiling for argv and
/// environment together (3/4 of its 8 MiB default stack limit, `bprm_stack_limits`), so
/// that every exec the kernel would take is judged (`rm *.o` of a big build, `find -exec
/// … {} +`) and one refused here for its size is one the kernel refuses too (E2BIG).
pub const MAX_ARGV_BYTES: usize = 6 << 20;
/// Most argv entries read for an exec judgement; more makes the exec refused (E2BIG). The
/// kernel counts each argument's pointer (8 bytes) and at least its NUL against
/// [`MAX_ARGV_BYTES`], so no exec it takes has more.
pub const MAX_ARGS: usize = MAX_ARGV_BYTES / 9;
/// The longest argv string the kernel takes (`MAX_ARG_STRLEN`, 32 pages): a longer one
/// fails the exec with E2BIG, so none is read further.
const MAX_ARG_STRLEN: usize = 32 * 4096;

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
    /// Reads are not followed by a validity check; [`TargetMemory::confirm`] makes it
    /// before anything but a `CONTINUE` acts on them.
    deferred: bool,
    /// A read was made without its validity check.
    unconfirmed: std::cell::Cell<bool>,
    /// The caller's `/proc/<tid>/mem`, kept since an earlier call ([`super::kept_thread`]).
    kept: Option<Arc<OwnedFd>>,
}

impl<'a> TargetMemory<'a> {
    pub fn new(listener: &'a Listener, notif: &'a Notification) -> Self {
        TargetMemory {
            listener,
            notif,
            deferred: false,
            unconfirmed: std::cell::Cell::new(false),
            kept: None,
        }
    }

    /// The same reads, through `memory`: the caller's `/proc/<tid>/mem` kept for its
    /// thread ([`super::kept_thread`] says why it is the caller's memory).
    pub fn through(self, memory: Option<Arc<OwnedFd>>) -> Self {
        TargetMemory {
            kept: memory,
            ..self
        }
    }

    /// Reads whose validity check is left to [`TargetMemory::confirm`], for a check whose
    /// usual answer is `CONTINUE` (the exec and write checks): the kernel accepts an answer
    /// only to a call still pending, and a call pending when it is answered was pending all
    /// along (notification ids are never reused), so whatever was read for it was the
    /// caller's.
    /// Any other answer (a refusal written to a stderr, a call carried out, a question, a
    /// log record) acts before or beside the kernel's own check and needs `confirm` first.
    pub fn deferring(listener: &'a Listener, notif: &'a Notification) -> Self {
        TargetMemory {
            deferred: true,
            ..TargetMemory::new(listener, notif)
        }
    }

    /// Whether everything read so far (memory, and the caller's /proc entries read after
    /// it) was the caller's: the call is still pending. One `SECCOMP_IOCTL_NOTIF_ID_VALID`
    /// when a read was left unchecked; `true` at once otherwise.
    pub fn confirm(&self) -> bool {
        !self.unconfirmed.get() || self.listener.is_valid(self.notif.id)
    }

    fn checked<T>(&self, value: T) -> Result<T, MemoryError> {
        if self.deferred {
            self.unconfirmed.set(true);
            return Ok(value);
        }
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
            let n = self.read(addr + done as u64, &mut buf[done..])?;
            if n == 0 {
                return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                    libc::EFAULT,
                )));
            }
            done += n;
        }
        self.checked(buf)
    }

    /// Reads a NULL-terminated array of strings (an exec's environment), bounded as argv
    /// is ([`MAX_ARGS`], [`MAX_ARGV_BYTES`]).
    pub fn string_array(&self, addr: u64) -> Result<Vec<Vec<u8>>, MemoryError> {
        let strings = self.string_array_unchecked(addr)?;
        self.checked(strings)
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
        // Read at most to the end of the page, so an unmapped next page cannot fail a
        // short string that ends before it; and start small, on the stack: most paths are
        // short, and the copy is part of every notification's cost (a heap buffer freed
        // each time set off glibc's fastbin consolidation).
        let mut first = [0u8; FIRST_READ];
        let want = first_read_len(addr);
        let n = self.read(addr, &mut first[..want])?;
        self.c_string_from(addr, &first[..n], max)
    }

    /// The string at `addr` whose first bytes, `head`, were already read (up to the end of
    /// their page at most): finished from the next byte on where `head` holds no NUL.
    fn c_string_from(&self, addr: u64, head: &[u8], max: usize) -> Result<Vec<u8>, MemoryError> {
        if head.is_empty() {
            return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                libc::EFAULT,
            )));
        }
        if let Some(nul) = head.iter().position(|&b| b == 0) {
            if nul > max {
                return Err(MemoryError::TooLong(max));
            }
            return Ok(head[..nul].to_vec());
        }
        let mut out = head.to_vec();
        if out.len() > max {
            return Err(MemoryError::TooLong(max));
        }
        let mut cursor = addr + head.len() as u64;
        loop {
            let want = PAGE - (cursor as usize % PAGE);
            let mut chunk = vec![0u8; want];
            let n = self.read(cursor, &mut chunk)?;
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

    /// An exec's program path and argv, with one validity check after both reads instead
    /// of one after each (each is a system call on the listener).
    ///
    /// The path's first bytes and the first block of argv's pointers come in one vectored
    /// read, and an argv string at the path's own address (`sh` runs `/bin/true` with
    /// argv[0] pointing at the path it execs) is the path's bytes: a shell's exec of a
    /// program with no arguments costs one read in all.
    pub fn path_and_argv(
        &self,
        path_addr: u64,
        max: usize,
        argv_addr: u64,
    ) -> Result<(Vec<u8>, Vec<Vec<u8>>), MemoryError> {
        if path_addr == 0 || argv_addr == 0 {
            let path = self.c_string_unchecked(path_addr, max)?;
            let argv = self.string_array_unchecked(argv_addr)?;
            return self.checked((path, argv));
        }
        let mut head = [0u8; FIRST_READ];
        let mut block = [0u8; POINTER_BLOCK];
        let (head_len, block_len) = (first_read_len(path_addr), pointer_block_len(argv_addr));
        let local = [
            libc::iovec {
                iov_base: head.as_mut_ptr() as *mut libc::c_void,
                iov_len: head_len,
            },
            libc::iovec {
                iov_base: block.as_mut_ptr() as *mut libc::c_void,
                iov_len: block_len,
            },
        ];
        let remote = [
            libc::iovec {
                iov_base: path_addr as *mut libc::c_void,
                iov_len: head_len,
            },
            libc::iovec {
                iov_base: argv_addr as *mut libc::c_void,
                iov_len: block_len,
            },
        ];
        // A fault stops the read at the first range it cannot read: whatever was not read
        // whole is read again on its own, which reports the fault if it is real.
        let got = read_vectored(self.notif.tid, &local, &remote)?;
        let path = if got >= head_len {
            self.c_string_from(path_addr, &head[..head_len], max)?
        } else {
            self.c_string_unchecked(path_addr, max)?
        };
        let pointers = if got == head_len + block_len {
            self.pointers_from(argv_addr, Some(&block[..block_len]))?
        } else {
            self.pointers_from(argv_addr, None)?
        };
        let argv = self.strings_at(&pointers, Some((path_addr, &path)))?;
        self.checked((path, argv))
    }

    /// Reads a NULL-terminated array of string pointers (argv), bounded by
    /// [`MAX_ARGS`] and [`MAX_ARGV_BYTES`].
    ///
    /// Each read of another process's memory is a system call of a few microseconds, and an
    /// exec waits for all of them: the pointer array is read a page-bounded block at a
    /// time, and the first bytes of every string in one vectored read; only strings longer
    /// than that first block are finished one by one.
    fn string_array_unchecked(&self, addr: u64) -> Result<Vec<Vec<u8>>, MemoryError> {
        if addr == 0 {
            return Ok(Vec::new());
        }
        let pointers = self.pointers_from(addr, None)?;
        self.strings_at(&pointers, None)
    }

    /// The strings at `pointers`, in order; one at `known`'s address is `known`'s bytes.
    fn strings_at(
        &self,
        pointers: &[u64],
        known: Option<(u64, &[u8])>,
    ) -> Result<Vec<Vec<u8>>, MemoryError> {
        let is_known = |p: u64| known.is_some_and(|(at, _)| at == p);
        let to_read: Vec<u64> = pointers.iter().copied().filter(|&p| !is_known(p)).collect();
        let mut read = Vec::with_capacity(to_read.len());
        let known_len = known.map_or(0, |(_, bytes)| bytes.len() + 1);
        let mut total = (pointers.len() - to_read.len()) * known_len;
        if total > MAX_ARGV_BYTES {
            return Err(MemoryError::TooLong(MAX_ARGV_BYTES));
        }
        for batch in to_read.chunks(STRINGS_PER_READ) {
            for s in self.string_batch(batch, MAX_ARGV_BYTES - total)? {
                total += s.len() + 1;
                if total > MAX_ARGV_BYTES {
                    return Err(MemoryError::TooLong(MAX_ARGV_BYTES));
                }
                read.push(s);
            }
        }
        let mut read = read.into_iter();
        Ok(pointers
            .iter()
            .map(|&p| match known {
                Some((at, bytes)) if at == p => bytes.to_vec(),
                _ => read.next().unwrap_or_default(),
            })
            .collect())
    }

    /// The non-NULL pointers of a NULL-terminated pointer array; `first` is its first
    /// block when already read (as [`pointer_block_len`] bounds it).
    fn pointers_from(&self, addr: u64, first: Option<&[u8]>) -> Result<Vec<u64>, MemoryError> {
        let mut pointers = Vec::new();
        let mut cursor = addr;
        let mut block = [0u8; POINTER_BLOCK];
        let mut first = first;
        loop {
            let n = match first.take() {
                Some(head) => {
                    block[..head.len()].copy_from_slice(head);
                    head.len()
                }
                None => {
                    let want = pointer_block_len(cursor);
                    self.read(cursor, &mut block[..want])?
                }
            };
            if n < 8 {
                return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                    libc::EFAULT,
                )));
            }
            for word in block[..n - n % 8].chunks_exact(8) {
                let p = u64::from_ne_bytes(word.try_into().unwrap_or([0; 8]));
                if p == 0 {
                    return Ok(pointers);
                }
                if pointers.len() == MAX_ARGS {
                    return Err(MemoryError::TooLong(MAX_ARGS));
                }
                pointers.push(p);
            }
            cursor += (n - n % 8) as u64;
        }
    }

    /// Reads the strings at `pointers`: one vectored read of each string's first bytes
    /// (up to its page end), then the rest of any string not finished there, none further
    /// than [`MAX_ARG_STRLEN`] nor all of them together further than `budget` bytes (the
    /// same long string named by every pointer is read once per pointer: without the
    /// budget a batch of them made the supervisor hold hundreds of MiB).
    fn string_batch(&self, pointers: &[u64], budget: usize) -> Result<Vec<Vec<u8>>, MemoryError> {
        let lens: Vec<usize> = pointers
            .iter()
            .map(|&p| (PAGE - (p as usize % PAGE)).min(FIRST_READ))
            .collect();
        let mut buf = vec![0u8; lens.iter().sum()];
        let mut local = Vec::with_capacity(pointers.len());
        let mut remote = Vec::with_capacity(pointers.len());
        let mut rest = buf.as_mut_slice();
        for (&p, &len) in pointers.iter().zip(&lens) {
            let (head, tail) = rest.split_at_mut(len);
            local.push(libc::iovec {
                iov_base: head.as_mut_ptr() as *mut libc::c_void,
                iov_len: len,
            });
            remote.push(libc::iovec {
                iov_base: p as *mut libc::c_void,
                iov_len: len,
            });
            rest = tail;
        }
        // A fault stops the vectored read at the first unreadable string: the bytes
        // before it are whole blocks, and the strings from there on are read one by one
        // (which reports the fault if it is real).
        let got = read_vectored(self.notif.tid, &local, &remote)?;
        let mut out: Vec<Vec<u8>> = Vec::with_capacity(pointers.len());
        let mut offset = 0;
        let mut used = 0usize;
        for (&p, &len) in pointers.iter().zip(&lens) {
            let block = &buf[offset..offset + len];
            let whole = offset + len <= got;
            offset += len;
            let limit = MAX_ARG_STRLEN.min(budget.saturating_sub(used));
            let s = match block.iter().position(|&b| b == 0) {
                Some(nul) if whole => block[..nul].to_vec(),
                _ if whole => {
                    let rest_limit = limit
                        .checked_sub(len)
                        .ok_or(MemoryError::TooLong(MAX_ARGV_BYTES))?;
                    let mut s = block.to_vec();
                    s.extend(self.c_string_unchecked(p + len as u64, rest_limit)?);
                    s
                }
                _ => self.c_string_unchecked(p, limit)?,
            };
            if s.len() > limit {
                return Err(MemoryError::TooLong(MAX_ARGV_BYTES));
            }
            used += s.len() + 1;
            out.push(s);
        }
        Ok(out)
    }
}

const PAGE: usize = 4096;
/// Pointers read per system call (a page-bounded block of 64 pointers).
const POINTER_BLOCK: usize = 512;
/// First bytes read of each argv string in the vectored read.
const FIRST_READ: usize = 256;
/// Strings per vectored read (well under IOV_MAX).
const STRINGS_PER_READ: usize = 64;

/// How much of a string at `addr` the first read takes: [`FIRST_READ`] bytes, or up to the
/// end of its page, so that an unmapped next page cannot fail a string that ends before it.
fn first_read_len(addr: u64) -> usize {
    (PAGE - (addr as usize % PAGE)).min(FIRST_READ)
}

/// How much of a pointer array at `addr` one read takes: up to the end of the page (a
/// misaligned pointer that straddles it is read whole), at most [`POINTER_BLOCK`].
fn pointer_block_len(addr: u64) -> usize {
    let to_page_end = PAGE - (addr as usize % PAGE);
    if to_page_end < 8 {
        8
    } else {
        to_page_end.min(POINTER_BLOCK)
    }
}

/// One vectored `process_vm_readv`: `local[i]` receives `remote[i]`; returns the bytes
/// read, which stop at the first remote range that cannot be read.
fn read_vectored(
    tid: libc::pid_t,
    local: &[libc::iovec],
    remote: &[libc::iovec],
) -> Result<usize, MemoryError> {
    if local.is_empty() {
        return Ok(0);
    }
    // SAFETY: every `local` entry describes a distinct writable range of a live buffer of
    // the caller, for its length; `remote` is only read by the kernel in the other
    // process, with its own fault handling.
    let n = unsafe {
        libc::process_vm_readv(
            tid,
            local.as_ptr(),
            local.len() as libc::c_ulong,
            remote.as_ptr(),
            remote.len() as libc::c_ulong,
            0,
        )
    };
    if n < 0 {
        let err = io::Error::last_os_error();
        // EFAULT on the very first range: let the one-by-one reads report it.
        if err.raw_os_error() == Some(libc::EFAULT) {
            return Ok(0);
        }
        return Err(MemoryError::Unreadable(err));
    }
    Ok(n as usize)
}

impl TargetMemory<'_> {
    /// Up to `buf.len()` bytes at `addr`: through the kept descriptor where there is one
    /// and it reads, otherwise (or when it fails or reads nothing) by `process_vm_readv`,
    /// whose answer stands.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, MemoryError> {
        if let (Some(mem), Ok(offset)) = (&self.kept, libc::off_t::try_from(addr)) {
            // SAFETY: `buf` is writable for its length.
            let n =
                unsafe { libc::pread(mem.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), offset) };
            if n > 0 {
                return Ok(n as usize);
            }
        }
        read_raw(self.notif.tid, addr, buf)
    }

    /// Writes `bytes` at `addr` in the caller's memory (what a call the supervisor performs
    /// returns there, such as received data).
    ///
    /// Security boundary: the write goes through `/proc/TID/mem` opened *before* the call
    /// is checked pending. The open file holds the address space it was opened on, so once
    /// the check passes the write reaches the caller's memory even if its thread dies and
    /// the tid is reused at once (`process_vm_writev` names a tid at the moment of the
    /// write, which could then be another process). Writes through that file ignore page
    /// protections, so the whole range must lie in mappings the target has writable, read
    /// from its maps under the same check. A thread of the target changing a protection
    /// after that check only lets fence write into memory of the target's own that the
    /// target could have made writable itself: nothing outside the sandbox changes.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), MemoryError> {
        use std::os::unix::fs::FileExt;
        let tid = self.notif.tid;
        let mem = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/proc/{tid}/mem"))
            .map_err(MemoryError::Unreadable)?;
        let maps = std::fs::read_to_string(format!("/proc/{tid}/maps"))
            .map_err(MemoryError::Unreadable)?;
        self.checked(())?;
        if !range_writable(&maps, addr, bytes.len() as u64) {
            return Err(MemoryError::Unreadable(io::Error::from_raw_os_error(
                libc::EFAULT,
            )));
        }
        mem.write_all_at(bytes, addr)
            .map_err(MemoryError::Unreadable)?;
        self.checked(())
    }
}

/// Whether `[addr, addr + len)` is covered, without a gap, by mappings with the `w`
/// permission in `maps` (the text of `/proc/PID/maps`, ordered by address).
fn range_writable(maps: &str, addr: u64, len: u64) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let mut at = addr;
    for line in maps.lines() {
        if at >= end {
            break;
        }
        let mut fields = line.split_ascii_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            return false;
        };
        let Some((from, to)) = range.split_once('-') else {
            return false;
        };
        let (Ok(from), Ok(to)) = (u64::from_str_radix(from, 16), u64::from_str_radix(to, 16))
        else {
            return false;
        };
        if to <= at {
            continue;
        }
        if from > at || perms.as_bytes().get(1) != Some(&b'w') {
            return false;
        }
        at = to;
    }
    at >= end
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_range_must_lie_in_writable_mappings_without_gaps() {
        let maps = "1000-2000 rw-p 00000000 00:00 0\n\
                    2000-3000 rw-p 00000000 00:00 0\n\
                    3000-4000 r--p 00000000 00:00 0\n\
                    5000-6000 rw-s 00000000 00:00 0 /dev/shm/x\n";
        assert!(range_writable(maps, 0x1000, 0x10));
        assert!(
            range_writable(maps, 0x1ff0, 0x20),
            "across two writable mappings"
        );
        assert!(range_writable(maps, 0x5000, 0x1000));
        assert!(range_writable(maps, 0x1000, 0));
        assert!(
            !range_writable(maps, 0x2ff0, 0x20),
            "into a read-only mapping"
        );
        assert!(!range_writable(maps, 0x3000, 1), "read-only");
        assert!(!range_writable(maps, 0x4ff0, 0x20), "starts in a gap");
        assert!(
            !range_writable(maps, 0x5ff0, 0x20),
            "runs past the last mapping"
        );
        assert!(!range_writable(maps, 0x500, 1), "below every mapping");
        assert!(!range_writable(maps, u64::MAX, 2), "wraps around");
        assert!(!range_writable("garbage\n", 0x1000, 1));
    }
    use std::os::fd::OwnedFd;

    /// Reads of this very process: `process_vm_readv` on oneself needs no privilege. The
    /// listener is any descriptor: these reads never ask it about validity (deferred, and
    /// never confirmed).
    fn with_own_memory<T>(f: impl FnOnce(&TargetMemory<'_>) -> T) -> T {
        with_own_memory_through(None, f)
    }

    /// [`with_own_memory`], the reads going through `kept` when given, as a kept
    /// descriptor.
    fn with_own_memory_through<T>(
        kept: Option<OwnedFd>,
        f: impl FnOnce(&TargetMemory<'_>) -> T,
    ) -> T {
        let fd: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
        let listener = Listener::new(fd);
        let notif = Notification {
            id: 0,
            tid: std::process::id() as libc::pid_t,
            nr: 0,
            args: [0; 6],
        };
        f(&TargetMemory::deferring(&listener, &notif).through(kept.map(Arc::new)))
    }

    #[test]
    fn a_kept_descriptor_reads_the_callers_memory_and_one_that_reads_nothing_is_passed_over() {
        let path = b"src/main.rs\0";
        let addr = path.as_ptr() as u64;
        let mem: OwnedFd = std::fs::File::open("/proc/self/mem").unwrap().into();
        let got = with_own_memory_through(Some(mem), |m| m.c_string(addr, PATH_MAX).unwrap());
        assert_eq!(got, b"src/main.rs");
        // A descriptor that reads nothing (an address space gone reads so): the read is made
        // again with process_vm_readv, whose answer stands.
        let empty: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
        let got = with_own_memory_through(Some(empty), |m| m.c_string(addr, PATH_MAX).unwrap());
        assert_eq!(got, b"src/main.rs");
        // And one that fails (a directory): the same.
        let dir: OwnedFd = std::fs::File::open("/").unwrap().into();
        let got = with_own_memory_through(Some(dir), |m| m.c_string(addr, PATH_MAX).unwrap());
        assert_eq!(got, b"src/main.rs");
        // An address no offset can name is process_vm_readv's to refuse.
        let mem: OwnedFd = std::fs::File::open("/proc/self/mem").unwrap().into();
        let refused = with_own_memory_through(Some(mem), |m| m.c_string(u64::MAX - 8, PATH_MAX));
        assert!(matches!(refused, Err(MemoryError::Unreadable(_))));
    }

    fn pointers_of(strings: &[&[u8]]) -> Vec<u64> {
        let mut v: Vec<u64> = strings.iter().map(|s| s.as_ptr() as u64).collect();
        v.push(0);
        v
    }

    #[test]
    fn argv_of_short_and_long_strings_reads_back_whole() {
        let long: Vec<u8> = (0..3000)
            .map(|i| b'a' + (i % 26) as u8)
            .chain([0])
            .collect();
        let strings: Vec<&[u8]> = vec![b"sh\0", b"-c\0", &long, b"\0", b"last\0"];
        let array = pointers_of(&strings);
        let got = with_own_memory(|m| {
            let ptrs = m.pointers_from(array.as_ptr() as u64, None).unwrap();
            m.string_batch(&ptrs, MAX_ARGV_BYTES).unwrap()
        });
        let want: Vec<Vec<u8>> = strings.iter().map(|s| s[..s.len() - 1].to_vec()).collect();
        assert_eq!(got, want);
    }

    /// One long string named by every pointer is read no further than the kernel would
    /// take: past the longest argv string, or the bytes left of the budget, the read stops.
    #[test]
    fn long_strings_are_read_no_further_than_the_kernel_takes() {
        let huge: Vec<u8> = std::iter::repeat_n(b'x', MAX_ARG_STRLEN + 10)
            .chain([0])
            .collect();
        let fits: Vec<u8> = std::iter::repeat_n(b'y', 100_000).chain([0]).collect();
        let one = pointers_of(&[&huge]);
        let many = pointers_of(&[&fits, &fits, &fits]);
        with_own_memory(|m| {
            let ptrs = m.pointers_from(one.as_ptr() as u64, None).unwrap();
            assert!(matches!(
                m.string_batch(&ptrs, MAX_ARGV_BYTES),
                Err(MemoryError::TooLong(_))
            ));
            let ptrs = m.pointers_from(many.as_ptr() as u64, None).unwrap();
            assert_eq!(m.string_batch(&ptrs, MAX_ARGV_BYTES).unwrap().len(), 3);
            assert!(matches!(
                m.string_batch(&ptrs, 250_000),
                Err(MemoryError::TooLong(_))
            ));
        });
    }

    #[test]
    fn more_pointers_than_one_block_are_all_read() {
        let owned: Vec<Vec<u8>> = (0..300).map(|i| format!("arg{i}\0").into_bytes()).collect();
        let strings: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let array = pointers_of(&strings);
        let got = with_own_memory(|m| {
            let ptrs = m.pointers_from(array.as_ptr() as u64, None).unwrap();
            assert_eq!(ptrs.len(), 300);
            ptrs.chunks(STRINGS_PER_READ)
                .flat_map(|c| m.string_batch(c, MAX_ARGV_BYTES).unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(got.len(), 300);
        assert_eq!(got[299], b"arg299");
    }

    /// A string that ends exactly at the end of a mapping, with nothing mapped after it,
    /// and one that runs into the unmapped page.
    #[test]
    fn strings_at_the_edge_of_a_mapping() {
        // SAFETY: a fresh anonymous mapping of two pages; the second is unmapped again so
        // that the first ends at a hole. Only this test uses it.
        let base = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                2 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            libc::munmap((p as *mut u8).add(PAGE) as *mut libc::c_void, PAGE);
            p as *mut u8
        };
        // SAFETY: writes inside the first (still mapped) page.
        let page = unsafe { std::slice::from_raw_parts_mut(base, PAGE) };
        page.fill(b'x');
        page[PAGE - 1] = 0; // "xxx…x\0" ending at the page end
        page[PAGE - 10..PAGE - 1].copy_from_slice(b"edge-word");
        let ends_at_edge = base as u64 + (PAGE - 10) as u64;
        let ok = with_own_memory(|m| m.string_batch(&[ends_at_edge], MAX_ARGV_BYTES).unwrap());
        assert_eq!(ok, vec![b"edge-word".to_vec()]);

        page[PAGE - 1] = b'y'; // now no NUL before the hole
        let runs_off = with_own_memory(|m| m.string_batch(&[ends_at_edge], MAX_ARGV_BYTES));
        assert!(matches!(runs_off, Err(MemoryError::Unreadable(_))));
        // SAFETY: unmapping the page this test mapped.
        unsafe { libc::munmap(base as *mut libc::c_void, PAGE) };
    }

    /// An exec's path and argv read together: an argv string at the path's address is the
    /// path (long or short), the others are read, in order, and a path or an argv that
    /// cannot be read is an error as when read apart.
    #[test]
    fn path_and_argv_read_together() {
        let long_path: Vec<u8> = b"/usr/lib/"
            .iter()
            .copied()
            .chain((0..600).map(|i| b'a' + (i % 26) as u8))
            .chain([0])
            .collect();
        for path in [&b"/bin/true\0"[..], &long_path] {
            let strings: Vec<&[u8]> = vec![path, b"-c\0", b"\0", path, b"last\0"];
            let array = pointers_of(&strings);
            let (got_path, argv) = with_own_memory(|m| {
                m.path_and_argv(path.as_ptr() as u64, PATH_MAX, array.as_ptr() as u64)
                    .unwrap()
            });
            assert_eq!(got_path, path[..path.len() - 1].to_vec());
            let want: Vec<Vec<u8>> = strings.iter().map(|s| s[..s.len() - 1].to_vec()).collect();
            assert_eq!(argv, want);
        }
        // A path longer than the limit is refused whole.
        let too_long = with_own_memory(|m| {
            let array = pointers_of(&[&long_path]);
            m.path_and_argv(long_path.as_ptr() as u64, 100, array.as_ptr() as u64)
        });
        assert!(matches!(too_long, Err(MemoryError::TooLong(100))));
        // An unreadable argv, and an unreadable path.
        let path = b"/bin/true\0";
        let bad_argv = with_own_memory(|m| m.path_and_argv(path.as_ptr() as u64, PATH_MAX, 8));
        assert!(matches!(bad_argv, Err(MemoryError::Unreadable(_))));
        let array = pointers_of(&[path]);
        let bad_path = with_own_memory(|m| m.path_and_argv(8, PATH_MAX, array.as_ptr() as u64));
        assert!(matches!(bad_path, Err(MemoryError::Unreadable(_))));
        // No argv at all (a NULL array).
        let none = with_own_memory(|m| m.path_and_argv(path.as_ptr() as u64, PATH_MAX, 0));
        assert_eq!(
            none.unwrap(),
            (b"/bin/true".to_vec(), Vec::<Vec<u8>>::new())
        );
    }

    #[test]
    fn an_unreadable_pointer_array_is_an_error() {
        let got = with_own_memory(|m| m.pointers_from(8, None));
        assert!(matches!(got, Err(MemoryError::Unreadable(_))));
    }
}
