"""Progress bars of the long evaluation steps: a bar over the sentences a translator
translates (moved batch by batch), shown only when asked (library calls and tests stay
quiet), and the steps that use it."""
import pytest

from compsuite.data_prep.pcfgset import interpret
from compsuite.models.protocol import (BAR, ModelBase, count_batches, counted, progress,
                                       translate)


class Batched(ModelBase):
    """A translator of the suite's shape: the 'toolkit' (``step``) sees batches of 3,
    counted by :func:`count_batches`, which moves the bar."""
    name = "batched"

    def __init__(self):
        self.seen = []
        count_batches(self, "step", size=lambda batch: len(batch))

    def step(self, batch):
        self.seen.append(len(batch))
        return [s.upper() for s in batch]

    def translate(self, sources):
        return [o for i in range(0, len(sources), 3) for o in self.step(sources[i:i + 3])]


class Plain(ModelBase):
    """A translator that reports no batches."""
    name = "plain"

    def translate(self, sources):
        return list(sources)


def test_quiet_by_default(capsys):
    tr = counted(Batched())
    assert translate(tr, list("abcdefghij")) == list("ABCDEFGHIJ")
    assert capsys.readouterr().err == ""
    assert BAR.get() is None and (tr.calls, tr.batches) == (1, 4)


def test_the_bar_moves_batch_by_batch(capsys):
    tr = counted(Batched())
    moved = []
    with progress(tr, 10, "translate test", show=True):
        bar_update = BAR.get()
        BAR.set(lambda n: (moved.append(n), bar_update(n)))
        assert tr.translate(list("abcdefghij")) == list("ABCDEFGHIJ")
    assert moved == [3, 3, 3, 1] and BAR.get() is None
    err = capsys.readouterr().err
    assert "translate test" in err and "10/10" in err and "sentence" in err


def test_one_bar_over_several_calls_and_never_past_its_total(capsys):
    tr = Batched()
    with progress(tr, 5, "both", show=True):
        tr.translate(list("abc"))
        tr.translate(list("defg"))      # 7 sentences: the bar stops at its total
    err = capsys.readouterr().err
    assert "5/5" in err and "7/5" not in err


def test_a_translator_without_batches_fills_its_bar_at_the_end(capsys):
    assert translate(Plain(), list("abcde"), "plain", show=True) == list("abcde")
    assert "5/5" in capsys.readouterr().err


def test_localism_one_bar_over_whole_and_unrolled_lines(capsys):
    from compsuite.eval.pcfgset import localism

    class Oracle(Batched):
        def step(self, batch):
            return [interpret(s) for s in batch]

    samples = [localism.Sample("copy A1 B1", "A1 B1", ["copy A1 B1"], [1]),
               localism.Sample("reverse copy A1 B1", "B1 A1", ["copy A1 B1", "reverse *1"],
                               [1, 2])]
    quiet = localism.run(Oracle(), samples)
    assert capsys.readouterr().err == ""
    shown = localism.run(Oracle(), samples, "localism test", show=True)
    assert shown == quiet and shown["accuracy_unrolled"] == 1.0
    assert "localism test" in (err := capsys.readouterr().err) and "5/5" in err


def test_overgeneralisation_one_bar_over_checkpoints(capsys, tmp_path):
    from compsuite.eval.pcfgset import overgeneralisation as og

    ckpts = [("step", n, tmp_path / f"model_step_{n}.pt") for n in (1, 2, 3)]
    args = (ckpts, lambda p: Plain(), ["a b"], ["a b"], ["b a"])
    assert og.track(*args)["final"]["memorisation"] == 1.0
    assert capsys.readouterr().err == ""
    og.track(*args, progress=True, desc="exception inputs per checkpoint")
    err = capsys.readouterr().err
    assert "exception inputs per checkpoint" in err and "3/3" in err and "checkpoint/s" in err


def test_a_classifier_moves_the_bar_per_batch():
    """The fairseq classifier says each batch's size (no model needed)."""
    from compsuite.toolkits.fairseq.classifier import FairseqClassifier

    clf = FairseqClassifier.__new__(FairseqClassifier)
    moved = []
    token = BAR.set(moved.append)
    for n in (4, 4, 1):
        clf._done(n)
    assert moved == [4, 4, 1]
    BAR.reset(token)
    clf._done(3)
    assert moved == [4, 4, 1]


@pytest.mark.parametrize("show", [False, True])
def test_paradox_consistency_bar(show, capsys, tmp_path, monkeypatch):
    """One bar over the sentences of the three consistency tests still to translate (a
    stored test's translations are read back, not counted)."""
    from compsuite.eval.paradox import evaluate as ev

    monkeypatch.setattr(ev, "read_test", lambda folder, t: ([f"{t} {i}" for i in range(4)], []))
    monkeypatch.setattr(ev, "score_test", lambda test, inputs, samples, hyps, **kw: {
        "summary": hyps, "cells": [], "signatures": {}})
    (tmp_path / "final-np_vp.nl").write_text("".join(f"stored {i}\n" for i in range(4)))
    tr = counted(Batched())
    out = ev.consistency(tr, tmp_path, tmp_path, {}, show=show)
    assert out["np_vp"]["summary"] == [f"stored {i}" for i in range(4)]
    assert out["s_conj_s"]["summary"] == [f"S_CONJ_S {i}" for i in range(4)]
    assert tr.calls == 2 and tr.seen == [3, 1, 3, 1]
    err = capsys.readouterr().err
    assert ("8/8" in err and "consistency tests" in err) if show else err == ""
