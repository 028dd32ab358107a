"""Whole-file writes that never leave a fragment: the old file or the whole new one, nothing between.

``Path.write_text`` truncates first and writes after, so a full disk, a kill -9 or a power cut in
between leaves a few KB where a good snapshot or report was. Here the text goes to a temporary file
in the same folder (so the rename stays on one file system), is flushed and fsynced, and only then
renamed over the target (``os.replace`` is atomic on POSIX); on any failure the temporary file is
removed and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from glob import escape as glob_escape
from pathlib import Path


def write_text_atomic(path: Path | str, text: str, encoding: str = "utf-8", *, follow_links: bool = True) -> Path:
    """Replace ``path`` with ``text`` atomically and durably. Raises OSError with ``filename`` set to
    ``path`` (the temporary file's name means nothing to the user); the target is untouched then.

    A symlink is followed (the file it names is replaced, the link stays): a path the user gave
    (``-o FILE``). A target that is not a regular file (``-o /dev/stdout``, a FIFO, ``/dev/null``)
    is written in place: renaming over it would replace the device, and there is no old content
    to keep.

    ``follow_links=False``, for the files sparktui names itself (prefs.json): whatever is at the
    name (a link planted there, dangling or not, a FIFO) is replaced by the new regular file and
    nothing it points to is opened or written. The temporary file is created exclusively
    (``mkstemp``: ``O_EXCL``), so a link planted under its name cannot redirect it either."""
    if not follow_links:
        with _naming(path):
            try:
                st: os.stat_result | None = os.lstat(path)
            except FileNotFoundError:
                st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            st = None  # a link, a FIFO: replaced, never opened; the new file gets the default mode
        return _replace(path, Path(os.path.abspath(path)), text, encoding, st)
    with _naming(path):
        try:
            st = os.stat(path)  # through links: /dev/stdout is the pipe it names
        except FileNotFoundError:
            st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with _naming(path), open(path, "w", encoding=encoding) as fh:
            fh.write(text)
        return Path(path)
    return _replace(path, Path(os.path.realpath(path)), text, encoding, st)


def _replace(path: Path | str, target: Path, text: str, encoding: str, st: os.stat_result | None) -> Path:
    """``text`` into a new temporary file beside ``target``, fsynced, then renamed over it."""
    with _naming(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding=encoding) as fh:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else _default_mode())
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    _fsync_folder(target.parent)
    _sweep_leftovers(target)
    return target


STALE_TMP_S = 600.0  # a temporary file this old is a leftover: no write takes ten minutes


def _sweep_leftovers(target: Path) -> None:
    """A kill -9 between mkstemp and the rename leaves ``.NAME.xxxx.tmp`` beside the target (never a
    fragment under its name). The next write of the same target removes such leftovers once they are
    old enough not to be another process's write in flight."""
    try:
        leftovers = list(target.parent.glob(f".{glob_escape(target.name)}.*.tmp"))
    except OSError:
        return
    now = time.time()
    for tmp in leftovers:
        with contextlib.suppress(OSError):
            st = tmp.lstat()
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TMP_S:
                tmp.unlink()


@contextlib.contextmanager
def _naming(path: Path | str):
    """An OSError inside names ``path``, as the user gave it."""
    try:
        yield
    except OSError as e:
        if e.filename == str(path):
            raise
        raise OSError(e.errno, e.strerror or str(e), str(path)) from e


def _default_mode() -> int:
    """What open() would give a new file: 0o666 less the umask (mkstemp's 0o600 would hide a report)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; a folder that cannot be opened (some file systems) is not an error:
    the data is already on disk and the rename is atomic either way."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
