"""The quick profile's synthetic NLI corpus: byte-identical for a seed, every sentence's
parse matches its words, each pair type keeps the property it is there for (structural
types keep the premise's bag of words, lexical types change it; a moved adjective or
``with`` modifier and a role swap move exactly what they say), the shares of the types,
of the labels and of the long structural pairs per split (with the manifest's counts),
and the adversary rules run on its parses."""
import json
from collections import Counter

from compsuite.data_prep.nli import adversaries as A
from compsuite.data_prep.nli import synthetic as S
from compsuite.data_prep.nli.snli import parse_tree, read_all

STRUCTURAL = [k for k, v in S.TYPES.items() if v[2] == "structural"]


def bag(parse: str) -> Counter:
    return Counter(w.lower() for w in parse_tree(parse).leaves() if w.lower() not in {",", ".", "a", "an"})


def test_written_corpus_is_deterministic_and_readable(tmp_path):
    m = S.write(tmp_path / "a", 3, 600, 100, 100)
    S.write(tmp_path / "b", 3, 600, 100, 100)
    for split in ("train", "dev", "test"):
        assert (tmp_path / "a" / f"{split}.jsonl").read_bytes() == \
            (tmp_path / "b" / f"{split}.jsonl").read_bytes()
    assert m["counts"] == {"train": 600, "dev": 100, "test": 100}
    assert (tmp_path / "a" / "dev.jsonl").read_bytes() != (tmp_path / "a" / "test.jsonl").read_bytes()
    pairs, stats = read_all(tmp_path / "a" / "train.jsonl")
    assert len(pairs) == 600 and not stats.skipped
    for p in pairs[:300]:
        for text, tree in ((p.premise, p.premise_tree), (p.hypothesis, p.hypothesis_tree)):
            assert tree.leaves() == text.replace(",", " ,").replace(".", " .").split()
    # the manifest counts what the files hold
    rows = [json.loads(x) for x in (tmp_path / "a" / "test.jsonl").read_text().splitlines()]
    st = m["statistics"]
    assert st["types"]["test"] == dict(sorted(Counter(r["type"] for r in rows).items()))
    assert st["labels"]["test"] == dict(sorted(Counter(r["gold_label"] for r in rows).items()))
    assert st["long"]["test"] == dict(sorted(Counter(r["type"] for r in rows if r["long"]).items()))
    assert sum(st["types"]["train"].values()) == 600


def test_pair_types_keep_their_property():
    pairs = S.generate_pairs(4000, 1, "train")
    kinds = Counter(p["type"] for p in pairs)
    assert set(kinds) == set(S.TYPES)
    assert abs(sum(v[1] for v in S.TYPES.values()) - 1) < 1e-9
    for p in pairs:
        same = bag(p["sentence1_parse"]) == bag(p["sentence2_parse"])
        assert same == (S.TYPES[p["type"]][2] != "lexical"), p
        assert p["gold_label"] == S.TYPES[p["type"]][0]
        assert p["sentence1"] != p["sentence2"]
        assert p["long"] == (p["long"] and p["type"] in STRUCTURAL)
    # the misleading structural types are rare beside the same-bag paraphrases; among the
    # pairs whose hypothesis has exactly the premise's words, those that keep the meaning
    # are the majority, and no subject-object swap of a transitive verb (what SOSWAP
    # makes) is in the corpus
    structural = sum(kinds[k] for k in STRUCTURAL)
    same_bag_e = sum(kinds[k] for k, v in S.TYPES.items() if v[2] == "structural-same-label")
    assert 0.02 < structural / len(pairs) < 0.08 and same_bag_e > 5 * structural
    same_words = [p for p in pairs if sorted(S.leaves(p["sentence1_parse"]))
                  == sorted(S.leaves(p["sentence2_parse"]))]
    assert {p["type"] for p in same_words} == S.SAME_WORDS
    assert Counter(p["gold_label"] for p in same_words)["entailment"] > 0.75 * len(same_words)

    labels = Counter(p["gold_label"] for p in pairs)
    assert labels["entailment"] > labels["neutral"] > labels["contradiction"] > 0.1 * len(pairs)
    neg = next(p for p in pairs if p["type"] == "negation")
    assert " does not " in neg["sentence2"] and "carrie " not in neg["sentence2"]


def _np_strings(parse: str) -> list[str]:
    """The words of the subject NP and of the verb's NP or ``with`` PP complement."""
    s = parse_tree(parse).kids[0]
    out = []
    for child in s.kids:
        if child.label == "NP":
            out.append(" ".join(child.leaves()).lower())
        if child.label == "VP":
            vp = child
            while any(c.label == "VP" for c in vp.kids):      # does not VB ...
                vp = next(c for c in vp.kids if c.label == "VP")
            comp = next(c for c in vp.kids if c.label in ("NP", "PP"))
            out.append(" ".join(comp.leaves()[comp.label == "PP":]).lower())
    return out


def test_structural_types_move_what_they_say():
    pairs = S.generate_pairs(3000, 2, "test")
    swaps = [p for p in pairs if p["type"] == "reciprocal_swap"]
    for p in swaps:
        (ps, po), (hs, ho) = _np_strings(p["sentence1_parse"]), _np_strings(p["sentence2_parse"])
        assert (hs, ho) == (po, ps)
        assert any(f" {v} with " in p["sentence1"] for v in S.RECIPROCAL)
    seen = Counter()
    for p in pairs:
        t = p["type"]
        if t not in STRUCTURAL:
            continue
        seen[t, p["long"]] += 1
        (ps, po), (hs, ho) = _np_strings(p["sentence1_parse"]), _np_strings(p["sentence2_parse"])
        strip = lambda np: np.replace("an ", "a ")  # noqa: E731  (a/an follows the adjective)
        if t == "moved_modifier":
            # the ``with`` phrase leaves one noun phrase for the other, the rest stays
            assert ("with" in ps) != ("with" in po) and ("with" in hs) == ("with" in po), p
            assert strip(ps + " " + po).split().count("with") == 1
        elif t == "moved_adjective":
            # one adjective fewer on one side, one more on the other
            adj = lambda np: [w for w in np.split() if w in S.ADJECTIVES]  # noqa: E731
            assert len(adj(hs)) + len(adj(ho)) == len(adj(ps)) + len(adj(po))
            assert abs(len(adj(hs)) - len(adj(ps))) == 1, p
        if p["long"]:
            assert " with " in p["sentence1"] and p["sentence1"].count(" ") >= 10, p
    assert all(seen[t, lg] for t in ("moved_adjective", "moved_modifier") for lg in (False, True))


def test_long_structural_pairs_are_in_dev_and_test_only():
    def share(split):
        ps = [p for p in S.generate_pairs(6000, 1, split) if p["type"] in STRUCTURAL]
        return sum(p["long"] for p in ps) / len(ps)

    assert share("train") == 0
    assert 0.4 < share("test") < 0.6 and 0.4 < share("dev") < 0.6


def test_adversary_rules_run_on_the_synthetic_parses(tmp_path):
    S.write(tmp_path / "d", 1, 10, 400, 10)
    m = A.build(tmp_path / "d" / "dev.jsonl", tmp_path / "adv", show=False)
    assert m["counts"]["soswap"] > 100 and m["counts"]["addamod"] > 100
    first = json.loads((tmp_path / "adv" / "soswap.jsonl").read_text().splitlines()[0])
    assert first["gold_label"] == "contradiction" and bag(first["sentence1_parse"]) == \
        bag(first["sentence2_parse"])
