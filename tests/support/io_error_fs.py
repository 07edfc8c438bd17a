"""A read-only FUSE file system of one file whose bytes past an offset cannot be read.

    /usr/bin/python3 io_error_fs.py SOURCE MOUNT NAME FAILING_FROM

MOUNT shows one regular file, NAME, with SOURCE's size and bytes; a read that reaches byte
FAILING_FROM or past it fails with EIO, as a disk with bad sectors does, for read(2) and for
a page of a memory map alike (the kernel raises SIGBUS there). The kernel asks for at most
one page per read (max_read), so every page before FAILING_FROM still reads. Runs until MOUNT is unmounted
(fusermount3 -u). Needs Debian's python3-llfuse and fuse3 (scripts/install-deps.sh).
"""
import errno
import os
import stat
import sys

import llfuse

FILE_INODE = llfuse.ROOT_INODE + 1


class OneFailingFile(llfuse.Operations):
    def __init__(self, source, name, failing_from):
        super().__init__()
        self.source = source
        self.name = name.encode()
        self.failing_from = failing_from

    def getattr(self, inode, ctx=None):
        entry = llfuse.EntryAttributes()
        if inode == llfuse.ROOT_INODE:
            entry.st_mode = stat.S_IFDIR | 0o755
        elif inode == FILE_INODE:
            entry.st_mode = stat.S_IFREG | 0o644
            entry.st_size = os.path.getsize(self.source)
        else:
            raise llfuse.FUSEError(errno.ENOENT)
        entry.st_ino = inode
        entry.attr_timeout = 0
        entry.entry_timeout = 0
        return entry

    def lookup(self, parent_inode, name, ctx=None):
        if parent_inode == llfuse.ROOT_INODE and name == self.name:
            return self.getattr(FILE_INODE)
        raise llfuse.FUSEError(errno.ENOENT)

    def opendir(self, inode, ctx):
        return inode

    def readdir(self, handle, offset):
        if offset == 0:
            yield (self.name, self.getattr(FILE_INODE), 1)

    def open(self, inode, flags, ctx):
        if inode != FILE_INODE:
            raise llfuse.FUSEError(errno.ENOENT)
        return inode

    def read(self, handle, offset, size):
        if offset >= self.failing_from:
            raise llfuse.FUSEError(errno.EIO)
        with open(self.source, "rb") as source:
            source.seek(offset)
            return source.read(size)


def main():
    source, mount, name, failing_from = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    llfuse.init(OneFailingFile(source, name, failing_from), mount, ["fsname=ruleplane-io-error", "ro", "max_read=4096"])
    try:
        llfuse.main(workers=1)
    finally:
        llfuse.close()


if __name__ == "__main__":
    main()
