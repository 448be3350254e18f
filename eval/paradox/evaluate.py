"""A trained model in the loop of the paradox tests: which checkpoints are tested, the
translations of a test's inputs (stored, so that a resumed evaluation does not translate
again), the consistency tests with the last model, overgeneralisation with every saved
one, and sacreBLEU on Flores-101 devtest.

OPUS models read and write Moses-tokenised BPE: their translator encodes inputs and
decodes outputs (``raw/codec.json``, :class:`compsuite.data_prep.paradox.opus.Codec`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from .metrics import score_test

CONSISTENCY_TESTS = ("np_vp", "s_conj_s", "substitutivity")
#: what a step of the overgeneralisation test counts (the kind of checkpoint tested), by
#: whether the training kept epochs
STEP_UNIT = {True: "epoch", False: "update"}


def read_test(folder: Path, test: str) -> tuple[list[str], list[dict]]:
    """A built test's inputs and samples (``<test>.en``, ``<test>.tsv``)."""
    from compsuite.data_prep.paradox.testsets import read_samples

    return read_samples(folder, test)


def saved_checkpoints(backend, run_dir: Path, by_epoch: bool) -> list[tuple[int, Path]]:
    """(step, checkpoint) of every model the training kept: the listed epochs' when it
    kept epochs (``save_epochs``: the backend's "epoch" checkpoints), else every
    ``--save-interval-updates``'s (its "update" ones)."""
    return [(c.at, c.path) for c in backend.checkpoints(run_dir, STEP_UNIT[by_epoch])]


def translator_loader(load: Callable, raw: Path) -> Callable:
    """``load(checkpoint)`` -> a translator; wrapped in the corpus's codec when the data
    folder has one (``raw/codec.json``: an OPUS corpus)."""
    if not (raw / "codec.json").is_file():
        return load
    from compsuite.data_prep.paradox.opus import Codec, CodecTranslator

    codec = Codec(raw)
    return lambda checkpoint: CodecTranslator(load(checkpoint), codec)


def stored(inputs: list[str], path: Path) -> list[str] | None:
    """The translations of ``inputs`` stored in ``path`` (None when there are none)."""
    from compsuite.foundation.io import read_lines

    if path.is_file():
        hyps = read_lines(path, allow_empty=True)
        if len(hyps) == len(inputs):
            return hyps
    return None


def translate_cached(translator, inputs: list[str], path: Path) -> list[str]:
    """Translations of ``inputs`` (one batched call), stored in ``path`` so that a resumed
    evaluation does not translate again."""
    from compsuite.foundation.io import write_lines

    from compsuite.models.protocol import ask

    hyps = stored(inputs, path)
    if hyps is None:
        hyps = ask(translator, "translate", list(inputs), path.stem)   # e.g. final-np_vp
        write_lines(path, hyps)
    return hyps


def flores_bleu(translator, folder: Path, out_dir: Path, show: bool = False) -> dict:
    """sacreBLEU of the model on Flores-101 devtest (plain text both sides); ``show``: a
    bar over the sentences translated."""
    import sacrebleu

    from compsuite.eval.metrics.signature import Signature
    from compsuite.models.protocol import progress
    from compsuite.foundation.io import read_lines

    sources, refs = read_lines(folder / "devtest.en"), read_lines(folder / "devtest.nl")
    path = out_dir / "flores-devtest.nl"
    hyps = stored(sources, path)
    if hyps is None:
        with progress(translator, len(sources), "translate Flores-101 devtest", show):
            hyps = translate_cached(translator, sources, path)
    bleu = sacrebleu.metrics.BLEU()
    score = bleu.corpus_score(hyps, [refs])
    return {"score": round(score.score, 2),
            "signature": Signature.from_sacrebleu("bleu", bleu.get_signature()).format(),
            "n": len(hyps)}


def consistency(translator, tests_dir: Path, out_dir: Path, synonym_forms: dict,
                show: bool = False) -> dict:
    """Each consistency test scored on the model's translations (``final-<test>.nl``);
    ``show``: one bar over the sentences of the tests still to translate."""
    from compsuite.models.protocol import progress

    tests = {test: read_test(tests_dir, test) for test in CONSISTENCY_TESTS}
    hyps_of = {test: stored(inputs, out_dir / f"final-{test}.nl")
               for test, (inputs, _) in tests.items()}
    todo = sum(len(tests[test][0]) for test, hyps in hyps_of.items() if hyps is None)
    with progress(translator, todo, "translate the consistency tests", show and todo > 0):
        for test, hyps in hyps_of.items():
            if hyps is None:
                hyps_of[test] = translate_cached(translator, tests[test][0],
                                                 out_dir / f"final-{test}.nl")
    out = {}
    for test, (inputs, samples) in tests.items():
        hyps = hyps_of[test]
        res = score_test(test, inputs, samples, hyps, synonym_forms=synonym_forms)
        out[test] = {"summary": res["summary"], "cells": res["cells"],
                     "signatures": res["signatures"]}
    return out


def overgeneralisation_by_step(load: Callable, checkpoints: list[tuple[int | None, Path]],
                               tests_dir: Path, out_dir: Path, idiom_keywords: dict,
                               unit: str, show: bool = False) -> list[dict]:
    """The overgeneralisation test scored with each checkpoint
    (``step<S>-overgeneralisation.nl``); ``unit``: what a step counts (update, epoch);
    ``show``: a bar over the checkpoints."""
    from tqdm import tqdm

    inputs, samples = read_test(tests_dir, "overgeneralisation")
    out = []
    for step, ck in tqdm(checkpoints, desc="overgeneralisation test per checkpoint",
                         unit="checkpoint", disable=not show):
        path = out_dir / f"step{step}-overgeneralisation.nl"
        hyps = stored(inputs, path)
        if hyps is None:    # a stored translation needs no model loaded
            hyps = translate_cached(load(str(ck)), inputs, path)
        res = score_test("overgeneralisation", inputs, samples, hyps,
                         idiom_keywords=idiom_keywords)
        out.append({"step": step, "unit": unit, "checkpoint": str(ck),
                    "summary": res["summary"], "signatures": res["signatures"]})
    return out
