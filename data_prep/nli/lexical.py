"""NLI compositionality-sensitivity testing (Nie, Wang and Bansal 2019, section 5).

A bag-of-words stand-in for an NLI model (section 5.2): softmax regression over
indicator features of the content words of a pair (premise unigrams, hypothesis
unigrams, premise x hypothesis cross-unigrams; nouns, verbs, adjectives and adverbs
only).  Its probabilities give each evaluation pair a Lexically-Misleading Score
(eq. 6: the highest probability it puts on a *wrong* label), and ``CS_lambda`` is the
subset with LMS >= lambda (section 5.4), on which Table 5 re-scores models, the
Human row (footnote 10) and the Majority Vote row.

The regulariser.  The paper does not give one.  :class:`LexicalClassifier` uses an
L2 penalty whose strength ``C`` is either given, or chosen by this rule: hold out a
seeded 10% of the training premises with all their pairs, fit on the other 90% for
each ``C`` of :data:`C_GRID`, keep the ``C`` with the lowest held-out log-loss (ties: the
smaller ``C``, the stronger penalty), then refit on all the training pairs.  Log-loss
rather than accuracy because LMS reads the probabilities themselves, so what matters
is that they are calibrated, and log-loss (a proper scoring rule) measures exactly
that; accuracy ignores confidence and ties often on small held-out parts.  The chosen
``C`` and the rule are part of :meth:`LexicalClassifier.signature`.

Accuracies are fractions in [0, 1] (the tables print percentages).  User mistakes
raise :class:`~compsuite.foundation.errors.DataError` (bad data) or
:class:`~compsuite.foundation.errors.ConfigError` (bad options).
"""
from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import atomic_open
from compsuite.models.protocol import ModelBase

LABELS = ("entailment", "neutral", "contradiction")
#: PTB tag prefixes of the content words the features keep (NN*, VB*, JJ*, RB*)
CONTENT_TAGS = ("NN", "VB", "JJ", "RB")
#: the C values the default rule chooses from
C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
HELD_OUT = 0.1
#: fewer held-out pairs than this and C cannot be chosen: pass it explicitly
MIN_HELD_OUT = 10
FORMAT_VERSION = 1


# ------------------------------------------------------------------------ features
def _content_words(pos: Iterable[tuple[str, str]]) -> list[str]:
    """The lowercased content words of a sentence, each once, in first-seen order."""
    seen: dict[str, None] = {}
    for word, tag in pos:
        if tag.startswith(CONTENT_TAGS):
            seen.setdefault(word.lower(), None)
    return list(seen)


def _esc(word: str) -> str:
    # a word holding '|' must not make two cross pairs collide
    return word.replace("\\", "\\\\").replace("|", "\\|")


def features(premise_pos: Sequence[tuple[str, str]],
             hypothesis_pos: Sequence[tuple[str, str]]) -> dict[str, int]:
    """The indicator features of section 5.2 for one pair, from its (word, PTB tag)
    lists: ``p=w`` for a premise content word, ``h=w`` for a hypothesis one and
    ``x=w|v`` for every premise word ``w`` with every hypothesis word ``v``.  Content
    words are those tagged NN*, VB*, JJ* or RB*, lowercased; every feature is 1, once
    (a ``|`` or ``\\`` inside a word is escaped with ``\\`` in cross features)."""
    prem, hyp = _content_words(premise_pos), _content_words(hypothesis_pos)
    out = {f"p={w}": 1 for w in prem}
    out.update({f"h={w}": 1 for w in hyp})
    out.update({f"x={_esc(w)}|{_esc(v)}": 1 for w in prem for v in hyp})
    return out


def pair_features(pair) -> dict[str, int]:
    """:func:`features` of a :class:`compsuite.data_prep.nli.snli.Pair`, from its
    constituency parses (a missing or malformed parse is a :class:`DataError`)."""
    return features(pair.premise_tree.pos(), pair.hypothesis_tree.pos())


def _as_features(items: Sequence) -> list[Mapping[str, float]]:
    """Pairs -> feature dicts; a dict is taken as already computed features."""
    return [it if isinstance(it, Mapping) else pair_features(it) for it in items]


def _need_all_labels(labels: Sequence[str], what: str) -> None:
    missing = [lab for lab in LABELS if lab not in set(labels)]
    if missing:
        raise DataError(f"{what}: no pair labelled {', '.join(missing)}; the 3-way softmax "
                        f"regression needs all of {', '.join(LABELS)}")


def _check_labels(labels: Sequence[str], what: str) -> None:
    bad = sorted({lab for lab in labels if lab not in LABELS})
    if bad:
        raise DataError(f"{what}: unknown label(s) {', '.join(map(repr, bad))} "
                        f"(expected {', '.join(LABELS)})")


# ---------------------------------------------------------------------- splits
def group_split(groups: Sequence, fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Indices (kept, held out): round(``fraction`` x the number of distinct groups)
    whole groups, drawn with ``seed``, are held out.  Deterministic given the groups'
    order and ``seed``."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) \
            or not 0 <= fraction <= 1:
        raise ConfigError(f"fraction must be a number in [0, 1], got {fraction!r}")
    order = list(dict.fromkeys(groups))
    k = int(round(len(order) * fraction))
    held_groups = {order[i] for i in np.random.default_rng(seed).permutation(len(order))[:k]}
    kept = [i for i, g in enumerate(groups) if g not in held_groups]
    held = [i for i, g in enumerate(groups) if g in held_groups]
    return kept, held


def premise_split(pairs: Sequence, fraction: float, seed: int) -> tuple[list, list]:
    """Pairs (kept, held out), holding out a seeded ``fraction`` of the premises with
    all their pairs.  Split SNLI/MNLI pairs this way, never pair by pair: a premise
    comes with one hypothesis per label, so a pair-level split lets the premise
    features vote *against* the held-out pair's label (on the reference sample a
    pair-level 80/20 split gave the lexical model 10% accuracy, premise-level ones
    40-43%)."""
    kept, held = group_split([p.premise for p in pairs], fraction, seed)
    return [pairs[i] for i in kept], [pairs[i] for i in held]


# ---------------------------------------------------------------------- classifier
def _one_blas_thread():
    """lbfgs's BLAS work here is vector arithmetic on the weights, far too small to
    share out: on a busy 2-core machine threaded BLAS made a fit 25x slower.  One
    thread also fixes the order of floating-point sums, so refits give identical bits."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


class LexicalClassifier(ModelBase):
    """The softmax-regression BoW model of section 5.2 (scikit-learn
    ``LogisticRegression``, lbfgs, multinomial, L2).

    ``C``: the inverse regularisation strength, or None to choose it from ``grid`` by
    the held-out log-loss rule of the module docstring (``seed`` draws the held-out
    part).  ``hash_bits``: None keeps every feature (``DictVectorizer``); a number
    hashes them into ``2**hash_bits`` columns (``FeatureHasher``), for training sets
    the size of SNLI + MNLI.  Inputs are NLI pairs (with parses) or feature dicts from
    :func:`features`.  Fits the suite's model protocol (``name``, ``classify``);
    deterministic given ``seed``.
    """

    capabilities = frozenset({"classify"})

    def __init__(self, C: float | None = None, *, grid: Sequence[float] = C_GRID,
                 seed: int = 0, max_iter: int = 1000, tol: float = 1e-4,
                 hash_bits: int | None = None, name: str = "lexical-logreg"):
        if C is not None and not (isinstance(C, (int, float)) and C > 0 and math.isfinite(C)):
            raise ConfigError(f"C must be a positive number, got {C!r}")
        if C is None and (not grid or any(not (isinstance(c, (int, float)) and c > 0)
                                          for c in grid)):
            raise ConfigError(f"grid must be a non-empty list of positive numbers, got {grid!r}")
        if not (isinstance(max_iter, int) and max_iter > 0):
            raise ConfigError(f"max_iter must be a positive integer, got {max_iter!r}")
        if hash_bits is not None and not (isinstance(hash_bits, int) and 1 <= hash_bits <= 31):
            raise ConfigError(f"hash_bits must be an integer in 1..31 or None, got {hash_bits!r}")
        self.C_given = C
        self.grid = tuple(sorted(float(c) for c in grid))
        self.seed, self.max_iter, self.tol, self.hash_bits = seed, max_iter, tol, hash_bits
        self.name = name
        self.C: float | None = float(C) if C is not None else None
        self.held_out_loss: dict[float, float] = {}   # C -> held-out log-loss (rule only)
        self._vec = None
        self._model = None

    # ----------------------------------------------------------------- fitting
    def _vectorizer(self):
        from sklearn.feature_extraction import DictVectorizer, FeatureHasher

        if self.hash_bits is None:
            return DictVectorizer(sparse=True, sort=True)
        return FeatureHasher(n_features=2 ** self.hash_bits, input_type="dict",
                             alternate_sign=False)

    def _logreg(self, C: float):
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=C, solver="lbfgs", max_iter=self.max_iter, tol=self.tol)

    def _vectorized(self, feats):
        """(vectorizer, matrix) of feature dicts: fitted to them, or hashed."""
        vec = self._vectorizer()
        X = vec.fit_transform(feats) if self.hash_bits is None else vec.transform(feats)
        return vec, X

    def _fit_X(self, X, y, C):
        with _one_blas_thread():
            return self._logreg(C).fit(X, y)

    def _fit_xy(self, feats, y, C):
        vec, X = self._vectorized(feats)
        return vec, self._fit_X(X, y, C)

    def fit(self, pairs: Sequence, labels: Sequence[str] | None = None,
            groups: Sequence | None = None) -> "LexicalClassifier":
        """Train on ``pairs`` (their ``.label``, unless ``labels`` is given); every one
        of the three labels must occur.  ``groups``: one key per pair; the held-out
        part that chooses C takes whole groups.  By default a pair's group is its
        premise (SNLI and MNLI write three hypotheses per premise, and their own
        train/dev splits never share a premise: a held-out part that did would reward
        memorising premises); a feature dict is its own group."""
        labels = [p.label for p in pairs] if labels is None else list(labels)
        if len(labels) != len(pairs):
            raise DataError(f"{len(pairs)} pairs but {len(labels)} labels")
        _check_labels(labels, "training pairs")
        _need_all_labels(labels, "training pairs")
        feats = _as_features(pairs)
        if self.C_given is None:
            from sklearn.metrics import log_loss

            if groups is None:
                groups = [("#", i) if isinstance(p, Mapping) else p.premise
                          for i, p in enumerate(pairs)]
            elif len(groups) != len(pairs):
                raise DataError(f"{len(pairs)} pairs but {len(groups)} groups")
            train, held = group_split(list(groups), HELD_OUT, self.seed)
            if len(held) < MIN_HELD_OUT:
                raise DataError(
                    f"{len(pairs)} training pairs leave {len(held)} for the held-out part "
                    f"that chooses C (at least {MIN_HELD_OUT} needed): pass C explicitly")
            _need_all_labels([labels[i] for i in train],
                             f"the training part (seed {self.seed}) of the C selection")
            self.held_out_loss = {}
            # one vectorisation for the whole grid: the same features give the same
            # matrices for every C (vectorising them again took most of the fits'
            # time); each fit gets its own copy, as it got its own matrix before
            vec, X_train = self._vectorized([feats[i] for i in train])
            X_held = vec.transform([feats[i] for i in held])
            y_train = [labels[i] for i in train]
            for C in self.grid:
                model = self._fit_X(X_train.copy(), y_train, C)
                with _one_blas_thread():
                    proba = model.predict_proba(X_held.copy())
                self.held_out_loss[C] = float(log_loss([labels[i] for i in held], proba,
                                                       labels=list(model.classes_)))
            self.C = min(self.grid, key=lambda c: (self.held_out_loss[c], c))
        self._vec, self._model = self._fit_xy(feats, labels, self.C)
        return self

    # ------------------------------------------------------------- predicting
    def _proba(self, inputs: Sequence) -> np.ndarray:
        if self._model is None:
            raise DataError(f"{self.name}: not trained: call fit() or load() first")
        if len(inputs) == 0:
            return np.zeros((0, len(LABELS)))
        with _one_blas_thread():
            proba = self._model.predict_proba(self._vec.transform(_as_features(inputs)))
        order = [list(self._model.classes_).index(lab) for lab in LABELS]
        return proba[:, order]

    def predict_proba(self, inputs: Sequence) -> np.ndarray:
        """Probabilities, shape [len(inputs), 3], columns in :data:`LABELS` order."""
        return self._proba(inputs)

    def classify(self, inputs: Sequence) -> list[str]:
        """The most probable label of each input (ties: the first in :data:`LABELS`)."""
        proba = self._proba(inputs)
        return [LABELS[i] for i in proba.argmax(axis=1)]

    def features(self, inputs: Sequence):
        raise NotImplementedError(
            f"{self.name} is a linear model over sparse indicator features and has no "
            "representation below its output layer; use lexical.features() for its "
            "input features, or predict_proba() for its output")

    # ---------------------------------------------------------------- records
    def signature(self) -> str:
        """The settings that change the probabilities, sacreBLEU style."""
        import sklearn

        if self.C_given is not None:
            c, rule = f"{self.C:g}", "given"
        else:
            c = f"{self.C:g}" if self.C is not None else "unfitted"
            rule = (f"heldout{HELD_OUT:.0%}-logloss-grid({','.join(f'{g:g}' for g in self.grid)})"
                    f"-seed{self.seed}")
        vec = "dict" if self.hash_bits is None else f"hash{self.hash_bits}"
        return "|".join([
            "features:p+h+cross", f"pos:{','.join(CONTENT_TAGS)}", "lower:yes", f"vec:{vec}",
            "model:logreg-multinomial", "penalty:l2", f"C:{c}", f"C_rule:{rule}",
            "solver:lbfgs", f"max_iter:{self.max_iter}", f"tol:{self.tol:g}",
            f"sklearn:{sklearn.__version__}"])

    def save(self, path: str | os.PathLike) -> None:
        """Write the trained model (joblib), atomically.  Load only files you trust:
        joblib files are pickles."""
        import joblib

        if self._model is None:
            raise DataError(f"{self.name}: not trained: nothing to save to {path}")
        state = dict(vars(self))
        with atomic_open(path, "wb") as fh:
            joblib.dump({"format": "compsuite.nli_lexical", "version": FORMAT_VERSION,
                         "signature": self.signature(), "state": state}, fh)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "LexicalClassifier":
        """A model written by :meth:`save`."""
        import joblib

        if not os.path.isfile(path):
            raise DataError(f"{path}: no such file")
        try:
            blob = joblib.load(path)
        except Exception as e:  # a truncated or foreign file
            raise DataError(f"{path}: not a saved LexicalClassifier ({type(e).__name__}: {e})") \
                from None
        if not (isinstance(blob, dict) and blob.get("format") == "compsuite.nli_lexical"):
            raise DataError(f"{path}: not a saved LexicalClassifier")
        if blob.get("version") != FORMAT_VERSION:
            raise DataError(f"{path}: format version {blob.get('version')!r}, this suite reads "
                            f"{FORMAT_VERSION}")
        obj = cls.__new__(cls)
        vars(obj).update(blob["state"])
        return obj


# ---------------------------------------------------------------- LMS and CS_lambda
def lms(probs, gold_labels: Sequence[str]) -> list[float]:
    """The Lexically-Misleading Score (eq. 6) of each example: the highest probability
    on a label other than its gold one.  ``probs``: rows of 3 probabilities in
    :data:`LABELS` order (as :meth:`LexicalClassifier.predict_proba` gives)."""
    p = np.asarray(probs, dtype=float)
    gold = list(gold_labels)
    if p.ndim != 2 or p.shape[1] != len(LABELS):
        raise DataError(f"probabilities: expected shape [n, {len(LABELS)}], got {p.shape}")
    if p.shape[0] != len(gold):
        raise DataError(f"{p.shape[0]} probability rows but {len(gold)} gold labels")
    _check_labels(gold, "gold labels")
    if p.size and (not np.isfinite(p).all() or (p < 0).any() or (p > 1).any()
                   or not np.allclose(p.sum(axis=1), 1.0, atol=1e-6)):
        raise DataError("probabilities: every row must hold values in [0, 1] summing to 1 "
                        "(were logits passed?)")
    out = []
    for row, g in zip(p, gold):
        gi = LABELS.index(g)
        out.append(float(max(v for i, v in enumerate(row) if i != gi)))
    return out


def check_lambda(lam) -> float:
    """``lam`` as a float, or a ConfigError unless it is a number in [0, 1]."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
        raise ConfigError(f"lambda must be a number in [0, 1], got {lam!r}")
    return float(lam)


def cs_subset(lms_values: Sequence[float], lam: float) -> list[int]:
    """CS_lambda (section 5.4): the indices of the examples with LMS >= ``lam``."""
    lam = check_lambda(lam)
    for i, v in enumerate(lms_values):
        if not (isinstance(v, (int, float)) and 0 <= v <= 1):
            raise DataError(f"LMS value {i}: {v!r} is not in [0, 1]")
    return [i for i, v in enumerate(lms_values) if v >= lam]


def _acc(flags: list) -> float | None:
    scored = [f for f in flags if f is not None]
    return sum(bool(f) for f in scored) / len(scored) if scored else None


def cs_table(lms_values: Sequence[float], correct_by_model: Mapping[str, Sequence],
             lambdas: Sequence[float] = (0.5, 0.6, 0.7)) -> dict:
    """Table 5 for one evaluation set: each model's accuracy on the whole set and on
    every CS_lambda.  ``correct_by_model``: model -> one flag per example (True
    correct, False wrong, None not scored, e.g. a pair with no annotator labels for
    the Human row; None is left out of that model's accuracy).  Returns
    ``{"columns": ["whole", "CS_0.5", ...], "size": {column: n},
    "accuracy": {model: {column: fraction or None}}}`` (None: nothing scored)."""
    lams = [check_lambda(lam) for lam in lambdas]
    n = len(lms_values)
    for model, flags in correct_by_model.items():
        if len(flags) != n:
            raise DataError(f"model {model!r}: {len(flags)} results for {n} examples")
    subsets = {"whole": list(range(n))}
    for lam in lams:
        subsets[f"CS_{lam:g}"] = cs_subset(lms_values, lam)
    return {
        "columns": list(subsets),
        "size": {col: len(idx) for col, idx in subsets.items()},
        "accuracy": {model: {col: _acc([flags[i] for i in idx]) for col, idx in subsets.items()}
                     for model, flags in correct_by_model.items()},
    }


# ------------------------------------------------------------- Human and Majority
def _draw(seed: int, pair_id: str, k: int) -> int:
    h = hashlib.sha256(f"{seed}\0{pair_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") % k


def human_correct(pairs: Sequence, seed: int = 0) -> list[bool | None]:
    """Footnote 10 per pair: one of its annotator labels drawn at random, compared
    with the gold label; None for a pair with no annotator labels.  The draw depends
    only on ``seed`` and the pair's id, so a pair gets the same draw in any subset or
    order (the CS_lambda columns reuse the whole set's draws)."""
    out: list[bool | None] = []
    for p in pairs:
        ann = list(p.annotator_labels or [])
        out.append(ann[_draw(seed, p.pair_id, len(ann))] == p.label if ann else None)
    return out


def human_accuracy(pairs: Sequence, seed: int = 0) -> dict:
    """The Human row on ``pairs``: ``{"accuracy", "n" (pairs scored), "skipped" (pairs
    with no annotator labels), "expected"}``; ``expected`` is the mean over pairs of
    the share of annotator labels equal to the gold one, the accuracy the draw
    estimates (no randomness)."""
    flags = human_correct(pairs, seed)
    scored = [p for p, f in zip(pairs, flags) if f is not None]
    if not scored:
        raise DataError(f"none of the {len(flags)} pairs has annotator labels")
    expected = sum(sum(a == p.label for a in p.annotator_labels) / len(p.annotator_labels)
                   for p in scored) / len(scored)
    return {"accuracy": _acc(flags), "n": len(scored), "skipped": len(flags) - len(scored),
            "expected": expected}


def majority_label(train_gold: Sequence[str]) -> str:
    """The most frequent training label (ties: the first in :data:`LABELS`)."""
    train_gold = list(train_gold)
    if not train_gold:
        raise DataError("no training labels to take the majority of")
    _check_labels(train_gold, "training labels")
    counts = Counter(train_gold)
    return max(LABELS, key=lambda lab: (counts[lab], -LABELS.index(lab)))


def majority_correct(gold: Sequence[str], train_gold: Sequence[str]) -> list[bool]:
    """The Majority Vote row per example: is the gold label the training majority?"""
    _check_labels(list(gold), "gold labels")
    maj = majority_label(train_gold)
    return [g == maj for g in gold]


def majority_accuracy(gold: Sequence[str], train_gold: Sequence[str]) -> float:
    """The Majority Vote row: accuracy of predicting the training majority everywhere."""
    flags = majority_correct(gold, train_gold)
    if not flags:
        raise DataError("no gold labels to score")
    return _acc(flags)
