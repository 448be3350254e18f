"""PCFG SET's evaluations (Hupkes et al. 2020, sections 6 and 7), registered under the
names its YAML's tests use (``evaluation:``), and its accuracy breakdown.

Each evaluation scores one model on one test's files through the translator protocol
(``ctx.load()``), so it runs on every backend's models alike (fairseq, OpenNMT-py,
Hugging Face, a program, answer files):

* ``accuracy``: sequence accuracy on ``test.{src,tgt}`` by category and number of
  functions, the <eos> problem share (section 7.3), and with ``compare_base`` the task
  model on the same inputs (Table 4);
* ``consistency``: outputs for ``test.src`` against ``test_twin.src`` (substitutivity,
  Table 6) and the embedding distances of Table 5;
* ``localism``: whole against unrolled computation
  (:mod:`compsuite.eval.pcfgset.localism`);
* ``overgeneralisation``: every saved checkpoint on the exception inputs
  (:mod:`compsuite.eval.pcfgset.overgeneralisation`);
* ``per_function``: accuracy on ``test_<function>.{src,tgt}`` (Figure 8);
* ``by_length``: accuracy by string length (Figure 10).

The task accuracy (Table 3's first row) uses the toolkit's own prediction command:
:func:`task_accuracy`.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from compsuite.data_prep.pcfgset.grammar import FUNCTIONS, TWIN_SUFFIX, structure
from compsuite.eval.metrics.accuracy import (accuracy_with_breakdown, sequence_accuracy,
                                             signature as accuracy_signature)
from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.io import atomic_open, read_aligned, read_lines, sha256_file
from compsuite.studies.evaluations import breakdown, evaluation

if TYPE_CHECKING:  # pragma: no cover
    from compsuite.studies.base import Context

breakdown("pcfgset")(structure)


class TestEntry(Protocol):
    """What an evaluation reads of the ``tests:`` entry it scores (the study's schema,
    ``compsuite.studies.pcfgset.CompositionalityTest``, has these and more)."""

    options: dict[str, Any]
    compare_base: bool


EMBEDDING_SIGNATURE = Signature("cosine_distance", "1", {"embeddings": "source-input"})


def structure_features(sources: list[str]) -> dict[str, list]:
    """Input length, number of functions and depth of each source (Figure 7)."""
    rows = [structure(s) for s in sources]
    return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}


def task_accuracy(ctx: "Context", split: str = "test") -> dict:
    """The run's predictions on ``split`` with the toolkit's own command
    (fairseq-generate, onmt_translate), scored with the breakdown of Figure 7."""
    preds = ctx.predict(split)
    features = structure_features(preds.sources) if preds.sources is not None else None
    res = accuracy_with_breakdown(preds.hypotheses, preds.references, features)
    return {"split": split, **res.as_dict(), "predictions": preds.origin,
            "predictions_sha256": sha256_file(preds.path)}


def embedding_distances(translator, checkpoint: str) -> dict:
    """Table 5: cosine distances of each substituted function's input embedding to its
    synonym's and (mean) to the other functions'."""
    from compsuite.data_prep.pcfgset.splits import SUBSTITUTED

    from compsuite.eval.metrics.embedding_distance import synonym_distances

    vecs = translator.embed(list(FUNCTIONS) + [f + TWIN_SUFFIX for f in SUBSTITUTED])
    return {"distances": synonym_distances(vecs, FUNCTIONS, SUBSTITUTED),
            "signature": EMBEDDING_SIGNATURE.format(), "checkpoint": str(checkpoint)}


def translated(ctx: "Context", translator, sources: list[str], what: str) -> list[str]:
    """``translator.translate(sources)`` with a bar over the sentences (when the run
    shows progress) named after ``what`` and the unit."""
    from compsuite.models.protocol import translate

    return translate(translator, sources, f"{what} [{ctx.unit.path}]", ctx.show)


def _task_unit(ctx: "Context"):
    """The finished task unit this test unit needs (same run and seed)."""
    (task,) = [f for f in ctx.deps.values() if f.unit.part == "task"]
    return task


@evaluation("accuracy")
def accuracy(ctx: "Context", spec: TestEntry) -> dict:
    from compsuite.eval.metrics.consistency import eos_problem_share

    raw = ctx.data.raw
    srcs, refs, cats = read_aligned(raw / "test.src", raw / "test.tgt", raw / "test.category")
    outs = translated(ctx, ctx.load(), srcs, "translate test")
    n_fn = [str(structure(s)["n_functions"]) for s in srcs]
    res = accuracy_with_breakdown(outs, refs, {"category": cats, "n_functions": n_fn}).as_dict()
    res["eos_problem"] = eos_problem_share(outs, refs)
    if spec.compare_base:
        # the task model, read with the dictionaries of its own training data (a fairseq
        # model read with another corpus's dictionary maps tokens to the wrong embeddings)
        task = _task_unit(ctx)
        base_outs = translated(ctx, ctx.load(task.result["checkpoint"], task.data), srcs,
                               "translate test, task model")
        res["task_model"] = {
            **accuracy_with_breakdown(base_outs, refs, {"n_functions": n_fn}).as_dict(),
            "checkpoint": task.result["checkpoint"],
            "eos_problem": eos_problem_share(base_outs, refs)}
    return res


@evaluation("consistency")
def substitutivity(ctx: "Context", spec: TestEntry) -> dict:
    from compsuite.eval.metrics.consistency import consistency
    from compsuite.models.protocol import ask, progress

    raw = ctx.data.raw
    srcs, refs, cats = read_aligned(raw / "test.src", raw / "test.tgt", raw / "test.category")
    twins = read_lines(raw / "test_twin.src")
    tr = ctx.load()
    with progress(tr, len(srcs) + len(twins), f"translate test and twins [{ctx.unit.path}]",
                  ctx.show):
        outs = ask(tr, "translate", srcs, "test")
        outs_twin = ask(tr, "translate", twins, "test_twin")
    return {"consistency": consistency(outs, outs_twin, refs, cats).as_dict(),
            "accuracy": sequence_accuracy(outs, refs).accuracy,
            "accuracy_twin": sequence_accuracy(outs_twin, refs).accuracy,
            "accuracy_signature": accuracy_signature().format(),
            "embedding_distances": distances_or_reason(tr, ctx.checkpoint)}


def distances_or_reason(translator, checkpoint: str) -> dict:
    """:func:`embedding_distances`, or why the model gives no embeddings (answers read
    from files; a program that does not answer ``embed``; a model without them)."""
    from compsuite.models.protocol import Unavailable, require

    try:
        require(translator, "embed", "embedding distances (Table 5)",
                "it reads the model's embeddings")
        return embedding_distances(translator, checkpoint)
    except Unavailable as e:
        return {"unavailable": str(e)}


@evaluation("localism")
def localism(ctx: "Context", spec: TestEntry) -> dict:
    from compsuite.models.protocol import require_model

    from . import localism as loc

    tr = ctx.load()
    require_model(tr, "localism", "it feeds the model's own outputs back as inputs")
    res = loc.run(tr, loc.read_unrolled(ctx.data.raw / "unrolled_test.tsv"),
                  desc=f"translate whole and unrolled [{ctx.unit.path}]", show=ctx.show)
    traces = res.pop("traces")
    with atomic_open(ctx.run_dir / "localism-traces.jsonl") as fh:
        for t in traces:
            fh.write(json.dumps(t) + "\n")
    return {**res, "model_calls": tr.calls}


@evaluation("overgeneralisation")
def overgeneralisation(ctx: "Context", spec: TestEntry) -> dict:
    from compsuite.toolkits import saved_checkpoints

    from . import overgeneralisation as og

    rate = spec.options.get("exception_rate", 0.001)
    src, exc, orig = og.read_exception_set(ctx.data.raw / f"test_pcfg_ratio={rate:g}")
    # a model brought to the suite (an evaluate-only run) has no checkpoints over
    # training: its one profile is that of the final model
    checkpoints = (og.listed(saved_checkpoints(ctx.run_dir / ctx.backend.checkpoint_folder,
                                               ctx.backend))
                   if ctx.study.trains(ctx.run.name) else [("final", 0, ctx.checkpoint)])
    return og.track(checkpoints, lambda p: ctx.load(p),
                    src, exc, orig, progress=ctx.show,
                    desc=f"exception inputs per checkpoint [{ctx.unit.path}]")


@evaluation("per_function")
def per_function(ctx: "Context", spec: TestEntry) -> dict:
    from compsuite.models.protocol import ask, progress

    tr = ctx.load()
    raw = ctx.data.raw
    tests = {fn: read_aligned(raw / f"test_{fn}.src", raw / f"test_{fn}.tgt") for fn in FUNCTIONS}
    per = {}
    with progress(tr, sum(len(srcs) for srcs, _ in tests.values()),
                  f"translate each function's test [{ctx.unit.path}]", ctx.show):
        for fn, (srcs, refs) in tests.items():
            per[fn] = sequence_accuracy(ask(tr, "translate", srcs, f"test_{fn}"),
                                        refs).accuracy
    return {"per_function": per, "accuracy": sum(per.values()) / len(per),
            "n_per_function": len(srcs),
            "accuracy_signature": accuracy_signature(mean="over_functions").format()}


@evaluation("by_length")
def by_length(ctx: "Context", spec: TestEntry) -> dict:
    raw = ctx.data.raw
    srcs, refs, lengths = read_aligned(raw / "increasing_length.src", raw / "increasing_length.tgt",
                                       raw / "increasing_length.category")
    return accuracy_with_breakdown(translated(ctx, ctx.load(), srcs, "translate test"), refs,
                                   {"length": lengths}).as_dict()
