"""SGET partial match (Kumon et al. 2024, section 4.1.3 and appendix D) with GiNZA.

A line is correct when the *target* of its generalisation pattern is translated and
plays the same grammatical role as in the reference.  What the target is comes from
the pattern (:data:`compsuite.eval.sget.patterns.PATTERNS`): a noun (primitive
substitution), a verb (primitive structural alternation, tense alternation), or a phrase
(phrase recombination, PP and adjective recursion, indirect-object-extracted RC).  The caller
passes, per line, the hypothesis, the reference, the pattern and the target's Japanese
(or ``None`` for phrase patterns, whose target phrase is then read off the reference's
parse: the noun phrase in the pattern's role with the largest modifier subtree).

The role is decided *relatively*: the same features are computed on the reference's
parse and on the hypothesis's parse and compared, never checked against absolute
dependency labels.  GiNZA (ja_ginza 5.x) labels both に and によって ``obl``, and in
sentences with several が it often attaches a subject to the wrong predicate; a check
such as "the target is ``nsubj`` of the root" would fail on the reference itself.  The
features (:func:`features`):

* noun targets: the **case particle** right after the noun phrase, read from the tokens
  (が, を, に, によって written as one particle though Sudachi splits it に/よっ/て, は,
  の, ...); its **ordinal** among the phrases marked by that particle (the 2nd が of
  監督が医者が本を見つけたと言った: read from the surface because GiNZA hangs every
  が of such a sentence on the innermost verb, so the parse cannot tell the matrix
  subject from the embedded one); the lemma of the **head predicate**, the nearest
  predicate among the noun's syntactic ancestors (verbs, adjectives, 形状詞 like 好き,
  サ変 nouns followed by する); the **clause**: how many predicates are above that one
  (0 = main clause);
* verb targets: the **verb group** as written (the verb with its auxiliaries: voice and
  tense, e.g. 認識された against 認識した); the sorted **case particles of its noun
  arguments** other than が and は (argument structure: active を against passive
  によって, dative に; が is left out because GiNZA moves the が-phrases of a sentence
  with several of them from verb to verb when anything else in it changes);
  the **clause** as above;
* phrase targets: as nouns, the head being the phrase's last noun; the whole phrase
  must occur as written, so its modifiers are checked by the presence test.  A derived
  relative clause keeps only its last が-phrase (GiNZA attaches the main clause's
  subject to the relative clause's verb in 訪問者が友達が植物をあげた男が...).

A target is present where a run of hypothesis tokens equals the target's tokens
(surface; for verb targets the last token may differ in form when its lemma is the
same, since the form is a feature).  Each occurrence gives one feature tuple; the line
is correct when every tuple of the reference also occurs in the hypothesis.  A line
whose reference does not contain the target is not scored (``missing_target``).

Two implementations give identical decisions:

* :func:`partial_match_naive`: ``nlp.pipe`` over every hypothesis and reference with
  the whole pipeline (the baseline the benchmark times);
* :func:`partial_match`: only the lines of patterns that Table 10 scores; a hypothesis
  equal to its reference (after NFKC and whitespace removal) is correct without any
  work (both implementations decide these first: exact match implies partial match);
  for noun and verb targets the parse-free features (is the target there, its
  particle and ordinal, the verb group) are checked on Sudachi tokens before anything
  is parsed; references are parsed only where still needed (phrase targets, and lines
  that passed the token check), once per distinct sentence, and their features are
  cached on disk (keyed by a checksum of the references, patterns and targets and the
  versions of GiNZA, ja-ginza, spaCy and Sudachi; written atomically), so a second
  system scored on the same data parses no reference it needs again; the remaining
  hypotheses are deduplicated and parsed with only the components the features use
  (``tok2vec`` and ``parser``: tags and lemmas come from the tokenizer, and the parse
  is the same as the full pipeline's except that dependency labels keep a
  ``_bunsetu`` suffix, which no feature reads); ``n_process`` uses several cores.

GiNZA failure cases seen on SGET sentences (ja_ginza 5.3.0): every が of
監督が医者が本が少女によって見つけられたと期待したことを理解した is attached to the innermost
verb 見つけ; 訪問者が友達が植物をあげた男が好きだった attaches the main subject 訪問者 to the
relative clause's あげ; attributive adjectives are read as predicates with the noun
before them as their subject (リアムが可愛い新しいコンピューターを: リアム becomes the subject
of 可愛い, and 四角い馬が leaves 馬 without its modifier); に and によって are both
``obl``; a topicalised object is ``dislocated``; labels are ``nsubj_bunsetu`` etc.
unless the ``bunsetu_recognizer`` runs.  Hence the surface ordinal, the が-free
argument frame of verbs and the trimming of derived phrases above.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Hashable, Iterable, Mapping, Sequence

from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.io import atomic_open
from compsuite.threadcache import per_thread

from .patterns import IN_DISTRIBUTION, PATTERNS, PatternInfo, normalise, pattern_info

FEATURES_VERSION = "1"
#: the fewest sentences per process for which ``nlp.pipe`` is given several processes:
#: spaCy starts them (fork) and sends every parse back pickled, which costs more than it
#: saves on a few hundred sentences (scoring the quick generalisation set, whose ~4,400
#: references are parsed, took 47 s with two processes against 61 s with one, on a shared
#: 2-core machine; the decisions were the same)
MIN_PER_PROCESS = 1000


def processes_for(n_texts: int, n_process: int) -> int:
    """The processes ``nlp.pipe`` gets for ``n_texts`` sentences when ``n_process`` are
    allowed: at most one per :data:`MIN_PER_PROCESS` sentences, at least one."""
    return max(1, min(n_process, n_texts // MIN_PER_PROCESS))
MODEL = "ja_ginza"
#: the pipeline components the features need (everything else is disabled)
NEEDED_PIPES = ("tok2vec", "parser")
ROLE_PARTICLES = {"subj": ("が", "は"), "iobj": ("に",), "": ()}


# ----------------------------------------------------------------------------- tokens
@dataclass(frozen=True)
class Tok:
    """What the features read of a token (from a parsed or a tokenizer-only Doc)."""
    text: str
    lemma: str
    tag: str
    head: int  # index of the head; -1 when unknown (tokenizer-only)


def toks_of(doc, parsed: bool = True) -> list[Tok]:
    return [Tok(t.text, t.lemma_, t.tag_, t.head.i if parsed else -1) for t in doc]


def _is_particle(t: Tok) -> bool:
    return t.tag.startswith("助詞")


def _is_nounish(t: Tok) -> bool:
    return t.tag.startswith(("名詞", "代名詞")) or t.tag.startswith("接尾辞-名詞")


def particle_after(toks: Sequence[Tok], end: int) -> str:
    """The particles right after ``toks[:end]`` as one string (に+よっ+て: によって)."""
    out, i, n = [], end, len(toks)
    while i < n and _is_particle(toks[i]):
        out.append(toks[i].text)
        if toks[i].text == "に" and i + 2 < n and toks[i + 1].text == "よっ" \
                and toks[i + 2].text == "て":
            out.append("よって")
            i += 3
            continue
        i += 1
    return "".join(out)


def verb_group(toks: Sequence[Tok], start: int, end: int) -> str:
    """The verb as written with its auxiliaries: ``toks[start:end]`` and the auxiliary
    verbs, non-independent verbs (される, ている) and the て joining them that follow
    (after a サ変 noun also を + する: 準備をする)."""
    i, n = end, len(toks)
    if i + 1 < n and "サ変" in toks[i - 1].tag and toks[i].text == "を" \
            and toks[i + 1].lemma == "する":
        i += 1  # 準備をする: the する of a サ変 noun's object form
    while i < n:
        t = toks[i]
        if t.tag.startswith("助動詞") or t.tag.startswith("動詞-非自立可能"):
            i += 1
        elif t.text == "て" and i + 1 < n and toks[i + 1].tag.startswith("動詞-非自立可能"):
            i += 1
        else:
            break
    return "".join(t.text for t in toks[start:i])


def _is_predicate(toks: Sequence[Tok], i: int) -> bool:
    """Verbs, adjectives, 形状詞 (好き) and サ変 nouns followed by する; a
    non-independent verb (する, いる, なる) only when it is not a helper of the word
    before it (料理をした: し is the predicate; 提供した, 見つけていた: it is not)."""
    t = toks[i]
    if t.tag.startswith("動詞-非自立可能"):
        return i == 0 or (_is_particle(toks[i - 1]) and toks[i - 1].text != "て")
    if t.tag.startswith(("動詞", "形容詞", "形状詞")):
        return True
    return "サ変" in t.tag and i + 1 < len(toks) and toks[i + 1].lemma == "する"


def _ancestors(toks: Sequence[Tok], i: int) -> Iterable[int]:
    seen = {i}
    j = toks[i].head
    while 0 <= j < len(toks) and j not in seen:
        yield j
        seen.add(j)
        j = toks[j].head


def head_predicate(toks: Sequence[Tok], i: int) -> int | None:
    """The nearest predicate among token ``i``'s ancestors."""
    for j in _ancestors(toks, i):
        if _is_predicate(toks, j):
            return j
    return None


def clause_depth(toks: Sequence[Tok], pred: int | None) -> int:
    """How many predicates are above ``pred`` (0: main clause; -1: no predicate)."""
    if pred is None:
        return -1
    return sum(1 for j in _ancestors(toks, pred) if _is_predicate(toks, j))


def span_head(toks: Sequence[Tok], start: int, end: int) -> int:
    """The token of ``toks[start:end]`` whose head lies outside it (the last such)."""
    heads = [i for i in range(start, end) if not start <= toks[i].head < end
             or toks[i].head == i]
    return heads[-1] if heads else end - 1


# ----------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    """A target as tokens; ``kind`` is ``noun``, ``verb`` or ``phrase``."""
    texts: tuple[str, ...]
    lemmas: tuple[str, ...]
    kind: str


def occurrences(toks: Sequence[Tok], target: Target) -> list[tuple[int, int]]:
    """``(start, end)`` of every run of tokens equal to the target (for verbs the last
    token may match by lemma only)."""
    k, out = len(target.texts), []
    for s in range(len(toks) - k + 1):
        ok = True
        for j in range(k):
            t = toks[s + j]
            if t.text == target.texts[j]:
                continue
            if target.kind == "verb" and j == k - 1 and t.lemma == target.lemmas[j]:
                continue
            ok = False
            break
        if ok:
            out.append((s, s + k))
    return out


def _argument_particle(toks: Sequence[Tok], i: int) -> str:
    """The particle of the noun phrase ending at token ``i`` ('' when ``i`` ends none)."""
    if not _is_nounish(toks[i]) or i + 1 >= len(toks) or not _is_particle(toks[i + 1]):
        return ""
    return particle_after(toks, i + 1)


def ordinal(toks: Sequence[Tok], i: int, particle: str) -> int:
    """Which noun phrase marked by ``particle`` the one ending at ``i`` is, counting from
    the start (1, 2, ...).  A surface stand-in for the clause of a が-subject, which
    GiNZA attaches to the innermost predicate when several が precede it."""
    return 1 + sum(1 for j in range(i) if _argument_particle(toks, j) == particle)


#: how many leading items of :func:`features` :func:`surface_features` gives
SURFACE_LEN = {"noun": 3, "phrase": 3, "verb": 2}


def surface_features(toks: Sequence[Tok], span: tuple[int, int], kind: str) -> tuple:
    """The features read from tokens alone (no parse): the particle after a noun or a
    phrase and its ordinal among the phrases with that particle; a verb's verb group."""
    s, e = span
    if kind == "verb":
        return ("verb", verb_group(toks, s, e))
    p = particle_after(toks, e)
    return ("noun", p, ordinal(toks, e - 1, p) if p else 0)


def features(toks: Sequence[Tok], span: tuple[int, int], kind: str) -> tuple:
    """The role features of one occurrence (see the module docstring); the first
    ``SURFACE_LEN[kind]`` items are :func:`surface_features`."""
    s, e = span
    head = span_head(toks, s, e)
    if kind == "verb":
        args = []
        for i, t in enumerate(toks):
            if t.head == head and i != head and _is_nounish(t):
                p = particle_after(toks, i + 1)
                if p and p not in ("が", "は"):
                    args.append(p)
        return surface_features(toks, span, kind) + (tuple(sorted(args)),
                                                     clause_depth(toks, head))
    pred = head_predicate(toks, head)
    return surface_features(toks, span, kind) + (
        toks[pred].lemma if pred is not None else "", clause_depth(toks, pred))


def _left_edge(children: Mapping[int, list[int]], i: int, limit: int) -> int:
    stack, left = [i], i
    while stack:
        j = stack.pop()
        left = min(left, j)
        stack.extend(c for c in children.get(j, ()) if c < limit)
    return left


ARGUMENT_PARTICLES = ("が", "を", "に", "は", "と")
#: nouns that head a complement clause, never a target phrase
COMPLEMENTISERS = frozenset({"こと", "の"})


def _surface_left(toks: Sequence[Tok], i: int) -> int:
    """How far attributive modifiers reach left of noun ``i`` on the surface alone:
    adjectives (赤い, 礼儀正しい), 形状詞 + な (危険な), and ``N の`` chains (家の中の,
    背の高い, 中国生まれの).  GiNZA often reads an attributive adjective as a predicate
    with the noun before it as subject, leaving the head noun without the modifier."""
    j = i
    while j > 0:
        prev = toks[j - 1]
        if prev.tag.startswith("形容詞"):
            j -= 1
        elif prev.text == "な" and j >= 2 and toks[j - 2].tag.startswith("形状詞"):
            j -= 2
        elif prev.text == "の" and j >= 2 and _is_nounish(toks[j - 2]):
            j -= 2
        elif _is_nounish(prev) and toks[j].tag.startswith(("形容詞", "名詞", "接尾辞")):
            j -= 1  # compounds: 礼儀 正しい, 中国 生まれ
        else:
            break
    return j


def _takes_arguments(toks: Sequence[Tok], p: int) -> bool:
    """A predicate inside a noun phrase that may have arguments there: the verb of a
    relative clause (a verb, or a サ変 noun / 形状詞 carrying する / だ), not an
    attributive adjective."""
    if toks[p].tag.startswith("動詞"):
        return True
    return p + 1 < len(toks) and toks[p + 1].tag.startswith(("助動詞", "動詞-非自立可能"))


def derive_phrase(toks: Sequence[Tok], role: str) -> tuple[int, int] | None:
    """A phrase pattern's target in a parsed reference: among nouns followed by a case
    particle (the role's, when the pattern names one) with modifiers before them, the one
    with the largest modified phrase; ``(start, end)`` of that phrase.

    The phrase reaches as far left as the noun's syntactic subtree or its attributive
    modifiers on the surface (:func:`_surface_left`), whichever is further, and is then
    cut after any argument that cannot belong to a noun phrase: one that depends on
    a predicate outside the phrase or on an attributive adjective, and all but the last
    が-argument of a predicate (a relative clause of SGET has at most one: GiNZA hangs
    the main clause's subject on the relative clause's verb in
    訪問者が友達が植物をあげた男が...).  こと, which heads complement clauses, is never
    the head.
    """
    wanted = ROLE_PARTICLES.get(role, ())
    best, best_len = None, 0
    children: dict[int, list[int]] = {}
    for i, t in enumerate(toks):
        if t.head != i:
            children.setdefault(t.head, []).append(i)
    for i, t in enumerate(toks):
        p = _argument_particle(toks, i)
        if not p or (wanted and not p.startswith(wanted)) or t.text in COMPLEMENTISERS:
            continue
        left = min(_left_edge(children, i, i), _surface_left(toks, i))
        if i == left:
            continue
        subjects: dict[int, list[int]] = {}
        for c in range(left, i):
            cp = _argument_particle(toks, c)
            if not cp.startswith(ARGUMENT_PARTICLES):
                continue
            head = toks[c].head
            if not (c < head < i) or not _is_predicate(toks, head) \
                    or not _takes_arguments(toks, head):
                left = max(left, c + 1)
                while left < i and _is_particle(toks[left]):
                    left += 1
            elif cp == "が":
                subjects.setdefault(head, []).append(c)
        for subj in subjects.values():
            if len(subj) > 1:
                left = max(left, _left_edge(children, subj[-1], i))
        if i - left > best_len:
            best, best_len = (left, i + 1), i - left
    return best


# ----------------------------------------------------------------------------- GiNZA
@per_thread
def load_nlp(model: str = MODEL, parser_only: bool = False):
    """The GiNZA pipeline (all components, or only those the features use)."""
    import spacy

    nlp = spacy.load(model)
    if parser_only:
        keep = set(NEEDED_PIPES)
        for name in list(nlp.pipe_names):
            if name not in keep:
                nlp.disable_pipe(name)
    return nlp


def versions(model: str = MODEL) -> dict:
    from importlib import metadata

    out = {}
    for name in ("ginza", model.replace("_", "-"), "spacy", "sudachipy", "sudachidict-core"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def signature(model: str = MODEL) -> Signature:
    v = versions(model)
    return Signature("partial", FEATURES_VERSION, {
        "parser": f"ginza-{v['ginza']}", "model": f"{model}-{v.get(model.replace('_', '-'))}",
        "noun": "particle+ordinal+head_pred+clause", "verb": "verb_group+arg_particles+clause",
        "phrase": "as-noun,derived-from-ref-parse", "norm": "nfkc+nows"})


def _target(nlp, text: str, kind: str) -> Target:
    doc = nlp.make_doc(text)
    return Target(tuple(t.text for t in doc), tuple(t.lemma_ for t in doc), kind)


# ----------------------------------------------------------------------------- results
@dataclass
class PartialResult:
    score: float | None            # % of scored lines that are correct
    n: int                         # lines scored
    correct: int
    signature: str
    matches: list = field(default_factory=list)  # per line: True / False / None
    reasons: dict = field(default_factory=dict)  # why lines were not scored, counts
    stats: dict = field(default_factory=dict)    # what the fast path skipped, timings

    metric = "partial"

    def as_dict(self, with_matches: bool = False) -> dict:
        d = asdict(self)
        if not with_matches:
            d.pop("matches")
        return d


def _result(matches: list, reasons: dict, stats: dict, model: str) -> PartialResult:
    scored = [m for m in matches if m is not None]
    score = 100.0 * sum(scored) / len(scored) if scored else None
    return PartialResult(score, len(scored), sum(scored), signature(model).format(), matches,
                         dict(sorted(reasons.items())), stats)


def partial_by(matches: Sequence, keys: Sequence[Hashable]) -> dict:
    """Partial match (%) per key over the scored lines: ``{key: {"score", "n",
    "correct"}}`` (Table 10 with ``keys=patterns``, Table 11 with
    :func:`compsuite.eval.sget.metrics.cp_keys`)."""
    if len(matches) != len(keys):
        raise ValueError(f"{len(keys)} keys for {len(matches)} lines")
    agg: dict = {}
    for m, k in zip(matches, keys):
        if m is None:
            continue
        c = agg.setdefault(k, [0, 0])
        c[0] += bool(m)
        c[1] += 1
    return {k: {"score": 100.0 * c / n, "n": n, "correct": c}
            for k, (c, n) in sorted(agg.items(), key=lambda kv: str(kv[0]))}


def _check(hyps, refs, patterns, targets) -> int:
    n = len(hyps)
    for what, seq in (("references", refs), ("patterns", patterns), ("targets", targets)):
        if len(seq) != n:
            raise ValueError(f"{len(seq)} {what} for {n} hypotheses")
    return n


def _plan(patterns, targets, table) -> tuple[list, dict]:
    """Per line: ``(kind, role)`` to score, or None with the reason counted."""
    plan, reasons = [], {}
    for p, tgt in zip(patterns, targets):
        if p == IN_DISTRIBUTION:
            info = None
        else:
            info = pattern_info(p, table)
        if info is None or not info.partial:
            plan.append(None)
            reasons["pattern not scored"] = reasons.get("pattern not scored", 0) + 1
        elif info.target in ("noun", "verb") and not tgt:
            plan.append(None)
            reasons["no target given"] = reasons.get("no target given", 0) + 1
        else:
            plan.append((info.target, info.role))
    return plan, reasons


def _ref_features(toks: list[Tok], nlp, target_text: str | None, kind: str, role: str
                  ) -> tuple[Target | None, list]:
    """The reference's target (given or derived) and its feature tuples."""
    if target_text:
        tgt = _target(nlp, normalise(target_text), kind)
    else:
        span = derive_phrase(toks, role)
        if span is None:
            return None, []
        s, e = span
        tgt = Target(tuple(t.text for t in toks[s:e]), tuple(t.lemma for t in toks[s:e]), kind)
    feats = sorted({features(toks, sp, kind) for sp in occurrences(toks, tgt)})
    return tgt, feats


def _tuplify(x):
    return tuple(_tuplify(v) for v in x) if isinstance(x, (list, tuple)) else x


def _decide(ref_feats: list, hyp_feats: set) -> bool:
    return all(f in hyp_feats for f in ref_feats)


# ----------------------------------------------------------------------------- naive
def partial_match_naive(hyps: Sequence[str], refs: Sequence[str], patterns: Sequence[str],
                        targets: Sequence[str | None], *,
                        table: Mapping[str, PatternInfo] = PATTERNS, model: str = MODEL,
                        batch_size: int = 256) -> PartialResult:
    """The reference implementation: ``nlp.pipe`` over every hypothesis and every
    reference with the full pipeline, then the same decision as :func:`partial_match`:
    a hypothesis equal to its reference (after NFKC and whitespace removal) is correct;
    otherwise a line whose reference lacks the target is not scored, and the others
    are correct when every feature tuple of the reference's target occurrences is
    among the hypothesis's."""
    n = _check(hyps, refs, patterns, targets)
    nlp = load_nlp(model)
    t0 = time.perf_counter()
    texts = [normalise(h) for h in hyps] + [normalise(r) for r in refs]
    docs = [toks_of(d) for d in nlp.pipe(texts, batch_size=batch_size)]
    hdocs, rdocs = docs[:n], docs[n:]
    plan, reasons = _plan(patterns, targets, table)
    matches: list = []
    for i in range(n):
        if plan[i] is None:
            matches.append(None)
            continue
        if texts[i] == texts[n + i]:
            matches.append(True)
            continue
        kind, role = plan[i]
        tgt, rf = _ref_features(rdocs[i], nlp, targets[i], kind, role)
        if not rf:
            matches.append(None)
            reasons["missing target"] = reasons.get("missing target", 0) + 1
            continue
        hf = {features(hdocs[i], sp, kind) for sp in occurrences(hdocs[i], tgt)}
        matches.append(_decide(rf, hf))
    stats = {"parsed": len(texts), "seconds": round(time.perf_counter() - t0, 3)}
    return _result(matches, reasons, stats, model)


# ----------------------------------------------------------------------------- fast
def _dataset_key(refs, patterns, targets, plan, model: str) -> str:
    """A checksum of the references (with their patterns and targets) and of the
    versions that change a parse or a feature."""
    h = hashlib.sha256()
    h.update(json.dumps({"features": FEATURES_VERSION, "versions": versions(model)},
                        sort_keys=True).encode())
    for r, p, t, pl in zip(refs, patterns, targets, plan):
        if pl is not None:
            h.update(json.dumps([normalise(r), p, t, pl], ensure_ascii=False).encode())
            h.update(b"\n")
    return h.hexdigest()


def _entry_key(ref: str, target: str | None, kind: str, role: str) -> str:
    return f"{kind}|{role}|{normalise(target) if target else ''}|{ref}"


def _encode_entry(tgt: Target | None, feats: list) -> dict:
    return {"target": [list(tgt.texts), list(tgt.lemmas), tgt.kind] if tgt else None,
            "features": [list(f) for f in feats]}


def _decode_entry(entry: dict) -> tuple[Target | None, list]:
    t = entry["target"]
    tgt = Target(tuple(t[0]), tuple(t[1]), t[2]) if t else None
    return tgt, [_tuplify(f) for f in entry["features"]]


def partial_match(hyps: Sequence[str], refs: Sequence[str], patterns: Sequence[str],
                  targets: Sequence[str | None], *,
                  table: Mapping[str, PatternInfo] = PATTERNS, model: str = MODEL,
                  cache_dir: str | Path | None = None, n_process: int = 1,
                  batch_size: int = 256, show: bool = False) -> PartialResult:
    """Partial match (%) over the lines of the patterns Table 10 scores (per line:
    hypothesis, reference, pattern name, target's Japanese or None); the other lines'
    ``matches`` are None.  Decisions equal :func:`partial_match_naive`'s.

    Work done, in order: hypotheses equal to their reference are correct; for noun
    and verb targets the reference and the hypothesis are tokenised (Sudachi only) and
    a hypothesis lacking the target, or with the wrong particle, ordinal or verb group,
    is wrong; only then are the reference (once per distinct sentence, or never when
    ``cache_dir`` holds it) and the hypothesis (once per distinct sentence) parsed.
    Phrase targets are read off the reference's parse, so their references are parsed
    first.

    ``cache_dir``: where reference features are kept between calls (one JSON file per
    set of references, patterns and targets and per version of GiNZA, ja-ginza, spaCy
    and Sudachi, rewritten atomically when it grows).  ``n_process``: the most processes
    ``nlp.pipe`` gets (spaCy's multiprocessing; one per :data:`MIN_PER_PROCESS`
    sentences to parse: :func:`processes_for`).  ``show``: a bar (stderr) over each of the
    three passes (the token checks, the references parsed, the hypotheses parsed).
    """
    from tqdm import tqdm

    n = _check(hyps, refs, patterns, targets)
    t0 = time.perf_counter()
    plan, reasons = _plan(patterns, targets, table)
    lines = [i for i in range(n) if plan[i] is not None]
    stats: dict = {"lines": n, "lines_of_scored_patterns": len(lines)}
    if show:
        print(f"partial match: loading {model} (GiNZA)", file=sys.stderr, flush=True)
    fast = _FastPath(load_nlp(model, parser_only=True), [normalise(h) for h in hyps],
                     [normalise(r) for r in refs], targets, plan, reasons)
    cache_file = None
    if cache_dir is not None and lines:
        cache_file = Path(cache_dir) / (
            f"sget_partial_refs_{_dataset_key(refs, patterns, targets, plan, model)}.json")
        if cache_file.is_file():
            fast.cache = json.loads(cache_file.read_text(encoding="utf-8"))
    n_cached = len(fast.cache)
    for i in tqdm(lines, desc="partial match: token checks", unit="line",
                  disable=not (show and lines)):      # 1. equal lines, token checks
        fast.first_pass(i)
    stats["references_parsed"] = fast.parse_references(batch_size, n_process, show)  # 2.
    t_ref = time.perf_counter()
    parsed = fast.parse_hypotheses(batch_size, n_process, show)                      # 3.
    stats.update(fast.counts)
    stats["hypotheses_parsed"] = parsed
    stats["hypothesis_lines_parsed"] = sum(len(v) for v in fast.hyp_queue.values())
    if cache_file is not None:
        stats["reference_cache"] = fast.save_cache(cache_file, n_cached)
    t1 = time.perf_counter()
    stats["seconds_tokens_and_references"] = round(t_ref - t0, 3)
    stats["seconds_hypotheses"] = round(t1 - t_ref, 3)
    return _result(fast.matches, reasons, stats, model)


class _FastPath:
    """The state of one :func:`partial_match` call: normalised hypotheses ``H`` and
    references ``R``, each line's plan, the reference entries (target and feature tuples,
    from the disk ``cache`` or computed), the per-line decisions and what was queued
    for parsing."""

    def __init__(self, nlp, H: list[str], R: list[str], targets: Sequence[str | None],
                 plan: list, reasons: dict):
        self.nlp, self.H, self.R, self.targets, self.plan = nlp, H, R, targets, plan
        self.reasons = reasons
        self.cache: dict = {}
        self.entries: dict[str, tuple] = {}
        self.tok_cache: dict[str, list[Tok]] = {}
        self.matches: list = [None] * len(H)
        self.counts = {"equal_to_reference": 0, "decided_on_tokens": 0}
        self.ref_queue: dict[str, list[int]] = {}
        self.hyp_queue: dict[str, list[int]] = {}

    def key(self, i: int) -> str:
        kind, role = self.plan[i]
        return _entry_key(self.R[i], self.targets[i], kind, role)

    def entry(self, i: int) -> tuple | None:
        key = self.key(i)
        if key not in self.entries and key in self.cache:
            self.entries[key] = _decode_entry(self.cache[key])
        return self.entries.get(key)

    def tokens(self, text: str) -> list[Tok]:
        t = self.tok_cache.get(text)
        if t is None:
            t = self.tok_cache[text] = toks_of(self.nlp.make_doc(text), parsed=False)
        return t

    def token_check(self, i: int, tgt: Target, surface: set) -> bool:
        """False (and the line decided) when the hypothesis's tokens already rule it out."""
        toks = self.tokens(self.H[i])
        k = SURFACE_LEN[tgt.kind]
        have = {surface_features(toks, sp, tgt.kind) for sp in occurrences(toks, tgt)}
        if not have or not all(f[:k] in have for f in surface):
            self.matches[i] = False
            self.counts["decided_on_tokens"] += 1
            return False
        return True

    def missing(self) -> None:
        self.reasons["missing target"] = self.reasons.get("missing target", 0) + 1

    def first_pass(self, i: int) -> None:
        """Line ``i`` decided when equal to its reference or ruled out on tokens; else
        queued for what it still needs parsed."""
        H, R = self.H, self.R
        if H[i] == R[i]:
            self.matches[i] = True
            self.counts["equal_to_reference"] += 1
            return
        kind, role = self.plan[i]
        known = self.entry(i)
        if known is not None:
            tgt, rf = known
            if not rf:
                self.missing()
            elif self.token_check(i, tgt, set(rf)):
                self.hyp_queue.setdefault(H[i], []).append(i)
            return
        if kind == "phrase":
            self.ref_queue.setdefault(R[i], []).append(i)
            return
        tgt = _target(self.nlp, normalise(self.targets[i]), kind)
        rtoks = self.tokens(R[i])
        rs = {surface_features(rtoks, sp, kind) for sp in occurrences(rtoks, tgt)}
        if not rs:
            self.missing()
            self.entries[self.key(i)] = (tgt, [])
            return
        if self.token_check(i, tgt, rs):
            self.ref_queue.setdefault(R[i], []).append(i)
            self.hyp_queue.setdefault(H[i], []).append(i)

    def parse_references(self, batch_size: int, n_process: int, show: bool = False) -> int:
        """Parse each distinct reference still needed once; returns how many.  ``show``:
        a bar over them."""
        texts = list(self.ref_queue)
        procs = processes_for(len(texts), n_process)
        for text, doc in _shown(zip(texts, self.nlp.pipe(texts, batch_size=batch_size,
                                                          n_process=procs)),
                                len(texts), "partial match: parse references", show):
            toks = toks_of(doc)
            for i in self.ref_queue[text]:
                kind, role = self.plan[i]
                key = self.key(i)
                if key not in self.entries:
                    self.entries[key] = _ref_features(toks, self.nlp, self.targets[i], kind,
                                                      role)
                if kind == "phrase":
                    tgt, rf = self.entries[key]
                    if not rf:
                        self.missing()
                    elif self.token_check(i, tgt, set(rf)):
                        self.hyp_queue.setdefault(self.H[i], []).append(i)
        return len(texts)

    def parse_hypotheses(self, batch_size: int, n_process: int, show: bool = False) -> int:
        """Parse each distinct undecided hypothesis once and decide its lines; returns
        how many.  ``show``: a bar over them."""
        texts = list(self.hyp_queue)
        procs = processes_for(len(texts), n_process)
        for text, doc in _shown(zip(texts, self.nlp.pipe(texts, batch_size=batch_size,
                                                          n_process=procs)),
                                len(texts), "partial match: parse hypotheses", show):
            toks = toks_of(doc)
            for i in self.hyp_queue[text]:
                tgt, rf = self.entry(i)
                self.matches[i] = _decide(rf, {features(toks, sp, tgt.kind)
                                               for sp in occurrences(toks, tgt)})
        return len(texts)

    def save_cache(self, cache_file: Path, n_cached: int) -> str:
        """The reference entries added to the disk cache (rewritten atomically when it
        grew); returns what the stats say of it."""
        for key, (tgt, rf) in self.entries.items():
            self.cache.setdefault(key, _encode_entry(tgt, rf))
        if len(self.cache) > n_cached:
            with atomic_open(cache_file) as fh:
                json.dump(self.cache, fh, ensure_ascii=False)
            return f"{n_cached} entries read, {len(self.cache)} written"
        return f"{n_cached} entries read"


def _shown(parsed: Iterable, total: int, desc: str, show: bool) -> Iterable:
    """``parsed`` ((text, doc) pairs) as they come, with a bar over the ``total``
    sentences when ``show`` (and there are any)."""
    from tqdm import tqdm

    return tqdm(parsed, total=total, desc=desc, unit="sentence", disable=not (show and total))


# ----------------------------------------------------------------------------- targets
def _verb_candidates(verb) -> list[str]:
    preds = [verb.japanese, verb.passive_base, verb.past_override, verb.intr, verb.intr_past,
             verb.cp, verb.inf.head if verb.inf is not None else None]
    return list(dict.fromkeys(p.text for p in preds if p is not None))


def _stem(form: str) -> str:
    if form.endswith("する") and len(form) > 2:
        return form[:-2]
    return form[:-1] if len(form) > 1 else form


def _resolve_verb(cands: list[str], ref: str, tokenizer) -> str | None:
    """The first candidate written in the reference as is (見つける, 必要がある), or
    whose stem begins a reference word, as that word's lemma (膨らます -> 膨らませる
    in 膨らませた; 準備する -> 準備 in 準備をする)."""
    words = None
    for c in cands:
        if c in ref:
            return c
        if words is None:
            words = [(m.surface(), m.dictionary_form()) for m in tokenizer.tokenize(ref)]
        stem = _stem(c)
        for surface, lemma in words:
            if surface.startswith(stem):
                return lemma
    return None


def japanese_targets(english_targets: Sequence[str | None], refs: Sequence[str],
                     lexicon=None) -> list[str | None]:
    """The Japanese to look for, per line, from an English target word (the generator's
    ``gen_info.tsv``) and the generator's lexicon: a noun's Japanese; for a verb, the
    Japanese predicate the reference uses (of the verb's transitive, passive,
    intransitive, that-clause and infinitive renderings: :func:`_resolve_verb`, on the
    reference's Sudachi words, the tokenizer of GiNZA).  None stays None; an unknown
    word is a KeyError."""
    if len(english_targets) != len(refs):
        raise ValueError(f"{len(english_targets)} targets for {len(refs)} references")
    if lexicon is None:
        from compsuite.data_prep.sget.lexicon import load

        lexicon = load()
    from compsuite.data_prep.common.tokenisers import sudachi

    tokenizer = sudachi("C", "core")
    out: list[str | None] = []
    for word, ref in zip(english_targets, refs):
        if not word:
            out.append(None)
        elif word in lexicon.nouns:
            out.append(lexicon.nouns[word].japanese)
        elif word in lexicon.proper_nouns:
            out.append(lexicon.proper_nouns[word].japanese)
        elif word in lexicon.verbs:
            cands = _verb_candidates(lexicon.verbs[word])
            out.append(_resolve_verb(cands, normalise(ref), tokenizer)
                       or (cands[0] if cands else None))
        else:
            raise KeyError(f"target word {word!r} is not in the SGET lexicon")
    return out
