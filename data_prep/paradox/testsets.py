"""Test-set builders for every condition of the three tests (sections 4.1-4.3).

A built test folder holds, per test, the English inputs to translate and the samples
that say which inputs are compared:

* ``<test>.en``: every input sentence once (in order of first use), the file a system
  translates (a model of any backend, or a program, through the translator protocol; or
  any system writing ``<test>.nl`` beside it, one line per input);
* ``<test>.tsv``: one sample per line: ``data``, ``template``, ``item`` (synonym or
  idiom, ``-`` otherwise), ``condition``, and the 0-based line numbers in ``<test>.en``
  of the inputs compared (two for the consistency tests, one for overgeneralisation);
* ``manifest.json``: seed, arguments, counts per test/data/condition, checksums.

Tests and conditions (``n`` samples per template per condition, 500 in the paper):

* ``np_vp``: S -> NP VP.  ``NP``: the subject's noun replaced by another person noun of
  the same number (template 4: the first conjunct; template 5: the plural after ``of``;
  semi-natural: the person noun of the template); ``VP``: the elite object replaced
  (templates 6-8: the embedded subject, plural), synthetic only.
* ``s_conj_s``: ``S1 , and S2 .`` (semi-natural templates 8-10, questions: ``Did S1 , and
  did S2 ?``), S1 synthetic from a template other than S2's; ``S1'``: S1's verb-phrase
  noun changed (as in ``VP``); ``S3``: S1 replaced by a sentence of a third template.
  S2 from the synthetic or semi-natural data, or from the user's natural sentences.
* ``substitutivity``: each synonym pair's clause attached after the object noun
  (templates 6-8: after the embedded subject; semi-natural: after the person noun), once
  with the British and once with the American term; natural pairs read from the user's
  ``{i}-1.en`` / ``{i}-2.en`` files.
* ``overgeneralisation``: each idiom as ``that said " ... "`` at the same place; natural
  idiom sentences from the user's ``{i}.en`` files, those whose reference (``{i}.nl``,
  when given) is itself literal left out and counted, as the authors' evaluation does;
  ``random``: the idiom between five random words before and five after (ten in all,
  Table 7's local translations).
"""
from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import iter_lines, read_lines

from . import templates as T
from .items import Idiom, Synonym, idioms, synonyms
from .lexicon import PL, SG, Lexicon, load
from .literal import overgeneralised

TESTS = ("np_vp", "s_conj_s", "substitutivity", "overgeneralisation")
SEMI_NATURAL = tuple(range(1, 11))
QUESTION_TEMPLATES = (8, 9, 10)   # semi-natural templates that are questions


# ----------------------------------------------------------------------------- synthetic changes
def _other(rng: random.Random, options: Sequence, current):
    choices = [o for o in options if o != current]
    return rng.choice(choices)


def change_subject(s: T.Sentence, rng: random.Random, lex: Lexicon) -> T.Sentence:
    """NP -> NP': the subject's person noun replaced, its number kept (template 4: the
    first conjunct, not the second's noun; template 5: the plural after ``of``; 6-8: not
    the embedded subject's noun)."""
    people = lex.of("people")
    if s.template == 5:
        np = s.subj2
        return replace(s, subj2=T.NP(_other(rng, people, np.noun), np.number, np.clause))
    avoid = {s.subj.noun}
    for other in (s.subj2, s.emb_subj):
        if other is not None:
            avoid.add(other.noun)
    noun = rng.choice([w for w in people if w not in avoid])
    return replace(s, subj=T.NP(noun, s.subj.number, s.subj.clause))


def change_object(s: T.Sentence, rng: random.Random, lex: Lexicon) -> T.Sentence:
    """VP -> VP': the elite object replaced (templates 6-8: the embedded subject)."""
    if s.template in (6, 7, 8):
        e = s.emb_subj
        noun = rng.choice([w for w in lex.of("people") if w not in (e.noun, s.subj.noun)])
        return replace(s, emb_subj=T.NP(noun, e.number, e.clause))
    o = s.obj
    return replace(s, obj=T.NP(_other(rng, lex.of("elite"), o.noun), o.number, o.clause))


def attach(s: T.Sentence, clause: T.Clause) -> T.Sentence:
    """The clause after the object noun (templates 6-8: after the embedded subject)."""
    slot = "emb_subj" if s.template in (6, 7, 8) else "obj"
    np = getattr(s, slot)
    return replace(s, **{slot: T.NP(np.noun, np.number, clause)})


# ----------------------------------------------------------------------------- semi-natural data
def read_semi_natural(folder: str | Path) -> dict[int, list[str]]:
    """The released ``semi_natural_<T>.en`` files (or a user's in their format)."""
    folder = Path(folder)
    out = {}
    for t in SEMI_NATURAL:
        p = folder / f"semi_natural_{t}.en"
        if not p.is_file():
            raise DataError(f"{p}: missing (semi-natural data: semi_natural_1.en ... _10.en)")
        out[t] = [line for line in iter_lines(p)]
        if not out[t]:
            raise DataError(f"{p}: empty")
    return out


def person_position(line: str, template: int, lex: Lexicon, origin: str = "") -> tuple[int, str]:
    """Where the varied person noun of a semi-natural sentence is (word index) and its
    number: ``The N ...`` (templates 1-5), ``... is read by the N .`` (6, 7), ``Did the N
    hear about ...`` (8-10)."""
    ws = line.split()
    if template <= 5:
        i = 1
    elif template <= 7:
        i = len(ws) - 2
    else:
        i = 2
    hit = lex.lookup(ws[i], "people") if 0 <= i < len(ws) else None
    if hit is None:
        raise DataError(f"{origin}: no person noun where semi-natural template {template} has "
                        f"it (word {i + 1}): {line!r}")
    return i, hit[1]


def semi_change_subject(line: str, template: int, rng: random.Random, lex: Lexicon,
                        origin: str = "") -> str:
    i, number = person_position(line, template, lex, origin)
    ws = line.split()
    noun = lex.lookup(ws[i], "people")[0]
    ws[i] = _other(rng, lex.of("people"), noun).en(number)
    return " ".join(ws)


def semi_attach(line: str, template: int, clause: T.Clause, lex: Lexicon, origin: str = "") -> str:
    i, number = person_position(line, template, lex, origin)
    ws = line.split()
    return " ".join(ws[:i + 1] + clause.en(number).split() + ws[i + 1:])


# ----------------------------------------------------------------------------- conjunctions
def conjoin(s1: str, s2: str, question: bool = False) -> str:
    """``S1 , and S2 .`` or, for questions, ``Did S1 , and did S2 ?`` (s1 already a question)."""
    a = s1.rstrip(" .?")
    b = s2.split()
    b[0] = b[0].lower()
    return f"{a} , and {' '.join(b)}"


# ----------------------------------------------------------------------------- the builder
class Builder:
    """Collects inputs (deduplicated) and samples for one test."""

    def __init__(self):
        self.inputs: list[str] = []
        self.index: dict[str, int] = {}
        self.samples: list[tuple] = []
        self.dropped: dict[str, int] = {}   # reason -> samples fewer than asked for

    def add(self, data: str, template, item: str, condition: str, *sentences: str) -> None:
        ids = []
        for s in sentences:
            if s not in self.index:
                self.index[s] = len(self.inputs)
                self.inputs.append(s)
            ids.append(self.index[s])
        self.samples.append((data, str(template), item or "-", condition,
                             ",".join(map(str, ids))))


def build(seed: int, n: int = 500, *, semi_natural: str | Path | None = None,
          natural: str | Path | None = None, tests: Iterable[str] = TESTS,
          lex: Lexicon | None = None, synonym_items: Sequence[Synonym] | None = None,
          idiom_items: Sequence[Idiom] | None = None,
          progress: Callable[[str], None] | None = None) -> dict[str, Builder]:
    """Build the test sets.  ``semi_natural``: a folder of ``semi_natural_<T>.en``;
    ``natural``: a folder with ``systematicity/<T>.en`` (second conjuncts, see
    ``compsuite data paradox natural``), ``substitutivity/{i}-1.en, {i}-2.en`` and
    ``overgeneralisation/{i}.en``; either may be absent (those conditions are skipped)."""
    lex = lex or load()
    syns = tuple(synonym_items if synonym_items is not None else synonyms())
    ids = tuple(idiom_items if idiom_items is not None else idioms())
    semi = read_semi_natural(semi_natural) if semi_natural else None
    nat = Path(natural) if natural else None
    out = {}
    for test in tests:
        if test not in TESTS:
            raise ValueError(f"unknown test {test!r} ({', '.join(TESTS)})")
        rng = random.Random(f"paradox-tests:{seed}:{test}")
        b = out[test] = Builder()
        if progress:
            progress(test)
        globals()[f"_build_{test}"](b, rng, n, lex, semi, nat, syns, ids)
    return out


def _bases(rng, template, n, lex):
    return T.sample(template, n, rng, lex)


def _semi_lines(rng, semi, template, n, b=None):
    lines = semi[template]
    if b is not None and len(lines) < n:
        key = f"semi_natural_{template}.en has {len(lines)} lines, fewer than {n}"
        b.dropped[key] = b.dropped.get(key, 0) + n - len(lines)
    return rng.sample(lines, min(n, len(lines)))


def _build_np_vp(b, rng, n, lex, semi, nat, syns, ids):
    for t in T.TEMPLATES:
        for s in _bases(rng, t, n, lex):
            b.add("synthetic", t, "", "NP", T.english(s), T.english(change_subject(s, rng, lex)))
        for s in _bases(rng, t, n, lex):
            b.add("synthetic", t, "", "VP", T.english(s), T.english(change_object(s, rng, lex)))
    if semi:
        for t in SEMI_NATURAL:
            origin = f"semi_natural_{t}.en"
            for line in _semi_lines(rng, semi, t, n, b):
                b.add("semi_natural", t, "", "NP", line,
                      semi_change_subject(line, t, rng, lex, origin))


def _first_conjuncts(rng, lex, s2_template):
    """S1 (a template other than S2's), S1' (its VP noun changed) and S3 (a third template)."""
    t1 = rng.choice([t for t in T.TEMPLATES if t != s2_template])
    s1 = T.sample(t1, 1, rng, lex)[0]
    s1p = change_object(s1, rng, lex)
    t3 = rng.choice([t for t in T.TEMPLATES if t not in (t1, s2_template)])
    s3 = T.sample(t3, 1, rng, lex)[0]
    return s1, s1p, s3


def _build_s_conj_s(b, rng, n, lex, semi, nat, syns, ids):
    sources = {"synthetic": {t: [T.english(s) for s in T.sample(t, n, rng, lex)]
                             for t in T.TEMPLATES}}
    if semi:
        sources["semi_natural"] = {t: _semi_lines(rng, semi, t, n, b) for t in SEMI_NATURAL}
    if nat and (nat / "systematicity").is_dir():
        found = {}
        for t in T.TEMPLATES:
            p = nat / "systematicity" / f"{t}.en"
            if p.is_file():
                lines = read_lines(p)
                found[t] = rng.sample(lines, min(n, len(lines)))
        if found:
            sources["natural"] = found
    for data, per in sources.items():
        for t, lines in per.items():
            question = data == "semi_natural" and t in QUESTION_TEMPLATES
            for s2 in lines:
                s1, s1p, s3 = _first_conjuncts(rng, lex, t if data == "synthetic" else None)
                realise = (lambda s: " ".join(T.english_tokens(s, question=True))) if question \
                    else T.english
                base = conjoin(realise(s1), s2, question)
                b.add(data, t, "", "S1'", base, conjoin(realise(s1p), s2, question))
                b.add(data, t, "", "S3", base, conjoin(realise(s3), s2, question))


def _build_substitutivity(b, rng, n, lex, semi, nat, syns, ids):
    for syn in syns:
        c1, c2 = syn.clause(1), syn.clause(2)
        for t in T.TEMPLATES:
            for s in _bases(rng, t, n, lex):
                b.add("synthetic", t, syn.name, "pair", T.english(attach(s, c1)),
                      T.english(attach(s, c2)))
        if semi:
            for t in SEMI_NATURAL:
                origin = f"semi_natural_{t}.en"
                for line in _semi_lines(rng, semi, t, n, b):
                    b.add("semi_natural", t, syn.name, "pair",
                          semi_attach(line, t, c1, lex, origin), semi_attach(line, t, c2, lex, origin))
    if nat and (nat / "substitutivity").is_dir():
        for i, syn in enumerate(syns):
            p1, p2 = nat / "substitutivity" / f"{i}-1.en", nat / "substitutivity" / f"{i}-2.en"
            if not (p1.is_file() and p2.is_file()):
                continue
            l1, l2 = read_lines(p1), read_lines(p2)
            if len(l1) != len(l2):
                raise DataError(f"{p1} has {len(l1)} lines, {p2} has {len(l2)}")
            for a, c in zip(l1, l2):
                b.add("natural", "-", syn.name, "pair", a, c)


def random_words(rng: random.Random, lex: Lexicon, k: int = 10) -> list[str]:
    """``k`` random English nouns of the lexicon (either number), no article."""
    nouns = [w for c in ("people", "elite", "vehicle", "group") for w in lex.of(c)]
    return [rng.choice(nouns).en(rng.choice((SG, PL))) for _ in range(k)]


def _build_overgeneralisation(b, rng, n, lex, semi, nat, syns, ids):
    for idiom in ids:
        clause = idiom.clause()
        for t in T.TEMPLATES:
            for s in _bases(rng, t, n, lex):
                b.add("synthetic", t, idiom.name, "idiom", T.english(attach(s, clause)))
        if semi:
            for t in SEMI_NATURAL:
                origin = f"semi_natural_{t}.en"
                for line in _semi_lines(rng, semi, t, n, b):
                    b.add("semi_natural", t, idiom.name, "idiom",
                          semi_attach(line, t, clause, lex, origin))
        for _ in range(n):
            w = random_words(rng, lex)
            b.add("random", "-", idiom.name, "idiom", " ".join(w[:5] + [idiom.idiom] + w[5:]))
    if nat and (nat / "overgeneralisation").is_dir():
        for i, idiom in enumerate(ids):
            p = nat / "overgeneralisation" / f"{i}.en"
            if not p.is_file():
                continue
            lines = read_lines(p)
            ref_path = p.with_suffix(".nl")
            refs = read_lines(ref_path) if ref_path.is_file() else None
            if refs is not None and len(refs) != len(lines):
                raise DataError(f"{p} has {len(lines)} lines, {ref_path} has {len(refs)}")
            for k, line in enumerate(lines):
                if not re.search(re.escape(idiom.idiom), line, re.IGNORECASE):
                    raise DataError(f"{p}: line {k + 1}: no {idiom.idiom!r} in {line!r}")
                # as the authors: only sentences whose reference translates the idiom
                # globally (no keyword, their substring rule) are scored
                if refs is not None and overgeneralised(refs[k], idiom.keywords, "substring"):
                    key = "natural idiom sentences whose reference is itself literal"
                    b.dropped[key] = b.dropped.get(key, 0) + 1
                    continue
                b.add("natural", "-", idiom.name, "idiom", line)


# ----------------------------------------------------------------------------- files
GENERATOR = "paradox.tests"
VERSION = "1"
SAMPLE_COLUMNS = ("data", "template", "item", "condition", "inputs")


def write(out: str | Path, seed: int, n: int = 500, *, semi_natural=None, natural=None,
          tests: Iterable[str] = TESTS, force: bool = False, progress=None,
          idiom_items: Sequence[Idiom] | None = None, idiom_label: str = "table7") -> dict:
    """Build and write the test folder (skipped when its manifest matches)."""
    from collections import Counter

    from compsuite.foundation.io import write_lines
    from compsuite.foundation.manifest import is_complete, read_manifest, write_manifest

    out = Path(out)
    tests = list(tests)
    args = {"seed": seed, "n": n, "tests": tests, "idioms": idiom_label,
            "semi_natural": str(Path(semi_natural).resolve()) if semi_natural else None,
            "natural": str(Path(natural).resolve()) if natural else None}
    if not force and is_complete(out, GENERATOR, args, version=VERSION):
        return read_manifest(out)
    built = build(seed, n, semi_natural=semi_natural, natural=natural, tests=tests,
                  progress=progress, idiom_items=idiom_items)
    files, counts, dropped = [], {}, {}
    for test, b in built.items():
        dropped.update({f"{test}: {k}": v for k, v in b.dropped.items()})
        write_lines(out / f"{test}.en", b.inputs)
        write_lines(out / f"{test}.tsv", ["\t".join(SAMPLE_COLUMNS)] + ["\t".join(s) for s in b.samples])
        files += [f"{test}.en", f"{test}.tsv"]
        per = Counter(f"{s[0]}/{s[3]}" for s in b.samples)
        counts[test] = {"inputs": len(b.inputs), "samples": len(b.samples), **dict(sorted(per.items()))}
    return write_manifest(out, generator=GENERATOR, generator_version=VERSION, seed=seed,
                          args=args, files=files, counts=counts, dropped=dropped)


def read_samples(folder: str | Path, test: str) -> tuple[list[str], list[dict]]:
    """A test's inputs and samples; every input index checked (errors name file and line)."""
    folder = Path(folder)
    inputs = list(iter_lines(folder / f"{test}.en"))
    path = folder / f"{test}.tsv"
    samples = []
    for k, line in enumerate(iter_lines(path), 1):
        cols = line.split("\t")
        if k == 1:
            if tuple(cols) != SAMPLE_COLUMNS:
                raise DataError(f"{path}: line 1: expected the header {' '.join(SAMPLE_COLUMNS)!r}")
            continue
        if len(cols) != len(SAMPLE_COLUMNS):
            raise DataError(f"{path}: line {k}: {len(cols)} columns, expected {len(SAMPLE_COLUMNS)}")
        try:
            idx = [int(x) for x in cols[4].split(",")]
        except ValueError:
            raise DataError(f"{path}: line {k}: inputs must be line numbers, got {cols[4]!r}") from None
        if any(not 0 <= i < len(inputs) for i in idx):
            raise DataError(f"{path}: line {k}: an input number outside {test}.en "
                            f"({len(inputs)} lines)")
        samples.append({"data": cols[0], "template": cols[1], "item": cols[2],
                        "condition": cols[3], "inputs": idx, "line": k})
    return inputs, samples


def add_arguments(ap) -> None:
    from compsuite.foundation.arguments import positive_int

    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=positive_int, default=500,
                    help="samples per template per condition (default 500, the paper's)")
    ap.add_argument("--tests", nargs="+", default=list(TESTS), choices=TESTS)
    ap.add_argument("--semi-natural", metavar="DIR",
                    help="folder with the released semi_natural_<T>.en files")
    ap.add_argument("--natural", metavar="DIR",
                    help="folder with systematicity/<T>.en, substitutivity/{i}-1.en,{i}-2.en "
                         "and overgeneralisation/{i}.en (the user's OPUS sentences)")
    ap.add_argument("--force", action="store_true")


def run(args) -> int:
    import sys

    if args.n < 1:
        raise SystemExit("--n: a positive number")
    m = write(args.out, args.seed, args.n, semi_natural=args.semi_natural,
              natural=args.natural, tests=args.tests, force=args.force,
              progress=lambda t: print(f"building {t}", file=sys.stderr))
    for test, c in m["counts"].items():
        print(f"{test}: {c['samples']} samples, {c['inputs']} inputs", file=sys.stderr)
    return 0
