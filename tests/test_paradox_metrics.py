"""Paradox of compositionality, metrics: hand-made cases for every definition (what counts
as consistent, what is left out), the signatures, and length errors."""
import pytest

from compsuite.data_prep.paradox import literal
from compsuite.eval.paradox import metrics as P


def test_words_and_edit_distance():
    assert literal.words("De koning.") == ["De", "koning", "."]
    assert literal.words('zei " hallo "') == ["zei", '"', "hallo", '"']
    assert P.edit_distance("a b c".split(), "a x c".split()) == 1
    assert P.edit_distance("a b c".split(), "a c".split()) == 1
    assert P.edit_distance("a b c".split(), "c b a".split()) == 2
    assert P.edit_distance([], "a b".split()) == 2


@pytest.mark.parametrize("a,b,consistent", [
    # one noun changed: one word differs
    ("De dichter vergeet de koning .", "De leraar vergeet de koning .", True),
    # the article changes with the noun (het -> de): still one word
    ("De dichter vergeet de koning .", "Het kind vergeet de koning .", True),
    ("De jongen die lacht , ziet de koning .", "Het kind dat lacht , ziet de koning .", True),
    # identical: the change did not show
    ("De dichter vergeet de koning .", "De dichter vergeet de koning .", False),
    # two words differ (the verb changed too)
    ("De dichter vergeet de koning .", "De leraar vergat de koning .", False),
    # one word dropped counts as one edit
    ("De dichter vergeet de koning .", "De dichter vergeet koning .", True),
    # punctuation glued to a word is split off first
    ("De dichter vergeet de koning.", "De leraar vergeet de koning .", True),
])
def test_np_vp(a, b, consistent):
    assert P.np_vp_consistent(a, b) is consistent


def test_np_vp_result_and_signature():
    r = P.np_vp_consistency(["a b c", "a b c", "a b c"], ["a x c", "a b c", "x y c"])
    assert (r.score, r.n, r.passed, r.outcomes) == (pytest.approx(1 / 3), 3, 1, [True, False, False])
    assert r.signature.startswith("metric:np_vp|") and "norm:het>de,dat>die" in r.signature
    assert "version:" in r.signature
    with pytest.raises(P.LengthError, match="2 base, 1 changed"):
        P.np_vp_consistency(["a", "b"], ["a"])


def test_conjuncts_to_skip():
    assert P.conjuncts_to_skip("The poet forgets the king , and the men cry .") == 0
    assert P.conjuncts_to_skip("The poet and the child forget the king , and the men cry .") == 1
    assert P.conjuncts_to_skip("Did the poet forget the king , and did the men hear about it ?") == 0


def test_second_conjunct():
    t = "De dichter en het kind vergeten de koning , en de mannen huilen ."
    assert P.second_conjunct(t, 1) == "de mannen huilen ."
    assert P.second_conjunct(t, 0) == "het kind vergeten de koning , en de mannen huilen ."
    assert P.second_conjunct("De dichter vergeet de koning .", 0) is None
    assert P.second_conjunct("De dichter vergeet de koning, En de mannen huilen.", 0) == \
        "de mannen huilen ."


def test_conj_consistency_skips_s1s_own_en_and_leaves_out_missing():
    base_src = ["The poet forgets the king , and the men cry .",
                "The poet and the child forget the king , and the men cry .",
                "The poet forgets the king , and the men cry .",
                "The poet forgets the king , and the men cry ."]
    changed_src = ["The poet forgets the mayor , and the men cry .",
                   "The poet and the child forget the mayor , and the men cry .",
                   "The man and the boy see that the girls run , and the men cry .",
                   "The poet forgets the mayor , and the men cry ."]
    base = ["De dichter vergeet de koning , en de mannen huilen .",
            "De dichter en het kind vergeten de koning , en de mannen huilen .",
            "De dichter vergeet de koning , en de mannen huilen .",
            "De dichter vergeet de koning , en de mannen huilen ."]
    changed = ["De dichter vergeet de burgemeester , en de mannen schreeuwen .",
               "De dichter en het kind vergeten de burgemeester , en de mannen huilen .",
               "De man en de jongen zien dat de meisjes rennen , en de mannen huilen .",
               "De dichter vergeet de burgemeester ; de mannen huilen ."]
    r = P.conj_consistency(base, changed, base_src, changed_src)
    assert r.outcomes == [False, True, True, None]
    assert (r.n, r.passed, r.score) == (3, 2, pytest.approx(2 / 3))
    assert r.left_out == {"missing_conjunction": 1}
    # without sources, S1's own 'en' is taken for the conjunction: the first conjunct's
    # change then shows in what is compared
    assert P.conj_consistency(base[1:2], changed[1:2]).outcomes == [False]
    assert P.conj_consistency(base[2:3], changed[2:3]).outcomes == [False]


def test_conj_authors_cut():
    """The authors' heuristic: after the second 'en' when fewer than five words precede
    the first, else after the first; both cuts are reported."""
    two = "De dichter en het kind vergeten de koning , en de mannen huilen ."
    assert P.second_conjunct_authors(two) == "de mannen huilen ."
    one = "De dichter vergeet de koning , en de mannen huilen ."
    assert P.second_conjunct_authors(one) == "de mannen huilen ."
    # a short first conjunct without its own 'en' loses the real conjunction
    short = "Hij lacht , en de mannen huilen ."
    assert P.second_conjunct_authors(short) == "" and P.second_conjunct(short) == \
        "de mannen huilen ."
    assert P.second_conjunct_authors("De dichter vergeet de koning .") is None
    r = P.conj_consistency([short], ["Hij lacht , en de vrouwen huilen ."], cut="authors")
    assert r.outcomes == [True] and r.metric == "s_conj_s_authors"   # '' == ''
    assert "second_en_if_first_part<5_words" in r.signature
    with pytest.raises(ValueError, match="cut: one of source, authors"):
        P.conj_consistency([one], [one], cut="last")


FORMS = ["donut", "doughnut", "donuts"]


@pytest.mark.parametrize("a,b,full,exact,synonym", [
    # the same Dutch synonym and context
    ("De man die de donut eet .", "De man die de donut eet .", True, True, True),
    # two Dutch forms of the synonym: one form after normalising (ours); not the same
    # sentence nor the same synonym word (the authors' rules)
    ("De man die de donut eet .", "De man die de doughnut eet .", True, False, False),
    # the synonym agrees, the context changed
    ("De man die de donut eet .", "De vent die de donut eet .", False, False, True),
    # a word holding the translation counts as it (vliegtuigje holds vliegtuig)
    ("Hij reist per vliegtuigje .", "Zij reist per vliegtuigje .", False, False, True),
    # one translation omits the synonym: inconsistent; both omit it: the rest decides
    ("De man die de donut eet .", "De man die de eet .", False, False, False),
    ("De man die eet .", "De man die eet .", True, True, True),
    ("De man die eet .", "De vent die eet .", False, False, False),
    # an unknown translation of the synonym in one of them
    ("De man die de donut eet .", "De man die de oliebol eet .", False, False, False),
])
def test_substitutivity(a, b, full, exact, synonym):
    forms = FORMS + ["vliegtuig"]
    assert P.substitutivity_consistent(a, b, forms) is full
    assert P.exact_consistent(a, b) is exact
    assert P.synonym_consistent(a, b, forms) is synonym


def test_synonym_of_several_words():
    forms = ["winkelwagen", "shopping cart"]
    assert P.synonym_consistent("Hij duwt de shopping cart .", "Zij duwt de shopping cart .", forms)
    assert not P.synonym_consistent("Hij duwt de shopping cart .", "Hij duwt de winkelwagen .",
                                    forms)


def test_substitutivity_results():
    res = P.substitutivity(["De man die de donut eet .", "x"], ["De vent die de doughnut eet .", "x"],
                           FORMS)
    assert res["consistency"].outcomes == [False, True]
    assert res["consistency_exact"].outcomes == [False, True]
    assert res["synonym_consistency"].outcomes == [False, True]
    assert "substitutivity_full" in res["consistency"].signature
    per_sample = P.substitutivity(["a donut", "a snor"], ["a doughnut", "a snor"],
                                  [FORMS, ["snor"]])
    assert per_sample["consistency"].score == 1.0


@pytest.mark.parametrize("text,keywords,word,substring", [
    ("Ik ken de formule uit mijn hart .", ["hart"], True, True),
    ("Ik ken de formule uit het hoofd .", ["hart"], False, False),
    # the authors' substring rule fires inside another word
    ("Zij geven het op .", ["even", "tijdje"], False, True),
    ("Af en toe , even .", ["even"], True, True),
    ("Het is Kunst .", ["kunst"], True, True),                         # case-insensitive
    ("Dat is de stand van de techniek .", ["staat", "stand"], True, True),
])
def test_overgeneralised(text, keywords, word, substring):
    assert literal.overgeneralised(text, keywords, "word") is word
    assert literal.overgeneralised(text, keywords, "substring") is substring


def test_overgeneralisation_result():
    r = P.overgeneralisation(["uit het hart", "uit het hoofd", "geven"], ["hart", "even"])
    assert r.outcomes == [True, False, False] and r.score == pytest.approx(1 / 3)
    assert "match:word" in r.signature
    r = P.overgeneralisation(["uit het hart", "uit het hoofd", "geven"], ["hart", "even"],
                             match="substring")
    assert r.outcomes == [True, False, True] and "match:substring" in r.signature
    with pytest.raises(ValueError, match="match: one of word, substring"):
        literal.overgeneralised("x", ["x"], "regex")
    with pytest.raises(P.LengthError):
        P.overgeneralisation(["a", "b"], [["a"]])
