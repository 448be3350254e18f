"""SGET preprocessing: the released format's reader, Sudachi segmentation, the English
punctuation split, marker stripping and detokenisation, deterministic BPE, `prepare` end
to end on hand-made files in the released format, and agreement with the released
encoded development files (skipped, naming the path, when ``../shared/reference`` is
absent)."""
import json
import unicodedata
from pathlib import Path

import pytest

from conftest import reference_path

from compsuite.data_prep.sget import preprocess as pp
from compsuite.foundation.errors import DataError

# ----------------------------------------------------------------------------- hand-made data
NOUNS = [("dog", "犬"), ("cat", "猫"), ("teacher", "教師"), ("girl", "少女"), ("boy", "少年"),
         ("cake", "ケーキ"), ("book", "本"), ("cup", "カップ"), ("key", "鍵"), ("box", "箱")]
VERBS = [("found", "見つけた"), ("saw", "見た"), ("broke", "壊した"), ("liked", "好きだった"),
         ("helped", "助けた")]


def _pairs(n: int, offset: int = 0) -> list[str]:
    """``n`` made-up lines in the released format (english, japanese, pattern)."""
    out = []
    for k in range(offset, offset + n):
        (e1, j1), (e2, j2) = NOUNS[k % 10], NOUNS[(k * 3 + 1) % 10]
        ev, jv = VERBS[k % 5]
        obj = "が" if ev == "liked" else "を"
        if k % 7 == 3:
            out.append(f"What did the {e1} find?\t{j1}が何を見つけたか？\tin_distribution")
        else:
            out.append(f"The {e1} {ev} the {e2}.\t{j1}が{j2}{obj}{jv}。\tin_distribution")
    return out


@pytest.fixture
def released(tmp_path):
    src = tmp_path / "released"
    src.mkdir()
    sizes = {"train": 120, "dev": 12, "test": 12, "gen": 12}
    offset = 0
    for split, n in sizes.items():
        lines = _pairs(n, offset)
        if split == "gen":
            lines = [line.rsplit("\t", 1)[0] + "\tsubj_to_obj_common" for line in lines]
        (src / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        offset += n
    return src


SMALL = {"en_vocab": 60, "ja_vocab": 50}  # the corpus above is far too small for 300 / 650


# ----------------------------------------------------------------------------- reader
def test_read_released(released):
    rows = pp.read_released(released / "gen.txt")
    assert len(rows) == 12 and rows[0].pattern == "subj_to_obj_common"
    assert rows[0].english.startswith("The ") and rows[0].japanese.endswith("。")


@pytest.mark.parametrize("bad, why", [
    ("The dog ran.\t犬が走った。", "expected 3 tab-separated columns"),
    ("The dog ran.\t犬が走った。\tin_distribution\textra", "found 4"),
    ("The dog ran.\t\tin_distribution", "empty japanese"),
])
def test_malformed_line_names_file_and_line(tmp_path, bad, why):
    f = tmp_path / "dev.txt"
    f.write_text("The cat ran.\t猫が走った。\tin_distribution\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        pp.read_released(f)
    assert str(f) in str(e.value) and "line 2" in str(e.value) and why in str(e.value)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        pp.read_released(tmp_path / "absent.txt")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty"):
        pp.read_released(tmp_path / "empty.txt")


# ----------------------------------------------------------------------------- pre-tokenisation
def test_segment_ja_words():
    assert pp.segment_ja(["犬がケーキを見つけた。", "少女が本を知っていた。"]) == [
        "犬 が ケーキ を 見つけ た 。", "少女 が 本 を 知っ て い た 。"]
    # split mode C keeps compounds that mode A splits
    assert pp.segment_ja(["裁判官が走った。"]) == ["裁判官 が 走っ た 。"]
    assert pp.segment_ja(["裁判官が走った。"], mode="A")[0].startswith("裁判 官")


def test_split_punct_en():
    assert pp.split_punct_en(["The dog that a cat knew , the boy found.", "Who ran?",
                              "A dog  ran ."]) == [
        "The dog that a cat knew , the boy found .", "Who ran ?", "A dog ran ."]


def test_strip_marker_and_detokenise():
    assert pp.strip_marker(["▁カ", "メ", "▁", "が", "▁。"]) == ["カ", "メ", "が", "。"]
    assert pp.detokenise(["カ メ が 知っ て い た 本 は 、 子供 が 変え た 。", "誰 が 来 た か ?"]) == [
        "カメが知っていた本は、子供が変えた。", "誰が来たか?"]
    assert pp.detokenise(["▁The ▁d og ▁ran ▁."], "en") == ["The dog ran ."]
    with pytest.raises(ValueError, match="word-boundary marker"):
        pp.detokenise(["The d og ran ."], "en")


# ----------------------------------------------------------------------------- BPE
def test_train_bpe_is_deterministic_and_encodes_like_the_release(tmp_path, released):
    rows = pp.read_released(released / "train.txt")
    ja = pp.segment_ja([r.japanese for r in rows])
    a = pp.train_bpe(ja, tmp_path / "a", 50, 0.995)
    b = pp.train_bpe(ja, tmp_path / "b", 50, 0.995)
    assert a.read_bytes() == b.read_bytes()
    assert (tmp_path / "a.vocab").read_text(encoding="utf-8").splitlines()[0] == "<unk>\t0"
    enc = pp.encode(["犬がケーキを見つけたか？"], a, "ja")[0]
    assert "▁" not in enc and "  " not in enc and enc == enc.strip()
    assert "".join(enc.split()) == unicodedata.normalize("NFKC", "犬がケーキを見つけたか？")
    kept = pp.encode(["犬がケーキを見つけた。"], a, "ja", keep_marker=True)[0]
    assert kept.startswith("▁") and pp.detokenise([kept])[0] == "犬がケーキを見つけた。"
    # English: punctuation split off before BPE, so it is its own piece
    en = pp.train_bpe(pp.split_punct_en([r.english for r in rows]), tmp_path / "en", 60, 1.0)
    assert pp.encode(["The dog found the cake."], en, "en")[0].endswith(" .")
    with pytest.raises(ValueError, match="could not train"):
        pp.train_bpe(ja, tmp_path / "c", 5, 0.995)


# ----------------------------------------------------------------------------- prepare
def test_prepare_end_to_end_and_reproducible(tmp_path, released):
    out1, out2 = tmp_path / "p1", tmp_path / "p2"
    m1 = pp.prepare(released, out1, seed=3, **SMALL)
    m2 = pp.prepare(released, out2, seed=3, **SMALL)
    assert m1["sha256"] == m2["sha256"]  # byte-identical data and models
    for split, n in (("train", 120), ("dev", 12), ("test", 12), ("gen", 12)):
        for lang in ("en", "ja"):
            lines = (out1 / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            assert len(lines) == n and not any("▁" in line for line in lines)
        assert (out1 / "text" / f"{split}.pattern").read_text().splitlines()[0] in (
            "in_distribution", "subj_to_obj_common")
    for f in ("sp/en.model", "sp/ja.model", "sp/en.vocab", "sp/ja.vocab", "text/dev.ja"):
        assert f in m1["sha256"]
    man = json.loads((out1 / "manifest.json").read_text())
    assert man["counts"]["train"] == 120 and man["args"]["ja_vocab"] == 50
    assert set(pp.PACKAGES) <= set(man["versions"]) and man["versions"]["sentencepiece"]
    assert man["statistics"]["ja"]["pieces"] == 50
    # the encoded Japanese detokenises to the plain text (NFKC); nothing named raw/
    enc = (out1 / "dev.ja").read_text(encoding="utf-8").splitlines()
    text = (out1 / "text" / "dev.ja").read_text(encoding="utf-8").splitlines()
    assert pp.detokenise(enc) == [unicodedata.normalize("NFKC", r) for r in text]
    assert not (out1 / "raw").exists()
    # a finished folder is left alone; force redoes it
    stamp = (out1 / "dev.ja").stat().st_mtime_ns
    assert pp.prepare(released, out1, seed=3, **SMALL)["sha256"] == m1["sha256"]
    assert (out1 / "dev.ja").stat().st_mtime_ns == stamp


def test_a_version_1_folder_is_redone_and_its_raw_text_removed(tmp_path, released):
    """Version 1 wrote the plain text to raw/: such a folder is not taken as finished,
    and the files its manifest listed under raw/ go (nothing else there does)."""
    out = tmp_path / "p"
    m = pp.prepare(released, out, seed=3, **SMALL)
    man = json.loads((out / "manifest.json").read_text())
    (out / "raw").mkdir()
    for rel in [r for r in man["sha256"] if r.startswith("text/")]:
        (out / "raw" / Path(rel).name).write_bytes((out / rel).read_bytes())
    (out / "raw" / "mine.txt").write_text("not the preparation's\n")
    man["generator_version"] = "1"
    man["sha256"] = {r.replace("text/", "raw/", 1): d for r, d in man["sha256"].items()}
    (out / "manifest.json").write_text(json.dumps(man))
    m2 = pp.prepare(released, out, seed=3, **SMALL)
    assert m2["generator_version"] == pp.VERSION and m2["sha256"] == m["sha256"]
    assert [p.name for p in (out / "raw").iterdir()] == ["mine.txt"]


def test_prepare_errors(tmp_path, released):
    (released / "test.txt").write_text("The dog ran.\t犬が走った。\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"test\.txt: line 1"):
        pp.prepare(released, tmp_path / "out", **SMALL)
    (released / "gen.txt").unlink()
    with pytest.raises(DataError, match="gen.txt: no such file"):
        pp.prepare(released, tmp_path / "out", splits=("train", "gen"), **SMALL)
    with pytest.raises(ValueError, match="train"):
        pp.prepare(released, tmp_path / "out", splits=("dev",), **SMALL)


def test_command_line(tmp_path, released, capsys):
    assert pp.main(["--from-released", str(released), "--out", str(tmp_path / "o"),
                    "--en-vocab", "60", "--ja-vocab", "50"]) == 0
    assert "train 120" in capsys.readouterr().out
    assert (tmp_path / "o" / "gen.ja").is_file()


# ----------------------------------------------------------------------------- the release
def _released_dev(n=None):
    dev = reference_path("sget", "dev.txt")
    enc_en = reference_path("sget", "dev_en_encoded_sp.txt")
    enc_ja = reference_path("sget", "dev_ja_encoded_sp.txt")
    rows = pp.read_released(dev)[:n]
    en = enc_en.read_text(encoding="utf-8").splitlines()[:n]
    ja = enc_ja.read_text(encoding="utf-8").splitlines()[:n]
    return rows, en, ja


def _boundaries(tokens):
    out, p = set(), 0
    for t in tokens:
        p += len(t)
        out.add(p)
    return out


def test_sudachi_reproduces_released_word_boundaries():
    """Every Sudachi word boundary is a piece boundary of the released encoding: the
    released pieces concatenate, within each word, to exactly our words."""
    rows, _, ja = _released_dev(2000)
    words = pp.segment_ja([unicodedata.normalize("NFKC", r.japanese) for r in rows])
    agree = sum(_boundaries(w.split()) <= _boundaries(p.split()) and
                "".join(w.split()) == "".join(p.split()) for w, p in zip(words, ja))
    print(f"Sudachi (mode C) word boundaries agree on {agree}/{len(rows)} development lines")
    assert agree / len(rows) >= 0.99


def test_released_format():
    """No marker, single spaces; the Japanese pieces spell the NFKC sentence; English
    pieces spell the sentence and punctuation is always a piece of its own."""
    rows, en, ja = _released_dev()
    for r, e, j in zip(rows, en, ja):
        assert "▁" not in e + j and "  " not in e + j
        assert "".join(j.split()) == unicodedata.normalize("NFKC", r.japanese)
        assert "".join(e.split()) == "".join(r.english.split())
        pieces = e.split()
        assert all(p in ".,?" or not any(c in ".,?" for c in p) for p in pieces)
        assert pieces[-1] == pp.split_punct_en([r.english])[0].split()[-1]


def test_bpe_trained_on_dev_comes_close(tmp_path):
    """Stand-in for the training text: BPE trained on the development set itself gets
    most lines right (reported, not exact: the merges depend on the training text)."""
    rows, en, ja = _released_dev()
    res = {}
    for lang, col, ref, vocab, cov in (("ja", [r.japanese for r in rows], ja, 650, 0.995),
                                       ("en", [r.english for r in rows], en, 300, 1.0)):
        pre = pp.pretokenise(col, lang)
        model = pp.train_bpe(pre, tmp_path / lang, vocab, cov)
        ours = pp.encode(pre, model, lang, pretokenised=True)
        res[lang] = sum(a == b for a, b in zip(ours, ref)) / len(ref)
    print(f"BPE trained on dev: line-exact ja {res['ja']:.3f}, en {res['en']:.3f}")
    assert res["ja"] > 0.7 and res["en"] > 0.5
