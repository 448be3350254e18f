import pytest

from compsuite.eval.metrics.embedding_distance import cosine_distance, synonym_distances


def test_cosine_distance_golden():
    assert cosine_distance([1, 0], [1, 0]) == pytest.approx(0.0)
    assert cosine_distance([1, 0], [0, 1]) == pytest.approx(1.0)
    assert cosine_distance([1, 0], [-1, 0]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        cosine_distance([0, 0], [1, 0])


def test_synonym_distances():
    vecs = {"repeat": [1, 0], "repeat_twin": [1, 0.1], "copy": [0, 1], "echo": [-1, 0]}
    d = synonym_distances(vecs, ["repeat", "copy", "echo"], ["repeat"])
    assert d["repeat"]["to_synonym"] == pytest.approx(1 - 1 / (1.01 ** 0.5))
    assert d["repeat"]["to_other_functions"] == pytest.approx((1.0 + 2.0) / 2)


@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_backends_read_source_embeddings(toolkit, tiny_runs, tiny_data):
    from compsuite.data_prep.pcfgset.grammar import FUNCTIONS
    from compsuite.models.protocol import Model
    from compsuite.toolkits import load_translator

    _, _, info = tiny_runs[toolkit]
    tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"))
    assert isinstance(tr, Model) and {"translate", "embed"} <= tr.capabilities
    vecs = tr.embed(list(FUNCTIONS) + ["repeat_twin"])
    assert set(vecs) == set(FUNCTIONS)  # no synonym in this vocabulary
    assert {len(v) for v in vecs.values()} == {16}
    d = synonym_distances(vecs, FUNCTIONS, ["repeat"])
    assert d["repeat"]["to_synonym"] is None and 0 <= d["repeat"]["to_other_functions"] <= 2
