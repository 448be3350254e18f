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
  false``, a command run) has one model: it is scored without a selection;
* ``generation_by_run`` (run -> :class:`RunDecoding`): a run's own decoding over the
  profile's ``generation``, for checkpoint selection and the test and generalisation
  sets alike (the paper profile: the authors decoded their OpenNMT-py models with
  ``onmt_translate``'s beam of 5 and Llama 2 greedily).

Units: ``<part>/<run>/seed<S>``.  Data (:mod:`compsuite.data_prep.sget.dataset`):
``DATA/sget/<part>/<size>/seed<D>/`` with ``text/`` (the generator's ``{split}.txt``,
``gen_info.tsv``), ``encoded/`` (Sudachi + sentencepiece, ``compsuite data sget
prepare``: the encoded ``{split}.{en,ja}``, the plain text as read in ``encoded/text/``)
and ``raw/`` (the encoded corpus as ``{train,valid,test,gen}.{src,tgt}``, hard links to
``encoded/``, which the OpenNMT-py backend reads; ``valid`` is the development set).
Evaluation: :mod:`compsuite.eval.sget` (checkpoint selection, scoring, the report).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from compsuite.data_prep.sget.dataset import PARTS
from compsuite.data_prep.sget.preprocess import EN_VOCAB, JA_VOCAB
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near
from compsuite.registry import seed_list
from compsuite.schema import PositiveInt, join, within
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
class RunDecoding:
    """One run's decoding settings over the profile's ``generation`` (those given)."""
    beam: PositiveInt | None = None
    max_length: PositiveInt | None = None
    batch_size: PositiveInt | Literal["auto"] | None = None

    def settings(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Options:
    """The keys an SGET profile adds.  ``parts`` absent, empty or null: ``main`` alone
    (a part given as null: the profile's runs and seeds)."""
    data: Data = field(default_factory=Data)
    parts: dict[str, Part | None] | None = None
    selection: Selection = field(default_factory=Selection)
    generation_by_run: dict[str, RunDecoding] = field(default_factory=dict)

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

    @classmethod
    def commands(cls):
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
        for r in profile.settings.generation_by_run:
            if r not in self.runs:
                raise ConfigError(f"{join(where, 'generation_by_run')}: unknown run "
                                  f"'{r}'{near(r, self.runs)}")

    def unit_generation(self, ctx: Context) -> dict:
        """The unit's decoding settings: the study's and the profile's ``generation``
        (``ctx.generation``), the run's ``generation_by_run`` entry on top."""
        own = ctx.profile.settings.generation_by_run.get(ctx.run.name)
        return {**ctx.generation, **(own.settings() if own else {})}

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
        and source length."""
        from compsuite.data_prep.sget.dataset import encoded_text
        from compsuite.eval.sget.scoring import score_split
        from compsuite.eval.sget.selection import select_checkpoint

        text = encoded_text(ctx.data.root)
        generation = self.unit_generation(ctx)
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
                                        show=ctx.show)
        return {"checkpoint": sel["checkpoint"], "checkpoint_selection": sel,
                "generation": generation, "predictions": str(out_dir), "splits": splits,
                "stand_in": (ctx.trained or {}).get("stand_in")}

    def findings(self, profile: Profile) -> list:
        from compsuite.eval.sget.findings import findings

        return findings()

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        from compsuite.eval.sget.report import build_report

        return build_report(self, profile, results, out_dir)


STUDY = SGET


# ----------------------------------------------------------------------------- compsuite data sget
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    """The generator's, the translator's and the preprocessing's own options and
    entry points, as ``compsuite data sget generate|translate|prepare``."""
    from compsuite.data_prep.sget import generate, preprocess, translate

    sub = parser.add_subparsers(dest="action", required=True)
    for name, module, help_ in (
            ("generate", generate, "train/dev/test/gen.txt (English, Japanese, pattern), "
                                   "gen_info.tsv and manifest.json"),
            ("translate", translate, "rule-based English -> Japanese (stdin -> stdout)"),
            ("prepare", preprocess, "Sudachi + sentencepiece BPE encoding for OpenNMT-py "
                                    "(reproduces the released *_encoded_sp.txt)")):
        p = sub.add_parser(name, help=help_)
        module.add_arguments(p)
        p.set_defaults(func=module.run)


# ----------------------------------------------------------------------------- compsuite eval sget
def add_eval_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.commands import engine_arguments, program_arguments
    from compsuite.foundation.arguments import positive_int

    sub = parser.add_subparsers(dest="action", required=True)
    s = sub.add_parser(
        "score", help="score translations of one split (a plain file from any system, or a "
                      "checkpoint): exact match, BLEU, partial match, per pattern")
    s.add_argument("--data", required=True,
                   help="folder with {split}.txt (english<TAB>japanese<TAB>pattern): the "
                        "released files or 'compsuite data sget generate' output (its "
                        "gen_info.tsv gives partial match its target words)")
    s.add_argument("--split", default="gen", choices=["dev", "test", "gen"])
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--hyps", help="one translation per line (plain Japanese, or pieces "
                                    "separated by spaces: whitespace is removed)")
    src.add_argument("--checkpoint", help="a fairseq or OpenNMT-py checkpoint (translates "
                                          "the --encoded sources), or an hf checkpoint "
                                          "folder (translates the plain English of --data)")
    program_arguments(src, s, "translates the plain English of --data")
    engine_arguments(s)
    s.add_argument("--encoded", help="with a fairseq or OpenNMT-py --checkpoint: the "
                                     "'compsuite data sget prepare' folder whose {split}.en "
                                     "the model reads")
    s.add_argument("--batch-size", type=positive_int, default=256)
    s.add_argument("--no-partial", action="store_true", help="skip the GiNZA partial match")
    s.add_argument("--bleu-tokenize", default="sudachi",
                   help="sudachi (default), ja-mecab, or any sacreBLEU tokeniser")
    s.add_argument("--out", help="write score.json and score.md here")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    from compsuite.commands import show, write_json
    from compsuite.data_prep.sget.preprocess import read_released
    from compsuite.eval.reports.tables import markdown_table
    from compsuite.eval.sget.scoring import score_folder, score_rows
    from compsuite.foundation.io import atomic_open, read_lines

    folder = Path(a.data)
    rows = read_released(folder / f"{a.split}.txt")
    if a.hyps:
        hyps, origin = read_lines(a.hyps), {"hyps": a.hyps}
    elif a.model_cmd:   # a program: plain English in, plain Japanese out
        from compsuite.commands import load_model_from_options
        from compsuite.models.protocol import translate

        with load_model_from_options(a) as model:
            hyps = translate(model, [r.english for r in rows], f"translate {a.split}",
                             show=not a.json)
        origin = {"command": a.model_cmd}
    else:
        from compsuite.commands import engine_settings
        from compsuite.models.protocol import translate
        from compsuite.toolkits import load_translator

        if Path(a.checkpoint).is_dir():   # an hf checkpoint: its own tokenizer, plain English
            sources = [r.english for r in rows]
        elif not a.encoded:
            raise ConfigError("--checkpoint needs --encoded (the prepared folder)")
        else:
            sources = read_lines(Path(a.encoded) / f"{a.split}.en")
        hyps = translate(load_translator(a.checkpoint, None, batch_size=a.batch_size,
                                         **engine_settings(a)), sources,
                         f"translate {a.split}", show=not a.json)
        origin = {"checkpoint": a.checkpoint, "encoded": a.encoded}
    res = score_folder(folder, a.split, hyps, origin, rows=rows, no_partial=a.no_partial,
                       bleu_tokenize=a.bleu_tokenize, show=not a.json)
    header, rows_md, footer = score_rows(res)
    if a.out:
        write_json(Path(a.out) / "score.json", res)
        with atomic_open(Path(a.out) / "score.md") as fh:
            fh.write(markdown_table(header, rows_md) + footer)
    show(res, a.json, header, rows_md, footer)
    return 0
