"""Where a run's time goes: each step of ``compsuite run``, timed and recorded by phase,
and the table ``compsuite times`` prints of them.

The runner appends one JSON line per step to ``runs/<study>/<profile>/timings.jsonl``
(:data:`FILE`): its ``phase`` (:data:`PHASES`), what it worked on (``dataset``,
``unit``, ``results``), ``status`` (``done``; ``skipped`` when it found its output
stored), ``wall_s``, ``started_at`` (UTC), ``git``, ``threads`` and ``jobs``.  The
command adds one line of its own (phase ``command``: its whole wall time, ``done``,
``stopped`` or ``failed``; ``startup_s``, its time before the runner began).  Each line
is written whole, with one ``write`` to a file opened for appending, so an interrupted
run keeps its earlier lines and a resumed one adds its own; steps that run side by side
(``jobs`` above 1) each record their own interval, from which the table gives both the
seconds the steps add up to and the wall time they cover.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from compsuite.foundation.errors import DataError
from compsuite.foundation.manifest import MANIFEST

FILE = "timings.jsonl"
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
    it wrote nothing.  A block that raises (a failed or stopped step) records nothing:
    the run does it again when it resumes."""
    started, clock = time.time(), time.perf_counter()
    yield
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
def read(path: Path) -> list[dict]:
    """The records of ``path``, each checked; a malformed line is a DataError naming
    the file and the line."""
    records = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                records.append(checked(line, path, n))
    return records


def checked(line: str, path: Path, n: int) -> dict:
    """One line of a timings file, read and checked (see :func:`read`)."""
    def bad(why: str) -> DataError:
        return DataError(f"{path}, line {n}: {why} (each line is one step's record, as "
                         "compsuite run writes them; delete the line or the file)")

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
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise bad(f"{key} {value!r} is not a number of seconds")
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
    """The table's rows: per phase the steps done, those skipped, the seconds the steps
    done add up to and the wall time they cover; then ``start-up`` (:data:`STARTUP`),
    ``other`` (:data:`OTHER`) and the total, whose wall time is that of every command
    and step."""
    rows = []
    steps = [r for r in records if r["phase"] in PHASES]
    done = [r for r in steps if r["status"] == "done"]
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
