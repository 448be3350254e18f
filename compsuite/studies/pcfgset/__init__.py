"""PCFG SET (Hupkes, Dankers, Mul and Bruni 2020): task accuracy and the
compositionality tests, as a study of the suite.

YAML (``compsuite/experiments/pcfgset.yaml``), besides the keys every study has
(:class:`Settings`):

* ``datasets``: name -> ``{config: full|small, label}`` (the generator's configs;
  :class:`DatasetSpec`);
* ``tests``: name -> ``{split, options, evaluation, model, compare_base, train}``
  (:class:`CompositionalityTest`): ``split`` the generator of ``compsuite data pcfgset
  generate --test``, ``options`` its arguments, ``evaluation`` a registered evaluation
  (:mod:`compsuite.eval.pcfgset.evaluations`), ``model`` ``own`` (trained on the test's
  training split) or ``base`` (the task model of the same run and seed; the split's
  training corpus must be the task corpus), ``compare_base`` also scores the task model
  on the test's inputs (Table 4), ``train`` options added to a run's training config
  for this test, per toolkit and under ``profiles:`` per profile;
* in a profile (:class:`Options`): ``dataset``, ``test_runs`` (the runs that take
  the tests; by default those in the toolkit the paper used) and ``onmt_checkpoint``
  (which checkpoint of an OpenNMT-py run is scored: ``last``; ``select_model_py``, the
  one the authors' ``select_model.py`` keeps, validated just before the best; or
  ``best_valid_accuracy``;
  :mod:`compsuite.eval.pcfgset.checkpoint_selection`).

Units: ``task/<run>/seed<S>`` (train on the task corpus, predict with the toolkit's
command, score; part ``task``) and ``<test>/<run>/seed<S>`` for every test and test
run (part: the test's name).  Data (:mod:`compsuite.data_prep.pcfgset.dataset`):
``DATA/pcfgset/<dataset>/seed<S>/`` and ``DATA/pcfgset/<dataset>/<test>/seed<S>/``.
Evaluations: :mod:`compsuite.eval.pcfgset`; report: :mod:`compsuite.eval.pcfgset.report`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from compsuite.data_prep.pcfgset import CONFIGS
from compsuite.data_prep.pcfgset.splits import TESTS
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near
from compsuite.schema import check_keys
from compsuite.studies.base import Context, Profile, Study, Unit
from compsuite.studies.evaluations import EVALUATIONS
from compsuite.toolkits import backend_names

import compsuite.eval.pcfgset.evaluations  # noqa: F401  (registers the evaluations)

MODELS = ("own", "base")
#: which checkpoint of a trained OpenNMT-py run is scored
OnmtCheckpoint = Literal["last", "select_model_py", "best_valid_accuracy"]
#: the choices of a dataset's ``config`` and of a test's ``split``
ConfigName = Literal[tuple(CONFIGS)]
SplitName = Literal[tuple(TESTS)]


# ----------------------------------------------------------------------------- schema
@dataclass
class DatasetSpec:
    """A ``datasets:`` entry: one of the generator's configurations, and its label."""
    config: ConfigName
    label: str


@dataclass
class CompositionalityTest:
    """A ``tests:`` entry (see the module docstring)."""
    split: SplitName
    evaluation: str
    options: dict[str, Any] | None = None
    model: str = "own"
    compare_base: bool = False
    train: dict[str, Any] | None = None

    def __post_init__(self):
        self.options = self.options or {}
        self.train = self.train or {}

    def check(self, where: str) -> None:
        if self.evaluation not in EVALUATIONS:
            raise ConfigError(f"{where}: unknown evaluation '{self.evaluation}' (known: "
                              f"{', '.join(EVALUATIONS)}){near(self.evaluation, EVALUATIONS)}")
        if self.model not in MODELS:
            raise ConfigError(f"{where}: model must be one of {', '.join(MODELS)}")
        check_keys(self.train, set(backend_names()) | {"profiles"}, f"{where}.train")


@dataclass
class Settings:
    """PCFG SET's top-level keys."""
    datasets: dict[str, DatasetSpec]
    tests: dict[str, CompositionalityTest] | None = None

    def __post_init__(self):
        self.tests = self.tests or {}


@dataclass
class Options:
    """The keys a PCFG SET profile adds."""
    dataset: str
    test_runs: list[str] | None = None
    onmt_checkpoint: OnmtCheckpoint = "last"


class PCFGSet(Study):
    study_schema = Settings
    profile_schema = Options
    decodes = True

    @classmethod
    def commands(cls):
        from compsuite.studies.pcfgset.commands import add_data_commands, add_eval_commands

        return {"data": add_data_commands, "eval": add_eval_commands}

    # ------------------------------------------------------------------ YAML
    @property
    def datasets(self) -> dict[str, DatasetSpec]:
        return self.settings.datasets

    @property
    def tests(self) -> dict[str, CompositionalityTest]:
        return self.settings.tests

    def check_profile(self, profile: Profile, where: str) -> None:
        """The profile's dataset and test runs exist; and (the same for every profile)
        the profiles a test's ``train`` names are the study's."""
        for name, spec in self.tests.items():
            check_keys(spec.train.get("profiles") or {}, self.profiles,
                       f"{self.where('tests', name)}.train.profiles")
        ds = profile.settings.dataset
        if ds not in self.datasets:
            raise ConfigError(f"{where}: unknown dataset '{ds}'{near(ds, self.datasets)}")
        for r in self.test_runs(profile):
            if r not in profile.runs:
                raise ConfigError(f"{where}: test run '{r}' is not one of the profile's runs "
                                  "(tests on the task model need the task run)")

    def test_runs(self, profile: Profile) -> list[str]:
        """The runs that take the tests: the profile's ``test_runs``, else its runs in
        the toolkit the paper used, else all its runs; and its evaluate-only runs."""
        chosen = list(profile.settings.test_runs
                      or [r for r in profile.runs if self.run(r).paper_setup] or profile.runs)
        return chosen + [r for r in profile.runs if r not in chosen and not self.trains(r)]

    def train_options(self, test: str, profile: str, toolkit: str) -> dict | None:
        """A test's training options for one toolkit: ``train: {toolkit: {...}}`` merged
        with ``train: {profiles: {profile: {toolkit: {...}}}}``."""
        train = self.tests[test].train
        per_profile = ((train.get("profiles") or {}).get(profile) or {}).get(toolkit)
        merged = {**(train.get(toolkit) or {}), **(per_profile or {})}
        return merged or None

    # ------------------------------------------------------------------ units
    def parts(self, profile: Profile) -> dict[str, str]:
        out = {"task": "task accuracy of every run (Table 3's first row)"}
        for name, spec in self.tests.items():
            out[name] = f"{spec.split} split, evaluation {spec.evaluation}, {spec.model} model"
        return out

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        ds = profile.settings.dataset
        seeds = seeds or profile.seeds
        test_runs = [r for r in self.test_runs(profile) if not runs or r in runs]
        test_runs += [r for r in runs or () if r not in test_runs and not self.trains(r)]
        units = [Unit("task", r, s, ds, f"task/{r}/seed{s}")
                 for s in seeds for r in runs or profile.runs]
        for test, spec in self.tests.items():
            own = spec.model == "own"
            for s in seeds:
                for r in test_runs:
                    task = f"task/{r}/seed{s}"
                    units.append(Unit(
                        test, r, s, f"{ds}/{test}", f"{test}/{r}/seed{s}",
                        params={"test": test, "evaluation": spec.evaluation,
                                "model": "own" if own else "base"},
                        model_from=None if own else task,
                        needs=(task,) if (spec.compare_base or not own) else (),
                        train_options=self.train_options(test, profile.name,
                                                         self.run(r).toolkit) if own else None))
        return units

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.pcfgset.dataset import dataset_for_test, task_dataset

        base_name, _, test = dataset.partition("/")
        spec = self.datasets[base_name]
        if not test:
            return task_dataset(data_root, base_name, spec.config, spec.label, seed, show)
        t = self.tests[test]
        return dataset_for_test(data_root, base_name, spec.config, spec.label, test, t.split,
                                t.options, seed, show)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        from compsuite.data_prep.pcfgset.dataset import check_same_corpus
        from compsuite.eval.pcfgset.evaluations import task_accuracy

        ctx, selected = self.select_checkpoint(ctx)
        if ctx.unit.part == "task":
            result = task_accuracy(ctx)
        else:
            spec = self.tests[ctx.unit.part]
            if not ctx.unit.trains:
                check_same_corpus(ctx.data.raw, ctx.model_data.raw, ctx.unit.part)
            result = EVALUATIONS.get(spec.evaluation)(ctx, spec)
        if selected is None:
            return result
        # the result's checkpoint is the one scored (tests on the task model load it)
        return {**result, "checkpoint": selected["checkpoint"],
                "checkpoint_selection": selected}

    def select_checkpoint(self, ctx: Context) -> tuple[Context, dict | None]:
        """A trained unit whose backend logs a validation score per checkpoint
        (OpenNMT-py's: :attr:`~compsuite.toolkits.base.Backend.validation`) under
        ``onmt_checkpoint: best_valid_accuracy`` or ``select_model_py``: the context
        with the checkpoint chosen by the validation accuracies, and how it was chosen;
        otherwise the context as it is (the last checkpoint; fairseq runs bring their
        ``checkpoint_best.pt``)."""
        if (not ctx.unit.trains or ctx.backend.validation is None
                or ctx.profile.settings.onmt_checkpoint == "last"):
            return ctx, None
        from compsuite.eval.pcfgset.checkpoint_selection import best_onmt_checkpoint

        selected = best_onmt_checkpoint(ctx.backend, ctx.run_dir,
                                        ctx.backend.checkpoints(ctx.run_dir, "step"),
                                        ctx.profile.settings.onmt_checkpoint)
        trained = {**(ctx.trained or {}), "checkpoint": selected["checkpoint"]}
        return replace(ctx, checkpoint=selected["checkpoint"], trained=trained), selected

    def findings(self, profile: Profile) -> list:
        from compsuite.eval.pcfgset.findings import findings

        return findings(self.test_runs(profile))

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        from compsuite.eval.pcfgset.report import build_report

        return build_report(self, profile, results, out_dir)


STUDY = PCFGSet
