"""NLI (Nie et al. 2019): the SNLI/MNLI jsonl reader and its trees, and the SOSWAP /
ADDAMOD rules on hand-made parses (each rule and each failure case: a mis-tagged noun,
an adverbial NP that is not an object, a stacked adjective, copulas, pronouns, fronted
phrases), then on the reference sample's real parses."""
import json
from collections import Counter

import pytest

from conftest import reference_path

from compsuite.data_prep.nli import adversaries as A
from compsuite.data_prep.nli.snli import Pair, parse_tree, read_all
from compsuite.foundation.errors import DataError


def pair(parse: str, pid: str = "p1") -> Pair:
    tree = parse_tree(parse)
    return Pair(pair_id=pid, premise=" ".join(tree.leaves()), hypothesis="x", label="neutral",
                premise_parse=parse, hypothesis_parse="(ROOT (NP (NN x)))", source="hand", line=1)


def swap(parse: str, rules: str = "strict") -> str:
    return A.detokenize(A.soswap(pair(parse), rules).hypothesis.leaves())


def dropped(fn, *args) -> str:
    with pytest.raises(A.Dropped) as e:
        fn(*args)
    return str(e.value)


# ----------------------------------------------------------------------------- reader
def test_trees():
    t = parse_tree("(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ runs)) (. .)))")
    assert t.leaves() == ["A", "dog", "runs", "."]
    assert t.pos()[1] == ("dog", "NN") and str(t) == "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ runs)) (. .)))"
    assert parse_tree("( (S (NP (NN x))) )").kids[0].label == "S"     # unlabelled outer bracket
    for bad, msg in [("(ROOT (S (NP (NN x))", "not closed"), ("(ROOT (NN x)))", "too many"),
                     ("dog", "not a bracketed"), ("(ROOT (NP))", "empty constituent"),
                     ("(ROOT (NP (NN x) y))", "mixes words")]:
        with pytest.raises(DataError, match=msg):
            parse_tree(bad, "f.jsonl:3")


def _line(**kw):
    obj = {"sentence1": "A dog runs.", "sentence2": "An animal moves.", "gold_label": "entailment",
           "pairID": "1", "annotator_labels": ["entailment"],
           "sentence1_parse": "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ runs)) (. .)))",
           "sentence2_parse": "(ROOT (S (NP (DT An) (NN animal)) (VP (VBZ moves)) (. .)))"}
    obj.update(kw)
    return json.dumps({k: v for k, v in obj.items() if v is not None})


def test_reader_skips_unlabelled_and_names_bad_lines(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text("\n".join([_line(), _line(gold_label="-", pairID="2"), _line(pairID="3")]) + "\n")
    pairs, stats = read_all(f)
    assert [p.pair_id for p in pairs] == ["1", "3"] and pairs[1].line == 3
    assert stats.as_dict() == {"pairs": 2, "skipped": {"no gold label ('-')": 1}}
    assert pairs[0].hypothesis_tree.leaves()[1] == "animal"
    for text, msg in [(_line() + "\n{not json", r"d\.jsonl:2: not a JSON object"),
                      (_line(sentence2=None), r"d\.jsonl:1: missing key\(s\) sentence2"),
                      (_line(gold_label="yes"), r"d\.jsonl:1: unknown gold_label 'yes'")]:
        f.write_text(text + "\n")
        with pytest.raises(DataError, match=msg):
            read_all(f)
    f.write_text(_line(sentence1_parse="(ROOT (S (NP (NN x))") + "\n")
    [p], _ = read_all(f)
    with pytest.raises(DataError, match=r"d\.jsonl:1: sentence1_parse: unbalanced"):
        p.premise_tree


# ----------------------------------------------------------------------------- SOSWAP
def test_soswap_swaps_subject_and_object_and_repairs():
    assert swap("(ROOT (S (NP (DT A) (NN man)) (VP (VBZ is) (VP (VBG eating) "
                "(NP (DT an) (NN apple)))) (. .)))") == "An apple is eating a man."
    # is/are re-agreed with the new subject
    ex = A.soswap(pair("(ROOT (S (NP (CD Two) (NNS men)) (VP (VBP are) (VP (VBG cooking) "
                       "(NP (NN food)))) (. .)))"))
    assert A.detokenize(ex.hypothesis.leaves()) == "Food is cooking two men."
    assert ex.rule == "svo+aux-agreement" and ex.as_json(0)["gold_label"] == "contradiction"
    # a proper noun keeps its capital; a nationality adjective too
    assert swap("(ROOT (S (NP (NNP John)) (VP (VBD kicked) (NP (DT the) (NN ball))) (. .)))") \
        == "The ball kicked John."
    assert swap("(ROOT (S (NP (JJ Indian) (NNS women)) (VP (VBD carried) (NP (NNS baskets))) (. .)))") \
        == "Baskets carried Indian women."


def test_soswap_main_verb_agreement_strict_and_lenient():
    p = "(ROOT (S (NP (CD Two) (NNS doctors)) (VP (VBP perform) (NP (NN surgery))) (. .)))"
    assert dropped(A.soswap, pair(p), "strict") == "main verb would change number (strict)"
    assert swap(p, "lenient") == "Surgery performs two doctors."
    assert A.inflect_present("watches", True) == "watch" and A.inflect_present("carry", False) == "carries"
    assert A.inflect_present("has", True) == "have" and A.inflect_present("eats", True) == "eat"


@pytest.mark.parametrize("parse, reason", [
    # a mis-tagged noun: the parser's (NP (VBG holding)) is not an object
    ("(ROOT (S (NP (DT A) (NN woman)) (VP (VBZ likes) (NP (VBG holding))) (. .)))",
     "object head is not a noun (mis-tagged: VBG holding)"),
    # an adverbial NP of time is not an object
    ("(ROOT (S (NP (DT The) (NNS kids)) (VP (VBP play) (NP (DT all) (NN day))) (. .)))",
     "object is an adverbial NP"),
    ("(ROOT (S (NP (DT A) (NN man)) (VP (VBZ is) (NP (DT a) (NN doctor))) (. .)))", "copular verb"),
    ("(ROOT (S (NP (DT A) (NN man)) (VP (VBZ seems) (ADJP (JJ happy))) (. .)))", "copular verb"),
    ("(ROOT (S (NP (PRP He)) (VP (VBZ eats) (NP (DT an) (NN apple))) (. .)))", "subject is a pronoun"),
    ("(ROOT (S (NP (DT A) (NN man)) (VP (VBZ is) (VP (VBG standing) (PP (IN on) (NP (DT a) "
     "(NN box))))) (. .)))", "no object NP directly after the verb"),
    ("(ROOT (NP (NP (DT A) (NN man)) (VP (VBG eating) (NP (NN food))) (. .)))",
     "not a sentence (ROOT -> NP)"),
    ("(ROOT (S (NP (NP (DT A) (NN man)) (PP (IN in) (NP (DT a) (NN hat)))) (VP (VBZ eats) "
     "(NP (DT an) (NN apple))) (. .)))", "subject is not a base NP (strict)"),
    ("(ROOT (S (PP (IN In) (NP (DT the) (NN park))) (, ,) (NP (DT a) (NN dog)) (VP (VBZ chases) "
     "(NP (DT a) (NN ball))) (. .)))", "fronted phrase (strict)"),
    ("(ROOT (S (NP (DT A) (NN man)) (VP (VBZ eats) (CC and) (VBZ drinks) (NP (NN soup))) (. .)))",
     "coordinated verbs"),
])
def test_soswap_failure_cases(parse, reason):
    assert dropped(A.soswap, pair(parse), "strict") == reason


def test_soswap_lenient_moves_complex_phrases_and_keeps_fronted_ones():
    assert swap("(ROOT (S (NP (NP (DT A) (NN man)) (PP (IN in) (NP (DT a) (NN hat)))) "
                "(VP (VBZ eats) (NP (DT an) (NN apple))) (. .)))", "lenient") \
        == "An apple eats a man in a hat."
    ex = A.soswap(pair("(ROOT (S (PP (IN In) (NP (DT the) (NN park))) (, ,) (NP (DT a) (NN dog)) "
                       "(VP (VBZ chases) (NP (DT a) (NN ball))) (. .)))"), "lenient")
    assert A.detokenize(ex.hypothesis.leaves()) == "In the park, a ball chases a dog."
    assert ex.rule == "svo+fronted-phrase"


# ----------------------------------------------------------------------------- ADDAMOD
def lexicon(*nps: str, times: int = 2) -> A.AdjectiveLexicon:
    lex = A.AdjectiveLexicon()
    for np in nps:
        for _ in range(times):
            lex.add(parse_tree(f"(ROOT {np})"))
    return lex


DOG_CAT = "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ chases) (NP (DT a) (NN cat))) (. .)))"


def test_addamod_adds_one_adjective_to_each_noun():
    lex = lexicon("(NP (DT a) (JJ black) (NN dog))", "(NP (DT a) (JJ black) (NN cat))")
    ex = A.addamod(pair(DOG_CAT), lex, "strict", seed=1)
    got = {A.detokenize(ex.premise.leaves()), A.detokenize(ex.hypothesis.leaves())}
    assert got == {"A black dog chases a cat.", "A dog chases a black cat."}
    assert ex.as_json(0)["gold_label"] == "neutral" and ex.detail["adjective"] == "black"
    # seeded: the same choice again; a/an repaired for a vowel-initial adjective
    assert A.addamod(pair(DOG_CAT), lex, "strict", seed=1).premise == ex.premise
    lex = lexicon("(NP (DT an) (JJ old) (NN dog))", "(NP (DT an) (JJ old) (NN cat))")
    ex = A.addamod(pair(DOG_CAT), lex, "strict", seed=1)
    assert {A.detokenize(ex.premise.leaves()), A.detokenize(ex.hypothesis.leaves())} == {
        "An old dog chases a cat.", "A dog chases an old cat."}


def test_addamod_needs_the_adjective_with_both_nouns():
    lex = lexicon("(NP (DT a) (JJ black) (NN dog))", "(NP (DT a) (JJ black) (NN cat))", times=1)
    assert dropped(A.addamod, pair(DOG_CAT), lex, "strict").startswith("no adjective seen with both")
    assert A.addamod(pair(DOG_CAT), lex, "lenient").detail["lexicon_counts"] == [1, 1]
    lex = lexicon("(NP (DT a) (JJ black) (NN dog))")
    assert dropped(A.addamod, pair(DOG_CAT), lex, "lenient") == "no adjective seen with both nouns"
    same = "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ chases) (NP (DT a) (NN dog))) (. .)))"
    assert dropped(A.addamod, pair(same), lex, "strict") == "fewer than two noun entities"


def test_addamod_stacked_adjective_and_sentence_start():
    stacked = "(ROOT (S (NP (DT A) (JJ big) (NN dog)) (VP (VBZ chases) (NP (DT a) (NN cat))) (. .)))"
    lex = lexicon("(NP (DT a) (JJ black) (NN dog))", "(NP (DT a) (JJ black) (NN cat))")
    assert "already modified" in dropped(A.addamod, pair(stacked), lex, "strict")
    ex = A.addamod(pair(stacked), lex, "lenient", seed=1)
    assert ex.rule == "np+np+stacked"
    assert {A.detokenize(ex.premise.leaves()), A.detokenize(ex.hypothesis.leaves())} == {
        "A big black dog chases a cat.", "A big dog chases a black cat."}
    bare = "(ROOT (S (NP (NNS Dogs)) (VP (VBP chase) (NP (NNS cats))) (. .)))"
    lex = lexicon("(NP (JJ black) (NNS dogs))", "(NP (JJ black) (NNS cats))")
    ex = A.addamod(pair(bare), lex, "strict", seed=1)
    assert {A.detokenize(ex.premise.leaves()), A.detokenize(ex.hypothesis.leaves())} == {
        "Black dogs chase cats.", "Dogs chase black cats."}


def test_detokenize_and_articles():
    assert A.detokenize(["They", "do", "n't", "see", "the", "dog", "'s", "ball", "-LRB-", "red",
                         "-RRB-", "."]) == "They don't see the dog's ball (red)."
    assert [A.an(w) for w in ("old", "young", "honest", "unique", "hour")] == ["an", "a", "an", "a", "an"]


# ----------------------------------------------------------------------------- files
def test_build_on_the_reference_sample(tmp_path):
    sample = reference_path("nli", "snli_1.0_dev_sample.jsonl")
    m = A.build(sample, tmp_path / "a", rules="strict", show=False)
    c = m["counts"]
    assert c["input_pairs"] == 1273 and 0 < c["soswap"] < c["unique_premises"]
    assert c["addamod"] > 0 and sum(m["dropped"]["soswap"].values()) + c["soswap"] == c["unique_premises"]
    A.build(sample, tmp_path / "b", rules="strict", show=False)
    for f in ("soswap.jsonl", "addamod.jsonl"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    lenient = A.build(sample, tmp_path / "l", rules="lenient", show=False)["counts"]
    assert lenient["soswap"] > c["soswap"] and lenient["addamod"] > c["addamod"]
    # SOSWAP keeps the premise's words (up to agreement and case); ADDAMOD adds one
    agree = {"is", "are", "was", "were", "has", "have", "does", "do"}
    for line in (tmp_path / "a" / "soswap.jsonl").read_text().splitlines():
        ex = json.loads(line)
        a, b = (Counter(w.lower() for w in parse_tree(ex[k]).leaves() if w.lower() not in agree)
                for k in ("sentence1_parse", "sentence2_parse"))
        assert a == b and ex["sentence1"] != ex["sentence2"], ex
    for line in (tmp_path / "a" / "addamod.jsonl").read_text().splitlines():
        ex = json.loads(line)
        a, b = (Counter(w.lower() for w in parse_tree(ex[k]).leaves() if w.lower() not in {"a", "an"})
                for k in ("sentence1_parse", "sentence2_parse"))
        adj = ex["detail"]["adjective"]
        assert a == b and a[adj] >= 1 and ex["sentence1"] != ex["sentence2"], ex
