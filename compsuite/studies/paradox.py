"""The paradox of compositionality (Dankers, Bruni and Hupkes 2022): English-to-Dutch
systematicity, substitutivity and idiom overgeneralisation tests of fairseq models, as
a study of the suite.

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

Units: ``<size>/<run>/seed<S>`` (one part per training size).  Data:
``DATA/paradox/<corpus>/<size>/seed<D>/{text or tok,raw,tests}``.  Evaluation
translates the consistency tests with the last checkpoint and the overgeneralisation
test with every checkpoint the training saved (the ``checkpoint_epochs`` of the size,
else every ``--save-interval-updates``), beam 5 as the authors; OPUS models read and
write Moses-tokenised BPE, so their translator encodes inputs and decodes outputs
(``raw/codec.json``), and their BLEU on Flores-101 devtest is computed with sacrebleu.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path

from compsuite.data_prep.common.io import DataError
from compsuite.engine import Context, Unit
from compsuite.errors import ConfigError
from compsuite.registry import Profile, check_keys, near, positive_int
from compsuite.studies.base import Study
from compsuite.toolkits import Dataset

DATA_KEYS = {"corpus", "sizes", "seed", "n_train", "n_valid", "n_test", "en", "nl", "flores",
             "bpe_merges", "small_pairs", "jobs", "checkpoint_epochs"}
OPUS_KEYS = {"en", "nl", "flores", "bpe_merges", "small_pairs", "jobs", "checkpoint_epochs"}
TEST_KEYS = {"n", "seed", "semi_natural", "natural", "idioms"}
CORPORA = ("generated", "opus")
OPUS_SIZES = {"small": "about 1M pairs", "medium": "one eighth of the corpus",
              "full": "the whole corpus (69M pairs in the paper)"}
CONSISTENCY_TESTS = ("np_vp", "s_conj_s", "substitutivity")


class Paradox(Study):
    profile_keys = frozenset({"data", "tests"})

    @classmethod
    def commands(cls):
        return {"data": add_data_commands, "eval": add_eval_commands}

    # ------------------------------------------------------------------ YAML
    def validate(self) -> None:
        for name, prof in self.profiles.items():
            at = self.where("profiles", name)
            data = check_keys(prof.options.get("data") or {}, DATA_KEYS, f"{at}.data")
            corpus = data.get("corpus", "generated")
            if corpus not in CORPORA:
                raise ConfigError(f"{at}.data.corpus: one of {', '.join(CORPORA)}, not "
                                  f"{corpus!r}{near(str(corpus), CORPORA)}")
            for key in ("seed", "n_train", "n_valid", "n_test"):
                if key in data:
                    positive_int(data[key], f"{at}.data.{key}")
            if corpus == "opus":
                for size in data.get("sizes") or []:
                    if size not in OPUS_SIZES:
                        raise ConfigError(f"{at}.data.sizes: unknown size '{size}' "
                                          f"({', '.join(OPUS_SIZES)}){near(size, OPUS_SIZES)}")
                for key in ("bpe_merges", "small_pairs", "jobs"):
                    if key in data:
                        positive_int(data[key], f"{at}.data.{key}")
                for key in ("en", "nl", "flores"):
                    if not isinstance(data.get(key), str) or not data[key]:
                        raise ConfigError(f"{at}.data.{key}: a path (environment variables "
                                          "allowed), not " + repr(data.get(key)))
                epochs = data.get("checkpoint_epochs") or {}
                if not isinstance(epochs, dict):
                    raise ConfigError(f"{at}.data.checkpoint_epochs: size -> list of epochs")
                for size, val in epochs.items():
                    if size not in OPUS_SIZES:
                        raise ConfigError(f"{at}.data.checkpoint_epochs: unknown size '{size}'"
                                          f"{near(str(size), OPUS_SIZES)}")
                    if (not isinstance(val, list) or not val or sorted(set(val)) != val or not all(
                            isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in val)):
                        raise ConfigError(f"{at}.data.checkpoint_epochs.{size}: increasing "
                                          f"positive epochs, not {val!r}")
            else:
                for key in sorted({"sizes"} | OPUS_KEYS):
                    if key in data:
                        raise ConfigError(f"{at}.data.{key}: only for corpus: opus")
            tests = check_keys(prof.options.get("tests") or {}, TEST_KEYS, f"{at}.tests")
            for key in ("n", "seed"):
                if key in tests:
                    positive_int(tests[key], f"{at}.tests.{key}")
            if tests.get("idioms", "table7") not in ("table7", "quick"):
                raise ConfigError(f"{at}.tests.idioms: 'table7' or 'quick', not "
                                  f"{tests.get('idioms')!r}")
            for r in prof.runs:
                if self.run(r).toolkit != "fairseq":
                    raise ConfigError(f"{at}.runs: '{r}' is not a fairseq run (the study "
                                      "lists fairseq's interval checkpoints)")

    # ------------------------------------------------------------------ units
    def _sizes(self, profile: Profile) -> list[str]:
        data = profile.options.get("data") or {}
        if data.get("corpus", "generated") == "opus":
            return list(data.get("sizes") or OPUS_SIZES)
        return ["generated"]

    def parts(self, profile: Profile) -> dict[str, str]:
        return {s: (f"OPUS {s}: {OPUS_SIZES[s]}" if s in OPUS_SIZES else
                    "rule-generated English-Dutch pairs with idioms (scaled down, not OPUS)")
                for s in self._sizes(profile)}

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        epochs = (profile.options.get("data") or {}).get("checkpoint_epochs") or {}
        return [Unit(size, r, s, size, f"{size}/{r}/seed{s}",
                     train_options={"save_epochs": epochs[size]} if size in epochs else None)
                for size in self._sizes(profile) for s in seeds or profile.seeds
                for r in runs or profile.runs]

    # ------------------------------------------------------------------ data
    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        data = profile.options.get("data") or {}
        tests = profile.options.get("tests") or {}
        if dataset in OPUS_SIZES:
            at = self.where("profiles", profile.name, "data")
            paths = {k: resolve_path(data[k], f"{at}.{k}") for k in ("en", "nl", "flores")}
            return build_opus(Path(data_root), dataset, paths, data, tests, show=show)
        return build_generated(Path(data_root), data_seed=data.get("seed", 1),
                               n_train=data.get("n_train", 12000),
                               n_valid=data.get("n_valid", 500), n_test=data.get("n_test", 500),
                               tests=tests, show=show)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        from compsuite.eval.paradox import score_test

        tests_dir = ctx.data.root / "tests"
        synonym_forms, idiom_keywords = item_tables(ctx.profile.options.get("tests") or {})
        generation = {**ctx.generation}
        out = {"beam": generation.get("beam"), "tests": {}, "overgeneralisation_by_step": []}
        by_epoch = bool((ctx.unit.train_options or {}).get("save_epochs"))
        last = (ctx.backend.epoch_checkpoints(ctx.run_dir) if by_epoch
                else ctx.backend.checkpoints(ctx.run_dir))
        out["step_unit"] = "epoch" if by_epoch else "update"
        final = str(last[-1][1]) if last else ctx.checkpoint
        codec = None
        if (ctx.data.raw / "codec.json").is_file():
            from compsuite.data_prep.paradox.opus import Codec

            codec = Codec(ctx.data.raw)

        def load(path):
            tr = ctx.load(path)
            if codec is None:
                return tr
            from compsuite.data_prep.paradox.opus import CodecTranslator

            return CodecTranslator(tr, codec)

        tr = load(final)
        flores = ctx.data.raw / "flores"
        if (flores / "devtest.en").is_file():
            out["flores_bleu"] = flores_bleu(tr, flores, ctx.run_dir / "translations")
        for test in CONSISTENCY_TESTS:
            inputs, samples = _read(tests_dir, test)
            hyps = translate_cached(tr, inputs, ctx.run_dir / "translations" / f"final-{test}.nl")
            res = score_test(test, inputs, samples, hyps, synonym_forms=synonym_forms)
            out["tests"][test] = {"summary": res["summary"], "cells": res["cells"],
                                  "signatures": res["signatures"]}
        inputs, samples = _read(tests_dir, "overgeneralisation")
        for step, ck in last or [(None, Path(ctx.checkpoint))]:
            tr = load(str(ck))
            hyps = translate_cached(tr, inputs, ctx.run_dir / "translations" /
                                    f"step{step}-overgeneralisation.nl")
            res = score_test("overgeneralisation", inputs, samples, hyps,
                             idiom_keywords=idiom_keywords)
            out["overgeneralisation_by_step"].append(
                {"step": step, "unit": out["step_unit"], "checkpoint": str(ck),
                 "summary": res["summary"],
                 "signatures": res["signatures"]})
        out["checkpoint"] = final
        return out

    def report(self, profile: str, results: list[dict], out_dir: Path) -> str:
        from compsuite.eval.reports.paradox import build_report

        return build_report(self.title, profile, results, out_dir)


STUDY = Paradox


def _read(folder: Path, test: str):
    from compsuite.data_prep.paradox.testsets import read_samples

    return read_samples(folder, test)


def translate_cached(translator, inputs: list[str], path: Path) -> list[str]:
    """Translations of ``inputs`` (one batched call), stored in ``path`` so that a resumed
    evaluation does not translate again."""
    from compsuite.data_prep.common.io import read_lines, write_lines

    if path.is_file():
        hyps = read_lines(path, allow_empty=True)
        if len(hyps) == len(inputs):
            return hyps
    hyps = translator.translate(list(inputs))
    write_lines(path, hyps)
    return hyps


def flores_bleu(translator, folder: Path, out_dir: Path) -> dict:
    """sacreBLEU of the model on Flores-101 devtest (plain text both sides)."""
    import sacrebleu

    from compsuite.data_prep.common.io import read_lines

    sources, refs = read_lines(folder / "devtest.en"), read_lines(folder / "devtest.nl")
    hyps = translate_cached(translator, sources, out_dir / "flores-devtest.nl")
    bleu = sacrebleu.metrics.BLEU()
    score = bleu.corpus_score(hyps, [refs])
    return {"score": round(score.score, 2), "signature": str(bleu.get_signature()),
            "n": len(hyps)}


_VAR = re.compile(r"\$\{?(\w+)\}?")


def resolve_path(value: str, where: str) -> Path:
    """A YAML path with ``~`` and environment variables expanded; an unset variable
    or a path that does not exist is an error naming the key."""
    expanded = os.path.expanduser(os.path.expandvars(value))
    unset = _VAR.findall(expanded)
    if unset:
        raise ConfigError(f"{where}: '{value}' names the environment variable "
                          f"{unset[0]}, which is not set (export it, or put the path in the "
                          "YAML)")
    path = Path(expanded)
    if not path.exists():
        raise ConfigError(f"{where}: {path}: no such file or folder")
    return path


def build_opus(data_root: Path, size: str, paths: dict, data: dict, tests: dict,
               show: bool = True) -> Dataset:
    """``DATA/paradox/opus/<size>/seed<D>/``: ``tok/`` and ``raw/`` (the prepared
    corpus, :func:`compsuite.data_prep.paradox.opus.prepare`) and ``tests/``."""
    import sys

    from compsuite.data_prep.paradox import opus, testsets

    seed = data.get("seed", 1)
    root = data_root / "paradox" / "opus" / size / f"seed{seed}"
    if show:
        print(f"paradox data: {root}", file=sys.stderr, flush=True)
    opus.prepare(paths["en"], paths["nl"], paths["flores"], root, size=size, seed=seed,
                 merges=data.get("bpe_merges", 60000),
                 small_pairs=data.get("small_pairs", opus.SMALL_PAIRS),
                 jobs=data.get("jobs", 1), show=show)
    testsets.write(root / "tests", tests.get("seed", 1), tests.get("n", 500),
                   semi_natural=tests.get("semi_natural"), natural=tests.get("natural"),
                   idiom_label=tests.get("idioms", "table7"),
                   idiom_items=_quick_items(tests))
    return Dataset(root, label=f"paradox OPUS {size} seed{seed}",
                   splits=("train", "valid", "test"), allow_unknown=True,
                   joined_dictionary=True)


def _quick_items(tests: dict):
    from compsuite.data_prep.paradox import corpus

    return corpus.quick_idioms() if tests.get("idioms", "table7") == "quick" else None


def item_tables(tests: dict) -> tuple[dict, dict]:
    """Synonym name -> Dutch forms, idiom name -> keywords, for the profile's items."""
    from compsuite.data_prep.paradox import corpus, items

    synonym_forms = {s.name: s.forms for s in items.synonyms()}
    idioms = corpus.quick_idioms() if tests.get("idioms") == "quick" else items.idioms()
    return synonym_forms, {i.name: i.keywords for i in idioms}


def build_generated(data_root: Path, *, data_seed: int, n_train: int, n_valid: int,
                    n_test: int, tests: dict, show: bool = True) -> Dataset:
    """``DATA/paradox/generated/<size>/seed<D>/``: ``text/`` (the corpus), ``raw/`` (as
    ``{train,valid,test}.{src,tgt}`` for the toolkits) and ``tests/`` (the test sets),
    each skipped when its manifest matches."""
    import sys

    from compsuite.data_prep.common.io import sha256_file
    from compsuite.data_prep.common.manifest import read_manifest, write_manifest
    from compsuite.data_prep.paradox import corpus, testsets

    size = f"train{n_train}"
    root = data_root / "paradox" / "generated" / size / f"seed{data_seed}"
    if show:
        print(f"paradox data: {root}", file=sys.stderr, flush=True)
    corpus.write(root / "text", data_seed, n_train, n_valid, n_test)
    raw = root / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    files = []
    for split in ("train", "valid", "test"):
        for src, dst in (("en", "src"), ("nl", "tgt")):
            target = raw / f"{split}.{dst}"
            source = root / "text" / f"{split}.{src}"
            if not target.is_file() or target.read_bytes() != source.read_bytes():
                shutil.copyfile(source, target)
            files.append(target.name)
    if read_manifest(raw) is None or set(read_manifest(raw)["sha256"]) != set(files) or any(
            sha256_file(raw / f) != d for f, d in read_manifest(raw)["sha256"].items()):
        write_manifest(raw, generator="paradox.raw", generator_version="1", seed=data_seed,
                       args={"text": str(root / "text")}, files=files)
    testsets.write(root / "tests", tests.get("seed", 1), tests.get("n", 500),
                   semi_natural=tests.get("semi_natural"), natural=tests.get("natural"),
                   idiom_items=_quick_items(tests), idiom_label=tests.get("idioms", "table7"))
    # a small corpus's valid/test may hold a word its train split lacks (the model maps
    # it to <unk>, as it does for a test input's unseen word)
    return Dataset(root, label=f"paradox generated {size} seed{data_seed}",
                   splits=("train", "valid", "test"), allow_unknown=True)


# ----------------------------------------------------------------------------- commands
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.data_prep.paradox import corpus, generate, natural, opus, testsets, translate

    sub = parser.add_subparsers(dest="action", required=True)
    for name, add, run, help_ in (
            ("generate", generate.add_arguments, generate.run,
             "the ten synthetic templates with rule-based Dutch (synthetic/, manifest.json)"),
            ("translate", translate.add_arguments, translate.run,
             "rule-based Dutch of template English (stdin -> stdout)"),
            ("check", translate.add_check_arguments, translate.run_check,
             "compare our Dutch with the authors' released synthetic_<T>.nl files"),
            ("tests", testsets.add_arguments, testsets.run,
             "the test sets of every condition (<test>.en inputs, <test>.tsv samples)"),
            ("corpus", corpus.add_arguments, corpus.run,
             "the quick profile's generated training corpus (scaled down, not OPUS)"),
            ("natural", natural.add_arguments, natural.run,
             "natural test data from your parallel corpus (synonym and idiom sentences, "
             "length- and frequency-matched second conjuncts)"),
            ("opus", opus.add_arguments, opus.run,
             "the paper profile's training data from your OPUS corpus and Flores-101 "
             "(Moses tokenisation, BPE; small / medium / full)")):
        p = sub.add_parser(name, help=help_)
        add(p)
        p.set_defaults(func=run)


def add_eval_commands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    s = sub.add_parser("score", help="score one test from translations of its inputs (any "
                                     "system's <test>.nl, or a fairseq checkpoint)")
    s.add_argument("--tests", required=True, help="a 'compsuite data paradox tests' folder")
    s.add_argument("--test", required=True,
                   choices=["np_vp", "s_conj_s", "substitutivity", "overgeneralisation"])
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--hyps", help="one Dutch translation per line of <test>.en")
    src.add_argument("--fairseq-output", help="fairseq-generate or fairseq-interactive output "
                                              "for <test>.en (D- lines, else H- lines)")
    src.add_argument("--checkpoint", help="a fairseq checkpoint (needs --data)")
    s.add_argument("--data", help="with --checkpoint: its fairseq-bin folder (dictionaries)")
    s.add_argument("--beam", type=int, default=5, help="beam size (default 5, the authors')")
    s.add_argument("--batch-size", type=int, default=128)
    s.add_argument("--idioms", choices=["table7", "quick"], default="table7")
    s.add_argument("--out", help="write the full result as JSON here")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    import json

    from compsuite.commands import write_json
    from compsuite.data_prep.common.io import read_lines
    from compsuite.eval.paradox import score_test

    inputs, samples = _read(Path(a.tests), a.test)
    if a.hyps:
        hyps = read_lines(a.hyps, allow_empty=True)
        if len(hyps) != len(inputs):
            raise DataError(f"{a.hyps}: {len(hyps)} lines, but {Path(a.tests) / (a.test + '.en')} "
                            f"has {len(inputs)}")
    elif a.fairseq_output:
        from compsuite.eval.readers.predictions import read_fairseq_hypotheses

        hyps = read_fairseq_hypotheses(a.fairseq_output, len(inputs))
    else:
        if not a.data:
            raise ConfigError("--checkpoint needs --data (the model's fairseq-bin folder)")
        from compsuite.eval.translators import load_translator

        tr = load_translator(a.checkpoint, a.data, batch_size=a.batch_size, beam=a.beam)
        hyps = tr.translate(inputs)
    forms, keywords = item_tables({"idioms": a.idioms})
    res = score_test(a.test, inputs, samples, hyps, synonym_forms=forms, idiom_keywords=keywords)
    if a.out:
        write_json(a.out, res)
    for row in res["summary"]:
        mean = row["mean_over_templates"]
        print(f"{row['data']:13s} {row['key']:22s} {row['metric']:28s} "
              f"{'-' if mean is None else f'{mean:.3f}'} (n={row['n']})")
    print(json.dumps(res["signatures"], indent=1))
    return 0
