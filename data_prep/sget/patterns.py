"""The 42 generalisation patterns of SGET (Kumon et al. 2024, Tables 8, 9 and 10), as one
table of plain data.

Each :class:`Pattern` gives our name (COGS's and SLOG's names where the pattern is
inherited, ``gen.txt``'s third column), the label of the paper's Table 10, its group
(the paper's names) and category, how many generalisation sentences it has (section
4.1.2: 2,000, or 1,000 for the two CP-recursion patterns and the six wh-question
patterns, which have no complement-clause half; 76,000 in all), whether Table 10
scores it with Partial Match, whether half its sentences have the target constituent
inside a complement clause (appendix B; Table 11 splits the phrase-recombination
scores by it), whether it needs morphological generalisation (Table 3's
"Lex. + Mor." group), its target words (five per lexical pattern, appendix B; for
the tense patterns four regular verbs and one irregular, marked in ``irregular``), the
recursion kind and depths of the recursion patterns, and the names of the functions of
:mod:`.builders` that build its generalisation sentences (``builder``) and its
training exposures (``exposure``, lexical patterns: 100 per pattern, section 4.1.2),
with a short description of both (``gen_structure``, ``train_context``).

The target words were chosen from :mod:`.lexicon` with the paper's own examples where
it names them (Tables 8 and 9: goat, Chris, panda, Taylor, thief, Coco, trainer, Nova,
jump, lend, want, hope, show, prepare, learn, move, drop, explode, grant, gift); no
word is the target of two patterns.  The structural-alternation targets have the same
simple past and participle (appendix A.2).
"""
from __future__ import annotations

from dataclasses import dataclass

LEXICAL, STRUCTURAL = "lexical", "structural"
PRIMITIVE_SUBSTITUTION = "Primitive Substitution"
PRIMITIVE_STRUCTURAL_ALTERNATION = "Primitive Structural Alternation"
TENSE_ALTERNATION = "Tense Alternation"
PHRASE_RECOMBINATION = "Phrase Recombination"
RECURSION_DEPTH_ALTERNATION = "Recursion Depth Alternation"
GAP_POSITION_RECOMBINATION = "Gap Position Recombination"
WH_STRUCTURAL_ALTERNATION = "Wh-question Structural Alternation"
GROUPS = (PRIMITIVE_SUBSTITUTION, PRIMITIVE_STRUCTURAL_ALTERNATION, TENSE_ALTERNATION,
          PHRASE_RECOMBINATION, RECURSION_DEPTH_ALTERNATION, GAP_POSITION_RECOMBINATION,
          WH_STRUCTURAL_ALTERNATION)

#: section 3.2.1: recursion depths of the training set and of the generalisation set
TRAIN_DEPTHS = (1, 2, 4)
SHALLOWER_DEPTHS = (3,)
DEEPER_DEPTHS = (5, 6)
#: section 4.1.2 and appendix B
GEN_SIZE = 2000
GEN_SIZE_WITHOUT_CP = 1000
EXPOSURES_PER_PATTERN = 100
TARGETS_PER_PATTERN = 5
GEN_TOTAL = 76_000


@dataclass(frozen=True)
class Pattern:
    name: str
    label: str                    # Table 10
    group: str
    size: int
    partial_match: bool           # scored by Partial Match in Table 10
    complement_clause: bool       # half the sentences have the target inside a CP
    builder: str                  # function of builders.py making one gen sentence
    gen_structure: str
    morphological: bool = False   # Table 3: "Lex. + Mor."
    targets: tuple[str, ...] = ()
    irregular: str | None = None  # tense patterns: the irregular target verb
    exposure: str | None = None   # function of builders.py making one exposure
    train_context: str = ""       # where the targets (or the structure) occur in training
    recursion: str | None = None  # cp | pp | rc | adj
    depths: tuple[int, ...] = ()

    @property
    def category(self) -> str:
        return LEXICAL if self.group in GROUPS[:3] else STRUCTURAL

    @property
    def table3_group(self) -> str:
        """Table 3's grouping: Lexical, Lex. + Mor., Structural."""
        if self.category == STRUCTURAL:
            return "Structural"
        return "Lex. + Mor." if self.morphological else "Lexical"


def _p(name, label, group, builder, gen_structure, *, size=GEN_SIZE, partial=True, cp=True,
       **kw) -> Pattern:
    return Pattern(name, label, group, size, partial, cp, builder, gen_structure, **kw)


_1K = dict(size=GEN_SIZE_WITHOUT_CP, cp=False)

PATTERNS: tuple[Pattern, ...] = (
    # ------------------------------------------------------------ primitive substitution
    _p("subj_to_obj_common", "Subj → Obj (common)", PRIMITIVE_SUBSTITUTION,
       "noun_in_object", "target in an object position (direct object or recipient)",
       targets=("goat", "hedgehog", "camel", "dolphin", "pirate"), exposure="noun_as_subject",
       train_context="subject of an active main clause"),
    _p("subj_to_obj_proper", "Subj → Obj (proper)", PRIMITIVE_SUBSTITUTION,
       "noun_in_object", "target in an object position (direct object or recipient)",
       targets=("Chris", "Ryan", "Sarah", "Jordan", "Max"), exposure="noun_as_subject",
       train_context="subject of an active main clause"),
    _p("obj_to_subj_common", "Obj → Subj (common)", PRIMITIVE_SUBSTITUTION,
       "noun_in_subject", "target as the subject",
       targets=("panda", "koala", "owl", "wizard", "tailor"), exposure="noun_as_object",
       train_context="direct object or recipient of an active main clause"),
    _p("obj_to_subj_proper", "Obj → Subj (proper)", PRIMITIVE_SUBSTITUTION,
       "noun_in_subject", "target as the subject",
       targets=("Taylor", "Kate", "Adam", "Ruby", "Claire"), exposure="noun_as_object",
       train_context="direct object or recipient of an active main clause"),
    _p("prim_to_subj_common", "Prim → Subj (common)", PRIMITIVE_SUBSTITUTION,
       "noun_in_subject", "target as the subject",
       targets=("thief", "knight", "witch", "clown", "gorilla"), exposure="primitive",
       train_context="alone (primitive exposure)"),
    _p("prim_to_subj_proper", "Prim → Subj (proper)", PRIMITIVE_SUBSTITUTION,
       "noun_in_subject", "target as the subject",
       targets=("Coco", "Nathan", "Anna", "Caleb", "Jade"), exposure="primitive",
       train_context="alone (primitive exposure)"),
    _p("prim_to_obj_common", "Prim → Obj (common)", PRIMITIVE_SUBSTITUTION,
       "noun_in_object", "target in an object position (direct object or recipient)",
       targets=("trainer", "violin", "kite", "teapot", "scooter"), exposure="primitive",
       train_context="alone (primitive exposure)"),
    _p("prim_to_obj_proper", "Prim → Obj (proper)", PRIMITIVE_SUBSTITUTION,
       "noun_in_object", "target in an object position (direct object or recipient)",
       targets=("Nova", "Tom", "Mary", "Leah", "Charlie"), exposure="primitive",
       train_context="alone (primitive exposure)"),
    _p("prim_to_inf_arg", "Prim → Verb", PRIMITIVE_SUBSTITUTION,
       "verb_in_infinitive", "target verb as a to-infinitive (Mason decided to jump.)",
       partial=False, targets=("jump", "swim", "sing", "cough", "shiver"),
       exposure="primitive", train_context="alone, in the bare form (primitive exposure)"),
    # ------------------------------------------------------------ primitive structural alternation
    _p("active_to_passive", "Active → Passive", PRIMITIVE_STRUCTURAL_ALTERNATION,
       "verb_passive", "target verb in the passive, with or without a by-phrase",
       morphological=True, targets=("move", "recognize", "discover", "poke", "pierce"),
       exposure="verb_active", train_context="active transitive"),
    _p("passive_to_active", "Passive → Active", PRIMITIVE_STRUCTURAL_ALTERNATION,
       "verb_active", "target verb in the active transitive",
       morphological=True, targets=("drop", "use", "stab", "worship", "miss"),
       exposure="verb_passive", train_context="passive, with or without a by-phrase"),
    _p("obj_omitted_transitive_to_transitive", "Obj-omitted transitive → Transitive",
       PRIMITIVE_STRUCTURAL_ALTERNATION, "verb_active",
       "target verb in the transitive frame", morphological=True,
       targets=("bake", "sketch", "nurse", "hunt", "investigate"),
       exposure="verb_object_omitted", train_context="intransitive with the object omitted"),
    _p("unacc_to_transitive", "Unaccusative → Transitive", PRIMITIVE_STRUCTURAL_ALTERNATION,
       "verb_active", "target verb in the transitive frame", morphological=True,
       targets=("explode", "inflate", "shorten", "redden", "enlarge"),
       exposure="verb_unaccusative", train_context="unaccusative (theme subject)"),
    _p("do_dative_to_pp_dative", "Double Obj → PP", PRIMITIVE_STRUCTURAL_ALTERNATION,
       "verb_pp_dative", "target verb with a to-dative",
       targets=("grant", "award", "wire", "forward", "slip"),
       exposure="verb_double_object", train_context="double-object dative"),
    _p("pp_dative_to_do_dative", "PP → Double Obj", PRIMITIVE_STRUCTURAL_ALTERNATION,
       "verb_double_object", "target verb with a double object",
       targets=("gift", "mail", "post", "loan", "teach"),
       exposure="verb_pp_dative", train_context="to-dative"),
    # ------------------------------------------------------------ tense alternation
    _p("past_to_present_ditransitive", "Present (Ditransitive)", TENSE_ALTERNATION,
       "present_ditransitive", "target verb in the present, ditransitive",
       morphological=True, targets=("deliver", "ship", "lease", "rent", "lend"),
       irregular="lend", exposure="past_ditransitive",
       train_context="simple past, ditransitive (to-dative or double object)"),
    _p("transitive_to_present_ditransitive", "Present (Transitive → Ditransitive)",
       TENSE_ALTERNATION, "present_ditransitive", "target verb in the present, ditransitive",
       morphological=True, targets=("show", "serve", "return", "pass", "sell"),
       irregular="sell", exposure="transitive_and_past_ditransitive",
       train_context="transitive in the past and the present; ditransitive in the past"),
    _p("past_to_present_infinitive", "Present (Infinitive)", TENSE_ALTERNATION,
       "present_infinitive", "target verb in the present with a to-infinitive",
       morphological=True, targets=("want", "attempt", "crave", "yearn", "mean"),
       irregular="mean", exposure="past_infinitive",
       train_context="simple past with a to-infinitive"),
    _p("transitive_to_present_infinitive", "Present (Transitive → Infinitive)",
       TENSE_ALTERNATION, "present_infinitive",
       "target verb in the present with a to-infinitive", morphological=True,
       targets=("prepare", "plan", "need", "try", "begin"), irregular="begin",
       exposure="transitive_and_past_infinitive",
       train_context="transitive in the past and the present; to-infinitive in the past"),
    _p("past_to_present_complement", "Present (Complement)", TENSE_ALTERNATION,
       "present_complement", "target verb in the present with a that-clause",
       morphological=True, targets=("hope", "believe", "declare", "imagine", "feel"),
       irregular="feel", exposure="past_complement",
       train_context="simple past with a that-clause"),
    _p("transitive_to_present_complement", "Present (Transitive → Complement)",
       TENSE_ALTERNATION, "present_complement",
       "target verb in the present with a that-clause", morphological=True,
       targets=("learn", "admire", "value", "respect", "understand"), irregular="understand",
       exposure="transitive_and_past_complement",
       train_context="transitive in the past and the present; that-clause in the past"),
    # ------------------------------------------------------------ phrase recombination
    _p("obj_pp_to_subj_pp", "PP in Subj", PHRASE_RECOMBINATION, "modified_subject",
       "subject modified by a prepositional phrase",
       train_context="prepositional phrases modify direct objects only"),
    _p("obj_pp_to_iobj_pp", "PP in Indirect Obj", PHRASE_RECOMBINATION,
       "modified_recipient", "recipient (indirect object) modified by a prepositional phrase",
       train_context="prepositional phrases modify direct objects only"),
    _p("obj_rc_to_subj_rc", "RC in Subj", PHRASE_RECOMBINATION, "modified_subject",
       "subject modified by a relative clause",
       train_context="relative clauses modify direct objects only"),
    _p("obj_rc_to_iobj_rc", "RC in Indirect Obj", PHRASE_RECOMBINATION,
       "modified_recipient", "recipient modified by a relative clause",
       train_context="relative clauses modify direct objects only"),
    _p("obj_adj_to_subj_adj", "Adj in Subj", PHRASE_RECOMBINATION, "modified_subject",
       "subject modified by an adjective",
       train_context="adjectives modify direct objects only"),
    _p("obj_adj_to_iobj_adj", "Adj in Indirect Obj", PHRASE_RECOMBINATION,
       "modified_recipient", "recipient modified by an adjective",
       train_context="adjectives modify direct objects only"),
    # ------------------------------------------------------------ recursion depth
    _p("cp_recursion_shallower", "CP recursion shallower", RECURSION_DEPTH_ALTERNATION,
       "recursion", "that-clauses nested to depth 3", partial=False, **_1K,
       recursion="cp", depths=SHALLOWER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("cp_recursion_deeper", "CP recursion deeper", RECURSION_DEPTH_ALTERNATION,
       "recursion", "that-clauses nested to depth 5 or 6", partial=False, **_1K,
       recursion="cp", depths=DEEPER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("pp_recursion_shallower", "PP recursion shallower", RECURSION_DEPTH_ALTERNATION,
       "recursion", "direct object with 3 stacked prepositional phrases",
       recursion="pp", depths=SHALLOWER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("pp_recursion_deeper", "PP recursion deeper", RECURSION_DEPTH_ALTERNATION,
       "recursion", "direct object with 5 or 6 stacked prepositional phrases",
       recursion="pp", depths=DEEPER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("ce_recursion_shallower", "CE recursion shallower", RECURSION_DEPTH_ALTERNATION,
       "recursion", "direct object with 3 centre-embedded relative clauses", partial=False,
       recursion="rc", depths=SHALLOWER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("ce_recursion_deeper", "CE recursion deeper", RECURSION_DEPTH_ALTERNATION,
       "recursion", "direct object with 5 or 6 centre-embedded relative clauses",
       partial=False, recursion="rc", depths=DEEPER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("adj_recursion_shallower", "Adj recursion shallower", RECURSION_DEPTH_ALTERNATION,
       "recursion", "direct object with 3 adjectives",
       recursion="adj", depths=SHALLOWER_DEPTHS, train_context="depths 1, 2, 4"),
    _p("adj_recursion_deeper", "Adj recursion deeper", RECURSION_DEPTH_ALTERNATION,
       "recursion", "direct object with 5 or 6 adjectives",
       recursion="adj", depths=DEEPER_DEPTHS, train_context="depths 1, 2, 4"),
    # ------------------------------------------------------------ gap position
    _p("iobj_extracted_rc", "Indirect Obj-extracted RC", GAP_POSITION_RECOMBINATION,
       "iobj_relative_clause",
       "object relative clause whose gap is the recipient of a to-dative",
       train_context="relative clauses extract subjects and direct objects"),
    _p("iobj_extracted_wh", "Indirect Obj-extracted wh-question", GAP_POSITION_RECOMBINATION,
       "wh_question", "Who did Liam give a shoe to?", partial=False, **_1K,
       train_context="wh-questions ask about subjects and direct objects"),
    # ------------------------------------------------------------ wh-question structures
    _p("wh_active_subject", "Active Subject", WH_STRUCTURAL_ALTERNATION, "wh_question",
       "subject question of a non-transitive active verb (Who wanted to talk?)",
       partial=False, **_1K, train_context="wh-questions of transitive verbs only"),
    _p("wh_passive_subject", "Passive Subject", WH_STRUCTURAL_ALTERNATION, "wh_question",
       "subject question of a passive (What was broken?)",
       partial=False, **_1K, train_context="wh-questions of transitive verbs only"),
    _p("wh_dobj_ditransitive", "Direct Obj, Ditransitive", WH_STRUCTURAL_ALTERNATION,
       "wh_question", "question about a ditransitive's theme (What did the girl give to "
       "the boy?)", partial=False, **_1K, train_context="wh-questions of transitive verbs only"),
    _p("wh_subject_with_pp", "Subject with PP", WH_STRUCTURAL_ALTERNATION, "wh_question",
       "object question whose subject has a prepositional phrase",
       partial=False, **_1K, train_context="wh-questions with bare subjects only"),
    _p("wh_long_movement", "Long Movement", WH_STRUCTURAL_ALTERNATION, "wh_question",
       "object question whose gap is inside a that-clause (What did Liam think that the "
       "girl break?)", partial=False, **_1K,
       train_context="wh-questions with the gap in the main clause only"),
)

_BY_NAME = {p.name: p for p in PATTERNS}


def names() -> list[str]:
    return [p.name for p in PATTERNS]


def get(name: str) -> Pattern:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown SGET pattern {name!r}") from None


def table10_labels() -> dict[str, str]:
    """Our name -> Table 10 label."""
    return {p.name: p.label for p in PATTERNS}


def by_group() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {g: [] for g in GROUPS}
    for p in PATTERNS:
        out[p.group].append(p.name)
    return out


def lexical() -> list[Pattern]:
    return [p for p in PATTERNS if p.targets]


def target_words() -> dict[str, str]:
    """Every target word -> its pattern."""
    return {w: p.name for p in PATTERNS for w in p.targets}


def scaled_size(p: Pattern, scale: float) -> int:
    """The pattern's number of gen sentences at ``scale`` (at least one per half)."""
    halves = 2 if p.complement_clause else 1
    return max(halves, halves * round(p.size * scale / halves))


def scaled_exposures(p: Pattern, scale: float) -> int:
    """Training exposures of a lexical pattern at ``scale`` (at least one per target)."""
    if not p.targets:
        return 0
    return max(len(p.targets), round(EXPOSURES_PER_PATTERN * scale))


def check() -> None:
    """The table's invariants (the paper's numbers)."""
    assert len(PATTERNS) == 42 and len(_BY_NAME) == 42
    assert sum(p.size for p in PATTERNS) == GEN_TOTAL
    assert sum(not p.complement_clause for p in PATTERNS) == 8
    assert sum(not p.partial_match for p in PATTERNS) == 11
    words = [w for p in PATTERNS for w in p.targets]
    assert len(words) == len(set(words)) == 21 * TARGETS_PER_PATTERN
    for p in PATTERNS:
        assert (p.group in GROUPS[:3]) == bool(p.targets), p.name
        assert (p.group == TENSE_ALTERNATION) == (p.irregular is not None), p.name
        assert p.irregular is None or p.irregular in p.targets
        assert (p.recursion is None) == (p.group != RECURSION_DEPTH_ALTERNATION)
