"""The Hugging Face models' batching (compsuite/toolkits/hf/batching.py): inputs sorted by
length, outputs back in the inputs' order, and ``batch_size: auto`` halving on the
device's out-of-memory error until a batch fits."""
import pytest
import torch

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.models.decoding import decoding
from compsuite.toolkits.hf.batching import AUTO_START, Batcher, length_order


def test_length_order_is_longest_first_ties_in_input_order():
    assert length_order([2, 5, 2, 7, 5]) == [3, 1, 4, 0, 2]
    assert length_order([]) == []


def test_outputs_come_back_in_the_inputs_order():
    seen = []

    def call(chunk):
        seen.append(list(chunk))
        return [x.upper() for x in chunk]

    items = ["bb", "a", "dddd", "ccc", "e"]
    out = Batcher(2, 32, "cpu", "m").map(items, [len(x) for x in items], call)
    assert out == ["BB", "A", "DDDD", "CCC", "E"]
    assert seen == [["dddd", "ccc"], ["bb", "a"], ["e"]]   # longest first, padding-poor


def _oom(most):
    """A one-batch call that runs out of memory above ``most`` inputs."""
    calls = []

    def call(chunk):
        calls.append(len(chunk))
        if len(chunk) > most:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [x * 10 for x in chunk]
    return call, calls


def test_auto_halves_on_out_of_memory_and_keeps_the_size_found(capsys):
    b = Batcher("auto", 32, "cuda", "hf:m")
    assert b.size == AUTO_START
    call, calls = _oom(3)
    items = list(range(10))
    assert b.map(items, [1] * 10, call) == [x * 10 for x in items]
    assert calls == [10, 5, 2, 2, 2, 2, 2] and b.size == 2
    assert "batch of 10 did not fit" in capsys.readouterr().err
    calls.clear()
    b.map(items[:4], [1] * 4, call)           # later calls start at the size found
    assert calls == [2, 2]


def test_a_set_size_or_another_error_is_not_retried():
    call, _ = _oom(3)
    with pytest.raises(torch.OutOfMemoryError):
        Batcher(8, 32, "cuda", "m").map(list(range(10)), [1] * 10, call)

    def broken(chunk):
        raise ValueError("not memory")
    with pytest.raises(ValueError, match="not memory"):
        Batcher("auto", 32, "cuda", "m").map([1, 2], [1, 1], broken)


def test_one_input_that_does_not_fit_is_a_clear_error():
    call, _ = _oom(0)
    with pytest.raises(DataError, match=r"hf:m: one input does not fit the device's memory"):
        Batcher("auto", 32, "cuda", "hf:m").map([1, 2, 3], [1, 1, 1], call)


def test_auto_on_the_cpu_is_the_models_default():
    assert Batcher("auto", 32, "cpu", "m").size == 32


def test_generation_takes_auto_or_a_number():
    assert decoding({"batch_size": "auto"}).batch_or_auto(32) == "auto"
    assert decoding({"batch_size": "auto"}).batch(256) == 256   # the toolkits' own default
    assert decoding({"batch_size": 8}).batch_or_auto(32) == 8
    assert decoding({}).batch_or_auto(32) == 32
    with pytest.raises(ConfigError, match=r"generation: batch_size: an integer or one of auto, not 'big'"):
        decoding({"batch_size": "big"})
