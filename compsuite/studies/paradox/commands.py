"""The command line of the paradox study, as :meth:`compsuite.studies.paradox.Paradox.commands`
gives it: ``compsuite data paradox ...`` and ``compsuite eval paradox ...``, their
options and what each command does."""
from __future__ import annotations

import argparse
from pathlib import Path

from compsuite.foundation.errors import ConfigError, DataError


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
    from compsuite.commands import model_arguments, output_arguments
    from compsuite.foundation.arguments import positive_int

    sub = parser.add_subparsers(dest="action", required=True)
    s = sub.add_parser("score", help="score one test from translations of its inputs (any "
                                     "system's <test>.nl, or a fairseq checkpoint)")
    s.add_argument("--tests", required=True, help="a 'compsuite data paradox tests' folder")
    s.add_argument("--test", required=True,
                   choices=["np_vp", "s_conj_s", "substitutivity", "overgeneralisation"])
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--hyps", help="one Dutch translation per line of <test>.en")
    output_arguments(src, "-output", "hypotheses", "<test>.en")
    model_arguments(s, sources=src, batch_size=128,
                    checkpoint="a fairseq checkpoint (needs --data), or a local Hugging Face "
                               "model folder (a translation model: reads the English inputs "
                               "as they are)",
                    reads="reads the English inputs as they are",
                    dictionaries=("--data", "with a fairseq --checkpoint: its fairseq-bin "
                                            "folder (dictionaries)"))
    s.add_argument("--beam", type=positive_int, default=5,
                   help="beam size (default 5, the authors')")
    s.add_argument("--idioms", choices=["table7", "quick"], default="table7")
    s.add_argument("--out", help="write the full result as JSON here")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    import json

    from compsuite.commands import outputs_given, user_system_given, write_json
    from compsuite.data_prep.paradox.dataset import item_tables
    from compsuite.eval.paradox.evaluate import read_test
    from compsuite.eval.paradox.metrics import score_test
    from compsuite.foundation.io import read_lines

    inputs, samples = read_test(Path(a.tests), a.test)
    if a.hyps:
        hyps = read_lines(a.hyps, allow_empty=True)
        if len(hyps) != len(inputs):
            raise DataError(f"{a.hyps}: {len(hyps)} lines, but {Path(a.tests) / (a.test + '.en')} "
                            f"has {len(inputs)}")
    elif own := outputs_given(a, "-output", "hypotheses"):   # a toolkit's own output file
        hyps = own[0].read_hypotheses(own[1], len(inputs))
    elif user_system_given(a):   # a program, a served model
        from compsuite.commands import load_model_from_options
        from compsuite.models.protocol import translate

        with load_model_from_options(a) as tr:
            hyps = translate(tr, inputs, f"translate {a.test}", show=True)
    else:
        if not a.data and not Path(a.checkpoint).is_dir():   # a folder: a Hugging Face model
            raise ConfigError("--checkpoint needs --data (the model's fairseq-bin folder)")
        from compsuite.commands import engine_settings
        from compsuite.models.protocol import translate
        from compsuite.toolkits import load_translator

        tr = load_translator(a.checkpoint, a.data, batch_size=a.batch_size, beam=a.beam,
                             **engine_settings(a))
        hyps = translate(tr, inputs, f"translate {a.test}", show=True)
    forms, keywords = item_tables(a.idioms)
    res = score_test(a.test, inputs, samples, hyps, synonym_forms=forms, idiom_keywords=keywords)
    if a.out:
        write_json(a.out, res)
    for row in res["summary"]:
        mean = row["mean_over_templates"]
        print(f"{row['data']:13s} {row['key']:22s} {row['metric']:28s} "
              f"{'-' if mean is None else f'{mean:.3f}'} (n={row['n']})")
    print(json.dumps(res["signatures"], indent=1))
    return 0
