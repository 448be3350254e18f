"""The two toolkit writers, the checks before them, and manifests."""
import os
import shutil
import stat

import pytest

from compsuite.toolkits.fairseq.data import write_fairseq
from compsuite.toolkits.onmt.data import write_onmt
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_aligned, write_lines
from compsuite.foundation.manifest import is_complete


def test_fairseq_binarisation(small_corpus, tmp_path):
    out = tmp_path / "bin"
    m = write_fairseq(small_corpus, out)
    for name in ("dict.src.txt", "dict.tgt.txt", "train.src-tgt.src.bin", "test.src-tgt.tgt.idx"):
        assert (out / name).is_file()
    assert m["counts"]["train"] == 1700 and "fairseq-fixed" in m["versions"]
    # fairseq's own reader gets the sentences back
    from fairseq.data import Dictionary, data_utils

    d = Dictionary.load(str(out / "dict.src.txt"))
    ds = data_utils.load_indexed_dataset(str(out / "valid.src-tgt.src"), d)
    first = (small_corpus / "valid.src").read_text().splitlines()[0]
    assert d.string(ds[0][:-1]) == first  # without </s>
    assert write_fairseq(small_corpus, out) == {"skipped": True}


def test_onmt_text_and_vocab(small_corpus, tmp_path):
    out = tmp_path / "onmt"
    m = write_onmt(small_corpus, out)
    vocab = dict(line.split("\t") for line in (out / "src.vocab").read_text().splitlines())
    assert "," in vocab and "append" in vocab
    tgt_vocab = (out / "tgt.vocab").read_text()
    assert "append" not in tgt_vocab
    assert (out / "test.src").read_text() == (small_corpus / "test.src").read_text()
    assert is_complete(out, "onmt_build_vocab", m["args"])
    (out / "src.vocab").write_text("tampered\t1\n")
    assert not is_complete(out, "onmt_build_vocab", m["args"])


def _copy(corpus, tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(corpus, raw)
    return raw


def test_unknown_token_named_with_file_and_line(small_corpus, tmp_path):
    raw = _copy(small_corpus, tmp_path)
    lines = (raw / "test.src").read_text().splitlines()
    lines[4] = "copy ZZ99"
    write_lines(raw / "test.src", lines)
    for writer in (write_fairseq, write_onmt):
        with pytest.raises(DataError, match=r"test.src: line 5: token 'ZZ99'"):
            writer(raw, tmp_path / writer.__name__)
    write_onmt(raw, tmp_path / "ok", allow_unknown=True)


def test_mismatched_line_counts_refused(small_corpus, tmp_path):
    raw = _copy(small_corpus, tmp_path)
    lines = (raw / "valid.tgt").read_text().splitlines()
    write_lines(raw / "valid.tgt", lines[:-1])
    with pytest.raises(DataError, match=r"valid.src has 100 lines but .*valid.tgt has 99"):
        write_fairseq(raw, tmp_path / "bin")
    with pytest.raises(DataError, match="line counts differ"):
        read_aligned(raw / "valid.src", raw / "valid.tgt")


def test_atomic_write_leaves_no_partial_file(tmp_path):
    def lines():
        yield "ok"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_lines(tmp_path / "f.txt", lines())
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(DataError, match="newline"):
        write_lines(tmp_path / "g.txt", ["a\nb"])


def test_fairseq_extra_evaluation_sets(small_corpus, tmp_path):
    """Further evaluation sets become fairseq subsets test1, test2, ... (manifest maps them)."""
    raw = _copy(small_corpus, tmp_path)
    for side in ("src", "tgt"):
        shutil.copyfile(raw / f"valid.{side}", raw / f"twin.{side}")
    m = write_fairseq(raw, tmp_path / "bin", splits=("train", "valid", "test", "twin"))
    assert m["fairseq_subsets"] == {"test": "test", "twin": "test1"}
    assert (tmp_path / "bin" / "test1.src-tgt.src.bin").is_file()


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_written_files_are_as_readable_as_the_umask_allows(tmp_path, mask, mode):
    """Results and data written atomically get the mode an ordinary open would give
    them (the temporary file is private only until it is complete)."""
    from compsuite.eval.reports.tables import write_report
    from compsuite.foundation.io import atomic_open, current_umask, write_text
    from compsuite.runner import stored

    old = os.umask(mask)
    try:
        assert current_umask() == mask
        write_lines(tmp_path / "data.txt", ["a", "b"])
        write_text(tmp_path / "t.txt", "x")
        with atomic_open(tmp_path / "b.bin", "wb") as fh:
            fh.write(b"\x00")
        stored(tmp_path / "u" / "result.json", lambda: {"a": 1})
        written = write_report(tmp_path / "results", {"x": 1}, ["# T"])
    finally:
        os.umask(old)
    files = [tmp_path / "data.txt", tmp_path / "t.txt", tmp_path / "b.bin",
             tmp_path / "u" / "result.json", *written]
    assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {
        f.name: mode for f in files}
