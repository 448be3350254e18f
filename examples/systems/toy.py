"""What the toy systems of this folder share: the ``command`` model protocol's loop
(JSON lines over stdin and stdout) and the corruption rule.

The protocol: the suite starts the program once and writes one request per line,
``{"task": "translate", "inputs": [...]}``; the program answers each with one line,
``{"outputs": [...]}`` (exactly one output per input, in order) or ``{"error":
"message"}``, flushes, and exits when its stdin closes.  Tasks: ``translate`` (source
strings -> output strings), ``classify`` (strings, or ``[premise, hypothesis]`` arrays
-> class names), ``features`` (as ``classify`` -> one list of floats per input) and
``embed`` (single tokens -> a vector or null each).  :func:`serve` runs that loop for a
program's handlers; anything a handler prints goes to stderr, so stdout carries the
answers alone.

The corruption rule (``--corrupt PERCENT``): the answer to an input is corrupted when
:func:`corrupted` says so, a stable function of the input alone (the SHA-256 of its JSON
text), so a test computes the expected share from the inputs with the same function.
A corrupted translation is the correct one with a fixed wrong token appended
(:func:`corrupt_translation`: exact match certainly fails, by one extra token); a
corrupted class is the next class in the sorted label set (:func:`next_class`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

#: the environment variables the suite sets for a program
DATA_VAR = "COMPSUITE_DATA"    # the dataset's raw folder (raw files and manifest.json)
TEXT_VAR = "COMPSUITE_TEXT"    # its plain-text folder, when the dataset has one


class RequestError(ValueError):
    """A request the program cannot answer (answered as ``{"error": ...}``)."""


# ----------------------------------------------------------------------------- corruption
def corrupted(item: Any, percent: float) -> bool:
    """Whether the answer to ``item`` (one input exactly as the request holds it: a
    string, or a ``[premise, hypothesis]`` list) is corrupted at ``percent``:
    ``int(sha256(json.dumps(item, ensure_ascii=False)), 16) % 100 < percent``."""
    key = json.dumps(item, ensure_ascii=False).encode("utf-8")
    return int(hashlib.sha256(key).hexdigest(), 16) % 100 < percent


def corrupted_share(items: Iterable[Any], percent: float) -> tuple[int, int]:
    """(corrupted, total) over ``items``: what a test expects a corrupting program to
    get wrong."""
    items = list(items)
    return sum(corrupted(x, percent) for x in items), len(items)


def corrupt_translation(output: str, extra: str) -> str:
    """A corrupted translation: ``output`` with the token ``extra`` appended (``extra``
    alone for an empty output).  It has one token more than ``output``, so it differs
    from it as tokens and as text with whitespace removed."""
    return f"{output} {extra}" if output.strip() else extra


def next_class(label: str, labels: Iterable[str]) -> str:
    """The class after ``label`` in the sorted label set (the first after the last)."""
    order = sorted(set(labels))
    if len(order) < 2:
        raise RequestError("a corrupted class needs at least two classes")
    if label not in order:
        return order[0]
    return order[(order.index(label) + 1) % len(order)]


def one_hot(label: str, labels: Sequence[str]) -> list[float]:
    """A deterministic feature vector for a class: 1.0 at its index in ``labels``."""
    return [1.0 if x == label else 0.0 for x in labels]


# ----------------------------------------------------------------------------- environment
def data_folder() -> Path:
    """``COMPSUITE_DATA``: the raw folder of the dataset being evaluated."""
    value = os.environ.get(DATA_VAR)
    if not value:
        raise SystemExit(f"{DATA_VAR} is not set: the suite sets it to the dataset's raw "
                         "folder (run the program through the suite, or set it yourself)")
    path = Path(value)
    if not path.is_dir():
        raise SystemExit(f"{DATA_VAR}={value}: no such folder")
    return path


def text_folder() -> Path | None:
    """``COMPSUITE_TEXT``: the dataset's plain-text folder, or None when unset."""
    value = os.environ.get(TEXT_VAR)
    return Path(value) if value and Path(value).is_dir() else None


def note(message: str) -> None:
    """A line on stderr (stdout is the protocol's)."""
    print(f"[{Path(sys.argv[0]).name}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- the loop
def arguments(description: str | None) -> argparse.ArgumentParser:
    """The options every toy system takes (``--corrupt``); a program adds its own."""
    ap = argparse.ArgumentParser(description=(description or "").split("\n\n")[0])
    ap.add_argument("--corrupt", type=percentage, default=0.0, metavar="PERCENT",
                    help="corrupt the answers to this share of inputs (0-100, default 0; "
                         "which inputs: examples/systems/toy.py, corrupted())")
    return ap


def percentage(value: str) -> float:
    try:
        p = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 <= p <= 100:
        raise argparse.ArgumentTypeError(f"a percentage from 0 to 100, not {value}")
    return p


def answer(handlers: dict[str, Callable[[list], list]], line: str) -> dict:
    """The answer to one request line."""
    try:
        req = json.loads(line)
    except json.JSONDecodeError as e:
        return {"error": f"not a JSON line: {e}"}
    if not isinstance(req, dict) or not isinstance(req.get("task"), str) \
            or not isinstance(req.get("inputs"), list):
        return {"error": 'a request is {"task": "...", "inputs": [...]}'}
    task, inputs = req["task"], req["inputs"]
    if task not in handlers:
        return {"error": f"unsupported task {task!r} (this program answers "
                         f"{', '.join(sorted(handlers))})"}
    try:
        outputs = handlers[task](inputs)
    except RequestError as e:
        return {"error": str(e)}
    except Exception as e:  # noqa: BLE001  (the suite shows the message; the loop goes on)
        return {"error": f"{type(e).__name__}: {e}"}
    if len(outputs) != len(inputs):   # a bug of the program, not of the request
        return {"error": f"internal error: {len(outputs)} outputs for {len(inputs)} inputs"}
    return {"outputs": outputs}


def serve(handlers: dict[str, Callable[[list], list]]) -> int:
    """Answer requests from stdin until it closes; returns the exit status (0)."""
    stdin = sys.stdin
    out = sys.stdout
    for stream in (stdin, out):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")
    sys.stdout = sys.stderr   # a stray print must not corrupt the protocol
    try:
        while True:
            line = stdin.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            out.write(json.dumps(answer(handlers, line)) + "\n")
            out.flush()
    finally:
        sys.stdout = out


def strings(inputs: list, what: str = "inputs") -> list[str]:
    """The inputs, checked to be strings."""
    for i, x in enumerate(inputs):
        if not isinstance(x, str):
            raise RequestError(f"{what}[{i}]: a string, not {type(x).__name__}")
    return inputs
