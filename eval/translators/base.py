"""The translator protocol.

A translator loads a checkpoint once and maps a list of sources to a list of
outputs, batching internally with the toolkit's own inference code.  It counts its
work: ``calls`` (``translate`` calls made by the test) and ``batches`` (forward
passes of the toolkit), so tests and benchmarks can show how they batch.  The
suite's translators also have ``progress`` (None, or what :func:`progress` sets: a
callable told how many sentences each batch translated), for the bar of a long step.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, Protocol, runtime_checkable

from compsuite.foundation.errors import UserError


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


def require_model(model, test: str, why: str) -> None:
    """Refuse a model that only replays stored answers (``model.replays``) for a test
    that needs the model in the loop: ``test`` and ``why`` say which and why."""
    if getattr(model, "replays", False):
        raise in_the_loop(test, why)


@runtime_checkable
class Translator(Protocol):
    name: str
    calls: int
    batches: int

    def translate(self, sources: list[str]) -> list[str]:
        """Outputs for ``sources``, one per source, in order."""
        ...


@runtime_checkable
class HasEmbeddings(Protocol):
    """What a test needing representations asks of a translator besides translating
    (the fairseq, OpenNMT-py, CTranslate2 and Hugging Face translators provide it; a
    program's client asks the program, answer files have none)."""

    def embeddings(self, tokens: list[str]) -> dict[str, list[float]]:
        """Source-side input embeddings of the given tokens (those in the vocabulary)."""
        ...


def count_batches(translator, owner, method: str,
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
        if size is not None and getattr(translator, "progress", None) is not None:
            translator.progress(size(*args, **kwargs))
        return out

    setattr(owner, method, counted)


@contextmanager
def progress(translator, total: int, desc: str, show: bool = False,
             unit: str = "sentence") -> Iterator[None]:
    """A progress bar (tqdm, on stderr, with an ETA) over the ``total`` sentences that
    the ``translate`` calls made inside the block translate; nothing at all unless
    ``show``.  The suite's translators move it after each batch (their ``progress``
    attribute), and so do its classifiers (``unit``: what they classify); another
    model's bar fills when the block ends."""
    name_inputs(translator, desc)   # a model that keeps what it is asked names it so
    if not show:
        yield
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit) as bar:
        hooked = hasattr(translator, "progress")
        if hooked:
            # never past the total (a toolkit may translate a sentence in sub-batches)
            translator.progress = lambda n: bar.update(max(0, min(n, total - bar.n)))
        try:
            yield
        finally:
            if hooked:
                translator.progress = None
        bar.update(max(0, total - bar.n))


@contextmanager
def closing(model) -> Iterator:
    """``model`` for the block; one that runs a process (a program) is stopped when the
    block ends, others need nothing."""
    try:
        yield model
    finally:
        close = getattr(model, "close", None)
        if close is not None:
            close()


def name_inputs(model, label: str) -> None:
    """Tell a model that keeps what it is asked (``compsuite export``) what the next
    inputs are, e.g. ``test_copy``; other models ignore it."""
    if hasattr(model, "label"):
        model.label = label


def translate(translator, sources: list[str], desc: str = "translate",
              show: bool = False) -> list[str]:
    """``translator.translate(sources)`` (one call) with a bar over the sentences when
    ``show`` (:func:`progress`)."""
    with progress(translator, len(sources), desc, show):
        return translator.translate(sources)
