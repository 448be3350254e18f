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


def input_streams(inputs) -> list[str]:
    """The raw streams of a model's ``--pair-inputs`` (``premise_tree``, ...)."""
    return [f"{side}_{name}" for name in inputs for side in ("premise", "hypothesis")]


def pairs_of(raw: Path, split: str, cols: dict, inputs=()) -> list:
    """The split's (premise, hypothesis) pairs; with ``inputs`` (a model's
    ``--pair-inputs``), (premise, hypothesis, {"premise_tree": line, ...}) triples, the
    streams taken from ``cols`` or read beside the words (an error names a missing or
    short file)."""
    pairs = list(zip(cols["premise"], cols["hypothesis"]))
    if not inputs:
        return pairs
    names = input_streams(inputs)
    if any(k not in cols for k in names):
        from compsuite.data_prep.nli.corpus import read_split
        from compsuite.foundation.errors import DataError

        for k in names:
            if not (raw / f"{split}.{k}").is_file():
                raise DataError(f"{raw / f'{split}.{k}'}: no such file (the model reads "
                                f"--pair-inputs {','.join(inputs)}; rebuild the dataset)")
        cols = read_split(raw, split, extra=names)
    return [(p, h, {k: cols[k][i] for k in names}) for i, (p, h) in enumerate(pairs)]


def predict_split(clf, raw: Path, split: str, run_dir: Path) -> tuple[list[str], list[str]]:
    """Gold labels and the model's predictions on the raw split ``split``; the
    predictions are stored as ``run_dir/predictions-<split>.tsv`` and reused."""
    from compsuite.data_prep.nli.corpus import read_split
    from compsuite.foundation.io import atomic_open

    path = run_dir / f"predictions-{split}.tsv"
    inputs = clf.pair_inputs
    if path.is_file():
        cols = read_split(raw, split)
        pred = align(cols["pairid"], read_predictions(path), str(path))
    else:
        names = [k for k in input_streams(inputs) if (raw / f"{split}.{k}").is_file()]
        cols = read_split(raw, split, extra=names)   # a missing one: pairs_of says so
        from compsuite.models.protocol import ask

        pred = ask(clf, "classify", pairs_of(raw, split, cols, inputs), split)
        with atomic_open(path) as fh:
            fh.writelines(f"{i}\t{p}\n" for i, p in zip(cols["pairid"], pred))
    return cols["label"], pred
