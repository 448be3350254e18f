"""Nie, Wang and Bansal's (2019) findings, checked on one seed's results at a time (see
:mod:`compsuite.eval.reports.findings`): fooled by SOSWAP (Table 2), undone by SOSWAP
training (Table 4), every model lower on CS_λ (Table 5), the BoW and WS variants lower
still (Table 5), S-TLSTM above ESIM on CS_λ (section 5.6) and ADDAMOD read as entailment
(Table 2).  Numbers are percentages, as in the results; CS_λ is the largest λ the
results have (0.7 in the profiles).  One list of findings per dataset (SNLI, MNLI, the
synthetic corpus), since each is its own Table 5.
"""
from __future__ import annotations

from compsuite.eval.nli.report import row_name
from compsuite.eval.reports.findings import Check, Finding, Missing


def _rows(results: list[dict], dataset: str) -> dict[str, dict]:
    """Row name (as in the report) -> the seed's result on ``dataset``."""
    rows = {row_name(r): r for r in results if r.get("dataset") == dataset and r.get("eval")}
    if not rows:
        raise Missing(f"no results on {dataset}")
    return rows


def _row(results: list[dict], dataset: str, name: str, lacking: str) -> dict:
    """The seed's result of the row ``name`` on ``dataset``; Missing(``lacking``) if none."""
    r = _rows(results, dataset).get(name)
    if r is None:
        raise Missing(lacking)
    return r


def _plain(r: dict) -> bool:
    return r.get("variant", "original") == "original" and r.get("augment", "none") in (None, "none")


def _scores(r: dict) -> tuple[float, float, str]:
    """Whole-set accuracy, accuracy on CS_λ for the largest λ, and that λ (first
    evaluation set)."""
    score = next(iter(r["eval"].values()))["score"]
    lam = max(score["cs"], key=float)
    return score["whole"], score["cs"][lam]["accuracy"], lam


def _share(r: dict, kind: str, label: str) -> float:
    adv = (r.get("adversaries") or {}).get(kind)
    if not adv:
        raise Missing(f"{row_name(r)} has no {kind.upper()} predictions")
    return adv["shares"][label]


def _fooled(dataset):
    def check(results):
        plain = {n: r for n, r in _rows(results, dataset).items() if _plain(r)}
        if not plain:
            raise Missing("no model trained without adversaries or variants")
        shares = {f"{n}: SOSWAP E %": _share(r, "soswap", "entailment") for n, r in plain.items()}
        fooled = sum(v > 50 for v in shares.values())
        return Check(fooled > len(shares) / 2, {"models fooled": fooled, **shares})
    return check


def _augmented(dataset):
    def check(results):
        r = _row(results, dataset, "ESIM + adv. SOSWAP",
                 "no ESIM trained with SOSWAP adversaries (esim-adv-soswap)")
        c = _share(r, "soswap", "contradiction")
        return Check(c > 90, {"ESIM + adv. SOSWAP: SOSWAP C %": c})
    return check


def _drops(rows: dict[str, dict]) -> dict[str, float]:
    out = {}
    for name, r in rows.items():
        whole, cs, _ = _scores(r)
        out[name] = whole - cs
    return out


def _cs_drop(dataset):
    def check(results):   # Table 5's rows: no model trained on adversaries
        drops = _drops({n: r for n, r in _rows(results, dataset).items()
                        if r.get("augment", "none") in (None, "none")})
        return Check(all(d > 0 for d in drops.values()),
                     {f"{n}: whole - CS": d for n, d in drops.items()})
    return check


def _variants_fall(dataset):
    def check(results):
        rows = _rows(results, dataset)
        drops = _drops(rows)
        pairs = []
        for name, r in rows.items():
            if r.get("variant", "original") == "original" or r.get("augment", "none") not in (None, "none"):
                continue
            original = next((n for n, o in rows.items() if _plain(o)
                             and o.get("model") == r.get("model")), None)
            if original is not None:
                pairs.append((name, original))
        if not pairs:
            raise Missing("no BoW or WS variant beside its original model")
        values = {}
        for variant, original in pairs:
            values[f"{variant}: whole - CS"] = drops[variant]
            values[f"{original}: whole - CS"] = drops[original]
        return Check(all(drops[v] > drops[o] for v, o in pairs), values)
    return check


def _stlstm_above_esim(dataset):
    def check(results):
        s, e = (_scores(_row(results, dataset, name, "needs both S-TLSTM and ESIM"))[1]
                for name in ("S-TLSTM", "ESIM"))
        return Check(s > e, {"S-TLSTM: CS": s, "ESIM: CS": e})
    return check


def _addamod_entailment(dataset):
    def check(results):
        r = _row(results, dataset, "ESIM", "no ESIM trained without adversaries")
        shares = {f"ESIM: ADDAMOD {k[0].upper()} %": _share(r, "addamod", k)
                  for k in ("entailment", "contradiction", "neutral")}
        return Check(shares["ESIM: ADDAMOD E %"] > 50, shares)
    return check


def findings(datasets: list[str]) -> list[Finding]:
    """The paper's findings on each of ``datasets``."""
    out = []
    for ds in datasets:
        out += [
            Finding(f"fooled by SOSWAP ({ds})",
                    "Models trained without adversaries call most SOSWAP pairs (subject "
                    "and object swapped) entailment: 84.9-99.7% for all seven",
                    "Table 2",
                    "more than half of the models trained without adversaries, BoW or WS "
                    "label more than 50% of the SOSWAP pairs entailment",
                    _fooled(ds)),
            Finding(f"SOSWAP training ({ds})",
                    "ESIM trained with SOSWAP adversaries calls them contradiction: 99.1%",
                    "Table 4", "ESIM + adv. SOSWAP labels more than 90% of them "
                    "contradiction", _augmented(ds)),
            Finding(f"lower on CS ({ds})",
                    "Every model is less accurate on the compositionality-sensitivity "
                    "subset CS_λ than on the whole set (SNLI CS_0.7: 50.3-57.5 against "
                    "85.9-88.3)", "Table 5",
                    "every model trained without adversaries (Table 5's rows) is less "
                    "accurate on CS_λ (the largest λ) than on the whole set", _cs_drop(ds)),
            Finding(f"BoW and WS lower still ({ds})",
                    "Bag-of-words and word-shuffled variants lose more on CS_λ than their "
                    "original models (SNLI: ESIM 32.9 points, its BoW 41.9, WS 41.3)",
                    "Table 5, rows 9-13",
                    "each variant's drop from the whole set to CS_λ is larger than its "
                    "original model's", _variants_fall(ds)),
            Finding(f"S-TLSTM above ESIM ({ds})",
                    "The syntactic tree-LSTM does better than ESIM on CS_λ (SNLI CS_0.7: "
                    "57.51 against 55.28)", "section 5.6, Table 5",
                    "S-TLSTM's accuracy on CS_λ is above ESIM's", _stlstm_above_esim(ds)),
            Finding(f"ADDAMOD read as entailment ({ds})",
                    "ESIM calls most ADDAMOD pairs (an adjective moved to the other noun) "
                    "entailment: 85.6%", "Table 2",
                    "ESIM labels more than 50% of the ADDAMOD pairs entailment",
                    _addamod_entailment(ds)),
        ]
    return out
