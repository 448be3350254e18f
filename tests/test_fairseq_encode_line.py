"""The binarisation's faster ``Dictionary.encode_line``
(compsuite/toolkits/fairseq/preprocess_many.py) against fairseq's own: the same tensors
(ids, dtype), the same ``consumer`` calls in order and the same dictionary additions, with
and without adding unknown words, reversed, with and without the end-of-sentence id."""
import pytest

pytest.importorskip("fairseq")

from fairseq.data import Dictionary  # noqa: E402

from compsuite.toolkits.fairseq.preprocess_many import fast_encode_line  # noqa: E402

LINES = ["the cat sat on the mat", "  a  b\tc ", "", "unknown words here the cat",
         "über naïve café ＡＢＣ"]


@pytest.mark.parametrize("add", [True, False])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("eos", [True, False])
def test_fast_encode_line_returns_what_fairseqs_does(add, reverse, eos):
    fast = fast_encode_line()
    ours, theirs = Dictionary(), Dictionary()
    for d in (ours, theirs):
        d.add_symbol("the")
    got, want = [], []
    for line in LINES:
        a = fast(ours, line, add_if_not_exist=add, reverse_order=reverse, append_eos=eos,
                 consumer=lambda w, i: got.append((w, i)))
        b = theirs.encode_line(line, add_if_not_exist=add, reverse_order=reverse,
                               append_eos=eos, consumer=lambda w, i: want.append((w, i)))
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert got == want and got
    assert ours.symbols == theirs.symbols and ours.count == theirs.count
