"""Paradox of compositionality, test sets: every condition's construction (what changes
and what must not), determinism and the manifest, semi-natural and natural inputs
(hand-made files in the released formats; the released semi-natural files when
``../shared/reference`` is there), errors naming file and line, and rule-based "perfect"
translations, which score 1.0 on every consistency test."""
import pytest

from conftest import reference_path

from compsuite.data_prep.paradox import items, templates as T, testsets as S, translate
from compsuite.eval.paradox import metrics as P
from compsuite.foundation.errors import DataError

SEMI = {  # hand-made lines in the released semi-natural shapes (templates 1-10)
    1: ["The painters want to submit a report on the state of the roads .",
        "The baker wants to visit the museum of modern art in the city ."],
    2: ["The men are going to have to leave early ."] * 2,
    3: ["The doctors keep part of the money for the costs of the project ."] * 2,
    4: ["The uncle reads an article about the growth of trees in parks with lakes ."] * 2,
    5: ["The aunts read an article about the level of noise that can be heard ."] * 2,
    6: ["An article about the history of bridges in the north of Europe is read by the lawyer ."] * 2,
    7: ["An article about the price of bread , which was high , is read by the doctors ."] * 2,
    8: ["Did the friend hear about a strip of land on the shore of the lake ?"] * 2,
    9: ["Did the teacher hear about the march on the city which happened on Sunday ?"] * 2,
    10: ["Did the lawyers hear about a plan to examine the state of the roads ?"] * 2,
}


@pytest.fixture
def semi_dir(tmp_path):
    d = tmp_path / "semi"
    d.mkdir()
    for t, lines in SEMI.items():
        (d / f"semi_natural_{t}.en").write_text("\n".join(lines) + "\n")
    return d


@pytest.fixture
def natural_dir(tmp_path):
    d = tmp_path / "natural"
    (d / "substitutivity").mkdir(parents=True)
    (d / "overgeneralisation").mkdir()
    (d / "substitutivity" / "2-1.en").write_text("I ate a doughnut .\nTwo doughnuts , please .\n")
    (d / "substitutivity" / "2-2.en").write_text("I ate a donut .\nTwo donuts , please .\n")
    (d / "overgeneralisation" / "10.en").write_text("She knew it by heart .\n"
                                                    "He learnt the poem by heart .\n")
    # the second reference is itself literal ('hart'): the authors leave such lines out
    (d / "overgeneralisation" / "10.nl").write_text("Ze kende het uit het hoofd .\n"
                                                    "Hij leerde het gedicht uit zijn hart .\n")
    return d


def _one_word_changed(a: str, b: str) -> bool:
    wa, wb = a.split(), b.split()
    return len(wa) == len(wb) and sum(x != y for x, y in zip(wa, wb)) == 1


def test_np_and_vp_change_one_noun_keeping_number(semi_dir):
    built = S.build(1, 20, semi_natural=semi_dir, tests=["np_vp"])["np_vp"]
    by = {}
    for data, t, item, cond, ids in built.samples:
        a, b = (built.inputs[int(i)] for i in ids.split(","))
        assert _one_word_changed(a, b), (a, b)
        by.setdefault((data, cond), []).append((int(t) if t != "-" else t, a, b))
        if data == "synthetic":
            sa, sb = T.parse(a), T.parse(b)    # still template sentences, agreement kept
            assert sa.template == sb.template == int(t)
            if cond == "VP" and sa.template not in (6, 7, 8):
                assert sa.subj == sb.subj and sa.obj != sb.obj
            if cond == "NP" and sa.template != 5:
                assert sa.subj.number == sb.subj.number and sa.subj.noun != sb.subj.noun
    assert {k: len(v) for k, v in by.items()} == {("synthetic", "NP"): 200, ("synthetic", "VP"): 200,
                                                  ("semi_natural", "NP"): 20}
    # two lines per hand-made semi-natural file: 18 fewer than asked for, per template
    assert built.dropped == {f"semi_natural_{t}.en has 2 lines, fewer than 20": 18
                             for t in range(1, 11)}


def test_conjunctions(semi_dir):
    built = S.build(2, 10, semi_natural=semi_dir, tests=["s_conj_s"])["s_conj_s"]
    for data, t, item, cond, ids in built.samples:
        a, b = (built.inputs[int(i)] for i in ids.split(","))
        s1a, s2a = a.split(" , and ")
        s1b, s2b = b.split(" , and ")
        assert s2a == s2b                              # the second conjunct is untouched
        if data == "semi_natural" and int(t) >= 8:
            assert a.startswith("Did ") and s2a.startswith("did ") and a.endswith(" ?")
        else:
            assert a.endswith(" .") and s2a[:1].islower()
        if data == "synthetic":
            first_a, first_b = T.parse(s1a + " ."), T.parse(s1b + " .")
            assert first_a.template != int(t)          # S1 from another template than S2
            if cond == "S1'":
                assert first_a.template == first_b.template and _one_word_changed(s1a, s1b)
            else:
                assert first_b.template not in (first_a.template, int(t))


def test_substitutivity_and_idioms(semi_dir, natural_dir):
    built = S.build(3, 5, semi_natural=semi_dir, natural=natural_dir,
                    tests=["substitutivity", "overgeneralisation"])
    sub = built["substitutivity"]
    syns = {s.name: s for s in items.synonyms()}
    datas = set()
    for data, t, item, cond, ids in sub.samples:
        a, b = (sub.inputs[int(i)] for i in ids.split(","))
        syn = syns[item]
        datas.add(data)
        if data != "natural":
            assert a.replace(syn.british, syn.american) == b and syn.british in a
    assert datas == {"synthetic", "semi_natural", "natural"}
    assert sum(1 for s in sub.samples if s[0] == "natural") == 2       # the doughnut file
    assert all(s[2] == "doughnut" for s in sub.samples if s[0] == "natural")
    og = built["overgeneralisation"]
    counts = {}
    for data, t, item, cond, ids in og.samples:
        line = og.inputs[int(ids)]
        assert item.lower() in line.lower()
        counts[data] = counts.get(data, 0) + 1
        if data == "random":
            assert len(line.split()) == 10 + len(item.split())
        if data == "synthetic":
            assert 'that said " ' in line
    assert counts == {"synthetic": 20 * 10 * 5, "semi_natural": 20 * 10 * 2, "random": 20 * 5,
                      "natural": 1}
    assert og.dropped["natural idiom sentences whose reference is itself literal"] == 1
    assert [og.inputs[int(s[4])] for s in og.samples if s[0] == "natural"] == [
        "She knew it by heart ."]


def test_write_is_deterministic_and_read_back(tmp_path, semi_dir):
    a = S.write(tmp_path / "a", 1, 5, semi_natural=semi_dir)
    b = S.write(tmp_path / "b", 1, 5, semi_natural=semi_dir)
    c = S.write(tmp_path / "c", 2, 5, semi_natural=semi_dir)
    assert a["sha256"] == b["sha256"] != c["sha256"]
    assert a["counts"]["np_vp"]["synthetic/NP"] == 50
    inputs, samples = S.read_samples(tmp_path / "a", "s_conj_s")
    assert len(samples) == a["counts"]["s_conj_s"]["samples"] and samples[0]["line"] == 2
    tsv = tmp_path / "a" / "np_vp.tsv"
    lines = tsv.read_text().splitlines()
    tsv.write_text("\n".join(lines[:3] + [lines[3].rsplit("\t", 1)[0] + "\t0,99999"]) + "\n")
    with pytest.raises(DataError, match="np_vp.tsv: line 4: an input number outside"):
        S.read_samples(tmp_path / "a", "np_vp")


def test_bad_inputs_name_the_file(tmp_path, semi_dir, natural_dir):
    (semi_dir / "semi_natural_4.en").write_text("The chair reads an article about it .\n")
    with pytest.raises(DataError, match="semi_natural_4.en: no person noun"):
        S.build(1, 2, semi_natural=semi_dir, tests=["np_vp"])
    (semi_dir / "semi_natural_4.en").unlink()
    with pytest.raises(DataError, match="semi_natural_4.en: missing"):
        S.build(1, 2, semi_natural=semi_dir, tests=["np_vp"])
    (natural_dir / "substitutivity" / "2-2.en").write_text("I ate a donut .\n")
    with pytest.raises(DataError, match="2-1.en has 2 lines, .*2-2.en has 1"):
        S.build(1, 2, natural=natural_dir, tests=["substitutivity"])


def _perfect(inputs):
    return [translate.translate_any(x, clauses=CLAUSES) for x in inputs]


CLAUSES = [s.clause(k) for s in items.synonyms() for k in (1, 2)]


@pytest.mark.parametrize("test", ["np_vp", "s_conj_s", "substitutivity"])
def test_rule_based_translations_are_perfectly_consistent(test):
    built = S.build(5, 8, tests=[test])[test]
    samples = [{"data": d, "template": t, "item": i, "condition": c,
                "inputs": [int(x) for x in ids.split(",")]} for d, t, i, c, ids in built.samples]
    hyps = _perfect(built.inputs)
    res = P.score_test(test, built.inputs, samples, hyps,
                       synonym_forms={s.name: s.forms for s in items.synonyms()})
    assert res["cells"] and all(c["score"] == 1.0 for c in res["cells"]), \
        [c for c in res["cells"] if c["score"] != 1.0][:3]
    assert all(s["mean_over_templates"] == 1.0 for s in res["summary"])
    # and a translator that ignores the change is inconsistent where a change must show
    if test == "np_vp":
        same = [hyps[s["inputs"][0]] for s in samples for _ in (0, 1)]
        flat = [None] * len(hyps)
        for s, (a, b) in zip(samples, zip(same[::2], same[1::2])):
            flat[s["inputs"][0]], flat[s["inputs"][1]] = a, b
        res = P.score_test(test, built.inputs, samples, flat)
        assert all(c["score"] == 0.0 for c in res["cells"])


def test_scoring_needs_one_translation_per_input():
    with pytest.raises(P.LengthError, match="3 inputs but 2 translations"):
        P.score_test("np_vp", ["a", "b", "c"], [], ["x", "y"])


def test_released_semi_natural_files_build():
    folder = reference_path("paradox", "semi_natural")
    built = S.build(1, 500, semi_natural=folder, tests=["np_vp", "substitutivity"],
                    synonym_items=items.synonyms()[:1])
    assert sum(1 for s in built["np_vp"].samples if s[0] == "semi_natural") == 5000
    assert sum(1 for s in built["substitutivity"].samples if s[0] == "semi_natural") == 5000


def test_natural_data_from_a_parallel_corpus(tmp_path, semi_dir):
    """`compsuite data paradox natural` on a hand-made corpus: synonym pairs both ways,
    idiom sentences with their Dutch, second conjuncts of the semi-natural lengths; the
    output feeds the builders."""
    from compsuite.data_prep.paradox import natural

    en = ["I ate a doughnut .", "Donuts are sweet .", "She knew it by heart .",
          "Nothing here .", "The red car is parked in the street outside ."]
    nl = ["Ik at een donut .", "Donuts zijn zoet .", "Ze kende het uit het hoofd .",
          "Niets hier .", "De rode auto staat buiten geparkeerd ."]
    # corpus sentences of every semi-natural length, so each template finds matches
    lengths = sorted({len(line.split()) for lines in SEMI.values() for line in lines})
    for n in lengths:
        for k in range(20):   # each corpus sentence is used once
            en.append(" ".join([f"word{k}"] * (n - 1) + ["."]))
            nl.append(" ".join([f"woord{k}"] * (n - 1) + ["."]))
    (tmp_path / "c.en").write_text("\n".join(en) + "\n")
    (tmp_path / "c.nl").write_text("\n".join(nl) + "\n")
    out = tmp_path / "nat"
    m = natural.extract(tmp_path / "c.en", tmp_path / "c.nl", out, semi_natural=semi_dir,
                        per_template=2)
    assert (out / "substitutivity" / "2-1.en").read_text().splitlines() == [
        "I ate a doughnut .", "Doughnuts are sweet ."]
    assert (out / "substitutivity" / "2-2.en").read_text().splitlines() == [
        "I ate a donut .", "Donuts are sweet ."]
    assert (out / "overgeneralisation" / "10.en").read_text() == "She knew it by heart .\n"
    assert (out / "overgeneralisation" / "10.nl").read_text() == "Ze kende het uit het hoofd .\n"
    assert m["counts"]["substitutivity/doughnut"] == 2 and m["counts"]["overgeneralisation/by heart"] == 1
    for t in range(1, 11):
        got = (out / "systematicity" / f"{t}.en").read_text().splitlines()
        assert got and all(len(g.split()) == len(SEMI[t][0].split()) for g in got)
    built = S.build(1, 2, natural=out, tests=["s_conj_s", "substitutivity", "overgeneralisation"])
    assert any(s[0] == "natural" for s in built["s_conj_s"].samples)
    (tmp_path / "c.nl").write_text("\n".join(nl[:-1]) + "\n")
    with pytest.raises(DataError, match="c.en has more lines"):
        natural.extract(tmp_path / "c.en", tmp_path / "c.nl", tmp_path / "nat2")
