"""NLI compositionality-sensitivity (Nie, Wang and Bansal 2019): SOSWAP / ADDAMOD
adversaries, the lexical classifier's LMS and CS_λ subsets, and fairseq NLI models
(ESIM, DAM, RSE; bag-of-words and word-shuffled variants; adversarial augmentation),
as a study of the suite.

YAML (``compsuite/experiments/nli.yaml``).  Study key ``rows``: run -> ``{model,
variant, augment}``, how the report labels the run (``model`` as the paper prints it;
``variant`` ``original`` / ``bow`` / ``ws``; ``augment`` ``none`` / ``soswap`` /
``addamod``: the run trains with the training premises' adversaries of that kind added
each epoch).  In a profile, besides the keys every profile has:

* ``data``: ``corpus: synthetic`` (the quick profile's seeded corpus,
  :mod:`compsuite.data_prep.nli.synthetic`; scaled down, not SNLI) with ``n_train`` /
  ``n_dev`` / ``n_test`` / ``seed``; or ``corpus: files`` with ``datasets``: name ->
  ``{train: [jsonl, ...], valid: jsonl, evals: {set: jsonl, ...}}`` (a user's SNLI /
  MultiNLI files with parses; paths may name environment variables, e.g.
  ``${SNLI_DIR}``) and ``lexical_train`` (the files the lexical classifier learns from;
  the paper: SNLI + MNLI train);
* ``adversaries``: ``rules`` (``strict`` / ``lenient``) and ``seed``;
* ``lexical``: ``C`` (absent: chosen by the held-out log-loss rule) and ``hash_bits``
  (hash the features, for SNLI + MNLI sized training sets);
* ``augment_per_epoch``: adversaries added to each training epoch (footnote 6:
  20,000);
* ``embeddings``: a GloVe-format file (environment variables allowed) every run starts
  its word vectors from; absent: learned from scratch;
* ``lambdas``: the CS_λ columns (Table 5: 0.5, 0.6, 0.7);
* ``reference_sample``: an SNLI-format jsonl (the shipped reference sample) on which
  the adversary rules, the Human row and a cross-fitted lexical classifier also run;
  skipped when the file is absent.

Units: ``<dataset>/<run>/seed<S>`` (one part per dataset).  Data:
``DATA/nli/<dataset>/<size>/`` (:mod:`compsuite.data_prep.nli.corpus`).  Evaluation
predicts every evaluation set and both adversary sets with the run's best checkpoint
(by validation accuracy), in batches; the predictions are kept as ``pairID<TAB>label``
files in the run folder, the format ``compsuite eval nli score`` reads from any system.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from compsuite.engine import Context, Unit
from compsuite.errors import ConfigError
from compsuite.registry import Profile, check_keys, near, positive_int
from compsuite.studies.base import Study
from compsuite.toolkits import Dataset

DATA_KEYS = {"corpus", "n_train", "n_dev", "n_test", "seed", "datasets", "lexical_train"}
SET_KEYS = {"train", "valid", "evals"}
ADV_KEYS = {"rules", "seed"}
LEX_KEYS = {"C", "hash_bits"}
ROW_KEYS = {"model", "variant", "augment"}
VARIANTS = ("original", "bow", "ws")
AUGMENTS = ("none", "soswap", "addamod")
CORPORA = ("synthetic", "files")
DEFAULT_LAMBDAS = (0.5, 0.6, 0.7)


class NLI(Study):
    study_keys = frozenset({"rows"})
    profile_keys = frozenset({"data", "adversaries", "lexical", "augment_per_epoch",
                              "embeddings", "lambdas", "reference_sample"})

    @classmethod
    def commands(cls):
        return {"data": add_data_commands, "eval": add_eval_commands}

    # ------------------------------------------------------------------ YAML
    @property
    def rows(self) -> dict:
        return self.spec.raw.get("rows") or {}

    def validate(self) -> None:
        rows = check_keys(self.rows, self.runs, self.where("rows"))
        for run, row in rows.items():
            at = self.where("rows", run)
            check_keys(row, ROW_KEYS, at)
            if row.get("variant", "original") not in VARIANTS:
                raise ConfigError(f"{at}.variant: one of {', '.join(VARIANTS)}, not "
                                  f"{row.get('variant')!r}")
            if row.get("augment", "none") not in AUGMENTS:
                raise ConfigError(f"{at}.augment: one of {', '.join(AUGMENTS)}, not "
                                  f"{row.get('augment')!r}")
        for name, prof in self.profiles.items():
            at = self.where("profiles", name)
            data = check_keys(prof.options.get("data") or {}, DATA_KEYS, f"{at}.data")
            corpus = data.get("corpus", "synthetic")
            if corpus not in CORPORA:
                raise ConfigError(f"{at}.data.corpus: one of {', '.join(CORPORA)}, not "
                                  f"{corpus!r}{near(str(corpus), CORPORA)}")
            if corpus == "synthetic":
                for key in ("n_train", "n_dev", "n_test", "seed"):
                    if key in data:
                        positive_int(data[key], f"{at}.data.{key}")
                for key in ("datasets", "lexical_train"):
                    if key in data:
                        raise ConfigError(f"{at}.data.{key}: only for corpus: files")
            else:
                sets = data.get("datasets")
                if not isinstance(sets, dict) or not sets:
                    raise ConfigError(f"{at}.data.datasets: name -> {{train, valid, evals}}")
                for ds, spec in sets.items():
                    w = f"{at}.data.datasets.{ds}"
                    check_keys(spec, SET_KEYS, w)
                    for key in SET_KEYS:
                        if key not in spec:
                            raise ConfigError(f"{w}: missing required key '{key}'")
                    if not isinstance(spec["train"], list) or not spec["train"]:
                        raise ConfigError(f"{w}.train: a list of jsonl paths")
                    if not isinstance(spec["evals"], dict) or not spec["evals"]:
                        raise ConfigError(f"{w}.evals: set name -> jsonl path")
            adv = check_keys(prof.options.get("adversaries") or {}, ADV_KEYS, f"{at}.adversaries")
            if adv.get("rules", "strict") not in ("strict", "lenient"):
                raise ConfigError(f"{at}.adversaries.rules: 'strict' or 'lenient', not "
                                  f"{adv.get('rules')!r}")
            check_keys(prof.options.get("lexical") or {}, LEX_KEYS, f"{at}.lexical")
            if "augment_per_epoch" in prof.options:
                positive_int(prof.options["augment_per_epoch"], f"{at}.augment_per_epoch")
            lams = prof.options.get("lambdas", list(DEFAULT_LAMBDAS))
            if (not isinstance(lams, list) or not lams or any(
                    isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1
                    for v in lams)):
                raise ConfigError(f"{at}.lambdas: a list of numbers in [0, 1], not {lams!r}")
            for r in prof.runs:
                if r not in self.rows:
                    raise ConfigError(f"{self.where('rows')}: no row for run '{r}' (profile "
                                      f"{name})")

    # ------------------------------------------------------------------ units
    def _datasets(self, profile: Profile) -> list[str]:
        data = profile.options.get("data") or {}
        if data.get("corpus", "synthetic") == "files":
            return list(data["datasets"])
        return ["synthetic"]

    def parts(self, profile: Profile) -> dict[str, str]:
        return {d: ("a seeded synthetic NLI corpus (scaled down, not SNLI)" if d == "synthetic"
                    else f"the user's {d} files") for d in self._datasets(profile)}

    def row(self, run: str) -> dict:
        r = self.rows.get(run) or {}
        return {"model": r.get("model", self.architectures[self.run(run).architecture]
                               ["paper_name"]),
                "variant": r.get("variant", "original"), "augment": r.get("augment", "none")}

    def _pools(self, profile: Profile) -> bool:
        return any(self.row(r)["augment"] != "none" for r in profile.runs)

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        from compsuite.data_prep.common.writers import fairseq_subsets

        units = []
        for ds in self._datasets(profile):
            splits = self._splits(profile, ds)
            subsets = fairseq_subsets(splits)
            for s in seeds or profile.seeds:
                for r in runs or profile.runs:
                    row = self.row(r)
                    opts = {}
                    if row["augment"] != "none":
                        opts["augment_subsets"] = subsets[f"pool_{row['augment']}"]
                        opts["augment_per_epoch"] = profile.options.get(
                            "augment_per_epoch", 20000)
                    if profile.options.get("embeddings"):
                        opts["embedding_path"] = str(_resolve(
                            profile.options["embeddings"],
                            self.where("profiles", profile.name, "embeddings"), check=False))
                    units.append(Unit(ds, r, s, ds, f"{ds}/{r}/seed{s}", params=row,
                                      train_options=opts or None))
        return units

    # ------------------------------------------------------------------ data
    def _source(self, profile: Profile, dataset: str, data_root: Path, check: bool = True):
        from compsuite.data_prep.nli.corpus import Source

        data = profile.options.get("data") or {}
        at = self.where("profiles", profile.name, "data")
        if data.get("corpus", "synthetic") == "synthetic":
            from compsuite.data_prep.nli import synthetic

            n = (data.get("n_train", 20000), data.get("n_dev", 2000), data.get("n_test", 2000))
            text = data_root / "nli" / "synthetic" / f"n{n[0]}-{n[1]}-{n[2]}" / \
                f"seed{data.get('seed', 1)}" / "text"
            if check:
                synthetic.write(text, data.get("seed", 1), *n)
            return Source("synthetic", [text / "train.jsonl"], text / "dev.jsonl",
                          {"synthetic": text / "test.jsonl"},
                          label="synthetic NLI corpus (scaled down, not SNLI)")
        spec = data["datasets"][dataset]
        w = f"{at}.datasets.{dataset}"
        return Source(dataset, [_resolve(p, f"{w}.train", check) for p in spec["train"]],
                      _resolve(spec["valid"], f"{w}.valid", check),
                      {k: _resolve(v, f"{w}.evals.{k}", check) for k, v in spec["evals"].items()},
                      label=f"{dataset} (user files)",
                      lexical_train=[_resolve(p, f"{at}.lexical_train", check)
                                     for p in data.get("lexical_train") or []])

    def _splits(self, profile: Profile, dataset: str) -> tuple[str, ...]:
        from compsuite.data_prep.nli.corpus import splits_of

        return splits_of(self._source(profile, dataset, Path("DATA"), check=False),
                         self._pools(profile))

    def _root(self, source, data_root: Path) -> Path:
        if source.name == "synthetic":
            return source.valid.parent.parent
        return data_root / "nli" / source.name

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.nli import corpus

        source = self._source(profile, dataset, Path(data_root))
        root = self._root(source, Path(data_root))
        adv = profile.options.get("adversaries") or {}
        corpus.build(root, source, rules=adv.get("rules", "strict"), seed=adv.get("seed", 1),
                     pools=self._pools(profile), lexical=profile.options.get("lexical") or {},
                     show=show)
        if profile.options.get("embeddings"):
            _resolve(profile.options["embeddings"],
                     self.where("profiles", profile.name, "embeddings"))
        sample = profile.options.get("reference_sample")
        if sample:
            path = _resolve(sample, self.where("profiles", profile.name, "reference_sample"),
                            check=False)
            if path.is_file():
                corpus.reference_analysis(path, root / "reference", seed=adv.get("seed", 1),
                                          show=show)
        return Dataset(root, splits=corpus.splits_of(source, self._pools(profile)),
                       label=source.label, allow_unknown=True, layout="sentence_pair")

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        from compsuite.data_prep.common.manifest import read_manifest
        from compsuite.data_prep.nli import corpus
        from compsuite.eval import nli as score

        lambdas = [float(v) for v in ctx.profile.options.get("lambdas", DEFAULT_LAMBDAS)]
        raw = ctx.data.raw
        sets = read_manifest(raw)["statistics"]["eval_sets"]
        rows = json.loads((ctx.data.root / "lexical" / "rows.json").read_text(encoding="utf-8"))
        clf = ctx.load(kind="classifier")
        out = {"eval": {}, "adversaries": {}, "reference_rows": rows["sets"],
               "lexical_signature": rows["signature"], "checkpoint": ctx.checkpoint}
        for name, split in sets.items():
            gold, pred = _predict(clf, raw, split, ctx.run_dir)
            values = corpus.read_lms(ctx.data.root, name)
            res = score.score_dev(gold, pred, values, lambdas, rows["signature"])
            curve = score.score_dev(gold, pred, values, corpus.LAMBDA_GRID, rows["signature"])
            out["eval"][name] = {"score": res, "by_lambda": [
                {"lambda": float(k), "accuracy": v["accuracy"], "n": v["n"]}
                for k, v in curve["cs"].items()]}
        for kind in ("soswap", "addamod"):
            gold, pred = _predict(clf, raw, f"adv_{kind}", ctx.run_dir)
            out["adversaries"][kind] = score.score_adversary(pred, gold)
        unknown = getattr(clf, "unknown_words", None)
        if unknown is not None:
            out["unknown_words"] = unknown
        ref = ctx.data.root / "reference" / "summary.json"
        if ref.is_file():
            out["reference_sample"] = json.loads(ref.read_text(encoding="utf-8"))
        return out

    def report(self, profile: str, results: list[dict], out_dir: Path) -> str:
        from compsuite.eval.reports.nli import build_report

        build_report(self, profile, results, out_dir)
        return "report.md, report.json, accuracy_by_lambda.png"


STUDY = NLI


def _resolve(value: str, where: str, check: bool = True) -> Path:
    from compsuite.studies.paradox import resolve_path

    import os

    from compsuite.registry import ROOT

    expanded = os.path.expanduser(os.path.expandvars(value))
    if not os.path.isabs(expanded) and "$" not in expanded:
        value = expanded = str(ROOT / expanded)   # relative paths: from the suite's folder
    if check:
        return resolve_path(value, where)
    return Path(expanded)


def _predict(clf, raw: Path, split: str, run_dir: Path) -> tuple[list[str], list[str]]:
    """Gold labels and the model's predictions on a raw split; the predictions are
    stored as ``predictions-<split>.tsv`` (``pairID<TAB>label``) and reused."""
    from compsuite.data_prep.common.io import atomic_open
    from compsuite.data_prep.nli.corpus import read_split
    from compsuite.eval.nli import align, read_predictions

    cols = read_split(raw, split)
    path = run_dir / f"predictions-{split}.tsv"
    if path.is_file():
        pred = align(cols["pairid"], read_predictions(path), str(path))
    else:
        pred = clf.predict(list(zip(cols["premise"], cols["hypothesis"])))
        with atomic_open(path) as fh:
            fh.writelines(f"{i}\t{p}\n" for i, p in zip(cols["pairid"], pred))
    return cols["label"], pred


# ----------------------------------------------------------------------------- commands
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.data_prep.nli import adversaries, synthetic

    sub = parser.add_subparsers(dest="action", required=True)
    a = sub.add_parser("adversaries", help="SOSWAP and ADDAMOD from an SNLI/MNLI jsonl's parses")
    adversaries.add_arguments(a)
    a.set_defaults(func=adversaries.run)
    s = sub.add_parser("synthetic", help="the quick profile's seeded synthetic NLI corpus")
    synthetic.add_arguments(s)
    s.set_defaults(func=synthetic.run)
    p = sub.add_parser("prepare", help="a dataset from jsonl files: raw text, adversaries, "
                                       "the lexical classifier's LMS")
    p.add_argument("--train", nargs="+", required=True, help="training jsonl file(s)")
    p.add_argument("--valid", required=True, help="validation jsonl")
    p.add_argument("--eval", nargs="+", required=True, metavar="NAME=JSONL",
                   help="evaluation sets (the first gives the adversaries)")
    p.add_argument("--lexical-train", nargs="*", default=[],
                   help="files the lexical classifier learns from (default: --train)")
    p.add_argument("--rules", choices=("strict", "lenient"), default="strict")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pools", action="store_true",
                   help="also build the training premises' adversaries (augmentation pool)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_prepare)


def cmd_prepare(a) -> int:
    from compsuite.data_prep.nli.corpus import Source, build

    evals = {}
    for item in a.eval:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--eval {item}: NAME=JSONL")
        evals[name] = Path(path)
    source = Source(Path(a.out).name, [Path(p) for p in a.train], Path(a.valid), evals,
                    lexical_train=[Path(p) for p in a.lexical_train])
    m = build(a.out, source, rules=a.rules, seed=a.seed, pools=a.pools)
    print(f"wrote {a.out}: {m['counts']}")
    return 0


def add_eval_commands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    s = sub.add_parser("score", help="score any system's predictions (pairID<TAB>label)")
    s.add_argument("--data", required=True,
                   help="a prepared dataset folder (DATA/nli/<dataset>/...: raw/, lexical/)")
    s.add_argument("--predictions", required=True,
                   help="pairID<TAB>label for the evaluation set (labels: entailment, "
                        "neutral, contradiction or e/n/c)")
    s.add_argument("--set", help="the evaluation set (default: the first)")
    s.add_argument("--soswap", help="predictions on the SOSWAP set (pairID<TAB>label)")
    s.add_argument("--addamod", help="predictions on the ADDAMOD set")
    s.add_argument("--lambdas", type=float, nargs="+", default=list(DEFAULT_LAMBDAS))
    s.add_argument("--out", help="also write the scores here (JSON)")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    from compsuite.data_prep.common.io import atomic_open
    from compsuite.data_prep.common.manifest import read_manifest
    from compsuite.data_prep.nli.corpus import read_lms, read_split
    from compsuite.eval import nli as score
    from compsuite.eval.nli_lexical import _check_lambda

    root = Path(a.data)
    m = read_manifest(root / "raw")
    if m is None:
        raise ConfigError(f"{root}: no raw/manifest.json (prepare the dataset first)")
    sets = m["statistics"]["eval_sets"]
    name = a.set or next(iter(sets))
    if name not in sets:
        raise ConfigError(f"--set {name}: the dataset's sets are {', '.join(sets)}"
                          f"{near(name, sets)}")
    lambdas = [_check_lambda(v) for v in a.lambdas]
    rows = json.loads((root / "lexical" / "rows.json").read_text(encoding="utf-8"))
    cols = read_split(root / "raw", sets[name])
    pred = score.align(cols["pairid"], score.read_predictions(a.predictions), a.predictions)
    out = {"set": name, "score": score.score_dev(cols["label"], pred, read_lms(root, name),
                                                 lambdas, rows["signature"]),
           "adversaries": {}}
    for kind in ("soswap", "addamod"):
        path = getattr(a, kind)
        if path:
            adv = read_split(root / "raw", f"adv_{kind}")
            p = score.align(adv["pairid"], score.read_predictions(path), path)
            out["adversaries"][kind] = score.score_adversary(p, adv["label"])
    s = out["score"]
    print(f"{name}: accuracy {s['whole']:.2f} on {s['n']} pairs; " + "; ".join(
        f"CS_{k} {v['accuracy']:.2f} ({v['n']})" if v["accuracy"] is not None
        else f"CS_{k} - (0)" for k, v in s["cs"].items()))
    for kind, r in out["adversaries"].items():
        sh = r["shares"]
        print(f"{kind}: E {sh['entailment']:.1f} / C {sh['contradiction']:.1f} / "
              f"N {sh['neutral']:.1f} on {r['n']} pairs")
    print(s["signature"])
    if a.out:
        with atomic_open(Path(a.out)) as fh:
            json.dump(out, fh, indent=1)
    return 0
