"""Paradox of compositionality, data: the lexicon's format checks, the ten templates'
English and rule-based Dutch on hand-made examples (Table 3's sentences among them), the
parser's round trip and its errors, the generator's determinism and manifest, the
translate command, and the comparison with the authors' released Dutch (skipped, naming
the path, when ``../shared/reference`` is absent)."""
import io
import json
import random

import pytest

from conftest import reference_path

from compsuite.data_prep.paradox import generate, lexicon, templates as T, translate
from compsuite.foundation.errors import DataError

# English (Table 3's examples and others) -> the Dutch the rules must give, written by hand
EXAMPLES = [
    (1, "The poet criticises the king .", "De dichter bekritiseert de koning ."),
    (1, "The children forget the mayor .", "De kinderen vergeten de burgemeester ."),
    (2, "The victim carefully observes the queen .",
     "Het slachtoffer observeert voorzichtig de koningin ."),
    (3, "The athlete near the bike observes the leader .",
     "De atleet nabij de fiets observeert de leider ."),
    (3, "The girls behind the plane avoid the general .",
     "De meisjes achter het vliegtuig vermijden de generaal ."),
    (4, "The poet and the child understand the mayor .",
     "De dichter en het kind begrijpen de burgemeester ."),
    (5, "The group of friends beside the bike forgets the queen .",
     "De groep van vrienden naast de fiets vergeet de koningin ."),
    (5, "The team of men near the car recognises the king .",
     "Het team van mannen nabij de auto herkent de koning ."),
    (6, "The farmer sees that the lawyers cry .", "De boer ziet dat de advocaten huilen ."),
    (7, "The mother probably thinks that the fathers scream .",
     "De moeder denkt waarschijnlijk dat de vaders schreeuwen ."),
    (8, "The mother thinks that the fathers scream carefully .",
     "De moeder denkt dat de vaders voorzichtig schreeuwen ."),
    (9, "The poets that sleep understand the queen .",
     "De dichters die slapen , begrijpen de koningin ."),
    (9, "The child that laughs admires the king .", "Het kind dat lacht , bewondert de koning ."),
    (10, "The mother that criticises him recognises the queen .",
     "De moeder die hem bekritiseert , herkent de koningin ."),
    (10, "The girl that avoids us forgets the leader .",
     "Het meisje dat ons vermijdt , vergeet de leider ."),
]


@pytest.mark.parametrize("template,en,nl", EXAMPLES)
def test_rule_based_dutch(template, en, nl):
    s = T.parse(en)
    assert s.template == template
    assert T.dutch(s) == nl
    assert T.english(s) == en


def test_every_template_round_trips():
    rng = random.Random(0)
    for t in T.TEMPLATES:
        space = T.space(t)
        for s in rng.sample(space, 200):
            assert T.parse(T.english(s)) == s, T.english(s)


def test_space_follows_the_released_constraints():
    sizes = {t: len(T.space(t)) for t in T.TEMPLATES}
    # 40 subjects (20 person nouns x 2 numbers) x 7 verbs x 7 elite objects
    assert sizes[1] == 40 * 7 * 7
    four = T.space(4)
    assert all(s.subj.noun != s.subj2.noun and s.subj.number == s.subj2.number for s in four)
    assert all(s.subj.noun != s.emb_subj.noun and s.emb_subj.number == "pl" for s in T.space(6))
    assert all(s.verb != s.emb_verb for s in T.space(10))
    assert all(s.subj2.number == "pl" and s.subj.noun.category == "group" for s in T.space(5))


def test_parse_errors_name_the_word():
    with pytest.raises(T.TemplateError, match="unknown word 'directer' \\(word 5\\)"):
        T.parse("The poet forgets the directer .")
    with pytest.raises(T.TemplateError, match="'forgets' does not agree with the subject "
                                              "'the poets' \\(expected 'forget'\\)"):
        T.parse("The poets forgets the king .")
    with pytest.raises(T.TemplateError, match="expected a transitive verb at word 3, got 'king'"):
        T.parse("The poet king forgets the king .")
    with pytest.raises(T.TemplateError, match="ends in ' .'"):
        T.parse("The poet forgets the king")
    with pytest.raises(T.TemplateError, match="'of' takes a plural noun"):
        T.parse("The team of poet near the car forgets the king .")
    with pytest.raises(T.TemplateError, match="does not agree with the coordinated subject"):
        T.parse("The poet and the child understands the mayor .")


def test_clauses_attach_to_noun_phrases():
    eat = T.Clause("that eats the doughnut", "that eat the doughnut",
                   "de donut eet", "de donut eten", name="doughnut")
    s = T.parse("The poet criticises the king that eats the doughnut .", clauses=[eat])
    assert s.obj.clause == eat
    assert T.dutch(s) == "De dichter bekritiseert de koning die de donut eet ."
    s = T.parse("The farmer sees that the lawyers that eat the doughnut cry .", clauses=[eat])
    assert T.dutch(s) == "De boer ziet dat de advocaten die de donut eten , huilen ."
    girl = T.parse("The girl that eats the doughnut forgets the king .", clauses=[eat])
    assert T.dutch(girl) == "Het meisje dat de donut eet , vergeet de koning ."
    with pytest.raises(T.TemplateError, match="has no Dutch"):
        T.dutch(T.parse("The poet criticises the king that eats the doughnut .",
                        clauses=[T.Clause("that eats the doughnut", "that eat the doughnut")]))


def test_released_defect_is_recognised_narrowly():
    en = "The girl that laughs admires the president ."
    ours = T.translate(en)
    assert ours == "Het meisje dat lacht , bewondert de president ."
    assert T.released_defect(en, "Het meisje die dat , bewondert de president .", ours)
    assert not T.released_defect(en, "Het meisje die dat , bewondert de koning .", ours)
    assert not T.released_defect(en, "Het meisje die lacht , bewondert de president .", ours)


def test_lexicon_errors_name_file_and_line(tmp_path):
    head = "\t".join(lexicon.HEADER)
    good = lexicon.LEXICON_PATH.read_text(encoding="utf-8")
    cases = [
        (good.replace(head, "category\ten"), "line 6: expected the header"),
        (good + "animal\tdog\tdogs\thond\thonden\tde\n", "unknown category 'animal'"),
        (good + "people\tcook\tcooks\tkok\tkoks\tthe\n", "needs the Dutch article"),
        (good + "people\tcook\tcooks\tkok\n", "4 columns, expected 6"),
        (good + "people\tpoet\tpoets\tdichter\tdichters\tde\n", "people 'poet' listed twice"),
        (good + "adverb\tslowly\tslowlies\tlangzaam\t-\t-\n", "adverb .slowly. has one form"),
    ]
    for text, message in cases:
        p = tmp_path / "lex.tsv"
        p.write_text(text, encoding="utf-8")
        lexicon.load.cache_clear()
        with pytest.raises(DataError, match=message) as e:
            lexicon.load(p)
        assert str(p) in str(e.value)
    lexicon.load.cache_clear()


def test_generate_is_deterministic_with_a_manifest(tmp_path):
    a = generate.generate(tmp_path / "a", seed=3, per_template=50)
    b = generate.generate(tmp_path / "b", seed=3, per_template=50)
    c = generate.generate(tmp_path / "c", seed=4, per_template=50)
    assert a["sha256"] == b["sha256"] and a["sha256"] != c["sha256"]
    assert a["counts"] == {f"synthetic_{t}": 50 for t in T.TEMPLATES}
    en = (tmp_path / "a/synthetic/synthetic_9.en").read_text().splitlines()
    nl = (tmp_path / "a/synthetic/synthetic_9.nl").read_text().splitlines()
    assert len(set(en)) == 50 and [T.translate(e) for e in en] == nl
    full = generate.generate(tmp_path / "d", seed=1, templates=[1])
    assert full["counts"] == {"synthetic_1": 1960}
    assert full["dropped"] == {"synthetic_1: the template has only 1960 sentences": 1040}
    again = generate.generate(tmp_path / "d", seed=1, templates=[1])   # stored: not rewritten
    assert again["created"] == full["created"]


def test_translate_command():
    out, err = io.StringIO(), io.StringIO()
    rc = translate.translate_lines(["The poet criticises the king .\n", "The poet eats .\n"],
                                   out, err)
    assert rc == 2 and out.getvalue() == "De dichter bekritiseert de koning .\n"
    assert "<stdin>: line 2: " in err.getvalue() and "unknown word 'eats'" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    rc = translate.translate_lines(["The poet eats .\n", "The poet criticises the king .\n"],
                                   out, err, keep_going=True)
    assert rc == 0 and out.getvalue() == "\nDe dichter bekritiseert de koning .\n"
    assert "1 of 2 line(s) could not be translated" in err.getvalue()


def test_released_dutch_is_reproduced():
    folder = reference_path("paradox", "synthetic")
    res = translate.check_released(folder)
    t = res["total"]
    assert t["coverage"] == 1.0 and t["mismatches"] == 0 and t["exact_rate"] == 1.0
    # the only differences: template 9 with a singular het-noun subject
    het = sum(1 for line in (folder / "synthetic_9.en").read_text().splitlines()
              if line.split()[1] in ("girl", "child", "victim"))
    assert t["defects"] == het > 0
    assert res["per_file"]["synthetic_9"]["defects"] == het
    json.dumps(res)
