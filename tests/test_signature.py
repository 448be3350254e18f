"""The one Signature type: its string on hand-made cases, reading it back, sacreBLEU's
own signatures kept, every metric's signature exactly the string it wrote before the
type existed, and the signatures the docs quote built by the type."""
import re

import pytest

from conftest import ROOT
from compsuite.eval.metrics.signature import Signature


@pytest.mark.parametrize("sig,text", [
    (Signature("m", "1"), "metric:m|version:1"),
    (Signature("m", 2, {"a": "x", "b": 3}), "metric:m|a:x|b:3|version:2"),
    (Signature("m", "1", {"b": "y", "a": "x"}), "metric:m|b:y|a:x|version:1"),   # order kept
    (Signature("m", "1", {"a": None, "eff": True, "lc": False}), "metric:m|eff:yes|lc:no|version:1"),
    (Signature("m", "1", {"a": "x"}, {"z": "after"}), "metric:m|a:x|version:1|z:after"),
    (Signature("bleu", "2.6.0", {"nrefs": 1, "tok": "13a"}, named=False),
     "nrefs:1|tok:13a|version:2.6.0"),
    (Signature("m", "1", {"consistent": "word_edit_distance==1", "norm": "het>de,dat>die"}),
     "metric:m|consistent:word_edit_distance==1|norm:het>de,dat>die|version:1"),
])
def test_format(sig, text):
    assert sig.format() == str(sig) == text


def test_equality_counts_order_and_every_part():
    a = Signature("m", "1", {"a": 1, "b": 2})
    assert a == Signature("m", "1", {"a": 1, "b": 2}) and hash(a) == hash(Signature("m", 1, {"a": 1, "b": 2}))
    assert a != Signature("m", "1", {"b": 2, "a": 1})
    assert a != Signature("m", "2", {"a": 1, "b": 2})
    assert a != Signature("m", "1", {"a": 1}, {"b": 2})
    assert a != Signature("m", "1", {"a": 1, "b": 2}, named=False)
    assert a != a.format()


def test_settings_are_read_only_and_name_and_version_reserved():
    sig = Signature("m", "1", {"a": 1})
    with pytest.raises(TypeError):
        sig.settings["a"] = 2
    for bad in ({"version": "2"}, {"metric": "x"}):
        with pytest.raises(ValueError, match="not a setting"):
            Signature("m", "1", bad)


def test_with_settings_changes_in_place_and_adds_after_the_version():
    sig = Signature("m", "1", {"a": "x", "b": "y"})
    assert sig.with_settings().format() == "metric:m|a:x|b:y|version:1"
    assert sig.with_settings(b="z", c="w").format() == "metric:m|a:x|b:z|version:1|c:w"
    assert sig.format() == "metric:m|a:x|b:y|version:1"       # the original is unchanged


@pytest.mark.parametrize("sig", [
    Signature("m", "1"),
    Signature("m", "1", {"a": "x", "b": "y"}, {"c": "z"}),
    Signature("bleu", "2.6.0", {"nrefs": "1", "tok": "13a"}, {"seg": "none"}, named=False),
])
def test_round_trips(sig):
    assert Signature.from_dict(sig.as_dict()) == sig
    assert Signature.parse(sig.format(), name=sig.name) == sig


def test_as_dict_is_plain_data():
    assert Signature("m", "1", {"a": "x"}).as_dict() == {"name": "m", "version": "1",
                                                         "settings": {"a": "x"}}
    assert Signature("b", "2", {}, {"s": "n"}, named=False).as_dict() == {
        "name": "b", "version": "2", "settings": {}, "extra": {"s": "n"}, "named": False}


@pytest.mark.parametrize("text,error", [
    ("metric:m|a:x", "no single version"),
    ("metric:m|version:1|version:2", "no single version"),
    ("metric:m|ax|version:1", "not key:value"),
    ("a:x|version:1", "names no metric"),
])
def test_parse_errors(text, error):
    with pytest.raises(ValueError, match=error):
        Signature.parse(text)


@pytest.mark.parametrize("make", ["BLEU", "CHRF"])
def test_sacrebleu_signature_kept(make):
    import sacrebleu.metrics

    metric = getattr(sacrebleu.metrics, make)()
    metric.corpus_score(["the cat sat"], [["the cat sat down"]])
    ours = Signature.from_sacrebleu(make.lower(), metric.get_signature())
    assert ours.format() == metric.get_signature().format() == str(metric.get_signature())
    assert ours.settings["nrefs"] == 1 and not ours.named
    assert ours.version == sacrebleu.__version__
    extended = Signature.from_sacrebleu("bleu", metric.get_signature(), norm="nfkc+nows", seg="none")
    assert extended.format() == metric.get_signature().format() + "|norm:nfkc+nows|seg:none"


# ----------------------------------------------------------------------------- every metric
def _today():
    """(signature as the metric builds it now, the string it wrote before Signature)."""
    from compsuite.eval.ctlpp.analyses import COMPATIBILITY_SIGNATURE
    from compsuite.eval.metrics import accuracy, consistency
    from compsuite.eval.nli import scores
    from compsuite.eval.paradox import metrics as paradox
    from compsuite.eval.pcfgset.evaluations import EMBEDDING_SIGNATURE
    from compsuite.eval.pcfgset.overgeneralisation import SIGNATURE as OVERGENERALISATION
    from compsuite.eval.sget.metrics import exact_signature

    labels = "labels:entailment,neutral,contradiction"
    words = "tok:words+punct|version:1"
    return [
        (accuracy.signature(), "metric:seq_acc|match:exact|tok:whitespace|case:mixed|version:1"),
        (consistency.signature(True), "metric:consistency|match:exact|tok:whitespace|case:mixed"
                                      "|incorrect:either-output|version:1"),
        (consistency.signature(False), "metric:consistency|match:exact|tok:whitespace|case:mixed"
                                       "|incorrect:n/a|version:1"),
        (consistency.EOS_PROBLEM_SIGNATURE,
         "metric:eos_problem|contained:contiguous|tok:whitespace|version:1"),
        (EMBEDDING_SIGNATURE, "metric:cosine_distance|embeddings:source-input|version:1"),
        (OVERGENERALISATION,
         "metric:overgeneralisation|match:exact|tok:whitespace|peak:max|version:1"),
        (COMPATIBILITY_SIGNATURE,
         "metric:accuracy|inputs:all-two-function-compositions|version:1"),
        (scores.signature("accuracy", lms="none", lambdas="0.5,0.6,0.7"),
         f"metric:nli-accuracy|{labels}|version:1|lambdas:0.5,0.6,0.7|lms:none"),
        (scores.signature("shares", order="E,C,N"),
         f"metric:nli-shares|{labels}|version:1|order:E,C,N"),
        (paradox.np_vp_signature(),
         f"metric:np_vp|consistent:word_edit_distance==1|norm:het>de,dat>die|{words}"),
        (paradox.conj_signature("source"),
         "metric:s_conj_s|consistent:second_conjunct_identical"
         f"|cut:after_en(skip_s1_en_by_source)|missing:left_out|{words}"),
        (paradox.conj_signature("authors"),
         "metric:s_conj_s|consistent:second_conjunct_identical"
         f"|cut:after_en(second_en_if_first_part<5_words)|missing:left_out|{words}"),
        (paradox.substitutivity_signature("full"), "metric:substitutivity_full|consistent:"
         f"full_sentence_identical|norm:synonym_translations>one_form|{words}"),
        (paradox.substitutivity_signature("exact"),
         f"metric:substitutivity_exact|consistent:full_sentence_identical|norm:none|{words}"),
        (paradox.substitutivity_signature("synonym"), "metric:substitutivity_synonym|consistent:"
         f"token_holding_synonym_identical|absent:rest_identical|{words}"),
        (paradox.overgeneralisation_signature("word"), "metric:overgeneralisation"
         f"|literal:any_keyword|match:word|case:insensitive|{words}"),
        (paradox.overgeneralisation_signature("substring"), "metric:overgeneralisation"
         f"|literal:any_keyword|match:substring|case:insensitive|{words}"),
        (exact_signature(), "metric:exact|norm:nfkc|ws:removed|case:mixed|version:1"),
    ]


def test_every_metric_writes_the_string_it_wrote_before():
    for sig, text in _today():
        assert isinstance(sig, Signature) and sig.format() == text
        assert Signature.parse(text) == sig        # the settings, read back from the string


def test_results_carry_the_formatted_signature():
    from compsuite.eval.metrics.accuracy import sequence_accuracy
    from compsuite.eval.metrics.consistency import consistency, eos_problem_share
    from compsuite.eval.nli.scores import score_adversary, score_dev

    text = [t for _, t in _today()]
    assert sequence_accuracy(["a"], ["a"]).signature == text[0]
    assert consistency(["a"], ["a"], ["a"]).signature == text[1]
    assert consistency(["a"], ["a"]).signature == text[2]
    assert eos_problem_share(["a"], ["a b"])["signature"] == text[3]
    assert score_dev(["entailment"], ["entailment"])["signature"] == text[7]
    assert score_adversary(["entailment"])["signature"] == text[8]


def test_partial_match_signature():
    from compsuite.eval.sget import partial

    v = partial.versions(partial.MODEL)
    text = (f"metric:partial|parser:ginza-{v['ginza']}|model:{partial.MODEL}-"
            f"{v.get(partial.MODEL.replace('_', '-'))}|noun:particle+ordinal+head_pred+clause"
            "|verb:verb_group+arg_particles+clause|phrase:as-noun,derived-from-ref-parse"
            "|norm:nfkc+nows|version:1")
    assert partial.signature().format() == text
    assert Signature.parse(text) == partial.signature()


def test_docs_quote_signatures_the_metrics_build():
    """A signature a doc quotes (`` `metric:...|version:...` ``) is one a metric builds,
    character for character."""
    built = {sig.format() for sig, _ in _today()}
    docs = [ROOT / "README.md", *sorted(ROOT.rglob("doc.md")), *sorted((ROOT / "docs").rglob("*.md"))]
    quoted = [(p, m) for p in docs if ".venv" not in p.parts
              for m in re.findall(r"`(metric:[^`]*\|version:[^`]*)`", p.read_text())]
    assert any(p.name == "README.md" for p, _ in quoted), "the README quotes no signature"
    for path, text in quoted:
        assert text in built, f"{path.relative_to(ROOT)} quotes {text!r}, which no metric builds"


def test_numbers_that_had_no_signature_carry_one():
    """The representation analysis of CTL++ (its mean similarities) names its settings;
    PCFG SET's plain accuracies and SGET's checkpoint selection carry theirs (checked in
    tests/test_localism.py and tests/test_sget_study.py)."""
    import torch

    from compsuite.eval.ctlpp.analyses import REPRESENTATION_SIGNATURE, representation_similarity

    class Features:
        def features(self, inputs):
            return torch.ones(len(inputs), 4)

    out = representation_similarity(Features(), {"f": ["x", "y"], "g": ["y", "x"]}, ["x", "y"],
                                    {"a": ["f"], "b": ["g"]})
    assert out["mean_similarity"] == {"between": pytest.approx(1.0)}
    assert out["signature"] == REPRESENTATION_SIGNATURE.format() == (
        "metric:cosine_similarity|features:below-classifier|pairs:functions-giving-one-symbol"
        "|mean:within-and-between-groups|version:1")
    assert Signature.parse(out["signature"]) == REPRESENTATION_SIGNATURE
