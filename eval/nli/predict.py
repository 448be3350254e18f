"""A trained NLI model in the loop: its predictions on a prepared dataset's splits, kept
as ``predictions-<split>.tsv`` (``pairID<TAB>label``, the format ``compsuite eval nli
score`` reads from any system) and reused when the evaluation resumes."""
from __future__ import annotations

from pathlib import Path

from .scores import align, read_predictions


def to_predict(raw: Path, splits: list[str], run_dir: Path) -> int:
    """How many pairs of ``splits`` :func:`predict_split` has still to predict (those
    without stored predictions), for a progress bar's total."""
    from compsuite.data_prep.nli.corpus import read_split

    return sum(len(read_split(raw, s)["pairid"]) for s in splits
               if not (run_dir / f"predictions-{s}.tsv").is_file())


def predict_split(clf, raw: Path, split: str, run_dir: Path) -> tuple[list[str], list[str]]:
    """Gold labels and the model's predictions on the raw split ``split``; the
    predictions are stored as ``run_dir/predictions-<split>.tsv`` and reused."""
    from compsuite.data_prep.common.io import atomic_open
    from compsuite.data_prep.nli.corpus import read_split

    cols = read_split(raw, split)
    path = run_dir / f"predictions-{split}.tsv"
    if path.is_file():
        pred = align(cols["pairid"], read_predictions(path), str(path))
    else:
        pred = clf.predict(list(zip(cols["premise"], cols["hypothesis"])))
        with atomic_open(path) as fh:
            fh.writelines(f"{i}\t{p}\n" for i, p in zip(cols["pairid"], pred))
    return cols["label"], pred
