"""Rule-based English-to-Japanese translation of SGET sentences (Kumon et al. 2024,
section 3.2.3, after Wang and Hershcovich 2023): parse the English with the grammar's
own rules (:mod:`.grammar`), then transduce the tree to Japanese with the rules below
and the lexicon's words and inflection (:mod:`.lexicon`).

Transduction rules:

* word order is subject-object-verb: the subject takes が, the direct object the verb's
  object particle (を; が for *like*, に for *notice*, *appreciate*), the recipient に, a
  passive's agent によって (before the other arguments); ditransitives keep the English
  order of theme and recipient (``gave the pen to Ava``: ペンをアヴァに; ``gave Ava the
  pen``: アヴァにペンを);
* tense: the English simple past gives the Japanese past (with the lexicon's ``past=``
  forms: knew 知っていた, liked 好きだった), the present the non-past, the bare verb
  after *did* the plain past, ``was`` + participle the passive past;
* ``that``-clauses end in the verb's complementiser (と, ことを, ことに) before it;
  ``to``-infinitives put the embedded verb in the verb's form (continuative before
  たい, volitional before とする, dictionary form before 必要がある, つもりだ ...);
* modifiers precede the noun: adjectives in the English order, a prepositional phrase
  as ``<NP>の<relational noun>の`` (stacked PPs hence come out reversed), a relative
  clause as the clause without its gap;
* topicalisation: ``<NP>は、`` before the clause whose object it fills; wh-questions
  leave the wh-word in situ (誰, 何 with the particle of its position) and end in
  ``か？``; statements end in ``。``; concatenated sentences are joined by the
  continuative form of the predicate and ``、``; a primitive (a word on its own) is
  its Japanese word, a verb in the dictionary form.

:func:`translate_tree` runs the transduction alone on a tree the caller built (the
sentence generator, which builds its sentences as trees of the same grammar).
``translate`` raises :class:`TranslationError` (a ``ValueError``) naming the unknown word
or the position where no rule applies.  :func:`main` is the ``compsuite data sget
translate`` command (English on stdin, Japanese on stdout), :func:`evaluate_on_file`
scores the translator on a released ``english<TAB>japanese[<TAB>...]`` file.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, TextIO

from compsuite.foundation.errors import UserError
from compsuite.foundation.io import open_text, stdin_lines, translate_stream

from .grammar import GRAMMAR, Gap, Leaf, Node, ParseFailure, is_nonterminal, \
    is_preterminal, parse
from .lexicon import JaPredicate, Lexicon, LexiconError, Verb, load

WH_WORDS = {"who": "誰", "what": "何"}
PUNCTUATION = {"?": "か？", ".": "。"}
_TOKEN = re.compile(r"[A-Za-z]+|[.,?]")
#: the grammar's own words (that, to, was, by, did, who, what, punctuation)
FUNCTION_WORDS = frozenset(s for rules in GRAMMAR.values() for r in rules for s in r.rhs
                           if not is_nonterminal(s) and not is_preterminal(s) and s != "_")


class TranslationError(UserError, ValueError):
    """A sentence outside the lexicon or the grammar; the message names the word or
    the position where parsing stopped."""


def tokenize(english: str) -> list[str]:
    """Words and the punctuation marks ``. , ?`` as separate tokens."""
    tokens: list[str] = []
    for chunk in english.split():
        pieces = _TOKEN.findall(chunk)
        if "".join(pieces) != chunk:
            raise TranslationError(f"unknown word {chunk!r}")
        tokens += pieces
    if not tokens:
        raise TranslationError("empty sentence")
    return tokens


@dataclass(frozen=True)
class Predicate:
    """A clause-final predicate: fixed material (an embedded verb, a complementiser)
    followed by the word that inflects."""

    prefix: str
    head: JaPredicate

    def render(self, form: str) -> str:
        return self.prefix + self.head.form(form)


@dataclass(frozen=True)
class Clause:
    """A Japanese clause before its predicate is inflected: ``form`` is the inflection
    its tense asks for (``past`` or ``nonpast``; ``None`` for a bare infinitive)."""

    words: str
    predicate: Predicate
    form: str | None

    def render(self, form: str | None = None) -> str:
        return self.words + self.predicate.render(form or self.form)


class _Transducer:
    """Tree-to-string rules, one method per family of grammar rules."""

    # ------------------------------------------------------------------ sentences
    def root(self, node: Node) -> str:
        if node.rule.name == "question":
            return self.question(node.children[0]) + PUNCTUATION["?"]
        if node.rule.name == "primitive":
            return self.primitive(node.children[0].children[0])
        statements: list[Clause] = []
        rest: Node | None = node.children[0]
        while rest is not None:
            statements.append(self.statement(rest.children[0]))
            rest = rest.children[1] if rest.rule.name == "concat" else None
        chained = [c.render("cont") + "、" for c in statements[:-1]]
        return "".join(chained) + statements[-1].render() + PUNCTUATION["."]

    def primitive(self, leaf: Leaf) -> str:
        if leaf.category.startswith("V."):
            return leaf.entry.japanese_for(leaf.category.split(".")[1]).nonpast()
        return leaf.entry.japanese

    def statement(self, node: Node) -> Clause:
        if node.rule.name == "topic":
            topic, _, clause = node.children
            inner = self.clause(clause, filler=None)
            return Clause(self.np(topic) + "は、" + inner.words, inner.predicate, inner.form)
        return self.clause(node.children[0])

    def question(self, node: Node) -> str:
        wh = WH_WORDS[node.children[0].rule.name]
        if node.rule.name == "wh_subject":
            vp = self.vp(node.children[1])
            return wh + "が" + vp.render()
        return self.clause(node.children[2], filler=wh, tense="past").render()

    def clause(self, node: Node, filler: str | None = None, tense: str | None = None) -> Clause:
        subject, vp = node.children
        inner = self.vp(vp, filler, tense)
        return Clause(self.np(subject) + "が" + inner.words, inner.predicate, inner.form)

    # ------------------------------------------------------------------ verb phrases
    def vp(self, node: Node, filler: str | None = None, tense: str | None = None) -> Clause:
        name, kids = node.rule.name, node.children
        if name.startswith("passive"):
            return self.passive(name, kids)
        verb_leaf = kids[0]
        verb: Verb = verb_leaf.entry
        frame, form = verb_leaf.category.split(".")[1:]
        if name == "inf":
            embedded = self.vp(kids[2])
            spec = verb.inf
            words = embedded.words + embedded.predicate.render(spec.embedded_form)
            return Clause("", Predicate(words, spec.head), _inflection(form, tense))
        if form == "past":
            head = verb.past_predicate(frame)
        else:
            head = verb.japanese_for(frame)
        if name in ("intr", "unacc"):
            words = ""
        elif name == "trans":
            words = self.arg(kids[1], verb.obj, filler)
        elif name == "dat_to":
            words = self.arg(kids[1], verb.obj, filler) + self.arg(kids[3], "に", filler)
        elif name == "dat_do":
            words = self.arg(kids[1], "に", filler) + self.arg(kids[2], verb.obj, filler)
        elif name == "cp":
            embedded = self.clause(kids[2], filler, tense)
            words = embedded.render() + verb.comp
        else:
            raise TranslationError(f"no transduction rule for {node.rule}")
        return Clause(words, Predicate("", head), _inflection(form, tense))

    def passive(self, name: str, kids: tuple) -> Clause:
        verb: Verb = kids[1].entry
        rest = list(kids[2:])
        agent = ""
        if name.endswith("_by"):
            agent = self.np(rest[-1]) + "によって"
            rest = rest[:-2]
        if name.startswith("passive_to"):
            words = self.np(rest[1]) + "に"
        elif name.startswith("passive_do"):
            words = self.np(rest[0]) + verb.obj
        else:
            words = ""
        return Clause(agent + words, Predicate("", verb.passive()), "past")

    def arg(self, node, particle: str, filler: str | None) -> str:
        if isinstance(node, Gap):
            return "" if filler is None else filler + particle
        return self.np(node) + particle

    # ------------------------------------------------------------------ noun phrases
    def np(self, node: Node) -> str:
        name, kids = node.rule.name, node.children
        if name == "proper":
            return kids[0].entry.japanese
        head = self.nbar(kids[1])
        if name == "np_pp":
            prep, obj = kids[2].children
            return self.np(obj) + "の" + prep.entry.japanese + "の" + head
        if name == "np_rc":
            rc = kids[2]
            if rc.rule.name == "rc_subject":
                return self.vp(rc.children[1]).render() + head
            return self.clause(rc.children[1], filler=None).render() + head
        return head

    def nbar(self, node: Node) -> str:
        words = []
        while node.rule.name == "adj":
            words.append(node.children[0].entry.japanese)
            node = node.children[1]
        return "".join(words) + node.children[0].entry.japanese


def _inflection(form: str, tense: str | None) -> str | None:
    """The Japanese inflection of an English verb form (``base`` takes the tense of
    its context: past after *did*, none in an infinitive)."""
    return {"past": "past", "pres": "nonpast"}.get(form, tense)


def translate(english: str, lexicon: Lexicon | None = None) -> str:
    """Japanese for one English sentence; :class:`TranslationError` when the sentence
    is outside the lexicon or the grammar."""
    lx = lexicon or load()
    tokens = tokenize(english)
    for i, tok in enumerate(tokens):
        if not (lx.knows(tok) or tok.lower() in FUNCTION_WORDS
                or (i == 0 and lx.knows(tok.lower()))):
            raise TranslationError(f"unknown word {tok!r} (token {i + 1})")
    try:
        tree = parse(tokens, lx)
    except ParseFailure as e:
        raise TranslationError(str(e)) from None
    return translate_tree(tree)


def translate_tree(tree: Node) -> str:
    """Japanese for a tree of the grammar (a ``ROOT`` node, as :func:`.grammar.parse`
    returns it or as the sentence generator builds it): the transduction step of
    :func:`translate` without the parsing."""
    if not isinstance(tree, Node) or tree.rule.lhs != "ROOT":
        raise TranslationError("translate_tree needs a ROOT node of the grammar")
    try:
        return _Transducer().root(tree)
    except LexiconError as e:
        raise TranslationError(str(e)) from None


def translate_lines(lines: Sequence[str], out: TextIO, err: TextIO, keep_going: bool) -> int:
    """Translate one sentence per line to ``out``; the exit status (2 at the first
    failure unless ``keep_going``, which writes an empty line instead)."""
    lx = load()
    return translate_stream(lines, lambda line: translate(line, lx), TranslationError, out,
                            err, keep_going)


def main(argv: Sequence[str] | None = None) -> int:
    """``compsuite data sget translate [--keep-going]``: English on stdin, Japanese
    on stdout, one sentence per line."""
    ap = argparse.ArgumentParser(prog="compsuite data sget translate",
                                 description="Rule-based English-to-Japanese translation "
                                             "of SGET sentences (stdin to stdout).")
    add_arguments(ap)
    return run(ap.parse_args(argv))


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``compsuite data sget translate``."""
    ap.add_argument("--keep-going", action="store_true",
                    help="write an empty line for a sentence that cannot be translated "
                         "and report their number on stderr (default: stop, exit 2)")


def run(args: argparse.Namespace) -> int:
    return translate_lines(list(stdin_lines()), sys.stdout, sys.stderr, args.keep_going)


def evaluate_on_file(path: str | Path, max_examples: int = 20) -> dict:
    """Translate the first column of a released ``english<TAB>japanese[<TAB>...]``
    file and compare with the second.

    Returns ``total``, ``covered`` (sentences translated), ``exact`` (covered and equal
    to the reference), ``coverage`` = covered/total, ``exact_match`` = exact/covered,
    and the first ``mismatches`` (english, reference, ours) and ``failures``
    (english, error).
    """
    lx = load()
    total = covered = exact = 0
    mismatches: list[tuple[str, str, str]] = []
    failures: list[tuple[str, str]] = []
    with open_text(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            english, reference = line.rstrip("\n").split("\t")[:2]
            total += 1
            try:
                ours = translate(english, lx)
            except TranslationError as e:
                if len(failures) < max_examples:
                    failures.append((english, str(e)))
                continue
            covered += 1
            if ours == reference:
                exact += 1
            elif len(mismatches) < max_examples:
                mismatches.append((english, reference, ours))
    return {"total": total, "covered": covered, "exact": exact,
            "coverage": covered / total if total else 0.0,
            "exact_match": exact / covered if covered else 0.0,
            "mismatches": mismatches, "failures": failures}


if __name__ == "__main__":
    sys.exit(main())
