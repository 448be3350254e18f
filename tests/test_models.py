"""The model protocol (compsuite/models/): declared capabilities, the typed decoding
settings, and recording and replaying as wrappers told their folder."""
import importlib
import json

import pytest

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.models.decoding import Decoding, decoding
from compsuite.models.protocol import (TASKS, Counting, InTheLoop, Model, ModelBase, Request,
                                       Unavailable, ask, counted, progress, require)
from compsuite.models.recording import IN_THE_LOOP, Placeholders, Recording, Replaying


class Upper(ModelBase):
    """A translator that answers in capitals."""
    name = "upper"
    capabilities = frozenset({"translate"})

    def translate(self, sources):
        return [s.upper() for s in sources]


# ----------------------------------------------------------------------------- capabilities
def test_a_task_not_declared_is_unavailable_not_an_attribute_error():
    m = Upper()
    assert isinstance(m, Model) and m.capabilities == {"translate"}
    assert m.translate(["a b"]) == ["A B"]
    with pytest.raises(Unavailable, match="upper does not answer classify"):
        m.classify(["a"])
    with pytest.raises(Unavailable, match="upper gives no input embeddings"):
        require(m, "embed", "embedding distances", "it reads the embeddings")


def test_a_replaying_model_refuses_a_test_that_needs_the_model_itself(tmp_path):
    rec = Recording(Upper(), tmp_path / "unit", "unit")
    with pytest.raises(InTheLoop, match="localism needs the model in the loop"):
        require(rec, "translate", "localism", "it feeds the outputs back")
    noted = json.loads((tmp_path / "unit" / "inputs.json").read_text())[IN_THE_LOOP]
    assert len(noted) == 1 and noted[0].startswith("localism needs the model in the loop")


MODEL_CLASSES = [
    ("compsuite.toolkits.fairseq.translator", "FairseqTranslator"),
    ("compsuite.toolkits.fairseq.classifier", "FairseqClassifier"),
    ("compsuite.toolkits.onmt.translator", "OnmtTranslator"),
    ("compsuite.toolkits.hf.translator", "HFTranslator"),
    ("compsuite.toolkits.hf.classifier", "HFClassifier"),
    ("compsuite.toolkits.command.model", "CommandModel"),
    ("compsuite.models.ctranslate2", "CT2Translator"),
    ("compsuite.models.recording", "Recording"),
    ("compsuite.models.recording", "Replaying"),
    ("compsuite.models.recording", "Placeholders"),
    ("compsuite.data_prep.nli.lexical", "LexicalClassifier"),
    ("compsuite.data_prep.paradox.opus", "CodecTranslator"),
]


@pytest.mark.parametrize("module, name", MODEL_CLASSES)
def test_every_model_of_the_suite_answers_what_it_declares(module, name):
    """Each declared task is implemented by the class itself (not ModelBase's refusal),
    and every task it implements is one of the protocol's."""
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, ModelBase)
    own = {t for t in TASKS if getattr(cls, t) is not getattr(ModelBase, t)}
    declared = cls.capabilities   # the class's (a wrapper narrows it per instance)
    assert declared <= set(TASKS)
    assert declared <= own, f"{name} declares {declared - own} without answering it"


# ----------------------------------------------------------------------------- decoding
def test_decoding_settings_are_read_once_and_typed():
    d = decoding({"beam": 5, "max_length": 250})
    assert d == Decoding(beam=5, max_length=250) and d.batch(256) == 256
    assert decoding(d) is d and decoding(None) == Decoding()
    fast = decoding({"engine": "ctranslate2", "compute_type": "int8"})
    assert fast.fast and fast.toolkit() == Decoding()


@pytest.mark.parametrize("value, message", [
    ({"beem": 5}, r"x\.yaml: generation: unknown key 'beem' .*did you mean 'beam'"),
    ({"beam": 0}, r"x\.yaml: generation\.beam"),
    ({"batch_size": "64"}, r"x\.yaml: generation\.batch_size: an integer"),
    ({"length_penalty": "average"}, r"generation\.length_penalty: one of none, wu, avg"),
    ({"engine": "ctranslate3"}, r"generation\.engine: 'ctranslate3' is not an engine"),
    ({"device": "cuda"}, "add engine: ctranslate2"),
    ([1, 2], "expected a mapping of decoding settings"),
])
def test_bad_decoding_settings_name_the_key(value, message):
    with pytest.raises(ConfigError, match=message):
        decoding(value, "x.yaml: generation")


# ----------------------------------------------------------------------------- record / replay
def test_recording_wraps_any_model_in_the_folder_it_is_told(tmp_path):
    """Two recordings of two units side by side: each writes its own folder (no
    global), with the inputs, their ids and the wrapped model's answers."""
    a = Recording(Upper(), tmp_path / "A", "A")
    b = Recording(Placeholders("yes"), tmp_path / "B", "B")
    assert ask(a, "translate", ["x y", "z"], "test_copy") == ["X Y", "Z"]
    assert b.respond(Request("classify", [("p", "h")], "dev")) == ["yes"]
    assert (tmp_path / "A" / "test-copy.src").read_text() == "x y\nz\n"
    assert (tmp_path / "A" / "test-copy.ids").read_text() == "A/test-copy:1\nA/test-copy:2\n"
    assert (tmp_path / "B" / "dev.src").read_text() == "p\th\n"
    assert not (tmp_path / "A" / "dev.src").exists()
    assert a.capabilities == {"translate"} and a.replays
    assert b.capabilities == {"translate", "classify"}


def test_replaying_answers_from_the_answer_files(tmp_path):
    rec = Recording(Upper(), tmp_path / "in" / "u", "u")
    ask(rec, "translate", ["a", "b"], "test")
    (tmp_path / "hyps" / "u").mkdir(parents=True)
    (tmp_path / "hyps" / "u" / "test.hyp").write_text("1\n2\n")
    rep = Replaying(Upper(), tmp_path / "in" / "u", tmp_path / "hyps" / "u")
    assert rep.translate(["a", "b"]) == ["1", "2"] and rep.replays
    with pytest.raises(DataError, match="not among the exported inputs"):
        rep.translate(["c"])



# ----------------------------------------------------------------------------- requests
def test_a_requests_label_reaches_the_recorder_and_no_model_is_named_from_outside(tmp_path):
    """The label travels in the request (no attribute is set on a model to name a
    call); the counting wrapper, not the model, counts calls and batches."""
    upper = Upper()
    rec = Recording(upper, tmp_path / "U", "U")
    model = counted(rec, "runs/U")
    before = (dict(vars(upper)), dict(vars(rec)))
    assert model.translate(["a"], label="test_copy") == ["A"]
    assert ask(model, "translate", ["b c"], "test_twin") == ["B C"]
    asked = json.loads((tmp_path / "U" / "inputs.json").read_text())
    assert {n: a["asked_as"] for n, a in asked.items()} == {"test-copy": "test_copy",
                                                           "test-twin": "test_twin"}
    assert (tmp_path / "U" / "test-twin.src").read_text() == "b c\n"
    assert (dict(vars(upper)), dict(vars(rec))) == before
    for m in (upper, rec):
        assert not any(hasattr(m, a) for a in ("label", "calls", "batches", "progress"))
    assert (model.calls, model.batches) == (2, 2) and model.unit == "runs/U"


def test_a_request_names_a_task_of_the_protocol_and_keeps_its_unit():
    seen = []

    class Keeps(Upper):
        def respond(self, request):
            seen.append(request)
            return super().respond(request)

    with pytest.raises(ValueError, match="'generate' is not a task"):
        Request("generate", ["a"])
    model = Counting(Keeps(), unit="runs/A")
    with progress(model, 1, "quiet"):
        assert model.translate(["a"], "dev") == ["A"]
    assert seen == [Request("translate", ["a"], "dev", "runs/A")]
    assert counted(model) is model and model.name == "upper" and not model.replays
