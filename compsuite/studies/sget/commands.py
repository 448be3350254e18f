"""The command line of SGET, as :meth:`compsuite.studies.sget.SGET.commands`
gives it: ``compsuite data sget ...`` and ``compsuite eval sget ...``, their
options and what each command does."""
from __future__ import annotations

import argparse
from pathlib import Path

from compsuite.foundation.errors import ConfigError


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
    from compsuite.commands import model_arguments

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
    model_arguments(s, sources=src, batch_size=256, dictionaries=None,
                    checkpoint="a fairseq or OpenNMT-py checkpoint (translates the --encoded "
                               "sources), or an hf checkpoint folder (translates the plain "
                               "English of --data)",
                    reads="translates the plain English of --data")
    s.add_argument("--encoded", help="with a fairseq or OpenNMT-py --checkpoint: the "
                                     "'compsuite data sget prepare' folder whose {split}.en "
                                     "the model reads")
    s.add_argument("--no-partial", action="store_true", help="skip the GiNZA partial match")
    s.add_argument("--bleu-tokenize", default="sudachi",
                   help="sudachi (default), ja-mecab, or any sacreBLEU tokeniser")
    s.add_argument("--out", help="write score.json and score.md here")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    from compsuite.commands import show, user_system_given, write_json
    from compsuite.data_prep.sget.preprocess import read_released
    from compsuite.eval.reports.tables import markdown_table
    from compsuite.eval.sget.scoring import score_folder, score_rows
    from compsuite.foundation.io import atomic_open, read_lines

    folder = Path(a.data)
    rows = read_released(folder / f"{a.split}.txt")
    if a.hyps:
        hyps, origin = read_lines(a.hyps), {"hyps": a.hyps}
    elif user_system_given(a):   # a program, a served model: plain English in, Japanese out
        from compsuite.commands import load_model_from_options, model_source
        from compsuite.models.protocol import translate

        with load_model_from_options(a) as model:
            hyps = translate(model, [r.english for r in rows], f"translate {a.split}",
                             show=not a.json)
        origin = model_source(a)
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
