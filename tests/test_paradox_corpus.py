"""Paradox of compositionality, the quick profile's training corpus: idioms at exactly
their frequencies and only as idioms, their keywords used literally elsewhere, a literal
translation of each idiom sentence holding a keyword while its idiomatic translation does
not, determinism, and the speech grammar's format errors."""
import pytest

from compsuite.data_prep.paradox import corpus as C, items, translate
from compsuite.data_prep.paradox.literal import overgeneralised
from compsuite.foundation.errors import DataError


def test_idioms_keywords_and_translations():
    ids = C.quick_idioms()
    freqs = [i.frequency for i in ids]
    assert freqs == sorted(freqs) and len(set(freqs)) == 4
    lex = C.speech_lexicon()
    for i in ids:
        literal = C.literal_dutch(i.sentence.split(), lex)
        assert overgeneralised(literal, i.keywords), literal      # word by word: literal
        assert not overgeneralised(i.dutch, i.keywords), i.dutch  # idiomatic: no keyword
    splits = C.build(1, n_train=3000, n_valid=100, n_test=100)
    assert {k: len(v) for k, v in splits.items()} == {"train": 3000, "valid": 100, "test": 100}
    train = splits["train"]
    for i in ids:
        with_idiom = [(e, d) for e, d in train if f'" {i.sentence} "' in e]
        assert len(with_idiom) == i.frequency
        assert all(f'" {i.dutch} "' in d for _, d in with_idiom)
        # the idiom's words in its order occur nowhere else
        assert sum(i.idiom in e for e, _ in train) == i.frequency
        assert not any(i.idiom in e for e, _ in splits["valid"] + splits["test"])
        # its keywords occur literally in other pairs
        # (the default 12,000 pairs: 840-930 literal pairs per keyword; here a quarter)
        assert sum(overgeneralised(d, i.keywords) for _, d in train) > 3 * i.frequency
    clauses = [s.clause(k) for s in items.synonyms() for k in (1, 2)]
    plain = [(e, d) for e, d in train if '"' not in e]
    assert len(plain) > 1000
    for e, d in plain:                              # rule-based Dutch, synonym clauses too
        assert translate.translate_any(e, clauses=clauses) == d
    quoted = [(e, d) for e, d in train if '"' in e]
    assert all((' zei " ' in d) != (' zeiden " ' in d) for _, d in quoted)


def test_corpus_is_deterministic(tmp_path):
    a = C.write(tmp_path / "a", 2, 2000, 50, 50)
    b = C.write(tmp_path / "b", 2, 2000, 50, 50)
    c = C.write(tmp_path / "c", 3, 2000, 50, 50)
    assert a["sha256"] == b["sha256"] != c["sha256"]
    assert a["statistics"]["idiom_pairs"] == {i.idiom: i.frequency for i in C.quick_idioms()}
    assert a["statistics"]["label"].startswith("scaled-down")


def test_speech_lexicon_errors(tmp_path):
    p = tmp_path / "speech.tsv"
    p.write_text("category\tenglish\tdutch\tarticle\nnoun\tcat\tkat\tthe\n")
    with pytest.raises(DataError, match="speech.tsv: line 2: noun 'cat' needs the article"):
        C.speech_lexicon(p)
    p.write_text("category\tenglish\tdutch\tarticle\nadverb\tfast\tsnel\t-\n")
    with pytest.raises(DataError, match="line 2: unknown category 'adverb'"):
        C.speech_lexicon(p)
    with pytest.raises(DataError, match="'dog' is not in the speech lexicon"):
        C.literal_dutch("I saw the formula by dog".split(), C.speech_lexicon())
