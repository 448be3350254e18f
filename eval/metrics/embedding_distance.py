"""Cosine distances between input embeddings (Hupkes et al. 2020, Table 5): each
substituted function to its synonym, and to the other functions."""
from __future__ import annotations

import math
from typing import Mapping, Sequence


def cosine_distance(u: Sequence[float], v: Sequence[float]) -> float:
    dot = sum(a * b for a, b in zip(u, v))
    nu, nv = math.sqrt(sum(a * a for a in u)), math.sqrt(sum(b * b for b in v))
    if nu == 0 or nv == 0:
        raise ValueError("cosine distance of a zero vector")
    return 1.0 - dot / (nu * nv)


def synonym_distances(vectors: Mapping[str, Sequence[float]], functions: Sequence[str],
                      substituted: Sequence[str], suffix: str = "_twin") -> dict:
    """Per substituted function f: distance(f, f+suffix) and the mean distance from f
    to every other function in ``functions`` (synonyms excluded)."""
    out = {}
    for f in substituted:
        twin = f + suffix
        if f not in vectors:
            raise KeyError(f"no embedding for {f!r}")
        others = [g for g in functions if g != f and g in vectors]
        out[f] = {
            "to_synonym": cosine_distance(vectors[f], vectors[twin]) if twin in vectors else None,
            "to_other_functions": (sum(cosine_distance(vectors[f], vectors[g]) for g in others)
                                   / len(others)) if others else None,
        }
    return out
