"""The toolkit processes the suite starts, and stopping them with the suite.

Every toolkit command (``fairseq-train``, ``onmt_train``, ``fairseq-preprocess``,
``fairseq-generate`` ...) starts through :func:`child`, in a process group of its own:
a Ctrl-C in the terminal reaches the suite only, and the suite stops its children
itself.  :func:`install_handlers` makes SIGINT and SIGTERM do that: each child's group
gets SIGTERM, then SIGKILL after a grace period (a second signal skips the wait), no
new child starts, and :class:`Stopped` is raised in the main thread.  What a stopped
run leaves is safe to resume: results and data are written atomically, and the
backends set aside a checkpoint that a kill cut short before resuming from it
(:func:`complete_checkpoint`).
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

#: seconds a stopped child gets to exit after SIGTERM before SIGKILL
GRACE_S = 10.0

_lock = threading.RLock()
_children: dict[int, tuple[subprocess.Popen, str]] = {}
_stopping = threading.Event()
#: CPU threads each child may use (None: its own default); see :func:`child_threads`
_child_threads: int | None = None


class Stopped(BaseException):
    """The suite was asked to stop (SIGINT/SIGTERM); ``stopped`` names the toolkit
    processes it ended.  A BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` treats it as a failed step."""

    def __init__(self, signum: int, stopped: Sequence[str] = ()):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.stopped = list(stopped)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def check_stop() -> None:
    """Raise :class:`Stopped` when the suite is stopping (called between steps, and
    by the threads that run trainings side by side)."""
    if _stopping.is_set():
        raise Stopped(getattr(_stopping, "signum", signal.SIGTERM))


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def end_groups(procs: Sequence[subprocess.Popen], grace: float | None = None) -> None:
    """SIGTERM to each child's process group, SIGKILL to what is left after ``grace``
    seconds (default :data:`GRACE_S`; 0: at once); returns when the children have
    exited."""
    grace = GRACE_S if grace is None else grace
    for p in procs:
        _signal_group(p.pid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        # the leader's stragglers too: a group outlives its leader
        if p.poll() is None or _alive(p.pid):
            _signal_group(p.pid, signal.SIGKILL)
        p.wait()


def thread_env(threads: int | None) -> dict[str, str] | None:
    """Environment that limits a process to ``threads`` CPU threads (for trainings and
    decoders that run side by side); None leaves the defaults."""
    if not threads:
        return None
    return {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
            "OPENBLAS_NUM_THREADS": str(threads)}   # with --openblas-kernels


@contextlib.contextmanager
def child_threads(threads: int | None) -> Iterator[None]:
    """In the block, every :func:`child` runs with at most ``threads`` CPU threads
    (:func:`thread_env`), as a run's ``--threads`` says: the decoders a unit's
    evaluation starts as well as the trainings.  A decoder left at its default (every
    CPU) beside trainings that hold the other cores waits on its own spinning threads:
    on 2 cores beside one training, a quick model's 2,353 test inputs took 64.6 s to
    decode instead of 1.5 s (docs/benchmarks.md).  ``None`` changes nothing."""
    global _child_threads
    before = _child_threads
    _child_threads = threads
    try:
        yield
    finally:
        _child_threads = before


@contextlib.contextmanager
def child(cmd: Sequence[str], **popen) -> Iterator[subprocess.Popen]:
    """``subprocess.Popen(cmd, **popen)`` in a new process group, known to the stop
    handler while it runs; a child still running when the block ends (an exception,
    a stop) is ended with its group.  Refused once the suite is stopping.  Inside
    :func:`child_threads`, with its thread limit in the environment."""
    check_stop()
    limit = thread_env(_child_threads)
    if limit:
        env = popen.get("env")
        popen["env"] = {**(os.environ if env is None else env), **limit}
    proc = subprocess.Popen(list(cmd), start_new_session=True, **popen)
    with _lock:
        _children[proc.pid] = (proc, Path(cmd[0]).name)
    try:
        yield proc
    finally:
        if proc.poll() is None:  # an exception or a stop left it running
            end_groups([proc])
        with _lock:
            _children.pop(proc.pid, None)
    if proc.returncode != 0:
        check_stop()  # it failed because the suite is stopping: say that, not "failed"


def run(cmd: Sequence[str], **popen) -> int:
    """Run ``cmd`` to the end as a :func:`child`; returns its exit status."""
    with child(cmd, **popen) as proc:
        return proc.wait()


def _handler(signum, frame) -> None:
    """Signal every child's group (SIGTERM; SIGKILL on a second signal), refuse new
    children and raise :class:`Stopped`.  It waits for nothing: the thread that started
    a child waits for it as the exception leaves :func:`child` (a handler that waited
    could deadlock on the ``Popen.wait`` it interrupted)."""
    again = _stopping.is_set()
    _stopping.signum = signum  # type: ignore[attr-defined]
    _stopping.set()
    with _lock:
        running = [(p, name) for p, name in _children.values() if p.poll() is None]
    for p, _ in running:
        _signal_group(p.pid, signal.SIGKILL if again else signal.SIGTERM)
    raise Stopped(signum, [f"{name} (pid {p.pid})" for p, name in running])


@contextlib.contextmanager
def handlers() -> Iterator[None]:
    """SIGINT and SIGTERM stop the children and raise :class:`Stopped` (main thread
    only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _stopping.clear()


def complete_checkpoint(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a whole checkpoint: ``torch.save`` writes a zip archive
    whose directory is at its end, so a file a kill cut short has none."""
    import zipfile

    return zipfile.is_zipfile(path)


def set_aside_incomplete(paths: Sequence[Path]) -> list[Path]:
    """Rename each cut-short checkpoint in ``paths`` to ``<name>.incomplete`` (kept for
    inspection, never read); returns those set aside."""
    bad = [p for p in paths if p.is_file() and not complete_checkpoint(p)]
    for p in bad:
        os.replace(p, p.with_name(p.name + ".incomplete"))
    return bad
