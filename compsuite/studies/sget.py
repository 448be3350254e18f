"""SGET (Kumon, Matsuoka and Yanaka 2024): English-to-Japanese translation from a
grammar, 42 generalisation patterns, as a study of the suite.

YAML (``compsuite/experiments/sget.yaml``), in a profile besides the keys every
profile has:

* ``data``: ``scale`` (every count of section 4.1.2 multiplied by it; 1 = the paper's
  sizes), ``seed`` (the data's seed: one dataset, models trained on it with the
  profile's seeds, as in the paper), ``en_vocab`` / ``ja_vocab`` (sentencepiece BPE
  pieces; default 300 / 650), or ``released: DIR``: the authors' released
  ``{train,dev,test,gen}.txt`` instead of generated data (part ``main`` only);
* ``parts``: which datasets to train on, each with optional ``runs`` / ``seeds`` of
  its own: ``main`` (selectional restrictions and concatenated training sentences:
  Tables 2, 3, 10, 11), ``no_restrictions`` (Table 5), ``no_concatenation`` (Tables 6
  and 7);
* ``selection``: how the evaluated checkpoint is chosen (section 4.1.1: the best exact
  match on the development set, computed by the suite from every checkpoint the
  training saved): ``keep: best`` deletes the other checkpoints afterwards (the paper
  Transformer's 70 checkpoints take about 35 GB), ``keep: all`` keeps them.

Units: ``<part>/<run>/seed<S>``.  Data: ``DATA/sget/<part>/<size>/seed<D>/`` with
``text/`` (the generator's ``{split}.txt``, ``gen_info.tsv``), ``encoded/`` (Sudachi +
sentencepiece, ``compsuite data sget prepare``) and ``raw/`` (the encoded corpus as
``{train,valid,test,gen}.{src,tgt}``, which the OpenNMT-py backend reads; ``valid`` is
the development set).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from compsuite.engine import Context, Unit
from compsuite.data_prep.common.io import DataError
from compsuite.errors import ConfigError
from compsuite.registry import Profile, check_keys, mapping, near, positive_int, seed_list
from compsuite.studies.base import Study
from compsuite.toolkits import Dataset

#: part -> (selectional restrictions, concatenated training sentences, what it is for)
PARTS = {
    "main": (True, True, "Tables 2, 3, 10 and 11: the benchmark as published"),
    "no_restrictions": (False, True, "Table 5: without selectional restrictions"),
    "no_concatenation": (True, False, "Tables 6 and 7: without concatenated training "
                                      "sentences"),
}
DATA_KEYS = {"scale", "seed", "en_vocab", "ja_vocab", "released"}
PART_KEYS = {"runs", "seeds"}
SELECTION_KEYS = {"keep"}
#: the corpus splits the toolkits see (valid = the development set)
SPLITS = ("train", "valid", "test", "gen")
SOURCE_SPLIT = {"train": "train", "valid": "dev", "test": "test", "gen": "gen"}
CORPUS = "sget.corpus"
CORPUS_VERSION = "1"


class SGET(Study):
    profile_keys = frozenset({"data", "parts", "selection"})

    @classmethod
    def commands(cls):
        return {"data": add_data_commands, "eval": add_eval_commands}

    # ------------------------------------------------------------------ YAML
    def validate(self) -> None:
        for name, prof in self.profiles.items():
            at = self.where("profiles", name)
            data = check_keys(prof.options.get("data") or {}, DATA_KEYS, f"{at}.data")
            scale = data.get("scale", 1.0)
            if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not (
                    0 < scale <= 1):
                raise ConfigError(f"{at}.data.scale: a number in (0, 1], not {scale!r}")
            for key in ("seed", "en_vocab", "ja_vocab"):
                positive_int(data.get(key, 1), f"{at}.data.{key}")
            parts = mapping(prof.options.get("parts") or {"main": None}, f"{at}.parts")
            for part, spec in parts.items():
                if part not in PARTS:
                    raise ConfigError(f"{at}.parts: unknown part '{part}' (known: "
                                      f"{', '.join(PARTS)}){near(part, PARTS)}")
                spec = check_keys(spec or {}, PART_KEYS, f"{at}.parts.{part}")
                for r in spec.get("runs") or []:
                    if r not in self.runs:
                        raise ConfigError(f"{at}.parts.{part}.runs: unknown run '{r}'"
                                          f"{near(r, self.runs)}")
                    if self.run(r).toolkit != "onmt":
                        raise ConfigError(f"{at}.parts.{part}.runs: '{r}' is not an "
                                          "OpenNMT-py run (SGET selects checkpoints by "
                                          "their step)")
                if spec.get("seeds") is not None:
                    seed_list(spec["seeds"], f"{at}.parts.{part}.seeds")
            if data.get("released") and set(parts) != {"main"}:
                raise ConfigError(f"{at}.data.released: the released data is the main "
                                  "benchmark only; parts must be just 'main'")
            sel = check_keys(prof.options.get("selection") or {}, SELECTION_KEYS,
                             f"{at}.selection")
            if sel.get("keep", "all") not in ("all", "best"):
                raise ConfigError(f"{at}.selection.keep: 'all' or 'best', not "
                                  f"{sel.get('keep')!r}")

    # ------------------------------------------------------------------ units
    def _parts(self, profile: Profile) -> dict[str, dict]:
        return {p: spec or {} for p, spec in
                (profile.options.get("parts") or {"main": None}).items()}

    def parts(self, profile: Profile) -> dict[str, str]:
        return {p: PARTS[p][2] for p in self._parts(profile)}

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        units = []
        for part, spec in self._parts(profile).items():
            for s in seeds or spec.get("seeds") or profile.seeds:
                for r in runs or spec.get("runs") or profile.runs:
                    units.append(Unit(part, r, s, part, f"{part}/{r}/seed{s}"))
        return units

    # ------------------------------------------------------------------ data
    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        """The generated (or released) text, its Sudachi + BPE encoding and the encoded
        corpus the toolkit reads.  The data's seed is the profile's ``data.seed``, not
        the training seed: every model of a profile is trained on the same data."""
        opts = profile.options.get("data") or {}
        return build_dataset(data_root, dataset, scale=opts.get("scale", 1.0),
                             data_seed=opts.get("seed", 1), en_vocab=opts.get("en_vocab"),
                             ja_vocab=opts.get("ja_vocab"), released=opts.get("released"),
                             show=show)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        """Select the checkpoint by development-set exact match, translate the test and
        generalisation sets with it (the toolkit's own translation command) and score
        them: exact match, BLEU, partial match, per pattern, group, complement clause
        and source length."""
        from compsuite.data_prep.common.io import read_lines, write_lines
        from compsuite.eval.sget import normalise, parse_gen_info, score_set

        keep = (ctx.profile.options.get("selection") or {}).get("keep", "all")
        sel = select_checkpoint(ctx, keep=keep)
        trained = {**(ctx.trained or {}), "checkpoint": sel["checkpoint"]}
        text = ctx.data.root / "encoded" / "raw"
        out_dir = ctx.run_dir / "predictions" / f"step{sel['best_step']}"
        gen_info_file = ctx.data.root / "text" / "gen_info.tsv"
        splits = {}
        for split in ("test", "gen"):
            pred = ctx.backend.predict(trained, ctx.data, split, ctx.generation, out_dir,
                                       show=ctx.show)
            hyps = read_lines(pred)
            refs = read_lines(text / f"{split}.ja")
            if len(hyps) != len(refs):
                raise DataError(f"{pred}: {len(hyps)} lines for {len(refs)} references")
            write_lines(out_dir / f"{split}.ja", [normalise(h) for h in hyps])
            gen_info = None
            if split == "gen" and gen_info_file.is_file():
                gen_info = parse_gen_info(read_lines(gen_info_file))
            if ctx.show:
                print(f"scoring {split} ({len(hyps):,} lines)", file=sys.stderr, flush=True)
            splits[split] = score_set(
                hyps, refs, read_lines(text / f"{split}.en"), read_lines(text / f"{split}.pattern"),
                gen_info=gen_info, partial=gen_info is not None,
                train_sources=read_lines(text / "train.en") if split == "gen" else None,
                cache_dir=ctx.data.root / "partial_cache")
            if split == "gen" and gen_info is None:
                splits[split]["partial_not_scored_because"] = (
                    "no gen_info.tsv (target words): the released data has none")
        return {"checkpoint": sel["checkpoint"], "checkpoint_selection": sel,
                "predictions": str(out_dir), "splits": splits}

    def report(self, profile: str, results: list[dict], out_dir: Path) -> str:
        from compsuite.eval.reports.sget import build_report

        build_report(self.title, profile, results, out_dir)
        return "report.md, report.json, per_pattern.png"


STUDY = SGET


# ----------------------------------------------------------------------------- data
def _size(scale: float) -> str:
    return "full" if scale == 1 else f"scale{scale:g}"


def build_dataset(data_root: Path, part: str, *, scale: float = 1.0, data_seed: int = 1,
                  en_vocab: int | None = None, ja_vocab: int | None = None,
                  released: str | None = None, show: bool = True) -> Dataset:
    """``DATA/sget/<part>/<size>/seed<D>/{text,encoded,raw}`` (see the module docstring),
    each step skipped when its manifest matches."""
    from compsuite.data_prep.common.manifest import is_complete
    from compsuite.data_prep.sget import preprocess
    from compsuite.data_prep.sget.generate import GENERATOR, GENERATOR_VERSION, generate

    restrictions, concatenation, what = PARTS[part]
    if released:
        src = Path(released).expanduser()
        missing = [f"{s}.txt" for s in preprocess.SPLITS if not (src / f"{s}.txt").is_file()]
        if missing:
            raise DataError(f"{src}: the released SGET folder lacks {', '.join(missing)}")
        root = Path(data_root) / "sget" / "released" / src.resolve().name
        text = src
        label = f"SGET released data ({src})"
    else:
        root = Path(data_root) / "sget" / part / _size(scale) / f"seed{data_seed}"
        text = root / "text"
        args = {"seed": data_seed, "restrictions": restrictions,
                "concatenation": concatenation, "scale": scale}
        if not is_complete(text, GENERATOR, args, version=GENERATOR_VERSION):
            generate(text, seed=data_seed, restrictions=restrictions,
                     concatenation=concatenation, scale=scale, show=show)
        label = (f"SGET {part} ({what.split(':')[-1].strip()}), generated, "
                 f"{_size(scale)}, data seed {data_seed}")
    encoded = root / "encoded"
    if show:
        print(f"SGET {part}: Sudachi + sentencepiece -> {encoded}", file=sys.stderr, flush=True)
    manifest = preprocess.prepare(text, encoded, from_released=bool(released),
                                  en_vocab=en_vocab or preprocess.EN_VOCAB,
                                  ja_vocab=ja_vocab or preprocess.JA_VOCAB)
    data = Dataset(root, SPLITS, label, allow_unknown=True)
    write_corpus(encoded, data.raw, manifest)
    return data


def write_corpus(encoded: Path, raw: Path, encoded_manifest: dict) -> None:
    """The encoded text as ``raw/{train,valid,test,gen}.{src,tgt}`` (English source,
    Japanese target) with a manifest; skipped when it matches."""
    from compsuite.data_prep.common.io import atomic_open
    from compsuite.data_prep.common.manifest import is_complete, write_manifest

    args = {"encoded": str(encoded.resolve()),
            "encoded_sha256": json.dumps(encoded_manifest.get("sha256", {}), sort_keys=True)}
    if is_complete(raw, CORPUS, args, version=CORPUS_VERSION):
        return
    raw.mkdir(parents=True, exist_ok=True)
    files, counts = [], {}
    for split, name in SOURCE_SPLIT.items():
        for side, lang in (("src", "en"), ("tgt", "ja")):
            with open(encoded / f"{name}.{lang}", "rb") as fin, \
                    atomic_open(raw / f"{split}.{side}", "wb") as fout:
                shutil.copyfileobj(fin, fout)
            files.append(f"{split}.{side}")
        counts[split] = encoded_manifest["counts"][name]
    write_manifest(raw, generator=CORPUS, generator_version=CORPUS_VERSION, seed=None,
                   args=args, files=files, counts=counts,
                   extra={"note": "valid = the development set (dev.txt)"})


# ----------------------------------------------------------------------------- checkpoints
def select_checkpoint(ctx: Context, keep: str = "all") -> dict:
    """Section 4.1.1: the checkpoint with the best exact match on the development set.
    Every checkpoint the training saved translates the development set with the
    toolkit's own command; scores are stored in ``selection.json`` as they come (an
    interrupted selection resumes).  Ties go to the earliest step.  ``keep='best'``
    then deletes the other checkpoints."""
    from compsuite.data_prep.common.io import atomic_open, read_lines
    from compsuite.eval.sget import exact_matches

    store = ctx.run_dir / "selection.json"
    scores: dict[str, float] = json.loads(store.read_text())["by_step"] if store.is_file() else {}
    refs = read_lines(ctx.data.root / "encoded" / "raw" / "dev.ja")
    ckpts = ctx.backend.checkpoints(ctx.run_dir)
    present = {str(step): path for step, path in ckpts}
    todo = [(s, p) for s, p in ckpts if str(s) not in scores]
    if not ckpts and not scores:
        raise DataError(f"{ctx.run_dir}: the training left no checkpoint to select from")
    for i, (step, path) in enumerate(todo, 1):
        if ctx.show:
            print(f"checkpoint selection: step {step} ({i}/{len(todo)}) on the development set",
                  file=sys.stderr, flush=True)
        folder = ctx.run_dir / "selection" / f"step{step}"
        pred = ctx.backend.predict({"checkpoint": str(path)}, ctx.data, "valid",
                                   ctx.generation, folder, show=False)
        hyps = read_lines(pred)
        if len(hyps) != len(refs):
            raise DataError(f"{pred}: {len(hyps)} lines for {len(refs)} development references")
        ok = exact_matches(hyps, refs)
        scores[str(step)] = sum(ok) / len(ok)
        with atomic_open(store) as fh:
            json.dump({"metric": "dev exact match", "by_step": scores}, fh, indent=2)
    by_step = {str(s): scores[str(s)] for s in sorted(map(int, scores))}
    best = max(by_step, key=lambda s: (by_step[s], -int(s)))
    if best not in present:
        raise DataError(f"{ctx.run_dir}: the selected checkpoint (step {best}) was deleted; "
                        "delete selection.json and retrain to select again")
    if keep == "best":
        for s, p in present.items():
            if s != best:
                p.unlink()
    return {"metric": "dev exact match", "by_step": by_step, "best_step": int(best),
            "best_score": by_step[best], "checkpoint": str(present[best]),
            "n_dev": len(refs), "kept": keep}


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
                                          "the --encoded sources)")
    s.add_argument("--encoded", help="with --checkpoint: the 'compsuite data sget prepare' "
                                     "folder whose {split}.en the model reads")
    s.add_argument("--batch-size", type=int, default=256)
    s.add_argument("--no-partial", action="store_true", help="skip the GiNZA partial match")
    s.add_argument("--bleu-tokenize", default="sudachi",
                   help="sudachi (default), ja-mecab, or any sacreBLEU tokeniser")
    s.add_argument("--out", help="write score.json and score.md here")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    from compsuite.commands import show, write_json
    from compsuite.data_prep.common.io import read_lines
    from compsuite.data_prep.sget.preprocess import read_released
    from compsuite.eval.sget import parse_gen_info, score_set

    folder = Path(a.data)
    rows = read_released(folder / f"{a.split}.txt")
    if a.hyps:
        hyps = read_lines(a.hyps)
        origin = {"hyps": a.hyps}
    else:
        if not a.encoded:
            raise ConfigError("--checkpoint needs --encoded (the prepared folder)")
        from compsuite.eval.translators import load_translator

        sources = read_lines(Path(a.encoded) / f"{a.split}.en")
        hyps = load_translator(a.checkpoint, None, batch_size=a.batch_size).translate(sources)
        origin = {"checkpoint": a.checkpoint, "encoded": a.encoded}
    if len(hyps) != len(rows):
        raise DataError(f"{a.hyps or a.checkpoint}: {len(hyps)} translations for "
                        f"{len(rows)} lines of {folder / f'{a.split}.txt'}")
    info_file = folder / "gen_info.tsv"
    gen_info = (parse_gen_info(read_lines(info_file))
                if a.split == "gen" and info_file.is_file() else None)
    partial = not a.no_partial and gen_info is not None
    train = folder / "train.txt"
    res = score_set(hyps, [r.japanese for r in rows], [r.english for r in rows],
                    [r.pattern for r in rows], gen_info=gen_info, partial=partial,
                    train_sources=[r.english for r in read_released(train)]
                    if a.split == "gen" and train.is_file() else None,
                    bleu_tokenize=a.bleu_tokenize)
    res["input"] = {**origin, "data": str(folder), "split": a.split}
    if not partial and a.split == "gen" and not a.no_partial:
        res["partial_not_scored_because"] = f"no {info_file} (target words)"

    def pct(x):
        return None if x is None else round(100 * x, 1)

    header = ["pattern", "n", "exact (%)", "BLEU", "partial (%)"]
    rows_md = [["all", res["n"], pct(res["exact_match"]), round(res["bleu"]["score"], 1),
                pct(res.get("partial_match"))]]
    for p, c in (res.get("per_pattern") or {}).items():
        rows_md.append([p, c["n"], pct(c["exact_match"]), round(c["bleu"], 1),
                        pct(c["partial_match"])])
    footer = f"\nBLEU: {res['bleu']['signature']}\n"
    if a.out:
        from compsuite.data_prep.common.io import atomic_open
        from compsuite.eval.reports.tables import markdown_table

        write_json(Path(a.out) / "score.json", res)
        with atomic_open(Path(a.out) / "score.md") as fh:
            fh.write(markdown_table(header, rows_md) + footer)
    show(res, a.json, header, rows_md, footer)
    return 0
