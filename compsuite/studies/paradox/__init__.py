"""The paradox of compositionality (Dankers, Bruni and Hupkes 2022): English-to-Dutch
systematicity, substitutivity and idiom overgeneralisation tests of fairseq models, as
a study of the suite.  A profile (or ``--runs``) may also name an evaluate-only run (a
model brought as it is: an hf run with ``train: false``, such as ``marian-hf``, or a
command run): it is tested once, with its one model, on the tests' plain English.

YAML (``compsuite/experiments/paradox.yaml``), in a profile besides the keys every
profile has:

* ``data``: ``corpus: generated`` (the quick profile's rule-generated English-Dutch
  pairs with inserted idioms, :mod:`compsuite.data_prep.paradox.corpus`; scaled down,
  not OPUS) with ``n_train`` / ``n_valid`` / ``n_test`` and ``seed``; or ``corpus:
  opus`` (a user's OPUS corpus, :mod:`compsuite.data_prep.paradox.opus`) with ``sizes``
  (the paper's ``small``, ``medium``, ``full``), ``en`` / ``nl`` (the corpus's two
  sides), ``flores`` (the Flores-101 folder), each a path that may name environment
  variables (``${PARADOX_OPUS_EN}``), ``bpe_merges`` (60,000), ``small_pairs``
  (1,000,000), ``jobs`` (tokenising processes), ``seed`` (the pair selection) and
  ``checkpoint_epochs`` (size -> the epochs whose model is kept and tested for
  overgeneralisation; the run's ``save_epochs``);
* ``tests``: ``n`` (samples per template per condition; 500 in the paper), ``seed``,
  ``semi_natural`` / ``natural`` (folders of the released / the user's files; absent:
  those conditions are skipped), ``idioms``: ``table7`` (the paper's 20) or ``quick``
  (the four idioms the generated corpus holds).

The keys are declared as types (:class:`Options`, :class:`Data`, :class:`Tests`;
:mod:`compsuite.schema` checks them).

Units: ``<size>/<run>/seed<S>`` (one part per training size).  Data
(:mod:`compsuite.data_prep.paradox.dataset`):
``DATA/paradox/<corpus>/<size>/seed<D>/{text,tok,raw,tests}``.  Evaluation
(:mod:`compsuite.eval.paradox.evaluate`) translates the consistency tests with the last
checkpoint and the overgeneralisation test with every checkpoint the training saved (the
``checkpoint_epochs`` of the size, else every ``--save-interval-updates``), beam 5 as the
authors; OPUS models read and write Moses-tokenised BPE, so their translator encodes
inputs and decodes outputs (``raw/codec.json``), and their BLEU on Flores-101 devtest
(``text/flores/``) is computed with sacrebleu.  The report:
:mod:`compsuite.eval.paradox.report`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from compsuite.data_prep.paradox.opus import SMALL_PAIRS
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near
from compsuite.schema import PositiveInt, increasing, non_empty
from compsuite.studies.base import Context, Profile, Study, Unit

#: the checkpoints a trained run must save: every ``--save-interval-updates``'s, or the
#: ``save_epochs`` ones (:func:`compsuite.eval.paradox.evaluate.saved_checkpoints`)
KINDS = {"update", "epoch"}
OPUS_SIZES = {"small": "about 1M pairs", "medium": "one eighth of the corpus",
              "full": "the whole corpus (69M pairs in the paper)"}
#: the keys of ``data`` that only an OPUS corpus reads
OPUS_KEYS = ("bpe_merges", "checkpoint_epochs", "en", "flores", "jobs", "nl", "sizes",
             "small_pairs")
#: their defaults for ``corpus: opus``
OPUS_DEFAULTS = {"bpe_merges": 60000, "small_pairs": SMALL_PAIRS, "jobs": 1}


# ----------------------------------------------------------------------------- YAML
def opus_size(value: str, where: str) -> None:
    if value not in OPUS_SIZES:
        raise ConfigError(f"{where}: unknown size '{value}' ({', '.join(OPUS_SIZES)})"
                          f"{near(str(value), OPUS_SIZES)}")


def opus_size_keys(value: dict, where: str) -> None:
    for size in value:
        if size not in OPUS_SIZES:
            raise ConfigError(f"{where}: unknown size '{size}'{near(str(size), OPUS_SIZES)}")


#: the epochs whose models a size keeps (the run's ``save_epochs``)
Epochs = Annotated[list[PositiveInt], non_empty, increasing]


@dataclass
class Data:
    """A profile's ``data:``.  ``corpus: generated`` reads ``seed`` and ``n_*``; the
    OPUS keys (:data:`OPUS_KEYS`) are errors there.  ``corpus: opus`` needs ``en``,
    ``nl`` and ``flores``; its other keys left out are ``None`` here and filled in by
    :meth:`check` (:data:`OPUS_DEFAULTS`, ``checkpoint_epochs`` ``{}``; ``sizes``
    absent: every size)."""
    corpus: Literal["generated", "opus"] = "generated"
    seed: PositiveInt = 1
    n_train: PositiveInt = 12000
    n_valid: PositiveInt = 500
    n_test: PositiveInt = 500
    sizes: list[Annotated[str, opus_size]] | None = None
    en: str | None = None
    nl: str | None = None
    flores: str | None = None
    bpe_merges: PositiveInt | None = None
    small_pairs: PositiveInt | None = None
    jobs: PositiveInt | None = None
    checkpoint_epochs: Annotated[dict[str, Epochs], opus_size_keys] | None = None

    def check(self, where: str) -> None:
        if self.corpus != "opus":
            for key in OPUS_KEYS:
                if getattr(self, key) is not None:
                    raise ConfigError(f"{where}.{key}: only for corpus: opus")
            return
        for key in ("en", "nl", "flores"):
            if not getattr(self, key):
                raise ConfigError(f"{where}.{key}: a path (environment variables "
                                  f"allowed), not {getattr(self, key)!r}")
        for key, default in OPUS_DEFAULTS.items():
            if getattr(self, key) is None:
                setattr(self, key, default)
        if self.checkpoint_epochs is None:
            self.checkpoint_epochs = {}

    def sizes_to_train(self) -> list[str]:
        """The parts: the OPUS sizes (all when ``sizes`` is absent or empty), or
        ``generated``."""
        return list(self.sizes or OPUS_SIZES) if self.corpus == "opus" else ["generated"]


@dataclass
class Tests:
    """A profile's ``tests:`` (the test sets, :func:`compsuite.data_prep.paradox.dataset.
    write_tests`)."""
    n: PositiveInt = 500
    seed: PositiveInt = 1
    semi_natural: str | None = None
    natural: str | None = None
    idioms: Literal["table7", "quick"] = "table7"


@dataclass
class Options:
    """The keys a paradox profile adds."""
    data: Data = field(default_factory=Data)
    tests: Tests = field(default_factory=Tests)


class Paradox(Study):
    profile_schema = Options
    decodes = True

    @classmethod
    def commands(cls):
        from compsuite.studies.paradox.commands import add_data_commands, add_eval_commands

        return {"data": add_data_commands, "eval": add_eval_commands}

    def check_profile(self, profile: Profile, where: str) -> None:
        """A profile's runs save checkpoints by update and by epoch (the study tests
        every interval checkpoint, or the ``save_epochs`` ones: fairseq runs) or are
        evaluate-only runs (a model brought as it is, tested once)."""
        for r in profile.runs:
            self.check_run(r, f"{where}.runs")

    def check_run(self, name: str, where: str) -> None:
        from compsuite.toolkits import get_backend

        toolkit = self.run(name).toolkit
        if not KINDS <= set(get_backend(toolkit).checkpoint_kinds) and self.trains(name):
            raise ConfigError(f"{where}: '{name}' is not an evaluate-only run, and its "
                              f"toolkit ({toolkit}) saves no checkpoints by update and by "
                              "epoch (the study tests those the training saves: the "
                              "interval or the epoch checkpoints)")

    # ------------------------------------------------------------------ units
    def parts(self, profile: Profile) -> dict[str, str]:
        return {s: (f"OPUS {s}: {OPUS_SIZES[s]}" if s in OPUS_SIZES else
                    "rule-generated English-Dutch pairs with idioms (scaled down, not OPUS)")
                for s in profile.settings.data.sizes_to_train()}

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        for r in runs or []:   # runs chosen on the command line (--runs)
            self.check_run(r, "--runs")
        data = profile.settings.data
        epochs = data.checkpoint_epochs or {}
        return [Unit(size, r, s, size, f"{size}/{r}/seed{s}",
                     train_options={"save_epochs": epochs[size]} if size in epochs else None)
                for size in data.sizes_to_train() for s in seeds or profile.seeds
                for r in runs or profile.runs]

    # ------------------------------------------------------------------ data
    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.common.paths import resolve_path
        from compsuite.data_prep.paradox.dataset import build_generated, build_opus

        data = profile.settings.data
        tests = dataclasses.asdict(profile.settings.tests)
        if dataset in OPUS_SIZES:
            at = self.where("profiles", profile.name, "data")
            paths = {k: resolve_path(getattr(data, k), f"{at}.{k}")
                     for k in ("en", "nl", "flores")}
            return build_opus(Path(data_root), dataset, paths, seed=data.seed,
                              merges=data.bpe_merges, small_pairs=data.small_pairs,
                              jobs=data.jobs, tests=tests, show=show)
        return build_generated(Path(data_root), data_seed=data.seed, n_train=data.n_train,
                               n_valid=data.n_valid, n_test=data.n_test, tests=tests,
                               show=show)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        """The consistency tests with the last checkpoint (and BLEU on Flores-101 devtest
        where the data has it), overgeneralisation with every saved checkpoint."""
        from compsuite.data_prep.paradox.dataset import item_tables
        from compsuite.eval.paradox import evaluate as ev

        synonym_forms, idiom_keywords = item_tables(ctx.profile.settings.tests.idioms)
        trained = ctx.backend.trains(ctx.run)
        out = {"beam": ctx.generation.get("beam"), "tests": {},
               "overgeneralisation_by_step": []}
        by_epoch = trained and bool((ctx.unit.train_options or {}).get("save_epochs"))
        # an evaluate-only run's one model is its checkpoint
        saved = ev.saved_checkpoints(ctx.backend, ctx.run_dir, by_epoch) if trained else []
        out["step_unit"] = ev.STEP_UNIT[by_epoch]
        final = str(saved[-1][1]) if saved else ctx.checkpoint
        # a model trained on the corpus reads its tokenisation (an OPUS corpus's codec); one
        # brought as it is reads the tests' plain text
        load = ev.translator_loader(ctx.load, ctx.data.raw) if trained else ctx.load
        translations = ctx.run_dir / "translations"
        tr = load(final)
        flores = ctx.data.root / "text" / "flores"
        if (flores / "devtest.en").is_file():
            out["flores_bleu"] = ev.flores_bleu(tr, flores, translations, show=ctx.show)
        out["tests"] = ev.consistency(tr, ctx.data.root / "tests", translations, synonym_forms,
                                      show=ctx.show)
        out["overgeneralisation_by_step"] = ev.overgeneralisation_by_step(
            load, saved or [(None, Path(ctx.checkpoint))], ctx.data.root / "tests",
            translations, idiom_keywords, out["step_unit"], show=ctx.show)
        out["checkpoint"] = final
        return out

    def findings(self, profile: Profile) -> list:
        """The three phases of idiom overgeneralisation, and memorisation by frequency
        where the corpus is the generated one (whose idioms' frequencies are set)."""
        from compsuite.data_prep.paradox.corpus import quick_idioms
        from compsuite.eval.paradox.findings import findings

        generated = profile.settings.data.corpus == "generated"
        return findings({i.idiom: i.frequency for i in quick_idioms()} if generated else None)

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        """The report (:mod:`compsuite.eval.paradox.report`), its rows kept apart per run
        when the results come from several runs (a size's row then reads ``<size>
        (<run>)``), and a list of the models evaluated."""
        from compsuite.eval.paradox.report import build_report, rows_by_run

        written = build_report(self, profile, rows_by_run(results), out_dir)
        list_models(Path(out_dir), results)
        return written


def list_models(out_dir: Path, results: list[dict]) -> None:
    """Add the models evaluated (run, toolkit, architecture, trained or brought as it is,
    seeds, checkpoint) to ``report.md`` and ``report.json``."""
    import json

    from compsuite.eval.reports.tables import markdown_table
    from compsuite.foundation.io import atomic_open

    models: dict[tuple, dict] = {}
    for r in results:
        key = (r.get("part"), r.get("run"))
        m = models.setdefault(key, {"size": r.get("part"), "run": r.get("run"),
                                    "toolkit": r.get("toolkit"),
                                    "architecture": r.get("architecture"),
                                    "evaluate_only": bool(r.get("evaluate_only")),
                                    "seeds": [], "checkpoints": []})
        m["seeds"].append(r.get("seed"))
        m["checkpoints"].append(r.get("checkpoint"))
    rows = [[m["size"], m["run"], m["toolkit"], m["architecture"],
             "evaluated as it is" if m["evaluate_only"] else "trained",
             ", ".join(map(str, m["seeds"]))] for m in models.values()]
    md = ["\n## Models\n",
          "Each run's models (an evaluate-only run's model is brought as it is: it is "
          "tested once, its overgeneralisation at that one model).\n",
          markdown_table(["size", "run", "toolkit", "architecture", "model", "seeds"], rows)]
    text = (out_dir / "report.md").read_text(encoding="utf-8")
    with atomic_open(out_dir / "report.md") as fh:
        fh.write(text + "\n" + "\n".join(md) + "\n")
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    report["runs"] = list(models.values())
    with atomic_open(out_dir / "report.json") as fh:
        json.dump(report, fh, indent=2)


STUDY = Paradox
