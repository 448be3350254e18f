"""SGET's checkpoint selection (Kumon et al. 2024, section 4.1.1): the checkpoint with
the best exact match on the development set, among every checkpoint the training saved.

``<run dir>/selection.json`` keeps the scores as they come (``{"metric": "dev exact
match", "by_step": {step: fraction}}``), so an interrupted selection resumes;
``<run dir>/selection/step<N>/`` holds each checkpoint's development translations.
"""
from __future__ import annotations

import json
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open, read_lines

from .metrics import exact_matches

METRIC = "dev exact match"
#: the checkpoints selected from: those a training saves every N steps (a backend's
#: "step" checkpoints, :class:`compsuite.toolkits.Checkpoint`)
KIND = "step"


def select_checkpoint(backend, run_dir: Path, data, generation: dict, dev_refs: Path, *,
                      keep: str = "all", show: bool = False) -> dict:
    """The checkpoint of ``run_dir`` whose development translations (``backend``'s own
    command on ``data``'s ``valid`` split, with the decoding settings ``generation``)
    best match ``dev_refs`` exactly.  Scores are stored in ``selection.json`` as they
    come (stored ones are not computed again); ties go to the earliest step.
    ``keep='best'`` then deletes the other checkpoints.  Returns the selection: the
    scores by step, the best step and score, the checkpoint, how many development
    lines, what was kept; ``show``: a bar over the checkpoints still to score."""
    from tqdm import tqdm

    run_dir = Path(run_dir)
    store = run_dir / "selection.json"
    scores: dict[str, float] = json.loads(store.read_text())["by_step"] if store.is_file() else {}
    refs = read_lines(dev_refs)
    ckpts = [(c.at, c.path) for c in backend.checkpoints(run_dir, KIND)]
    present = {str(step): path for step, path in ckpts}
    todo = [(s, p) for s, p in ckpts if str(s) not in scores]
    if not ckpts and not scores:
        raise DataError(f"{run_dir}: the training left no checkpoint to select from")
    for step, path in tqdm(todo, desc="checkpoint selection (dev translations)",
                           unit="checkpoint", disable=not show):
        folder = run_dir / "selection" / f"step{step}"
        pred = backend.predict({"checkpoint": str(path)}, data, "valid", generation, folder,
                               show=False)
        scores[str(step)] = _dev_exact_match(pred.path, refs)
        with atomic_open(store) as fh:
            json.dump({"metric": METRIC, "by_step": scores}, fh, indent=2)
    by_step = {str(s): scores[str(s)] for s in sorted(map(int, scores))}
    best = max(by_step, key=lambda s: (by_step[s], -int(s)))
    if best not in present:
        raise DataError(f"{run_dir}: the selected checkpoint (step {best}) was deleted; "
                        "delete selection.json and retrain to select again")
    if keep == "best":
        from compsuite.foundation.io import remove_path

        for s, p in present.items():
            if s != best:
                remove_path(p)
    return {"metric": METRIC, "by_step": by_step, "best_step": int(best),
            "best_score": by_step[best], "checkpoint": str(present[best]),
            "n_dev": len(refs), "kept": keep}


def _dev_exact_match(pred: Path, refs: list[str]) -> float:
    hyps = read_lines(pred)
    if len(hyps) != len(refs):
        raise DataError(f"{pred}: {len(hyps)} lines for {len(refs)} development references")
    ok = exact_matches(hyps, refs)
    return sum(ok) / len(ok)
