"""A case-insensitive, case-preserving passthrough file system, as a macOS folder shared
into a virtual machine or a vfat disk is: a name is looked up in any case, and a new one
keeps the case it was made in. For tests/run_fence.rs on kernels without casefold support
(CONFIG_UNICODE). Runs in the foreground until unmounted.

    /usr/bin/python3 casefold_fs.py BACKING_DIR MOUNT_POINT
"""
import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations


class CaseFolding(Operations):
    def __init__(self, root):
        self.root = root

    def _real(self, path):
        cur = self.root
        for name in (p for p in path.split("/") if p):
            try:
                names = os.listdir(cur)
            except OSError:
                names = []
            found = next((n for n in names if n.lower() == name.lower()), name)
            cur = os.path.join(cur, found)
        return cur

    def access(self, path, mode):
        if not os.access(self._real(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.lstat(self._real(path))
        keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._real(path))

    def statfs(self, path):
        s = os.statvfs(self._real(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
        return {k: getattr(s, k) for k in keys}

    def chmod(self, path, mode):
        os.chmod(self._real(path), mode)

    def chown(self, path, uid, gid):
        os.lchown(self._real(path), uid, gid)

    def readlink(self, path):
        return os.readlink(self._real(path))

    def mknod(self, path, mode, dev):
        os.mknod(self._real(path), mode, dev)

    def mkdir(self, path, mode):
        os.mkdir(self._real(path), mode)

    def rmdir(self, path):
        os.rmdir(self._real(path))

    def unlink(self, path):
        os.unlink(self._real(path))

    def symlink(self, name, target):
        os.symlink(target, self._real(name))

    def rename(self, old, new):
        os.rename(self._real(old), self._real(new))

    def link(self, target, name):
        os.link(self._real(name), self._real(target))

    def utimens(self, path, times=None):
        os.utime(self._real(path), times)

    def open(self, path, flags):
        return os.open(self._real(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._real(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def read(self, path, length, offset, fh):
        return os.pread(fh, length, offset)

    def write(self, path, buf, offset, fh):
        return os.pwrite(fh, buf, offset)

    def truncate(self, path, length, fh=None):
        os.truncate(self._real(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)

    def fsync(self, path, datasync, fh):
        os.fsync(fh)


if __name__ == "__main__":
    FUSE(CaseFolding(sys.argv[1]), sys.argv[2], foreground=True, nothreads=True,
         allow_other=True, default_permissions=True)
