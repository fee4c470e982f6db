"""Why a write to the output tree failed, in one line a user can act on.

``write`` (the transaction) and ``update`` (reading what is there) both turn an ``OSError``
into this message; the immutable-attribute check is the one case where the errno alone
(EPERM) does not say what to do.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from pathlib import Path

from generator.errors import PodplanError

__all__ = ["cannot_write"]

_WHY = {
    errno.EEXIST: "a file is in the way of a directory",
    errno.ENOTDIR: "part of the path is a file, not a directory",
    errno.EISDIR: "a directory is in the way of a file",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENAMETOOLONG: "file name too long",
}


_FS_IOC_GETFLAGS = 0x80086601  # linux/fs.h: read a file's attributes (what lsattr shows)
_IMMUTABLE_OR_APPEND_ONLY = 0x10 | 0x20  # FS_IMMUTABLE_FL | FS_APPEND_FL


def _immutable(path: Path) -> Path | None:
    """``path`` or its directory when the kernel marks it immutable or append-only."""
    for p in (path, path.parent):
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            flags = fcntl.ioctl(fd, _FS_IOC_GETFLAGS, b"\0" * 8)
            if int.from_bytes(flags[:4], sys.byteorder) & _IMMUTABLE_OR_APPEND_ONLY:
                return p
        except OSError:
            pass
        finally:
            os.close(fd)
    return None


def cannot_write(exc: OSError, fallback: Path, verb: str = "write") -> PodplanError:
    """One line naming the path that could not be written and why."""
    path = exc.filename or fallback
    why = _WHY.get(exc.errno or 0, exc.strerror or str(exc))
    locked = _immutable(Path(path)) if exc.errno == errno.EPERM else None
    if locked is not None:
        why += f" ({locked} is immutable or append-only: lsattr -d shows it, chattr -i undoes it)"
    return PodplanError(f"cannot {verb} {path}: {why}; nothing was changed")
