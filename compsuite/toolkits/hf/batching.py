"""How the Hugging Face translator and classifier batch their inputs.

Inputs are sorted by length, longest first, and cut into batches of that order, so that
a batch pads its inputs to nearly their own length (padding is work the model does for
nothing); the outputs come back in the inputs' order.  The longest batch goes first, so
a batch size the device cannot hold fails at once rather than after an hour.

``batch_size: auto`` (a study's or a command's ``generation``) sizes the batches to the
device, as lm-evaluation-harness does: on a GPU, start at :data:`AUTO_START` (or the
number of inputs, if fewer) and halve on an out-of-memory error until a batch fits; the
size found is kept for the model's later calls.  On the CPU, where no allocation fails
before the machine swaps, ``auto`` is the model's own default.

Sorting changes which inputs share a batch, so a batched model's outputs can differ in
the last bits of a float (padding changes the shapes the kernels see); greedy outputs
of the suite's stand-ins are identical either way (tests/test_hf_backend.py).
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence, TypeVar

from compsuite.foundation.errors import DataError

T = TypeVar("T")
#: the first batch size ``auto`` tries on a GPU
AUTO_START = 512


def length_order(lengths: Sequence[int]) -> list[int]:
    """Input positions, longest first (ties in input order)."""
    return sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is the device running out of memory."""
    import torch

    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError",
                                                              None)
    if oom is not None and isinstance(error, oom):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


class Batcher:
    """Runs a model's one-batch call over every input, sorted by length (see the module
    docstring).  ``size``: a number, or ``"auto"`` with ``default`` the size on the CPU;
    ``device``: where the model is (``cuda`` or ``cpu``); ``name`` names the model in
    errors and notes."""

    def __init__(self, size: int | str, default: int, device: str, name: str):
        self.auto = size == "auto"
        self.size = (AUTO_START if device == "cuda" else default) if self.auto else int(size)
        self.device, self.name = device, name

    def map(self, items: Sequence[T], lengths: Sequence[int],
            call: Callable[[list[T]], list]) -> list:
        """``call`` on batches of ``items`` in length order; one output per item, in
        ``items``' order."""
        order = length_order(lengths)
        out: list = [None] * len(items)
        start = 0
        while start < len(order):
            part = order[start:start + self.size]
            try:
                got = call([items[i] for i in part])
            except Exception as e:
                if not (self.auto and self.device == "cuda" and out_of_memory(e)):
                    raise
                self._halve(len(part), e)
                continue
            for i, o in zip(part, got):
                out[i] = o
            start += len(part)
        return out

    def _halve(self, tried: int, error: BaseException) -> None:
        import torch

        torch.cuda.empty_cache()
        if tried <= 1:
            raise DataError(f"{self.name}: one input does not fit the device's memory "
                            f"({str(error).splitlines()[0]})") from None
        self.size = max(1, min(self.size, tried) // 2)
        print(f"compsuite: note: {self.name}: batch of {tried} did not fit the device's "
              f"memory; batch size {self.size} (batch_size: auto)", file=sys.stderr, flush=True)
