"""``compsuite data paradox generate``: the ten synthetic templates with rule-based Dutch.

Writes ``synthetic/synthetic_<T>.en`` and ``.nl`` (one sentence per line, tokens
separated by spaces, as in the authors' release) for every template T, and
``manifest.json`` (seed, arguments, counts, each template's number of possible
sentences, checksums, versions).  Sentences are drawn uniformly without replacement from
everything the template can say (:func:`templates.space`), ``--per-template`` of them
(3,000 in the paper); a template that can say fewer (template 1: 1,960 with the
authors' vocabulary) gives all of its sentences, and the manifest records the shortfall
under ``dropped``.  The same seed and arguments give the same bytes.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Sequence

from compsuite.foundation.io import write_lines
from compsuite.foundation.manifest import is_complete, write_manifest

from . import templates as T
from .lexicon import LEXICON_PATH, load

GENERATOR = "paradox.synthetic"
VERSION = "1"
PER_TEMPLATE = 3000


def generate(out: str | Path, seed: int, per_template: int = PER_TEMPLATE,
             lexicon: str | Path = LEXICON_PATH, templates: Sequence[int] = T.TEMPLATES,
             force: bool = False) -> dict:
    out = Path(out)
    args = {"seed": seed, "per_template": per_template, "templates": list(templates),
            "lexicon": str(Path(lexicon).resolve()) if Path(lexicon) != LEXICON_PATH else "builtin"}
    if not force and is_complete(out, GENERATOR, args, version=VERSION):
        from compsuite.foundation.manifest import read_manifest
        return read_manifest(out)
    lex = load(lexicon)
    files, counts, sizes, dropped = [], {}, {}, {}
    for t in templates:
        if t not in T.TEMPLATES:
            raise ValueError(f"no template {t} (1-10)")
        rng = random.Random(f"paradox-synthetic:{seed}:{t}")
        space = T.space(t, lex)
        chosen = rng.sample(space, min(per_template, len(space)))
        stem = f"synthetic/synthetic_{t}"
        write_lines(out / f"{stem}.en", (T.english(s) for s in chosen))
        write_lines(out / f"{stem}.nl", (T.dutch(s) for s in chosen))
        files += [f"{stem}.en", f"{stem}.nl"]
        counts[f"synthetic_{t}"] = len(chosen)
        sizes[f"synthetic_{t}"] = len(space)
        if len(chosen) < per_template:
            dropped[f"synthetic_{t}: the template has only {len(space)} sentences"] = \
                per_template - len(chosen)
    return write_manifest(
        out, generator=GENERATOR, generator_version=VERSION, seed=seed, args=args,
        files=files, counts=counts, dropped=dropped,
        statistics={"possible_sentences": sizes,
                    "lexicon": {c: len(lex.of(c)) for c in sorted({w.category for w in lex.words})}})


def add_arguments(ap: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import positive_int

    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True, help="folder for synthetic/ and manifest.json")
    ap.add_argument("--per-template", type=positive_int, default=PER_TEMPLATE,
                    help=f"sentences per template (default {PER_TEMPLATE}, the paper's)")
    ap.add_argument("--templates", type=int, nargs="+", default=list(T.TEMPLATES),
                    choices=T.TEMPLATES, metavar="T")
    ap.add_argument("--lexicon", default=str(LEXICON_PATH),
                    help="a lexicon in lexicon.tsv's format (default: the authors' words)")
    ap.add_argument("--force", action="store_true", help="regenerate even if complete")


def run(args: argparse.Namespace) -> int:
    if args.per_template < 1:
        raise SystemExit("--per-template: a positive number")
    m = generate(args.out, args.seed, args.per_template, args.lexicon, args.templates,
                 force=args.force)
    print(f"{args.out}: {sum(m['counts'].values())} sentences in {len(m['counts'])} templates",
          file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="compsuite data paradox generate", description=__doc__)
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
