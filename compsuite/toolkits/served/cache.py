"""What a served model keeps in its run folder: the request cache and the usage record.

``requests.jsonl``: one JSON object a line, one line per answer, appended and flushed as
each answer arrives (a stopped run loses nothing it was answered), keyed by
:func:`request_key`: the sha256 of the model id the server reports, the endpoint, the
prompt or messages and the decoding settings.  A repeated or resumed run reads it first
and sends only what it does not hold.  A last line torn by a stop is cut off when the
file is opened (and its request sent again); a line elsewhere that is not JSON is a
DataError naming the file and line.  The API key is never part of a request's record.

``answers.jsonl``: each answer of each call, appended when the call is answered: the
unit that asked (a unit may evaluate another unit's model) and the request's label
(e.g. ``translate test``), the input's index and text, the raw answer
and the answer read from it, the tokens in and out, why it finished, and whether it
came from the cache (the hf backend records a prompted model's answers so too).

``usage.json``: what asking the model cost in this folder, accumulated over every
model of the folder and every run (requests sent and answered from the cache, tokens in
and out, wall time), with the server's model id, the API, the decoding settings and the
prompting's label and hash; rewritten atomically after each call.
"""
from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open
from compsuite.toolkits.usage import USAGE_FILE, read_usage

CACHE_FILE = "requests.jsonl"
ANSWERS_FILE = "answers.jsonl"
#: the counters of usage.json, summed over calls
COUNTERS = ("requests_sent", "requests_cached", "tokens_in", "tokens_out", "answers_empty",
            "answers_cut")

_LOCK = threading.Lock()
_OPEN: dict[Path, "RequestCache"] = {}
_FILE_LOCKS: dict[Path, threading.Lock] = {}


def request_key(model_id: str, api: str, prompt: Any, decoding: dict) -> str:
    """The cache key of one request: the sha256 of JSON of (the server's model id, the
    endpoint kind, the prompt text or messages, the decoding settings)."""
    text = json.dumps([model_id, api, prompt, decoding], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RequestCache:
    """``folder/requests.jsonl`` (see the module docstring); one object per file in a
    process (:func:`open_cache`), safe to use from several threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._answers: dict[str, dict] = {}
        self._read()

    def _read(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):   # a torn last line: cut off, its request is sent again
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
            data = data[:end]
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                self._answers[rec["key"]] = rec
            except (ValueError, KeyError, TypeError):
                raise DataError(f"{self.path}:{number}: not a cached answer (a JSON object "
                                "with its key); delete the file to ask the server again"
                                ) from None

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: str) -> dict | None:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: str, record: dict) -> None:
        """Keep ``record`` under ``key``: one line appended and flushed to the file."""
        rec = {"key": key, **record}
        line = json.dumps(rec, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
            self._answers[key] = rec


def open_cache(folder: Path) -> RequestCache:
    """The request cache of ``folder`` (``requests.jsonl``), one per file in this
    process; read again when the file changed under it (deleted, say)."""
    path = (Path(folder) / CACHE_FILE).resolve()
    with _LOCK:
        cache = _OPEN.get(path)
        if cache is None or (len(cache) and not path.is_file()):
            cache = _OPEN[path] = RequestCache(path)
        return cache


def add_usage(folder: Path, counts: dict[str, float], about: dict[str, Any]) -> dict:
    """``folder/usage.json`` with ``counts`` (:data:`COUNTERS` and ``wall_s``) added to
    what it holds and ``about`` (model id, API, decoding, prompting) set, rewritten
    atomically; returns it."""
    path = Path(folder) / USAGE_FILE
    with _LOCK:
        lock = _FILE_LOCKS.setdefault(path.resolve(), threading.Lock())
    with lock:
        try:
            now = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except ValueError:
            now = {}   # only ever written atomically: a file of another's making
        if not isinstance(now, dict):
            now = {}
        for k in COUNTERS:
            now[k] = int(now.get(k) or 0) + int(counts.get(k) or 0)
        now["wall_s"] = round(float(now.get("wall_s") or 0.0) + float(counts.get("wall_s")
                                                                     or 0.0), 3)
        now.update(about)
        with atomic_open(path) as fh:
            json.dump(now, fh, indent=2, sort_keys=True)
        return now


def append_answers(folder: Path, records: list[dict]) -> None:
    """``records`` (one per answer of a call) appended to ``folder/answers.jsonl`` and
    flushed, whole lines, one writer at a time."""
    path = Path(folder) / ANSWERS_FILE
    with _LOCK:
        lock = _FILE_LOCKS.setdefault(path.resolve(), threading.Lock())
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()


def forget(folder: Path) -> None:
    """Drop this process's open cache of ``folder`` (after the file was deleted)."""
    with _LOCK:
        _OPEN.pop((Path(folder) / CACHE_FILE).resolve(), None)


__all__ = ["ANSWERS_FILE", "CACHE_FILE", "USAGE_FILE", "RequestCache", "add_usage",
           "append_answers", "open_cache", "read_usage", "request_key", "forget"]
