"""The quick profile's synthetic NLI corpus: byte-identical for a seed, every sentence's
parse matches its words, each pair type keeps the property it is there for (structural
types keep the premise's bag of words, lexical types change it), the label shares, and
the adversary rules run on its parses."""
import json
from collections import Counter

from compsuite.data_prep.nli import adversaries as A
from compsuite.data_prep.nli import synthetic as S
from compsuite.data_prep.nli.snli import read_all


def bag(parse: str) -> Counter:
    from compsuite.data_prep.nli.snli import parse_tree

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
    for p in pairs[:200]:
        for text, tree in ((p.premise, p.premise_tree), (p.hypothesis, p.hypothesis_tree)):
            assert tree.leaves() == text.replace(",", " ,").replace(".", " .").split()


def test_pair_types_keep_their_property():
    pairs = S.generate_pairs(3000, 1, "train")
    kinds = Counter(p["type"] for p in pairs)
    assert set(kinds) == set(S.TYPES)
    for p in pairs:
        same = bag(p["sentence1_parse"]) == bag(p["sentence2_parse"])
        assert same == (S.TYPES[p["type"]][2] != "lexical"), p
        assert p["gold_label"] == S.TYPES[p["type"]][0]
    # the misleading structural types are rare beside the same-bag paraphrase
    structural = sum(kinds[k] for k, v in S.TYPES.items() if v[2] == "structural")
    assert 0.03 < structural / len(pairs) < 0.10 and kinds["paraphrase_fronting"] > 3 * structural
    swap = next(p for p in pairs if p["type"] == "role_swap")
    assert swap["sentence1"] != swap["sentence2"]
    neg = next(p for p in pairs if p["type"] == "negation")
    assert " does not " in neg["sentence2"] and "carrie " not in neg["sentence2"]


def test_adversary_rules_run_on_the_synthetic_parses(tmp_path):
    S.write(tmp_path / "d", 1, 10, 300, 10)
    m = A.build(tmp_path / "d" / "dev.jsonl", tmp_path / "adv", show=False)
    assert m["counts"]["soswap"] > 100
    first = json.loads((tmp_path / "adv" / "soswap.jsonl").read_text().splitlines()[0])
    assert first["gold_label"] == "contradiction" and bag(first["sentence1_parse"]) == \
        bag(first["sentence2_parse"])
