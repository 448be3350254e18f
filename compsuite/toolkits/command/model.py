"""Any program as a model in the loop: the ``command`` protocol.

The suite starts the user's program once (``--model-cmd "python my_model.py"``, or a
run with ``toolkit: command`` in a study's YAML) and exchanges batches with it as JSON
lines over its stdin and stdout.  Each request is one line::

    {"task": "translate", "inputs": ["source one", "source two"]}

and each answer one line, with one output per input, in order::

    {"outputs": ["output one", "output two"]}

or ``{"error": "why"}`` (e.g. for a task the program does not do).  Tasks:
``translate`` (strings -> strings), ``classify`` (strings, or ``[premise,
hypothesis]`` pairs -> class names), ``features`` (the same inputs -> one vector of
numbers each: the representation an analysis compares) and ``embed`` (single tokens ->
a vector each, or null for a token the model does not know).  The program flushes
after each answer and exits when its stdin closes; what it writes to stderr is kept
(the last lines are quoted when it fails).  The page ``docs/command_protocol.md`` has
an example program.

Requests and answers are UTF-8.  A program that exits, answers a line that is not
UTF-8 (named by its request) or not a JSON object, answers the wrong number of items,
or takes longer than ``timeout`` seconds for one batch is a :class:`CommandError`
naming the program and what it did.  Like the toolkit
translators, a model counts ``calls`` (``translate``/``predict`` calls of the test) and
``batches`` (requests sent), and moves ``progress`` after each batch.
"""
from __future__ import annotations

import json
import os
import queue
import shlex
import subprocess
import threading
import time
from collections import deque
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Sequence

from compsuite.foundation.errors import UserError
from compsuite.models.protocol import TASKS, ModelBase, Unavailable, batch_done


class CommandError(UserError, RuntimeError):
    """The program broke the protocol, failed, or took too long."""


class CommandRefused(CommandError, Unavailable):
    """The program answered ``{"error": ...}``: it does not do what was asked (an
    analysis that needs ``embed`` or ``features`` is then left out, with the reason)."""


class CommandModel(ModelBase):
    """A program speaking the protocol, as a translator and a classifier.

    ``command``: the program and its arguments (a string is split like a shell line);
    ``batch_size``: inputs per request; ``timeout``: seconds one request may take
    (None: no limit); ``env``: variables added to the program's environment (the
    suite's runs set ``COMPSUITE_DATA``, the dataset's raw folder); ``cwd``: its
    working folder."""

    #: a program may answer every task of the protocol (or refuse one: Unavailable)
    capabilities = frozenset(TASKS)

    def __init__(self, command: str | Sequence[str], batch_size: int = 64,
                 timeout: float | None = 600.0, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise CommandError("the model command is empty")
        self.command = shlex.join(self.argv)
        self.name = f"command:{self.command}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.env = dict(env or {})
        self.cwd = cwd
        #: the requests sent since the program started (an error names one by its number)
        self._sent = 0
        self._proc: subprocess.Popen | None = None
        self._stack: ExitStack | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=20)
        self._readers: list[threading.Thread] = []
        #: why the program was stopped (a failure, a timeout): it is not started again
        self._broken: str | None = None

    # ------------------------------------------------------------------ the protocol
    def translate(self, sources: Sequence[str]) -> list[str]:
        """One output string per source."""
        return [self._text(o, "translate") for o in self._run("translate", list(sources))]

    def classify(self, inputs: Sequence) -> list[str]:
        """The class of each input (a string, or a (premise, hypothesis) pair)."""
        return [self._text(o, "classify") for o in self._run("classify", _pairs(inputs))]

    def features(self, inputs: Sequence):
        """The program's vectors for the inputs, as a float tensor [len(inputs), d]."""
        import torch

        vectors = self._run("features", _pairs(inputs))
        return torch.tensor(self._vectors(vectors, "features", allow_null=False),
                            dtype=torch.float32)

    def embed(self, tokens: list[str]) -> dict[str, list[float]]:
        """The program's vector of each token it knows (null: a token it does not)."""
        vectors = self._vectors(self._run("embed", list(tokens)), "embed", allow_null=True)
        return {t: v for t, v in zip(tokens, vectors) if v is not None}

    def close(self, wait: bool = True) -> None:
        """Close the program's stdin and wait for it to exit (it is ended after a few
        seconds if it does not; at once without ``wait``)."""
        if self._proc is None:
            return
        proc, stack = self._proc, self._stack
        self._proc = self._stack = None
        if not wait:   # ended first: a write blocked on a full pipe then fails at once
            stack.close()
        try:
            proc.stdin.close()
        except OSError:
            pass
        if wait:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            stack.close()   # ends the program's process group if it is still running

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort at interpreter exit
        try:
            self.close(wait=False)
        except BaseException:   # a stop (Ctrl-C) while collecting: nothing to add
            pass

    # ------------------------------------------------------------------ internals
    def _run(self, task: str, inputs: list) -> list:
        out: list = []
        for i in range(0, len(inputs), self.batch_size):
            chunk = inputs[i:i + self.batch_size]
            out += self._ask(task, chunk, i)
            batch_done(len(chunk), batches=0)   # counted when it was sent
        return out

    def _ask(self, task: str, inputs: list, first: int = 0) -> list:
        from compsuite.processes import check_stop

        check_stop()
        proc = self._started()
        self._sent += 1
        batch_done(None)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        request = json.dumps({"task": task, "inputs": inputs}, ensure_ascii=False) + "\n"
        sent: list[BaseException | None] = []
        # written from a thread: a program that stops reading cannot block the suite
        # beyond the timeout (a request can be larger than the pipe's buffer)
        writer = threading.Thread(target=_send, args=(proc.stdin, request, sent.append),
                                  daemon=True)
        writer.start()
        writer.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if writer.is_alive():
            raise self._timed_out(task, len(inputs), "reading")
        if sent and sent[0] is not None:
            raise self._failure(f"exited before it read the {task} request")
        try:
            line = self._lines.get(timeout=None if deadline is None
                                   else max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise self._timed_out(task, len(inputs), "answering") from None
        if line is None:
            raise self._failure(f"exited without answering {article(task)} request")
        return self._outputs(self._decoded(line, task, first, len(inputs)), task, len(inputs))

    def _decoded(self, raw: bytes, task: str, first: int, n: int) -> str:
        """An answer line as text; one that is not UTF-8 is an error naming the request
        (counted from the program's start) and the inputs it answered."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CommandError(
                f"{self.name}: its answer to {task} request {self._sent} (inputs "
                f"{first + 1}-{first + n} of this call) is not valid UTF-8 (byte "
                f"0x{raw[e.start]:02x} at offset {e.start}: {e.reason}); the protocol's "
                "lines are UTF-8 (in Python, sys.stdout.reconfigure(encoding='utf-8') "
                "or json.dumps' default ensure_ascii=True)") from None

    def _timed_out(self, task: str, n: int, doing: str) -> CommandError:
        message = (f"{self.name}: no answer to {article(task)} request of {n} inputs within "
                   f"{self.timeout:g} s (still {doing} it; the timeout: raise it with "
                   "--model-timeout or the run's `timeout`)")
        self._broken = message
        self.close(wait=False)
        return CommandError(message)

    def _outputs(self, line: str, task: str, n: int) -> list:
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise CommandError(f"{self.name}: answered a line that is not JSON: "
                               f"{_short(line)!r} (each answer is one line, "
                               '{"outputs": [...]}; print logs to stderr)') from None
        if not isinstance(answer, dict) or ("outputs" not in answer and "error" not in answer):
            raise CommandError(f'{self.name}: answered {_short(line)!r}, not {{"outputs": '
                               '[...]} or {"error": "..."}')
        if "error" in answer:
            raise CommandRefused(f"{self.name}: cannot {task}: {answer['error']}")
        outputs = answer["outputs"]
        if not isinstance(outputs, list) or len(outputs) != n:
            got = len(outputs) if isinstance(outputs, list) else type(outputs).__name__
            raise CommandError(f"{self.name}: answered {got} outputs to {article(task)} "
                               f"request of {n} inputs (one output per input, in order)")
        return outputs

    def _text(self, output: Any, task: str) -> str:
        if not isinstance(output, str):
            raise CommandError(f"{self.name}: {article(task)} output is "
                               f"{_short(json.dumps(output))}, not a string")
        return output

    def _vectors(self, vectors: list, task: str, allow_null: bool) -> list:
        for v in vectors:
            if v is None and allow_null:
                continue
            if not isinstance(v, list) or not all(isinstance(x, (int, float)) for x in v):
                raise CommandError(f"{self.name}: {article(task)} output is "
                                   f"{_short(json.dumps(v))}, not a list of numbers")
        sizes = {len(v) for v in vectors if v is not None}
        if len(sizes) > 1:
            raise CommandError(f"{self.name}: its {task} vectors differ in size "
                               f"({', '.join(map(str, sorted(sizes)))})")
        return vectors

    def _started(self) -> subprocess.Popen:
        if self._broken is not None:
            raise CommandError(f"{self._broken} (the program was stopped then; it is not "
                               "started again)")
        if self._proc is not None:
            if self._proc.poll() is not None:
                raise self._failure("has exited")
            return self._proc
        from compsuite.processes import child

        stack = ExitStack()
        try:
            proc = stack.enter_context(child(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=self.cwd,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env}))
        except FileNotFoundError:
            raise CommandError(f"{self.name}: no such program '{self.argv[0]}'") from None
        except PermissionError:
            raise CommandError(f"{self.name}: '{self.argv[0]}' is not executable") from None
        self._proc, self._stack = proc, stack
        # answers are decoded one by one (bad UTF-8 names its request); stderr is only
        # quoted, so what is not UTF-8 there is shown as U+FFFD
        self._readers = [threading.Thread(target=_pump, args=(proc.stdout, self._lines.put),
                                          daemon=True),
                         threading.Thread(target=_pump, args=(proc.stderr, _quoted(
                             self._stderr.append)), daemon=True)]
        for t in self._readers:
            t.start()
        return proc

    def _failure(self, what: str) -> CommandError:
        proc = self._proc
        rc = None
        if proc is not None:
            try:
                rc = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        readers = self._readers
        self.close()
        for t in readers[1:]:   # the last lines it wrote to stderr
            t.join(timeout=2)
        tail = "".join(line if line.endswith("\n") else line + "\n"
                       for line in self._stderr if line is not None).rstrip()
        status = f" (exit {rc})" if rc is not None else ""
        self._broken = f"{self.name}: {what}{status}"
        return CommandError(f"{self.name}: {what}{status}"
                            + (f"; its last stderr lines:\n{tail}" if tail else
                               "; it wrote nothing to stderr"))


def _send(stream, text: str, done) -> None:
    """Write ``text`` to ``stream`` (binary) as UTF-8 and flush; ``done(None)``, or
    ``done(error)``."""
    try:
        stream.write(text.encode("utf-8"))
        stream.flush()
    except (OSError, ValueError) as e:   # a closed pipe: the program has exited
        done(e)
        return
    done(None)


def _pump(stream, put) -> None:
    """Copy ``stream``'s lines (bytes, without the line end) to ``put``, then None at
    its end."""
    try:
        for line in stream:
            put(line.rstrip(b"\n").rstrip(b"\r"))
    except (OSError, ValueError):
        pass
    put(None)


def _quoted(put):
    """``put`` for lines of bytes, given them as text (invalid UTF-8 replaced)."""
    return lambda line: put(None if line is None else line.decode("utf-8", "replace"))


def _pairs(inputs: Sequence) -> list:
    """Inputs as JSON values: a string stays a string, a pair (or a triple with the raw
    extra streams) becomes a list."""
    return [x if isinstance(x, str) else list(x) for x in inputs]


def article(task: str) -> str:
    """``task`` with its article: "a translate", "an embed"."""
    return ("an " if task[:1] in "aeiou" else "a ") + task


def _short(text: str, most: int = 120) -> str:
    return text if len(text) <= most else text[:most] + "..."
