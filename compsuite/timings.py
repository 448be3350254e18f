"""Where a run's time goes: each step of ``compsuite run``, timed and recorded by phase,
and the table ``compsuite times`` prints of them.

The runner appends one JSON line per step to ``runs/<study>/<profile>/timings.jsonl``
(:data:`FILE`): its ``phase`` (:data:`PHASES`), what it worked on (``dataset``,
``unit``, ``results``), ``status`` (``done``; ``skipped`` when it found its output
stored), ``wall_s``, ``started_at`` (UTC), ``git``, ``threads`` and ``jobs``.  The
command adds one line of its own (phase ``command``: its whole wall time, ``done``,
``stopped`` or ``failed``; ``startup_s``, its time before the runner began).  A step
cut short is recorded too, ``stopped`` or ``failed``, and its time counts in its phase.
Each line is written whole, with one ``write`` to a file opened for appending, so an
interrupted run keeps its earlier lines and a resumed one adds its own; a Slurm job
writes its unit's steps to a file of its own (:func:`job_file`), which :func:`read`
reads with the main one.  Steps that run side by side (``jobs`` above 1) each record
their own interval, from which the table gives both the seconds the steps add up to
and the wall time they cover.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from compsuite.foundation.errors import DataError
from compsuite.foundation.manifest import MANIFEST

FILE = "timings.jsonl"
#: the folder beside :data:`FILE` that holds one file per Slurm job (:func:`job_file`)
JOBS_DIR = "timings.d"
#: the phases of a run's steps, in the table's order
PHASES = {
    "data": "generating a dataset, or writing a toolkit's format of it",
    "train": "a unit's training",
    "evaluate": "a unit's predictions, scores and model-in-the-loop tests",
    "report": "the tables, figures and findings",
}
#: the line a command adds for itself: its whole wall time
COMMAND = "command"
STATUSES = {"done", "skipped", "stopped", "failed"}
#: what the table's ``start-up`` and ``other`` rows hold
STARTUP = ("each command's time before its runner began: imports, the studies' modules, "
           "planning, checks")
OTHER = ("the commands' time outside their steps after that: finding stored steps, "
         "reading results")


def append_line(path: Path, text: str) -> None:
    """Append ``text`` and a newline to ``path`` with one ``write`` (made with the
    mode the umask gives): a stopped process leaves the file's earlier lines whole,
    and lines written at once by several threads or processes do not mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, (text + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def job_file(runs_dir: Path) -> Path:
    """Where a unit's job elsewhere (a Slurm job) records its steps: a file of its own
    in :data:`JOBS_DIR` of the profile's runs folder, named by its Slurm job
    (``<array>_<index>``, else ``SLURM_JOB_ID``) or else by host and process: jobs on
    several nodes appending to one file on a shared file system (NFS) could mix their
    lines."""
    env = os.environ
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        name = f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    else:
        name = env.get("SLURM_JOB_ID") or f"{socket.gethostname()}-{os.getpid()}"
    return runs_dir / JOBS_DIR / f"{name}.jsonl"


def utc(t: float) -> str:
    """The time ``t`` (seconds since the epoch) as the records write it: ISO 8601, UTC."""
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="microseconds")


def record(path: Path, phase: str, started: float, wall_s: float, status: str,
           **what: Any) -> None:
    """Append one step's line to ``path``."""
    append_line(path, json.dumps({"phase": phase, **what, "status": status,
                                  "wall_s": round(wall_s, 6), "started_at": utc(started)}))


@contextlib.contextmanager
def step(path: Path | None, phase: str, did_work: Callable[[], bool] | None = None,
         **what: Any) -> Iterator[None]:
    """Time the block as a step of ``phase`` and record it in ``path`` (None: not
    recorded): ``done``, or ``skipped`` where ``did_work`` (asked after the block) says
    it wrote nothing.  A block that raises is recorded as ``stopped`` (a BaseException
    that is no Exception: Ctrl-C, SystemExit, the suite's ``Stopped``) or ``failed``,
    and the exception goes on; the run does the step again when it resumes."""
    started, clock = time.time(), time.perf_counter()
    try:
        yield
    except BaseException as e:
        if path is not None:
            record(path, phase, started, time.perf_counter() - clock,
                   "failed" if isinstance(e, Exception) else "stopped", **what)
        raise
    if path is not None:
        done = did_work is None or did_work()
        record(path, phase, started, time.perf_counter() - clock,
               "done" if done else "skipped", **what)


def stamp(path: Path) -> tuple[int, int] | None:
    """What tells a file rewritten (atomically: a new inode) from the file as it was:
    its inode and modification time; None where there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def stamps(folder: Path) -> dict[str, tuple[int, int] | None]:
    """:func:`stamp` of every manifest under ``folder``: a data step that wrote
    anything wrote a manifest."""
    if not folder.is_dir():
        return {}
    return {str(p): stamp(p) for p in folder.rglob(MANIFEST)}


# ----------------------------------------------------------------------------- reading
def files(path: Path) -> list[Path]:
    """The timings files of the runs folder whose main file is ``path``: that file and
    its Slurm jobs' files (:func:`job_file`), those that exist."""
    jobs = path.parent / JOBS_DIR
    return ([path] if path.is_file() else []) + (
        sorted(jobs.glob("*.jsonl")) if jobs.is_dir() else [])


def read(path: Path) -> list[dict]:
    """The records of ``path`` and of its jobs' files (:func:`files`), each checked; a
    malformed line (one not UTF-8 too) is a DataError naming the file and the line."""
    records = []
    for one in files(path):
        for n, raw in enumerate(one.read_bytes().split(b"\n"), start=1):
            if raw.strip():
                records.append(checked(raw, one, n))
    return records


def checked(raw: bytes, path: Path, n: int) -> dict:
    """One line of a timings file, read and checked (see :func:`read`)."""
    def bad(why: str) -> DataError:
        return DataError(f"{path}, line {n}: {why} (each line is one step's record, as "
                         "compsuite run writes them; delete the line or the file)")

    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("not UTF-8") from None
    try:
        r = json.loads(line)
    except ValueError:
        raise bad("not JSON") from None
    if not isinstance(r, dict):
        raise bad("not a JSON object")
    if r.get("phase") not in (*PHASES, COMMAND):
        raise bad(f"phase {r.get('phase')!r} is none of {', '.join([*PHASES, COMMAND])}")
    if r.get("status") not in STATUSES:
        raise bad(f"status {r.get('status')!r} is none of {', '.join(sorted(STATUSES))}")
    for key in ("wall_s", "startup_s") if r["phase"] == COMMAND else ("wall_s",):
        value = r.get(key, 0.0 if key == "startup_s" else None)
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not 0 <= value < math.inf):
            raise bad(f"{key} {value!r} is not a number of seconds")
    if r["phase"] == COMMAND and r.get("startup_s", 0.0) > r["wall_s"]:
        raise bad(f"startup_s {r['startup_s']!r} is more than wall_s {r['wall_s']!r}")
    try:
        when = datetime.fromisoformat(r.get("started_at"))
    except (TypeError, ValueError):
        raise bad(f"started_at {r.get('started_at')!r} is not a time") from None
    if when.tzinfo is None:
        raise bad(f"started_at {r['started_at']!r} has no time zone")
    r["start"] = when.timestamp()
    return r


def covered(records: list[dict]) -> float:
    """The seconds of wall time ``records``' intervals cover together (intervals that
    overlap count once)."""
    spans = sorted((r["start"], r["start"] + r["wall_s"]) for r in records)
    total, end = 0.0, float("-inf")
    for a, b in spans:
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def summary(records: list[dict]) -> list[list]:
    """The table's rows: per phase the steps that ran (``done``, and those ``stopped``
    or ``failed`` part way), those skipped, the seconds the steps that ran add up to
    and the wall time they cover; then ``start-up`` (:data:`STARTUP`), ``other``
    (:data:`OTHER`) and the total, whose wall time is that of every command and step."""
    rows = []
    steps = [r for r in records if r["phase"] in PHASES]
    done = [r for r in steps if r["status"] != "skipped"]
    for phase in PHASES:
        mine = [r for r in done if r["phase"] == phase]
        rows.append([phase, len(mine), sum(r["phase"] == phase for r in steps) - len(mine),
                     sum(r["wall_s"] for r in mine), covered(mine)])
    total = covered(records)
    startup = sum(r.get("startup_s", 0.0) for r in records if r["phase"] == COMMAND)
    other = max(0.0, total - covered(done) - startup)
    rows.append(["start-up", None, None, startup, startup])
    rows.append(["other", None, None, other, other])
    rows.append(["total", len(done), len(steps) - len(done),
                 sum(r["wall_s"] for r in done) + startup + other, total])
    return rows
