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

The keys are declared as types (:class:`Rows`, :class:`Row`; :class:`Options` with
:class:`Data`, :class:`Adversaries`, :class:`Lexical`; :mod:`compsuite.schema` checks
them).

Units: ``<dataset>/<run>/seed<S>`` (one part per dataset).  Data
(:mod:`compsuite.data_prep.nli.dataset`, :mod:`compsuite.data_prep.nli.corpus`):
``DATA/nli/synthetic/n<train>-<dev>-<test>/seed<D>/`` (``text/`` the generated jsonl)
or ``DATA/nli/<dataset>/``, each with ``raw/``, ``adversaries/``, ``lexical/``.
Evaluation (:mod:`compsuite.eval.nli.predict`, :mod:`compsuite.eval.nli.scores`)
predicts every evaluation set and both adversary sets with the run's best checkpoint
(by validation accuracy), in batches; the predictions are kept as ``pairID<TAB>label``
files in the run folder, the format ``compsuite eval nli score`` reads from any system.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from compsuite.foundation.checkout import ROOT
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.schema import PositiveInt, check_keys, non_empty, within
from compsuite.studies.base import Context, Profile, Study, Unit

#: a row's variant: the original model, bag-of-words (recurrent layers replaced by
#: feed-forward ones) or trained on word-shuffled sentences (Table 3)
Variant = Literal["original", "bow", "ws"]
#: the adversaries a run trains with (Table 4)
Augment = Literal["none", "soswap", "addamod"]
VARIANTS = typing.get_args(Variant)
AUGMENTS = typing.get_args(Augment)
DEFAULT_LAMBDAS = (0.5, 0.6, 0.7)


# ----------------------------------------------------------------------------- YAML
@dataclass
class Row:
    """How the report labels a run: ``model`` as the paper prints it (absent: the
    architecture's ``paper_name``), the ``variant`` and the adversaries it trains with
    (``augment``)."""
    model: str | None = None
    variant: Variant = "original"
    augment: Augment = "none"


@dataclass
class Rows:
    """The study's own top-level key: ``rows``, run -> :class:`Row` (every key a run of
    the study, every profile's run a key: :meth:`NLI.check_profile`)."""
    rows: dict[str, Row] = field(default_factory=dict)


@dataclass
class DatasetFiles:
    """One dataset of a user's files (jsonl with parses; environment variables allowed).
    ``evals``: set name -> file, in order (the first gives the adversaries)."""
    train: Annotated[list[str], non_empty]
    valid: str
    evals: Annotated[dict[str, str], non_empty]


@dataclass
class Data:
    """A profile's ``data:``: ``corpus: synthetic`` (sizes and seed) or ``corpus: files``
    (``datasets`` and ``lexical_train``, errors for synthetic)."""
    corpus: Literal["synthetic", "files"] = "synthetic"
    n_train: PositiveInt = 20000
    n_dev: PositiveInt = 2000
    n_test: PositiveInt = 2000
    seed: PositiveInt = 1
    datasets: dict[str, DatasetFiles] | None = None
    lexical_train: list[str] | None = None

    def check(self, where: str) -> None:
        if self.corpus == "synthetic":
            for key in ("datasets", "lexical_train"):
                if getattr(self, key) is not None:
                    raise ConfigError(f"{where}.{key}: only for corpus: files")
        elif not self.datasets:
            raise ConfigError(f"{where}.datasets: name -> {{train, valid, evals}}")


@dataclass
class Adversaries:
    """The adversary rules (``strict`` / ``lenient``) and their seed."""
    rules: Literal["strict", "lenient"] = "strict"
    seed: int = 1


@dataclass
class Lexical:
    """The lexical classifier: ``C`` (absent: the held-out log-loss rule) and
    ``hash_bits`` (hashed features)."""
    C: float | None = None
    hash_bits: int | None = None


@dataclass
class Options:
    """The keys an NLI profile adds."""
    data: Data = field(default_factory=Data)
    adversaries: Adversaries = field(default_factory=Adversaries)
    lexical: Lexical = field(default_factory=Lexical)
    augment_per_epoch: PositiveInt = 20000
    embeddings: str | None = None
    lambdas: Annotated[list[Annotated[float, within(0, 1)]], non_empty] = field(
        default_factory=lambda: list(DEFAULT_LAMBDAS))
    reference_sample: str | None = None


class NLI(Study):
    study_schema = Rows
    profile_schema = Options

    @classmethod
    def commands(cls):
        from compsuite.studies.nli.commands import add_data_commands, add_eval_commands

        return {"data": add_data_commands, "eval": add_eval_commands}

    @property
    def rows(self) -> dict[str, Row]:
        return self.settings.rows

    def check_profile(self, profile: Profile, where: str) -> None:
        check_keys(self.rows, self.runs, self.where("rows"))
        for r in profile.runs:
            if r not in self.rows:
                raise ConfigError(f"{self.where('rows')}: no row for run '{r}' (profile "
                                  f"{profile.name})")

    # ------------------------------------------------------------------ units
    def _datasets(self, profile: Profile) -> list[str]:
        data = profile.settings.data
        return list(data.datasets) if data.corpus == "files" else ["synthetic"]

    def parts(self, profile: Profile) -> dict[str, str]:
        return {d: ("a seeded synthetic NLI corpus (scaled down, not SNLI)" if d == "synthetic"
                    else f"the user's {d} files") for d in self._datasets(profile)}

    def row(self, run: str) -> dict:
        r = self.rows.get(run) or Row()
        return {"model": r.model if r.model is not None else
                self.architectures[self.run(run).architecture]["paper_name"],
                "variant": r.variant, "augment": r.augment}

    def _pools(self, profile: Profile) -> bool:
        return any(self.row(r)["augment"] != "none" for r in profile.runs)

    def _train_options(self, profile: Profile, row: dict, subsets: dict) -> dict | None:
        from compsuite.data_prep.common.paths import resolve_path

        opts = {}
        if row["augment"] != "none":
            opts["augment_subsets"] = subsets[f"pool_{row['augment']}"]
            opts["augment_per_epoch"] = profile.settings.augment_per_epoch
        if profile.settings.embeddings:
            opts["embedding_path"] = str(resolve_path(
                profile.settings.embeddings, self.where("profiles", profile.name, "embeddings"),
                base=ROOT, check=False))
        return opts or None

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        from compsuite.toolkits import get_backend

        units = []
        for ds in self._datasets(profile):
            for s in seeds or profile.seeds:
                for r in runs or profile.runs:
                    row = self.row(r)
                    # the pools by the names the run's data folder gives them
                    subsets = get_backend(self.run(r).toolkit).split_names(
                        self.splits(profile, ds))
                    units.append(Unit(ds, r, s, ds, f"{ds}/{r}/seed{s}", params=row,
                                      train_options=self._train_options(profile, row, subsets)))
        return units

    # ------------------------------------------------------------------ data
    def data_source(self, profile: Profile, dataset: str, data_root: Path, check: bool = True):
        """Where ``dataset``'s pairs come from (the synthetic corpus is written unless
        ``check`` is false; the user's paths are checked unless it is)."""
        from compsuite.data_prep.nli import dataset as nli_data

        data = profile.settings.data
        if data.corpus == "synthetic":
            return nli_data.synthetic_source(data_root, n_train=data.n_train,
                                             n_dev=data.n_dev, n_test=data.n_test,
                                             seed=data.seed, write=check)
        spec = data.datasets[dataset]
        return nli_data.files_source(dataset, train=spec.train, valid=spec.valid,
                                     evals=spec.evals, lexical_train=data.lexical_train or [],
                                     where=self.where("profiles", profile.name, "data"),
                                     base=ROOT, check=check)

    def splits(self, profile: Profile, dataset: str) -> tuple[str, ...]:
        """The raw splits of ``dataset`` (its evaluation sets, the adversaries and, when a
        run trains with them, the augmentation pools)."""
        from compsuite.data_prep.nli.corpus import splits_of

        return splits_of(self.data_source(profile, dataset, Path("DATA"), check=False),
                         self._pools(profile))

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.common.paths import resolve_path
        from compsuite.data_prep.nli import dataset as nli_data

        opts = profile.settings
        source = self.data_source(profile, dataset, Path(data_root))
        data = nli_data.build(source, Path(data_root), rules=opts.adversaries.rules,
                              seed=opts.adversaries.seed, pools=self._pools(profile),
                              lexical=dataclasses.asdict(opts.lexical), show=show)
        if opts.embeddings:
            resolve_path(opts.embeddings, self.where("profiles", profile.name, "embeddings"),
                         base=ROOT)
        if opts.reference_sample:
            sample = resolve_path(opts.reference_sample,
                                  self.where("profiles", profile.name, "reference_sample"),
                                  base=ROOT, check=False)
            nli_data.reference(sample, data.root, seed=opts.adversaries.seed, show=show)
        return data

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        from compsuite.data_prep.nli import corpus
        from compsuite.eval.nli import scores
        from compsuite.eval.nli.predict import predict_split, to_predict
        from compsuite.models.protocol import progress
        from compsuite.foundation.manifest import read_manifest

        lambdas = [float(v) for v in ctx.profile.settings.lambdas]
        raw = ctx.data.raw
        sets = read_manifest(raw)["statistics"]["eval_sets"]
        rows = json.loads((ctx.data.root / "lexical" / "rows.json").read_text(encoding="utf-8"))
        clf = ctx.load(kind="classifier")
        out = {"eval": {}, "adversaries": {}, "reference_rows": rows["sets"],
               "lexical_signature": rows["signature"], "checkpoint": ctx.checkpoint}
        splits = list(dict.fromkeys([*sets.values(), "adv_soswap", "adv_addamod"]))
        todo = to_predict(raw, splits, ctx.run_dir)
        with progress(clf, todo, f"classify the evaluation sets [{ctx.unit.path}]",
                      ctx.show and todo > 0, unit="pair"):
            predicted = {s: predict_split(clf, raw, s, ctx.run_dir) for s in splits}
        for name, split in sets.items():
            gold, pred = predicted[split]
            values = corpus.read_lms(ctx.data.root, name)
            res = scores.score_dev(gold, pred, values, lambdas, rows["signature"])
            curve = scores.score_dev(gold, pred, values, corpus.LAMBDA_GRID, rows["signature"])
            out["eval"][name] = {"score": res, "by_lambda": [
                {"lambda": float(k), "accuracy": v["accuracy"], "n": v["n"]}
                for k, v in curve["cs"].items()]}
        for kind in ("soswap", "addamod"):
            gold, pred = predicted[f"adv_{kind}"]
            out["adversaries"][kind] = scores.score_adversary(pred, gold)
        unknown = getattr(clf, "unknown_words", None)   # a model that counts them
        if unknown is not None:
            out["unknown_words"] = unknown
        ref = ctx.data.root / "reference" / "summary.json"
        if ref.is_file():
            out["reference_sample"] = json.loads(ref.read_text(encoding="utf-8"))
        return out

    def findings(self, profile: Profile) -> list:
        from compsuite.eval.nli.findings import findings

        return findings(list(self.parts(profile)))

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        from compsuite.eval.nli.report import build_report

        return build_report(self, profile, results, out_dir)


STUDY = NLI
