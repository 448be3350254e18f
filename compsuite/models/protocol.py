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
(:class:`InTheLoop`).  A model counts its work: ``calls`` (calls made by the test) and
``batches`` (forward passes), so tests and benchmarks can show how they batch;
``progress`` (None, or what :func:`progress` sets: a callable told how many inputs
each batch answered) moves the bar of a long step; ``label`` names the inputs it is
about to be asked (:func:`name_inputs`), for a model that keeps them.
:class:`ModelBase` gives every attribute its default.
"""
from __future__ import annotations

from contextlib import contextmanager
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


@runtime_checkable
class Model(Protocol):
    name: str
    #: what it answers: a subset of :data:`TASKS`
    capabilities: frozenset[str]
    #: True: it answers from stored answers (a test needing the model itself refuses it)
    replays: bool
    #: the per-word streams each sentence pair carries for it (``classify``)
    pair_inputs: tuple[str, ...]
    calls: int
    batches: int
    progress: Callable[[int], Any] | None
    label: str | None
    unknown_words: int | None

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
    calls: int = 0
    batches: int = 0
    progress: Callable[[int], Any] | None = None
    label: str | None = None
    #: inputs' words outside the model's vocabulary, where it counts them (None: not)
    unknown_words: int | None = None

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


def count_batches(translator: Model, owner, method: str,
                  size: Callable[..., int] | None = None) -> None:
    """Wrap ``owner.method`` (the toolkit's one-batch forward call) so that every call
    adds one to ``translator.batches``; with ``size`` (the number of sentences of the
    batch, from the call's arguments), each batch done also moves the translator's
    ``progress`` (a callable given the sentences done, or None: see :func:`progress`)."""
    inner = getattr(owner, method)

    def counted(*args, **kwargs):
        from compsuite.processes import check_stop

        check_stop()  # a stopped suite ends here, also in the threads of side-by-side runs
        translator.batches += 1
        out = inner(*args, **kwargs)
        if size is not None and translator.progress is not None:
            translator.progress(size(*args, **kwargs))
        return out

    setattr(owner, method, counted)


@contextmanager
def progress(translator: Model, total: int, desc: str, show: bool = False,
             unit: str = "sentence") -> Iterator[None]:
    """A progress bar (tqdm, on stderr, with an ETA) over the ``total`` sentences that
    the ``translate`` calls made inside the block translate; nothing at all unless
    ``show``.  The suite's models move it after each batch (their ``progress``
    attribute; ``unit``: what they answer); a model that does not fills it when the
    block ends."""
    name_inputs(translator, desc)   # a model that keeps what it is asked names it so
    if not show:
        yield
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit) as bar:
        # never past the total (a toolkit may translate a sentence in sub-batches)
        translator.progress = lambda n: bar.update(max(0, min(n, total - bar.n)))
        try:
            yield
        finally:
            translator.progress = None
        bar.update(max(0, total - bar.n))


@contextmanager
def closing(model: Model) -> Iterator[Model]:
    """``model`` for the block; one that runs a process (a program) is stopped when the
    block ends, others need nothing."""
    try:
        yield model
    finally:
        model.close()


def name_inputs(model: Model, label: str) -> None:
    """Tell a model what the next inputs are, e.g. ``test_copy`` (a model that keeps
    what it is asked, ``compsuite export``, names its files so)."""
    model.label = label


def translate(translator: Model, sources: list[str], desc: str = "translate",
              show: bool = False) -> list[str]:
    """``translator.translate(sources)`` (one call) with a bar over the sentences when
    ``show`` (:func:`progress`)."""
    with progress(translator, len(sources), desc, show):
        return translator.translate(sources)
