"""One process per folder: a lock beside each folder a run writes.

``folder_lock(DATA/ctlpp)`` holds ``DATA/.ctlpp.lock`` (an exclusive ``flock`` plus the
holder's PID and command) while the block runs.  A second process that wants the folder
is refused with an error naming the PID that holds it.  The operating system releases
the lock when its holder dies however it dies, so a lock file whose PID is gone is
stale: the next process takes it over and says so.

A run holds the folders it writes whole (``DATA/<study>``), while a ``compsuite data``
command writes one folder that may lie inside them: :func:`inside_lock` holds, shared,
the existing locks of the folders above it, so that neither starts while the other
writes there.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from pathlib import Path
from typing import Iterator

from compsuite.foundation.errors import UserError


class FolderBusy(UserError, RuntimeError):
    """Another process holds the folder's lock."""


def lock_path(folder: Path) -> Path:
    folder = Path(folder).absolute()
    return folder.with_name(f".{folder.name}.lock")


def _holder(text: str) -> tuple[int | None, str]:
    pid, _, cmd = text.partition("\n")
    try:
        return int(pid), cmd.strip()
    except ValueError:
        return None, ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode("utf-8", "replace")


def _busy(where: str, path: Path, fd: int) -> FolderBusy:
    """The error of a folder whose lock (``path``, open as ``fd``) another process holds;
    ``where``: the folder, as the message begins with it."""
    pid, cmd = _holder(_read(fd))
    who = f"PID {pid}" + (f" ({cmd})" if cmd else "") if pid else "another process"
    return FolderBusy(f"{where} is in use by {who}; wait for it "
                      f"to finish, or stop it (kill {pid or '<pid>'}) and start again "
                      f"(lock {path})")


def holder(folder: str | os.PathLike) -> int | None:
    """The PID of the live process that holds ``folder``'s lock now, or None (no lock,
    released, or left by a process that is gone).  Read only: the lock is not tried."""
    try:
        text = lock_path(Path(folder)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    pid, cmd = _holder(text)
    return pid if pid is not None and _alive(pid) and _runs(pid, cmd) else None


def _runs(pid: int, cmd: str) -> bool:
    """Whether process ``pid`` runs the command its lock file names (``compsuite ARGS``):
    a holder killed without releasing leaves its PID, which another process may have
    been given since.  True where the process's command line cannot be read."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return True
    args = cmd.removeprefix("compsuite").strip()
    return " ".join(argv.rstrip("\0").split("\0")).endswith(args)


@contextlib.contextmanager
def inside_lock(folder: str | os.PathLike) -> Iterator[None]:
    """Hold, shared, the lock of every folder above ``folder`` that has a lock file (one
    a run held, or holds): a folder inside one that a process holds is refused, naming
    it, and that folder cannot be taken while the block runs.  Nothing is written (a
    folder no run ever held has no lock file, and nothing to hold)."""
    with contextlib.ExitStack() as stack:
        for above in Path(folder).absolute().parents:
            path = lock_path(above) if above.name else None
            if path is None or not path.is_file():
                continue
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:   # not ours to read: not one of the suite's folders
                continue
            stack.callback(os.close, fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _busy(f"{folder}: inside {above}, which", path, fd) from None
        yield


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, what: str = "run",
                note=lambda msg: print(msg, file=sys.stderr)) -> Iterator[Path]:
    """Hold ``folder``'s lock for the block (see the module docstring); ``what`` says
    what the folder is for in the messages, ``note`` gets the take-over message."""
    path = lock_path(Path(folder))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(f"{folder}: the {what} folder", path, fd) from None
        pid, cmd = _holder(_read(fd))
        if pid is not None and pid != os.getpid():
            state = "no longer running" if not _alive(pid) else "no longer holding it"
            note(f"compsuite: note: taking over the lock of {folder} left by PID {pid} "
                 f"({state})")
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\ncompsuite {' '.join(sys.argv[1:])}\n".encode())
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)   # released in order: nothing for the next one to take over
    finally:
        os.close(fd)   # closing releases the flock
