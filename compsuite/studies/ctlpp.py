"""CTL++ (Csordás, Irie and Schmidhuber 2022): variants A and R (Table 1) and the S
grid (figures 4, 7, 8), as a study of the suite.

YAML (``compsuite/experiments/ctlpp.yaml``), in a profile besides the keys every
profile has:

* ``variants``: the variants of Table 1 (``A``, ``R``);
* ``data``: the generator's sizes (``n_train``, ``n_test``, ``n_functions``,
  ``max_length``, ``n_symbols``): a quick profile's scaled-down task;
* ``grid`` (optional): the S variant over ``shared_functions`` (K) x
  ``shared_symbols`` (M), with its own ``runs`` and ``seeds``.

Units: ``<variant>/<run>/seed<S>`` (part ``table1``: IID/OOD accuracy by length, the
compatibility matrix and the representation similarities) and
``S-f<K>-s<M>/<run>/seed<S>`` (part ``grid``: IID/OOD accuracy).  Data:
``DATA/ctlpp/<variant or S cell>/<size>/seed<S>/``, where ``<size>`` names every size
that differs from the paper's, so two task sizes never share a folder.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from compsuite.engine import Context, Unit
from compsuite.errors import ConfigError
from compsuite.registry import Profile, check_keys, near, require
from compsuite.studies.base import Study
from compsuite.toolkits import Dataset, backend_names

VARIANT_NAMES = {"A": "alternating", "R": "repeating", "S": "shared functions"}
GRID_KEYS = {"runs", "seeds", "shared_functions", "shared_symbols"}
_S_CELL = re.compile(r"^S-f(\d+)-s(\d+)$")


def data_keys() -> set[str]:
    """What a profile's ``data:`` may set: the generator's sizes (not the variant or S's
    parameters, which the plan sets)."""
    from compsuite.data_prep.ctlpp import CTLConfig

    return set(CTLConfig.__dataclass_fields__) - {"variant", "shared_functions",
                                                  "shared_symbols"}


class CTLPP(Study):
    profile_keys = frozenset({"variants", "data", "grid"})

    @classmethod
    def commands(cls):
        return {"data": add_data_commands}

    def validate(self) -> None:
        for name, prof in self.profiles.items():
            at = self.where("profiles", name)
            variants = require(prof.options, "variants", at)
            for v in variants:
                if v not in ("A", "R"):
                    raise ConfigError(f"{at}.variants: '{v}' is not a Table 1 variant (A, R; "
                                      "S is the grid)")
            check_keys(require(prof.options, "data", at), data_keys(), f"{at}.data")
            grid = prof.options.get("grid")
            if grid:
                check_keys(grid, GRID_KEYS, f"{at}.grid")
                for r in require(grid, "runs", f"{at}.grid"):
                    if r not in self.runs:
                        raise ConfigError(f"{at}.grid: unknown run '{r}'{near(r, self.runs)}")
                for key in ("shared_functions", "shared_symbols"):
                    require(grid, key, f"{at}.grid")

    # ------------------------------------------------------------------ units
    def parts(self, profile: Profile) -> dict[str, str]:
        out = {"table1": "variants A and R: IID/OOD accuracy, representations, compatibility"}
        if profile.options.get("grid"):
            out["grid"] = "variant S over shared functions x shared symbols (OOD accuracy)"
        return out

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        units = [Unit("table1", r, s, v, f"{v}/{r}/seed{s}", params={"variant": v})
                 for v in profile.options["variants"] for s in seeds or profile.seeds
                 for r in runs or profile.runs]
        grid = profile.options.get("grid") or {}
        for k in grid.get("shared_functions", []):
            for m in grid.get("shared_symbols", []):
                cell = f"S-f{k}-s{m}"
                for s in grid.get("seeds", [1]):
                    units += [Unit("grid", r, s, cell, f"{cell}/{r}/seed{s}",
                                   params={"variant": "S", "shared_functions": k,
                                           "shared_symbols": m})
                              for r in runs or grid["runs"]]
        return units

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.ctlpp import GENERATOR, CTLConfig, generate
        from compsuite.data_prep.ctlpp.generate import SPLITS
        from compsuite.data_prep.common.manifest import is_complete

        cell = _S_CELL.match(dataset)
        variant = "S" if cell else dataset
        kw = {"shared_functions": int(cell[1]), "shared_symbols": int(cell[2])} if cell else {}
        cfg = CTLConfig(**{**profile.options["data"], **kw, "variant": variant})
        default = CTLConfig(variant=variant)
        size = f"n{cfg.n_train}" + "".join(   # a scaled-down task gets its own folder
            f"-{tag}{getattr(cfg, key)}" for key, tag in
            (("n_symbols", "sym"), ("n_functions", "f"), ("max_length", "len"))
            if getattr(cfg, key) != getattr(default, key))
        data = Dataset(data_root / "ctlpp" / dataset / size / f"seed{seed}", SPLITS,
                       f"CTL++ variant {variant} ({VARIANT_NAMES[variant]}), {size}")
        if not is_complete(data.raw, GENERATOR, cfg.as_args()):
            generate(data.raw, cfg, seed=seed, progress=show)
        return data

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        """IID and OOD accuracy (per length) and, for Table 1's units, the
        compatibility matrix and the representation similarities."""
        from compsuite.data_prep.common.io import read_aligned
        from compsuite.data_prep.common.manifest import read_manifest
        from compsuite.eval.ctlpp import (accuracy_by_length, compatibility_matrix,
                                          representation_similarity)

        clf = ctx.load(kind="classifier")
        raw = ctx.data.raw
        out = {}
        for split in ("test_iid", "test_ood"):
            src, tgt = read_aligned(raw / f"{split}.src", raw / f"{split}.tgt")
            out[split] = accuracy_by_length(src, clf.predict(src), tgt)
        if ctx.unit.part == "table1":
            m = read_manifest(raw)
            out["compatibility"] = compatibility_matrix(clf, m["functions"], m["symbols"],
                                                        m["groups"])
            out["representations"] = representation_similarity(clf, m["functions"],
                                                               m["symbols"], m["groups"])
        return out

    def report(self, profile: str, results: list[dict], out_dir: Path) -> str:
        from compsuite.eval.reports.ctlpp import build_report

        build_report(self, profile, [r for r in results if r["part"] == "table1"],
                     [r for r in results if r["part"] == "grid"], out_dir)
        return "report.md, report.json, *.png"


STUDY = CTLPP


# ----------------------------------------------------------------------------- compsuite data ctlpp
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    g = sub.add_parser("generate", help="{train,valid,test_iid,test_ood}.tsv and manifest.json")
    g.add_argument("--variant", choices=list(VARIANT_NAMES), required=True)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--shared-functions", type=int, default=8, help="S: functions in G_o")
    g.add_argument("--shared-symbols", type=int, default=2,
                   help="S: symbols a shared function sees from both paths")
    g.add_argument("--n-train", type=int, default=300_000)
    g.add_argument("--n-test", type=int, default=1_000)
    g.add_argument("--max-length", type=int, default=6, help="most functions composed")
    g.add_argument("--n-functions", type=int, default=32,
                   help="functions (even; the quick profile's scaled-down task uses 16)")
    g.add_argument("--toolkits", nargs="*", default=[], choices=backend_names(),
                   help="also write the data in these toolkits' formats (then the text goes "
                        "to OUT/raw)")
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=cmd_generate)


def cmd_generate(a) -> int:
    from compsuite.data_prep.common.writers import fairseq_subsets
    from compsuite.data_prep.ctlpp import CTLConfig, generate
    from compsuite.data_prep.ctlpp.generate import SPLITS
    from compsuite.toolkits import get_backend

    cfg = CTLConfig(variant=a.variant, n_train=a.n_train, n_test=a.n_test,
                    max_length=a.max_length, n_functions=a.n_functions,
                    shared_functions=a.shared_functions, shared_symbols=a.shared_symbols)
    out = Path(a.out)
    raw = out / "raw" if a.toolkits else out
    m = generate(raw, cfg, seed=a.seed, progress=not a.quiet)
    print(f"wrote {raw} ({m['counts']}); lengths the graph cannot fill: "
          f"{m['unavailable_lengths']}")
    for tk in a.toolkits:
        folder = get_backend(tk).write_data(Dataset(out, SPLITS))
        subsets = (" (" + ", ".join(f"{v} = {k}" for k, v in fairseq_subsets(SPLITS).items())
                   + ")") if tk == "fairseq" else ""
        print(f"wrote {folder}{subsets}")
    return 0
