"""The checkpoints a training saves on its way, as each backend lists them
(``Backend.checkpoints``: kind, number, path), on folders made by hand with empty files
named as each toolkit names them; a folder the user names
(``compsuite.toolkits.saved_checkpoints``); and no study or evaluation module that reads
a toolkit's checkpoint file names itself."""
import re
from pathlib import Path

import pytest

from compsuite.foundation.errors import ConfigError
from compsuite.toolkits import (CHECKPOINT_KINDS, Checkpoint, backend_names, get_backend,
                                saved_checkpoints)

from conftest import ROOT


def touch(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")
    return folder


def listed(checkpoints):
    return [(c.kind, c.at, c.path.name) for c in checkpoints]


def test_every_backend_declares_the_kinds_it_saves():
    kinds = {name: get_backend(name).checkpoint_kinds for name in backend_names()}
    suite = {"command": (), "fairseq": ("update", "epoch"), "files": (), "hf": ("step",),
             "onmt": ("step",)}
    # a backend registered from outside (the example study's, once imported) may join
    assert {k: v for k, v in kinds.items() if k in suite} == suite
    assert all(set(k) <= set(CHECKPOINT_KINDS) for k in kinds.values())


def test_fairseq_lists_updates_then_epochs(tmp_path):
    touch(tmp_path / "checkpoints", "checkpoint_2_400.pt", "checkpoint_1_200.pt",
          "checkpoint10.pt", "checkpoint2.pt", "checkpoint_best.pt", "checkpoint_last.pt",
          "checkpoint_3_1000.pt", "checkpoint_x.pt", "checkpoint2.pt.incomplete")
    fairseq = get_backend("fairseq")
    assert listed(fairseq.checkpoints(tmp_path)) == [
        ("update", 200, "checkpoint_1_200.pt"), ("update", 400, "checkpoint_2_400.pt"),
        ("update", 1000, "checkpoint_3_1000.pt"),
        ("epoch", 2, "checkpoint2.pt"), ("epoch", 10, "checkpoint10.pt")]
    assert [c.at for c in fairseq.checkpoints(tmp_path, "update")] == [200, 400, 1000]
    assert [c.at for c in fairseq.checkpoints(tmp_path, "epoch")] == [2, 10]
    assert fairseq.checkpoints(tmp_path)[0] == Checkpoint(
        "update", 200, tmp_path / "checkpoints" / "checkpoint_1_200.pt")
    with pytest.raises(ConfigError, match="the fairseq backend saves no 'step' checkpoints"):
        fairseq.checkpoints(tmp_path, "step")


def test_onmt_lists_steps_in_step_order(tmp_path):
    touch(tmp_path / "checkpoints", "model_step_1000.pt", "model_step_200.pt",
          "model_step_30.pt", "model_step_30.pt.incomplete", "model.pt", "checkpoint3.pt")
    onmt = get_backend("onmt")
    expected = [("step", 30, "model_step_30.pt"), ("step", 200, "model_step_200.pt"),
                ("step", 1000, "model_step_1000.pt")]
    assert listed(onmt.checkpoints(tmp_path)) == expected
    assert listed(onmt.checkpoints(tmp_path, "step")) == expected
    with pytest.raises(ConfigError, match="saves no 'epoch' checkpoints"):
        onmt.checkpoints(tmp_path, "epoch")


def test_hf_lists_checkpoint_folders_that_hold_a_model(tmp_path):
    from compsuite.toolkits.hf.translator import META

    ck = tmp_path / "checkpoints"
    for step in (20, 5, 100):
        touch(ck / f"checkpoint-{step}", META)
    touch(ck / "checkpoint-7")            # Trainer was killed while saving: no model yet
    touch(ck / "checkpoint-x", META)
    touch(ck, "checkpoint-3")             # a file, not a folder
    hf = get_backend("hf")
    assert listed(hf.checkpoints(tmp_path, "step")) == [
        ("step", 5, "checkpoint-5"), ("step", 20, "checkpoint-20"),
        ("step", 100, "checkpoint-100")]


def test_no_checkpoints_no_folder_and_models_that_read_text(tmp_path):
    for name in ("fairseq", "onmt", "hf"):
        assert get_backend(name).checkpoints(tmp_path / "never-trained") == []
    for name in ("command", "files"):   # nothing trained: the model is the run's checkpoint
        assert get_backend(name).checkpoints(tmp_path) == []
        assert get_backend(name).checkpoints(tmp_path, "epoch") == []


def test_a_backend_that_lists_none_says_so(tmp_path):
    from compsuite.toolkits.base import Backend

    class Quiet(Backend):
        name = "quiet"

    with pytest.raises(ConfigError, match="the quiet backend does not list its checkpoints"):
        Quiet().checkpoints(tmp_path)


def test_a_named_folder_is_read_by_every_backend(tmp_path):
    """One kind, the finest found: steps, else updates, else epochs."""
    from compsuite.toolkits.hf.translator import META

    touch(tmp_path / "f", "checkpoint1.pt", "checkpoint2.pt", "checkpoint_last.pt")
    assert listed(saved_checkpoints(tmp_path / "f")) == [
        ("epoch", 1, "checkpoint1.pt"), ("epoch", 2, "checkpoint2.pt")]
    touch(tmp_path / "f", "checkpoint_2_60.pt", "checkpoint_1_30.pt")
    assert listed(saved_checkpoints(tmp_path / "f")) == [
        ("update", 30, "checkpoint_1_30.pt"), ("update", 60, "checkpoint_2_60.pt")]
    touch(tmp_path / "h" / "checkpoint-8", META)
    assert listed(saved_checkpoints(tmp_path / "h")) == [("step", 8, "checkpoint-8")]
    # as one backend reads it
    touch(tmp_path / "f", "model_step_9.pt")
    assert listed(saved_checkpoints(tmp_path / "f", get_backend("onmt"))) == [
        ("step", 9, "model_step_9.pt")]
    assert [c.at for c in saved_checkpoints(tmp_path / "f", get_backend("fairseq"))] == [30, 60]


#: a toolkit's checkpoint file names, as a listing would spell them (a glob, a pattern)
TOOLKIT_NAMES = re.compile(r"model_step_|checkpoint_\*|checkpoint\*|checkpoint_\\d|"
                           r"checkpoint\(\\d|checkpoint_\{|checkpoint\{|[\"']checkpoint-[\"']")


def test_studies_and_evaluations_read_no_toolkit_file_names():
    """Only a backend knows its toolkit's checkpoint names: studies and evaluations ask
    it (``Backend.checkpoints``, ``compsuite.toolkits.saved_checkpoints``)."""
    files = sorted((ROOT / "compsuite" / "studies").rglob("*.py")) + sorted(
        (ROOT / "eval").rglob("*.py"))
    assert len(files) > 20
    found = [f"{f.relative_to(ROOT)}:{i}: {line.strip()}" for f in files
             for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
             if TOOLKIT_NAMES.search(line)]
    assert found == []
    # the pattern finds what the backends hold
    backends = "".join((ROOT / "compsuite" / "toolkits" / t / "backend.py").read_text()
                       for t in ("fairseq", "onmt", "hf"))
    assert len(TOOLKIT_NAMES.findall(backends)) >= 3
