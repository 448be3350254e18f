"""The model protocol: one interface for every model in the loop, whatever serves it
(a toolkit's checkpoint, CTranslate2, a Hugging Face folder, a program behind the
command protocol, recorded or replayed answers).

A model answers the command protocol's tasks (docs/command_protocol.md):

* ``translate(sources)``: one output per source, in order;
* ``classify(inputs)``: one class name per input, in order; an input is a string, or a
  sentence pair (:data:`Pair`: premise, hypothesis, and for a model that reads
  per-word streams beside the words, :attr:`Model.pair_inputs`, a mapping of them);
* ``features(inputs)``: the representation below the output layer, a tensor of shape
  ``[len(inputs), d]``;
* ``embed(tokens)``: the source-side input embeddings of the tokens it knows.

What it can answer is declared, not probed: :attr:`Model.capabilities`, a subset of
:data:`TASKS`.  Asking a model for a task it does not declare is
:class:`Unavailable` (the analysis is left out with the reason); a model that replays
stored answers (``replays``) refuses the tests that need the model itself
(:class:`InTheLoop`).

A caller asks by a :class:`Request`: the task, its inputs, the label that names them
(e.g. ``test_copy``; a model that keeps what it is asked, ``compsuite export``, names
its files so) and the unit they belong to; :meth:`Model.respond` takes it
(:class:`ModelBase` hands it to the task's method).  The counting lives in one
wrapper, :class:`Counting` (``calls``, the requests for outputs; ``batches``, the
forward passes, which a model says with :func:`batch_done`, or :func:`count_batches`
around its toolkit's one-batch call), and those batches move the bar of a long step
(:func:`progress`).  A model itself carries none of these.
:class:`ModelBase` gives every attribute its default.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import (Any, Callable, Iterator, Mapping, Protocol, Sequence, Union,
                    runtime_checkable)

from compsuite.foundation.errors import UserError

#: the tasks of the command protocol, in its order
TASKS = ("translate", "classify", "features", "embed")
#: a classifier's input: a text, or a sentence pair (premise, hypothesis[, streams])
Pair = Union[tuple[str, str], tuple[str, str, Mapping[str, str]]]
Input = Union[str, Pair]


class Unavailable(UserError):
    """The model cannot give what an analysis asks (its embeddings, its
    representations): the analysis is left out, with the reason, and the rest of the
    test is scored."""


class InTheLoop(Unavailable):
    """A test needs the model itself (its outputs fed back, its checkpoints over
    training, its representations), and the model given is answers read from files."""


def in_the_loop(test: str, why: str) -> InTheLoop:
    """The error saying that ``test`` needs the model itself, and ``why``."""
    return InTheLoop(f"{test} needs the model in the loop ({why}): answer files cannot "
                     "say it; run it with the model, e.g. a program behind the command "
                     "protocol (--model-cmd, or a run with toolkit: command)")


@dataclass(frozen=True)
class Request:
    """One request to a model: a task of :data:`TASKS` and its ``inputs`` (sources,
    classifier inputs, or the tokens to embed), the ``label`` that names them (e.g.
    ``test_copy``, or what a progress bar says), and the ``unit`` they belong to (a
    unit's path, where known)."""

    task: str
    inputs: Sequence[Any]
    label: str | None = None
    unit: str | None = None

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"{self.task!r} is not a task of the command protocol "
                             f"({', '.join(TASKS)})")


@runtime_checkable
class Model(Protocol):
    name: str
    #: what it answers: a subset of :data:`TASKS`
    capabilities: frozenset[str]
    #: True: it answers from stored answers (a test needing the model itself refuses it)
    replays: bool
    #: the per-word streams each sentence pair carries for it (``classify``)
    pair_inputs: tuple[str, ...]

    def respond(self, request: Request): ...

    def translate(self, sources: list[str]) -> list[str]: ...

    def classify(self, inputs: Sequence[Input]) -> list[str]: ...

    def features(self, inputs: Sequence[Input]): ...

    def embed(self, tokens: list[str]) -> dict[str, list[float]]: ...

    def close(self) -> None: ...


class ModelBase:
    """Every attribute of :class:`Model` at its default, and the tasks a subclass does
    not declare answered with :class:`Unavailable`."""

    name: str = "a model"
    capabilities: frozenset[str] = frozenset()
    replays: bool = False
    pair_inputs: tuple[str, ...] = ()

    def respond(self, request: Request):
        """The answer to ``request``: its task's method on its inputs."""
        return getattr(self, request.task)(request.inputs)

    def _cannot(self, task: str):
        return Unavailable(f"{self.name} does not answer {task}")

    def translate(self, sources: list[str]) -> list[str]:
        raise self._cannot("translate")

    def classify(self, inputs: Sequence[Input]) -> list[str]:
        raise self._cannot("classify")

    def features(self, inputs: Sequence[Input]):
        raise self._cannot("features")

    def embed(self, tokens: list[str]) -> dict[str, list[float]]:
        raise self._cannot("embed")

    def refused(self, error: InTheLoop) -> InTheLoop:
        """``error``, for a test that needs the model itself; a model that keeps what
        it is asked notes it first (an export lists those tests)."""
        return error

    def close(self) -> None:
        """Stop what the model runs (a program's process); most need nothing."""


def respond(model: Model, request: Request):
    """``model.respond(request)``; a model without ``respond`` (an object with the
    task's method only) answers by that method on the request's inputs."""
    if hasattr(model, "respond"):
        return model.respond(request)
    return getattr(model, request.task)(request.inputs)


def require_model(model: Model, test: str, why: str) -> None:
    """Refuse a model that only replays stored answers (``model.replays``) for a test
    that needs the model in the loop: ``test`` and ``why`` say which and why."""
    if model.replays:
        raise model.refused(in_the_loop(test, why))


#: what a task gives, in messages
TASK_WORDS = {"embed": "input embeddings", "features": "representations"}


def require(model: Model, task: str, test: str, why: str) -> None:
    """Before asking ``model`` for ``task`` (a representation: ``features``, ``embed``)
    in ``test``: a model that replays stored answers refuses it (:func:`require_model`),
    one that does not declare the task is :class:`Unavailable`."""
    require_model(model, test, why)
    if task not in model.capabilities:
        raise Unavailable(f"{model.name} gives no {TASK_WORDS.get(task, task)}")


#: in this thread: the :class:`Counting` wrapper answering a request now, and what moves
#: the bar of :func:`progress` (a callable told how many inputs a batch answered)
COUNTING: ContextVar[Counting | None] = ContextVar("compsuite_counting", default=None)
BAR: ContextVar[Callable[[int], Any] | None] = ContextVar("compsuite_bar", default=None)


def batch_done(sentences: int | None = None, batches: int = 1) -> None:
    """Said by a model while it answers: ``batches`` forward passes done, answering
    ``sentences`` inputs (None: they do not move the bar).  The :class:`Counting`
    wrapper asking counts them, and they move the bar of the :func:`progress` block
    around; a model asked otherwise says it to no one."""
    meter, bar = COUNTING.get(), BAR.get()
    if meter is not None:
        meter.batches += batches
    if sentences is not None and bar is not None:
        bar(sentences)


@contextmanager
def unmetered() -> Iterator[None]:
    """Within the block, what a model says with :func:`batch_done` is counted by no one
    and moves no bar (a wrapper that counts its own batches asks the model it wraps
    so)."""
    meter, bar = COUNTING.set(None), BAR.set(None)
    try:
        yield
    finally:
        COUNTING.reset(meter)
        BAR.reset(bar)


def count_batches(owner, method: str, size: Callable[..., int] | None = None) -> None:
    """Wrap ``owner.method`` (the toolkit's one-batch forward call) so that every call
    is a batch done (:func:`batch_done`); with ``size`` (the number of sentences of the
    batch, from the call's arguments), each batch done also moves the bar."""
    inner = getattr(owner, method)

    def one_batch(*args, **kwargs):
        from compsuite.processes import check_stop

        check_stop()  # a stopped suite ends here, also in the threads of side-by-side runs
        batch_done(None)
        out = inner(*args, **kwargs)
        if size is not None:
            batch_done(size(*args, **kwargs), batches=0)
        return out

    setattr(owner, method, one_batch)


class Counting:
    """The one wrapper through which a model is asked: it counts ``calls`` (the
    requests for outputs, ``translate`` and ``classify``) and ``batches`` (forward
    passes, as the model says them with :func:`batch_done`), and gives a request
    without a unit its ``unit``.  Asked while another counts (it is inside a wrapper
    that an outer one asks), it leaves the counting to that one.  Anything else is the
    wrapped model's (``name``, ``capabilities``, ``replays``, ``close``, ...), read
    and set through it."""

    OWN = frozenset({"wrapped", "unit", "calls", "batches"})

    def __init__(self, model: Model, unit: str | None = None):
        self.wrapped = model
        self.unit = unit
        self.calls = 0
        self.batches = 0

    def __getattr__(self, name: str):
        if name == "wrapped":   # not set yet (a copy being made)
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def __setattr__(self, name: str, value) -> None:
        if name in self.OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.wrapped, name, value)

    def respond(self, request: Request):
        """The wrapped model's answer to ``request``, counted."""
        if request.unit is None and self.unit is not None:
            request = Request(request.task, request.inputs, request.label, self.unit)
        if COUNTING.get() is not None:
            return respond(self.wrapped, request)
        if request.task in ("translate", "classify"):
            self.calls += 1
        token = COUNTING.set(self)
        try:
            return respond(self.wrapped, request)
        finally:
            COUNTING.reset(token)

    def translate(self, sources: list[str], label: str | None = None) -> list[str]:
        return self.respond(Request("translate", sources, label))

    def classify(self, inputs: Sequence[Input], label: str | None = None) -> list[str]:
        return self.respond(Request("classify", inputs, label))

    def features(self, inputs: Sequence[Input], label: str | None = None):
        return self.respond(Request("features", inputs, label))

    def embed(self, tokens: list[str], label: str | None = None) -> dict[str, list[float]]:
        return self.respond(Request("embed", tokens, label))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def counted(model: Model, unit: str | None = None) -> Counting:
    """``model`` in a :class:`Counting` wrapper (``model`` itself, if it is one)."""
    return model if isinstance(model, Counting) else Counting(model, unit)


def ask(model: Model, task: str, inputs: Sequence[Any], label: str | None = None):
    """``model``'s answer to ``task`` on ``inputs``, named ``label`` (a
    :class:`Request`), through its :class:`Counting` wrapper."""
    return counted(model).respond(Request(task, inputs, label))


@contextmanager
def progress(model: Model, total: int, desc: str, show: bool = False,
             unit: str = "sentence") -> Iterator[None]:
    """A progress bar (tqdm, on stderr, with an ETA) over the ``total`` inputs that
    ``model`` answers inside the block; nothing at all unless ``show``.  The batches
    it says done move it (:func:`batch_done`; ``unit``: what they answer); a model that
    says none fills it when the block ends."""
    if not show:
        yield
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit) as bar:
        # never past the total (a toolkit may translate a sentence in sub-batches)
        token = BAR.set(lambda n: bar.update(max(0, min(n, total - bar.n))))
        try:
            yield
        finally:
            BAR.reset(token)
        bar.update(max(0, total - bar.n))


@contextmanager
def closing(model: Model) -> Iterator[Model]:
    """``model`` for the block; one that runs a process (a program) is stopped when the
    block ends, others need nothing."""
    try:
        yield model
    finally:
        model.close()


def translate(translator: Model, sources: list[str], desc: str = "translate",
              show: bool = False) -> list[str]:
    """``translator``'s outputs for ``sources`` (one request, named ``desc``) with a bar
    over the sentences when ``show`` (:func:`progress`)."""
    with progress(translator, len(sources), desc, show):
        return ask(translator, "translate", sources, desc)
