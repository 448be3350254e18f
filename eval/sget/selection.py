"""SGET's checkpoint selection (Kumon et al. 2024, section 4.1.1): the checkpoint with
the best exact match on the development set, among every checkpoint the training saved.

``<run dir>/selection.json`` keeps the scores as they come (``{"metric": "dev exact
match", "by_step": {step: fraction}}``), so an interrupted selection resumes;
``<run dir>/selection/step<N>/`` holds each checkpoint's development translations.

With a ``sample`` (``selection: {sample: 1000, finalists: 3}`` in a profile), every
checkpoint is first scored on that many development lines, drawn once with a seed, and
only the ``finalists`` best of those (and any tied with the last of them) are scored on
the whole development set; the best of these is chosen.  It decodes ``checkpoints x
sample + finalists x dev`` sentences instead of ``checkpoints x dev``, and picks what
the whole set would pick wherever that checkpoint is among the sample's best few
(``selection.json`` keeps the sample's scores under ``sample``).
"""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open, read_lines

from .metrics import exact_matches, exact_signature

METRIC = "dev exact match"
#: the checkpoints selected from: those a training saves every N steps (a backend's
#: "step" checkpoints, :class:`compsuite.toolkits.Checkpoint`)
KIND = "step"


def sample_lines(n: int, size: int, seed: int) -> list[int]:
    """``size`` of the line numbers ``0 .. n-1`` drawn with ``seed``, in file order."""
    return sorted(random.Random(seed).sample(range(n), size))


def select_checkpoint(backend, run_dir: Path, data, generation, dev_refs: Path, *,
                      keep: str = "all", sample: int | None = None, finalists: int = 3,
                      seed: int = 1, show: bool = False) -> dict:
    """The checkpoint of ``run_dir`` whose development translations (``backend``'s own
    command on ``data``'s ``valid`` split, with the decoding settings ``generation``, a
    :class:`~compsuite.models.decoding.Decoding`) best match ``dev_refs`` exactly.  Scores are stored in ``selection.json`` as they
    come (stored ones are not computed again); ties go to the earliest step.
    ``sample``: score every checkpoint on that many development lines first (drawn with
    ``seed``; ``backend.predict_lines``), then only the ``finalists`` best of them (and
    those tied with the last) on the whole set; a sample as large as the set is the
    whole set.  ``keep='best'`` then deletes the other checkpoints.  Returns the
    selection: the scores by step, the best step and score, the checkpoint, how many
    development lines, the sentences decoded, what was kept; ``show``: a bar over the
    checkpoints still to score."""
    run_dir = Path(run_dir)
    store = run_dir / "selection.json"
    stored = json.loads(store.read_text()) if store.is_file() else {}
    scores: dict[str, float] = stored.get("by_step", {})
    refs = read_lines(dev_refs)
    ckpts = [(c.at, c.path) for c in backend.checkpoints(run_dir, KIND)]
    present = {str(step): path for step, path in ckpts}
    if not ckpts and not scores:
        raise DataError(f"{run_dir}: the training left no checkpoint to select from")
    staged = sample is not None and sample < len(refs)
    drawn = None
    candidates = list(present)
    if staged:
        lines = sample_lines(len(refs), sample, seed)
        drawn = {"n": sample, "seed": seed, "finalists": finalists,
                 "lines_sha256": hashlib.sha256(" ".join(map(str, lines)).encode()).hexdigest()}
        old = stored.get("sample", {})
        by_sample = (old.get("by_step", {}) if all(old.get(k) == drawn[k] for k in
                                                   ("n", "seed", "lines_sha256")) else {})
        sample_refs = [refs[i] for i in lines]

        def on_sample(step, path):
            folder = run_dir / "selection" / f"step{step}"
            hyps = backend.predict_lines({"checkpoint": str(path)}, data, "valid", lines,
                                         generation, folder / f"pred-valid.sample{sample}.txt")
            by_sample[str(step)] = _exact_match(hyps, sample_refs, folder)
            _store(store, scores, {**drawn, "by_step": by_sample})

        _each(ckpts, by_sample, on_sample, f"checkpoint selection (dev sample of {sample})",
              show)
        candidates = _finalists({s: v for s, v in by_sample.items()
                                 if s in present or not present}, finalists)
        drawn.update(by_step={str(s): by_sample[str(s)] for s in sorted(map(int, by_sample))},
                     chosen_from=candidates)

    def on_dev(step, path):
        folder = run_dir / "selection" / f"step{step}"
        pred = backend.predict({"checkpoint": str(path)}, data, "valid", generation, folder,
                               show=False)
        scores[str(step)] = _exact_match(pred.hypotheses, refs, pred.path)
        _store(store, scores, drawn)

    _each([(s, p) for s, p in ckpts if str(s) in candidates], scores, on_dev,
          "checkpoint selection (dev translations)", show)
    by_step = {str(s): scores[str(s)] for s in sorted(map(int, scores))}
    among = [s for s in by_step if s in candidates] if staged else list(by_step)
    best = max(among, key=lambda s: (by_step[s], -int(s)))
    if best not in present:
        raise DataError(f"{run_dir}: the selected checkpoint (step {best}) was deleted; "
                        "delete selection.json and retrain to select again")
    if keep == "best":
        from compsuite.foundation.io import remove_path

        for s, p in present.items():
            if s != best:
                remove_path(p)
    decoded = (len(ckpts) * sample + len(candidates) * len(refs) if staged
               else len(ckpts) * len(refs))
    return {"metric": METRIC, "signature": exact_signature().format(),
            "by_step": by_step, "best_step": int(best),
            "best_score": by_step[best], "checkpoint": str(present[best]),
            "n_dev": len(refs), "sample": drawn, "dev_sentences_decoded": decoded,
            "kept": keep}


def _finalists(by_step: dict[str, float], k: int) -> list[str]:
    """The ``k`` best steps by score (ties: the earliest first), and any tied with the
    ``k``-th, in step order."""
    ranked = sorted(by_step, key=lambda s: (-by_step[s], int(s)))
    cut = by_step[ranked[min(k, len(ranked)) - 1]]
    return sorted((s for s in ranked if by_step[s] >= cut), key=int)


def _each(ckpts, done: dict, score, desc: str, show: bool) -> None:
    """``score(step, path)`` for each checkpoint without a score in ``done``."""
    from tqdm import tqdm

    todo = [(s, p) for s, p in ckpts if str(s) not in done]
    for step, path in tqdm(todo, desc=desc, unit="checkpoint", disable=not show):
        score(step, path)


def _store(store: Path, scores: dict, sample: dict | None) -> None:
    out = {"metric": METRIC, "by_step": scores}
    if sample is not None:
        out["sample"] = sample
    with atomic_open(store) as fh:
        json.dump(out, fh, indent=2)


def _exact_match(hyps: list[str], refs: list[str], where: Path) -> float:
    if len(hyps) != len(refs):
        raise DataError(f"{where}: {len(hyps)} lines for {len(refs)} development references")
    ok = exact_matches(hyps, refs)
    return sum(ok) / len(ok)
