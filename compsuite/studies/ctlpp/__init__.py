"""CTL++ (Csordás, Irie and Schmidhuber 2022): variants A and R (Table 1) and the S
grid (figures 4, 7, 8), as a study of the suite.

YAML (``compsuite/experiments/ctlpp.yaml``), in a profile besides the keys every
profile has (:class:`Options`):

* ``variants``: the variants of Table 1 (``A``, ``R``);
* ``data``: the generator's sizes (``n_train``, ``n_test``, ``n_functions``,
  ``max_length``, ``n_symbols``; :class:`Data`): a quick profile's scaled-down task;
* ``grid`` (optional, :class:`Grid`): the S variant over ``shared_functions`` (K) x
  ``shared_symbols`` (M), with its own ``runs``, ``seeds`` and (optionally) ``data``;
* ``data_seed`` (default 1): the data of every training seed (the authors fix it);
  ``null``: each training seed its own data.

Units: ``<variant>/<run>/seed<S>`` (part ``table1``: IID/OOD accuracy by length, the
compatibility matrix and the representation similarities) and
``S-f<K>-s<M>/<run>/seed<S>`` (part ``grid``: IID/OOD accuracy).  Data
(:mod:`compsuite.data_prep.ctlpp.dataset`): ``DATA/ctlpp/<variant or S cell>/<size>/
seed<S>/``, where ``<size>`` names every size that differs from the paper's, so two
task sizes never share a folder.  Evaluation: :mod:`compsuite.eval.ctlpp.analyses`;
report: :mod:`compsuite.eval.ctlpp.report`.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from compsuite.data_prep.ctlpp import CTLConfig
from compsuite.data_prep.ctlpp.dataset import PLAN_FIELDS, s_cell
import compsuite.eval.ctlpp.analyses  # noqa: F401  (registers the 'ctlpp' breakdown)
from compsuite.studies.base import Context, Profile, Study, Unit
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near
from compsuite.foundation.dataset import Dataset

#: the variants a profile's ``variants`` may name (S is the grid's)
TABLE1_VARIANTS = ("A", "R")


# ----------------------------------------------------------------------------- schema
def table1_variants(value: list, where: str) -> None:
    for v in value:
        if v not in TABLE1_VARIANTS:
            raise ConfigError(f"{where}: '{v}' is not a Table 1 variant (A, R; S is the grid)")


def check_sizes(self, where: str) -> None:
    """The sizes must make a task (CTLConfig's own rules, for variant A)."""
    try:
        CTLConfig(variant="A", **dataclasses.asdict(self))
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


#: A profile's ``data:``: the generator's sizes, every CTLConfig field but those the
#: plan sets (variant and S's parameters), with CTLConfig's defaults (the paper's task).
Data = dataclasses.make_dataclass(
    "Data", [(f.name, typing.get_type_hints(CTLConfig)[f.name], field(default=f.default))
             for f in dataclasses.fields(CTLConfig) if f.name not in PLAN_FIELDS],
    namespace={"check": check_sizes, "__doc__": "A profile's ``data:``: the task's sizes."})
Data.__module__ = __name__


@dataclass
class Grid:
    """A profile's ``grid:``: the S variant over shared functions x shared symbols, with
    its own task sizes in ``data`` (default: the profile's ``data``)."""
    runs: list[str]
    shared_functions: list[int]
    shared_symbols: list[int]
    seeds: list[int] = field(default_factory=lambda: [1])
    data: Data | None = None


@dataclass
class Options:
    """The keys a CTL++ profile adds.  ``data_seed``: the data generator's seed for
    every training seed, as in the authors' code (its datasets keep their default
    seed: "The seed for data generation is fixed", Appendix A.2); ``null`` draws each
    training seed's own data."""
    variants: Annotated[list[str], table1_variants]
    data: Data
    grid: Grid | None = None
    data_seed: int | None = 1


class CTLPP(Study):
    profile_schema = Options

    @classmethod
    def commands(cls):
        from compsuite.studies.ctlpp.commands import add_data_commands, add_eval_commands

        return {"data": add_data_commands, "eval": add_eval_commands}

    def check_profile(self, profile: Profile, where: str) -> None:
        grid = profile.settings.grid
        for r in grid.runs if grid else []:
            if r not in self.runs:
                raise ConfigError(f"{where}.grid: unknown run '{r}'{near(r, self.runs)}")

    # ------------------------------------------------------------------ units
    def parts(self, profile: Profile) -> dict[str, str]:
        out = {"table1": "variants A and R: IID/OOD accuracy, representations, compatibility"}
        if profile.settings.grid:
            out["grid"] = "variant S over shared functions x shared symbols (OOD accuracy)"
        return out

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        units = [Unit("table1", r, s, v, f"{v}/{r}/seed{s}", params={"variant": v})
                 for v in profile.settings.variants for s in seeds or profile.seeds
                 for r in runs or profile.runs]
        grid = profile.settings.grid
        for k in grid.shared_functions if grid else []:
            for m in grid.shared_symbols:
                cell = s_cell(k, m)
                for s in grid.seeds:
                    units += [Unit("grid", r, s, cell, f"{cell}/{r}/seed{s}",
                                   params={"variant": "S", "shared_functions": k,
                                           "shared_symbols": m})
                              for r in runs or grid.runs]
        return units

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.ctlpp.dataset import S_CELL, build_dataset

        grid = profile.settings.grid
        sizes = grid.data if grid and grid.data and S_CELL.match(dataset) else \
            profile.settings.data
        fixed = profile.settings.data_seed
        return build_dataset(data_root, dataset, seed if fixed is None else fixed,
                             dataclasses.asdict(sizes), show=show)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        from compsuite.eval.ctlpp.analyses import evaluate

        return evaluate(ctx)

    def findings(self, profile: Profile) -> list:
        from compsuite.eval.ctlpp.findings import findings

        return findings()

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        from compsuite.eval.ctlpp.report import build_report

        return build_report(self, profile, results, out_dir)


STUDY = CTLPP
