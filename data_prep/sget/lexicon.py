"""The SGET lexicon (Kumon et al. 2024, sections 3.2.2-3.2.4 and appendix B): English
words with their categories, verb frames and Japanese translations, and the Japanese
inflection the rule-based translator and the generator share.

The data live in ``lexicon.tsv`` beside this module, one entry a line, tab-separated,
``#`` starting a comment::

    N    <noun>    <Japanese>    animate|inanimate
    PN   <proper noun>    <Japanese>
    ADJ  <adjective>    <Japanese attributive form>
    P    <preposition>    <Japanese relational noun>     (X の <noun> の Y)
    V    <base> <past> <3sg present> <participle>    <frames>    <Japanese>    [key=value ...]

A Japanese predicate is written ``<dictionary form>/<class>`` with the classes of
:data:`CONJUGATIONS` (``v1`` ichidan, ``v5`` godan, ``vs`` suru, ``vk`` kuru, ``v5k-s``
iku, ``adj`` i-adjective, ``da`` copula).  A verb's frames are a space-separated subset
of :data:`FRAMES`; its Japanese (the transitive/ditransitive one, or ``-`` for a verb
that only takes an infinitive) is refined by keys:

* ``intr=`` the Japanese of the intransitive (``intr``/``unacc``) frame when it differs
  (break: 壊す, ``intr=壊れる/v1``); ``cp=`` the Japanese of the ``that``-clause frame
  when it differs (appreciate: 感謝する, ``cp=理解する/vs``);
* ``past=`` the predicate an English simple-past token takes (knew: 知っている, so
  知っていた; liked: 好きだ, so 好きだった); the bare form after *did* and *to* keeps
  the plain verb (知った, 知りたかった); ``intr_past=`` the same for the intransitive
  frame (cooked: 料理をした, but wanted to cook: 料理したかった);
* ``passive=`` the verb that is made passive when it is not the main one
  (called: 呼んだ, was called: 電話された);
* ``obj=`` the particle of the direct object (を unless given: like が, notice に);
* ``comp=`` the complementiser of a ``that``-clause (と, ことを or ことに);
* ``inf=<form>+<predicate>`` how a ``to``-infinitive is rendered: the embedded verb in
  ``cont`` (continuative), ``vol`` (volitional) or ``dict`` (dictionary) form followed by
  the predicate that carries tense (want: ``cont+たい/adj``, try: ``vol+とする/vs``,
  need: ``dict+必要がある/v5``);
* ``subj=`` / ``obj_class=`` the noun classes (``animate``, ``inanimate``, ``any``) the
  subject and the direct object accept: the selectional restrictions of section 3.2.4
  (:func:`compatible`; pass ``restrictions=False`` to turn them off, as in Table 5).

How the lexicon was obtained: the English vocabulary and the translations are facts
gathered by aligning the released in-distribution development pairs (``dev.txt`` of
ynklab/SGET) with this package's own grammar and transduction rules: every sentence
was parsed, its Japanese rendered with each unknown word as a slot, and the slot read
off the reference.  The Japanese dictionary forms and inflection classes were then set
by hand so that every observed form (past, non-past, passive, continuative, volitional)
follows from :class:`JaPredicate`; irregular forms are the explicit ``past=`` and
``passive=`` keys.  Animacy was read off the roles a noun takes (agents and recipients
are animate, section 3.2.2) and checked by hand; a verb's ``subj``/``obj_class`` record the
classes observed with it in the released pairs.  No sentence of the released data is
stored here.  One quirk of the released data is kept: *guess* serves as its own simple
past ("Liam guess that ..." 想像した).

Size (:func:`counts`): 123 proper nouns, 423 common nouns, 178 verbs and 43
adjectives, appendix B's full vocabulary.  100 / 251 / 129 / 40 of them occur in the
development pairs (above); the five words the paper glosses itself (appendices D and E:
woman, man, panda, Lina, recognize) are added from its examples, and the rest (the last
section of ``lexicon.tsv``) were added for the sentence generator with hand-made
Japanese: the paper's own example words where it names them (goat, thief, trainer,
Chris, Coco, jump, move, drop, explode, grant, gift, show, prepare, learn, old, ...)
and further words of the classes COGS and SLOG draw from, so that every pattern of
Tables 8 and 9 has five target words of its own.  Seven verbs of the development pairs
gained a frame the pairs do not show (a transitive *pass*, *return*, *sell*, *serve*,
*plan*, *need*, *try*), which the tense-alternation patterns need; the pairs still
translate as before.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

LEXICON_PATH = Path(__file__).with_name("lexicon.tsv")

#: Verb frames.  ``intr``: agentive intransitive (unergative, or a transitive verb with
#: its object omitted); ``unacc``: intransitive whose subject is the theme (the
#: unaccusative alternation of a transitive verb); ``trans``: one object; ``dat_to`` and
#: ``dat_do``: ditransitive with a ``to``-dative or a double object; ``cp``: a
#: ``that``-clause; ``inf``: a ``to``-infinitive.
FRAMES = ("intr", "unacc", "trans", "dat_to", "dat_do", "cp", "inf")

#: English verb forms: the bare form, the simple past, the third-person singular
#: present and the past participle.
VERB_FORMS = ("base", "past", "pres", "pp")

NOUN_CLASSES = ("animate", "inanimate")
CONJUGATIONS = ("v1", "v5", "vs", "vk", "v5k-s", "adj", "da")

#: godan endings: (continuative, irrealis, volitional stem, past)
_GODAN: Mapping[str, tuple[str, str, str, str]] = {
    "う": ("い", "わ", "お", "った"),
    "く": ("き", "か", "こ", "いた"),
    "ぐ": ("ぎ", "が", "ご", "いだ"),
    "す": ("し", "さ", "そ", "した"),
    "つ": ("ち", "た", "と", "った"),
    "ぬ": ("に", "な", "の", "んだ"),
    "ぶ": ("び", "ば", "ぼ", "んだ"),
    "む": ("み", "ま", "も", "んだ"),
    "る": ("り", "ら", "ろ", "った"),
}


class LexiconError(ValueError):
    """A malformed lexicon line, or a form a predicate does not have."""


@dataclass(frozen=True)
class JaPredicate:
    """A Japanese predicate in dictionary form with its inflection class.

    >>> JaPredicate("見つける", "v1").past()
    '見つけた'
    >>> JaPredicate("持ってくる", "vk").passive().past()
    '持ってこられた'
    """

    text: str
    conj: str

    def __post_init__(self) -> None:
        if self.conj not in CONJUGATIONS:
            raise LexiconError(f"unknown inflection class {self.conj!r} of {self.text!r}")
        ending = {"v1": "る", "vs": "する", "vk": "くる", "v5k-s": "く", "adj": "い",
                  "da": "だ"}.get(self.conj)
        if ending and not self.text.endswith(ending) or (
                self.conj == "v5" and self.text[-1:] not in _GODAN):
            raise LexiconError(f"{self.text!r} cannot be of class {self.conj}")

    @classmethod
    def parse(cls, spec: str) -> "JaPredicate":
        """``'見つける/v1'`` -> JaPredicate('見つける', 'v1')."""
        text, sep, conj = spec.rpartition("/")
        if not sep or not text:
            raise LexiconError(f"a Japanese predicate is written <form>/<class>, not {spec!r}")
        return cls(text, conj)

    def _godan(self) -> tuple[str, tuple[str, str, str, str]]:
        return self.text[:-1], _GODAN[self.text[-1]]

    def nonpast(self) -> str:
        return self.text

    def past(self) -> str:
        t, c = self.text, self.conj
        if c == "v1":
            return t[:-1] + "た"
        if c == "v5":
            stem, row = self._godan()
            return stem + row[3]
        if c == "v5k-s":
            return t[:-1] + "った"
        if c == "vs":
            return t[:-2] + "した"
        if c == "vk":
            return t[:-2] + "きた"
        if c == "adj":
            return t[:-1] + "かった"
        return t[:-1] + "だった"

    def continuative(self) -> str:
        """The continuative (連用形) used to chain clauses and before たい."""
        t, c = self.text, self.conj
        if c == "v1":
            return t[:-1]
        if c in ("v5", "v5k-s"):
            stem, row = self._godan()
            return stem + row[0]
        if c == "vs":
            return t[:-2] + "し"
        if c == "vk":
            return t[:-2] + "き"
        if c == "adj":
            return t[:-1] + "く"
        return t[:-1] + "で"

    def volitional(self) -> str:
        t, c = self.text, self.conj
        if c == "v1":
            return t[:-1] + "よう"
        if c in ("v5", "v5k-s"):
            stem, row = self._godan()
            return stem + row[2] + "う"
        if c == "vs":
            return t[:-2] + "しよう"
        if c == "vk":
            return t[:-2] + "こよう"
        raise LexiconError(f"{self.text!r} ({c}) has no volitional form")

    def passive(self) -> "JaPredicate":
        t, c = self.text, self.conj
        if c == "v1":
            return JaPredicate(t[:-1] + "られる", "v1")
        if c in ("v5", "v5k-s"):
            stem, row = self._godan()
            return JaPredicate(stem + row[1] + "れる", "v1")
        if c == "vs":
            return JaPredicate(t[:-2] + "される", "v1")
        if c == "vk":
            return JaPredicate(t[:-2] + "こられる", "v1")
        raise LexiconError(f"{self.text!r} ({c}) has no passive")

    def form(self, name: str) -> str:
        """One of ``past``, ``nonpast``, ``cont``, ``vol`` (``dict`` = ``nonpast``)."""
        if name in ("nonpast", "dict"):
            return self.nonpast()
        if name == "past":
            return self.past()
        if name == "cont":
            return self.continuative()
        if name == "vol":
            return self.volitional()
        raise LexiconError(f"unknown Japanese form {name!r}")


@dataclass(frozen=True)
class Noun:
    english: str
    japanese: str
    cls: str  # animate | inanimate


@dataclass(frozen=True)
class ProperNoun:
    english: str
    japanese: str
    cls: str = "animate"


@dataclass(frozen=True)
class Adjective:
    english: str
    japanese: str


@dataclass(frozen=True)
class Preposition:
    english: str
    japanese: str


@dataclass(frozen=True)
class Infinitive:
    """How a verb taking a ``to``-infinitive renders it: the embedded verb's form and the
    predicate after it (which carries the tense)."""

    embedded_form: str  # cont | vol | dict
    head: JaPredicate


@dataclass(frozen=True)
class Verb:
    base: str
    past: str
    pres: str
    pp: str
    frames: frozenset[str]
    japanese: JaPredicate | None
    intr: JaPredicate | None = None
    cp: JaPredicate | None = None
    past_override: JaPredicate | None = None
    intr_past: JaPredicate | None = None
    passive_base: JaPredicate | None = None
    obj: str = "を"
    comp: str | None = None
    inf: Infinitive | None = None
    restrictions: Mapping[str, str] = field(default_factory=dict, compare=False)

    def forms(self) -> dict[str, str]:
        """English form name (:data:`VERB_FORMS`) -> word."""
        return dict(zip(VERB_FORMS, (self.base, self.past, self.pres, self.pp)))

    def japanese_for(self, frame: str) -> JaPredicate:
        """The Japanese verb of a frame (``inf`` has none: see :attr:`inf`)."""
        if frame in ("intr", "unacc") and self.intr is not None:
            return self.intr
        if frame == "cp" and self.cp is not None:
            return self.cp
        if self.japanese is None:
            raise LexiconError(f"verb {self.base!r} has no Japanese for frame {frame!r}")
        return self.japanese

    def past_predicate(self, frame: str) -> JaPredicate:
        """The predicate of the English simple past in a frame (``intr_past=`` in the
        intransitive frames; ``past=`` wherever the main Japanese verb is used)."""
        if frame in ("intr", "unacc") and self.intr_past is not None:
            return self.intr_past
        ja = self.japanese_for(frame)
        if self.past_override is not None and ja == self.japanese:
            return self.past_override
        return ja

    def passive(self) -> JaPredicate:
        return (self.passive_base or self.japanese_for("trans")).passive()


@dataclass(frozen=True)
class Lexicon:
    nouns: Mapping[str, Noun]
    proper_nouns: Mapping[str, ProperNoun]
    adjectives: Mapping[str, Adjective]
    prepositions: Mapping[str, Preposition]
    verbs: Mapping[str, Verb]
    determiners: frozenset[str] = frozenset({"a", "the"})

    @functools.cached_property
    def _index(self) -> dict[str, tuple[tuple[str, object], ...]]:
        """token -> ((category, entry), ...); verb categories are ``V.<frame>.<form>``."""
        idx: dict[str, list[tuple[str, object]]] = {}

        def add(token: str, cat: str, entry: object) -> None:
            idx.setdefault(token, []).append((cat, entry))

        for d in self.determiners:
            add(d, "DET", d)
        for e in self.nouns.values():
            add(e.english, "N", e)
        for p in self.proper_nouns.values():
            add(p.english, "PN", p)
        for a in self.adjectives.values():
            add(a.english, "ADJ", a)
        for p in self.prepositions.values():
            add(p.english, "P", p)
        for v in self.verbs.values():
            for form, token in v.forms().items():
                for frame in v.frames:
                    add(token, f"V.{frame}.{form}", v)
        return {k: tuple(dict.fromkeys(v)) for k, v in idx.items()}

    def lookup(self, token: str) -> tuple[tuple[str, object], ...]:
        """The categories a token can have (exact spelling)."""
        return self._index.get(token, ())

    def knows(self, token: str) -> bool:
        return token in self._index


def compatible(verb: Verb, role: str, noun: Noun | ProperNoun, restrictions: bool = True) -> bool:
    """Whether ``noun`` may fill ``role`` of ``verb``: ``subj`` (the agent of an
    agentive frame), ``obj`` (the theme: a direct object, a passive's subject, the
    subject of an unaccusative) or ``recipient``.

    These are the selectional restrictions of section 3.2.4: agents and recipients are
    animate (the PCFG's animacy constraints), and a verb's ``subj=``/``obj_class=`` list
    the noun classes observed with it.  With ``restrictions=False`` every noun is
    accepted (the paper's Table 5 ablation).
    """
    if not restrictions:
        return True
    if role == "recipient":
        return noun.cls == "animate"
    key = {"subj": "subj", "obj": "obj_class"}.get(role)
    if key is None:
        raise ValueError(f"role must be 'subj', 'obj' or 'recipient', not {role!r}")
    wanted = verb.restrictions.get(key, "any")
    return wanted == "any" or wanted == noun.cls


def _verb(fields: list[str], where: str) -> Verb:
    if len(fields) < 6:
        raise LexiconError(f"{where}: a verb line has base, past, present, participle, "
                           "frames and Japanese")
    base, past, pres, pp, frames_s, ja_s, *rest = fields
    frames = frozenset(frames_s.split())
    bad = frames - set(FRAMES)
    if not frames or bad:
        raise LexiconError(f"{where}: unknown frame(s) {sorted(bad)} (known: {FRAMES})")
    opts: dict[str, str] = {}
    for item in " ".join(rest).split():
        key, sep, value = item.partition("=")
        if not sep:
            raise LexiconError(f"{where}: option {item!r} is not key=value")
        opts[key] = value
    known = {"intr", "intr_past", "cp", "past", "passive", "obj", "comp", "inf", "subj",
             "obj_class"}
    if set(opts) - known:
        raise LexiconError(f"{where}: unknown option(s) {sorted(set(opts) - known)}")

    def pred(key: str) -> JaPredicate | None:
        return JaPredicate.parse(opts[key]) if key in opts else None

    inf = None
    if "inf" in opts:
        form, sep, head = opts["inf"].partition("+")
        if not sep or form not in ("cont", "vol", "dict"):
            raise LexiconError(f"{where}: inf= is <cont|vol|dict>+<predicate>")
        inf = Infinitive(form, JaPredicate.parse(head))
    if ("inf" in frames) != (inf is not None):
        raise LexiconError(f"{where}: the inf frame and the inf= key go together")
    if "cp" in frames and "comp" not in opts:
        raise LexiconError(f"{where}: a cp verb needs comp=")
    japanese = None if ja_s == "-" else JaPredicate.parse(ja_s)
    if japanese is None and frames - {"inf"}:
        raise LexiconError(f"{where}: only an inf-only verb may have no Japanese")
    return Verb(base, past, pres, pp, frames, japanese, intr=pred("intr"), cp=pred("cp"),
                past_override=pred("past"), intr_past=pred("intr_past"),
                passive_base=pred("passive"),
                obj=opts.get("obj", "を"), comp=opts.get("comp"), inf=inf,
                restrictions={k: opts[k] for k in ("subj", "obj_class") if k in opts})


def parse_lines(lines: Iterable[str], origin: str = "lexicon") -> Lexicon:
    """Build a :class:`Lexicon` from TSV lines (see the module docstring)."""
    nouns: dict[str, Noun] = {}
    proper: dict[str, ProperNoun] = {}
    adjs: dict[str, Adjective] = {}
    preps: dict[str, Preposition] = {}
    verbs: dict[str, Verb] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        kind, *fields = [f.strip() for f in line.split("\t")]
        where = f"{origin}:{n}"
        if kind == "V":
            v = _verb(fields, where)
            table: dict = verbs
            key = v.base
            entry: object = v
        elif kind in ("N", "PN", "ADJ", "P"):
            need = 3 if kind == "N" else 2
            if len(fields) != need:
                raise LexiconError(f"{where}: {kind} takes {need} fields, got {len(fields)}")
            key = fields[0]
            if kind == "N":
                if fields[2] not in NOUN_CLASSES:
                    raise LexiconError(f"{where}: noun class must be one of {NOUN_CLASSES}")
                table, entry = nouns, Noun(*fields)
            elif kind == "PN":
                table, entry = proper, ProperNoun(*fields)
            elif kind == "ADJ":
                table, entry = adjs, Adjective(*fields)
            else:
                table, entry = preps, Preposition(*fields)
        else:
            raise LexiconError(f"{where}: unknown entry kind {kind!r}")
        if key in table:
            raise LexiconError(f"{where}: {kind} {key!r} is listed twice")
        table[key] = entry
    return Lexicon(nouns, proper, adjs, preps, verbs)


@functools.lru_cache(maxsize=None)
def load(path: str | Path = LEXICON_PATH) -> Lexicon:
    """The lexicon in ``path`` (default: the packaged ``lexicon.tsv``), cached."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        return parse_lines(fh, origin=str(path.name))


def counts(lexicon: Lexicon | None = None) -> dict[str, int]:
    """Entries per class, comparable with appendix B (123 / 423 / 178 / 43)."""
    lx = lexicon or load()
    return {"proper_nouns": len(lx.proper_nouns), "common_nouns": len(lx.nouns),
            "verbs": len(lx.verbs), "adjectives": len(lx.adjectives)}
