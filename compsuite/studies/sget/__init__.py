"""SGET (Kumon, Matsuoka and Yanaka 2024): English-to-Japanese translation from a
grammar, 42 generalisation patterns, as a study of the suite.

YAML (``compsuite/experiments/sget.yaml``), in a profile besides the keys every
profile has (declared by :class:`Options`):

* ``data`` (:class:`Data`): ``scale`` (every count of section 4.1.2 multiplied by it;
  1 = the paper's sizes), ``seed`` (the data's seed: one dataset, models trained on it
  with the profile's seeds, as in the paper), ``en_vocab`` / ``ja_vocab``
  (sentencepiece BPE pieces; default 300 / 650), or ``released: DIR``: the authors'
  released ``{train,dev,test,gen}.txt`` instead of generated data (part ``main`` only);
* ``parts`` (:class:`Part` each): which datasets to train on, each with optional
  ``runs`` / ``seeds`` of its own: ``main`` (selectional restrictions and concatenated
  training sentences: Tables 2, 3, 10, 11), ``no_restrictions`` (Table 5),
  ``no_concatenation`` (Tables 6 and 7); the runs must be OpenNMT-py or hf runs, or
  evaluate-only runs;
* ``selection`` (:class:`Selection`): how the evaluated checkpoint is chosen (section
  4.1.1: the best exact match on the development set, computed by the suite from every
  checkpoint the training saved): ``keep: best`` deletes the other checkpoints
  afterwards (the paper Transformer's 70 checkpoints take about 35 GB), ``keep: all``
  keeps them; ``sample: N`` (with ``finalists: K``, default 3, and ``seed``) scores
  every checkpoint on N development lines first and only the K best in full
  (:mod:`compsuite.eval.sget.selection`).  An evaluate-only run (a model brought as it is: an hf run with ``train:
  false``, a command run) has one model: it is scored without a selection.

A run's own decoding in a profile (``runs.<run>.generation.<profile>``, a key every
study has) serves checkpoint selection and the test and generalisation sets alike (the
paper profile: the authors decoded their OpenNMT-py models with ``onmt_translate``'s
beam of 5 and Llama 2 greedily).

Units: ``<part>/<run>/seed<S>``.  Data (:mod:`compsuite.data_prep.sget.dataset`):
``DATA/sget/<part>/<size>/seed<D>/`` with ``text/`` (the generator's ``{split}.txt``,
``gen_info.tsv``), ``encoded/`` (Sudachi + sentencepiece, ``compsuite data sget
prepare``: the encoded ``{split}.{en,ja}``, the plain text as read in ``encoded/text/``)
and ``raw/`` (the encoded corpus as ``{train,valid,test,gen}.{src,tgt}``, hard links to
``encoded/``, which the OpenNMT-py backend reads; ``valid`` is the development set).
Evaluation: :mod:`compsuite.eval.sget` (checkpoint selection, scoring, the report).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from compsuite.data_prep.sget.dataset import PARTS
from compsuite.data_prep.sget.preprocess import EN_VOCAB, JA_VOCAB
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near
from compsuite.schema import PositiveInt, join, seed_list, within
from compsuite.studies.base import Context, Profile, Study, Unit


# ----------------------------------------------------------------------------- the YAML
@dataclass
class Data:
    """A profile's ``data:``: the generated dataset's size and seed and the BPE
    vocabularies, or the released data's folder."""
    scale: Annotated[float, within(0, 1, low_open=True)] = 1.0
    seed: PositiveInt = 1
    en_vocab: PositiveInt = EN_VOCAB
    ja_vocab: PositiveInt = JA_VOCAB
    released: str | None = None


@dataclass
class Part:
    """One part's own ``runs`` and ``seeds`` (the profile's when absent)."""
    runs: list[str] | None = None
    seeds: Annotated[list[int], seed_list] | None = None


@dataclass
class Selection:
    """How the evaluated checkpoint is chosen: ``keep`` all checkpoints or the best;
    ``sample``: score every checkpoint on that many development lines first (drawn with
    ``seed``), then the ``finalists`` best of them on the whole set (absent: every
    checkpoint on the whole set, as the paper)."""
    keep: Literal["all", "best"] = "all"
    sample: PositiveInt | None = None
    finalists: PositiveInt = 3
    seed: PositiveInt = 1


@dataclass
class Options:
    """The keys an SGET profile adds.  ``parts`` absent, empty or null: ``main`` alone
    (a part given as null: the profile's runs and seeds)."""
    data: Data = field(default_factory=Data)
    parts: dict[str, Part | None] | None = None
    selection: Selection = field(default_factory=Selection)

    def __post_init__(self):
        self.parts = {p: spec or Part() for p, spec in (self.parts or {"main": None}).items()}

    def check(self, where: str) -> None:
        for part in self.parts:
            if part not in PARTS:
                raise ConfigError(f"{join(where, 'parts')}: unknown part '{part}' (known: "
                                  f"{', '.join(PARTS)}){near(part, PARTS)}")
        if self.data.released and set(self.parts) != {"main"}:
            raise ConfigError(f"{join(join(where, 'data'), 'released')}: the released data "
                              "is the main benchmark only; parts must be just 'main'")


class SGET(Study):
    profile_schema = Options
    decodes = True

    @classmethod
    def commands(cls):
        from compsuite.studies.sget.commands import add_data_commands, add_eval_commands

        return {"data": add_data_commands, "eval": add_eval_commands}

    def check_profile(self, profile: Profile, where: str) -> None:
        """Each part's runs exist and save checkpoints by step (OpenNMT-py and hf runs:
        SGET selects one by development exact match), or are evaluate-only runs (one
        model, nothing to select)."""
        from compsuite.eval.sget.selection import KIND
        from compsuite.toolkits import get_backend

        for part, spec in profile.settings.parts.items():
            at = join(join(join(where, "parts"), part), "runs")
            for r in spec.runs or []:
                if r not in self.runs:
                    raise ConfigError(f"{at}: unknown run '{r}'{near(r, self.runs)}")
                toolkit = self.run(r).toolkit
                if KIND not in get_backend(toolkit).checkpoint_kinds and self.trains(r):
                    raise ConfigError(f"{at}: '{r}' is not an evaluate-only run, and its "
                                      f"toolkit ({toolkit}) saves no checkpoints by step "
                                      "(SGET selects one of those the training saves)")

    # ------------------------------------------------------------------ units
    def parts(self, profile: Profile) -> dict[str, str]:
        return {p: PARTS[p][2] for p in profile.settings.parts}

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        units = []
        for part, spec in profile.settings.parts.items():
            for s in seeds or spec.seeds or profile.seeds:
                for r in runs or spec.runs or profile.runs:
                    units.append(Unit(part, r, s, part, f"{part}/{r}/seed{s}"))
        return units

    # ------------------------------------------------------------------ data
    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        """The generated (or released) text, its Sudachi + BPE encoding and the encoded
        corpus the toolkit reads.  The data's seed is the profile's ``data.seed``, not
        the training seed: every model of a profile is trained on the same data."""
        from compsuite.data_prep.sget.dataset import build_dataset

        d = profile.settings.data
        return build_dataset(data_root, dataset, scale=d.scale, data_seed=d.seed,
                             en_vocab=d.en_vocab, ja_vocab=d.ja_vocab, released=d.released,
                             show=show)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        """Select the checkpoint by development-set exact match, translate the test and
        generalisation sets with it (the toolkit's own translation command) and score
        them: exact match, BLEU, partial match, per pattern, group, complement clause
        and source length (partial match's GiNZA parses in as many processes as the
        unit has threads)."""
        from compsuite.data_prep.sget.dataset import encoded_text
        from compsuite.eval.sget.scoring import score_split
        from compsuite.eval.sget.selection import select_checkpoint

        text = encoded_text(ctx.data.root)
        generation = ctx.decoding
        if ctx.backend.trains(ctx.run):
            how = ctx.profile.settings.selection
            sel = select_checkpoint(ctx.backend, ctx.run_dir, ctx.data, generation,
                                    text / "dev.ja", keep=how.keep, sample=how.sample,
                                    finalists=how.finalists, seed=how.seed, show=ctx.show)
            out_dir = ctx.run_dir / "predictions" / f"step{sel['best_step']}"
        else:   # an evaluate-only run: its one model, nothing to select
            sel = {"metric": None, "by_step": {}, "best_step": None,
                   "checkpoint": ctx.checkpoint, "kept": "the model as it is (evaluate-only)"}
            out_dir = ctx.run_dir / "predictions" / "model"
        trained = {**(ctx.trained or {}), "checkpoint": sel["checkpoint"]}
        splits = {}
        for split in ("test", "gen"):
            pred = ctx.predict(split, trained, generation, out_dir)
            splits[split] = score_split(split, pred, text, out_dir,
                                        gen_info_file=ctx.data.root / "text" / "gen_info.tsv",
                                        cache_dir=ctx.data.root / "partial_cache",
                                        n_process=ctx.threads or 1, show=ctx.show)
        return {"checkpoint": sel["checkpoint"], "checkpoint_selection": sel,
                "predictions": str(out_dir), "splits": splits,
                "stand_in": (ctx.trained or {}).get("stand_in")}

    def findings(self, profile: Profile) -> list:
        from compsuite.eval.sget.findings import findings

        return findings()

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        from compsuite.eval.sget.report import build_report

        return build_report(self, profile, results, out_dir)


STUDY = SGET
