"""The runner's shared parts and the toolkit backends' configuration, without training:
the parallel executor, stored results, run folders, the OpenNMT-py config merge, the
registries studies add to, and the classifier protocol."""
import json

import pytest

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError, RegistryError, ToolkitError
from compsuite.foundation.names import Registry
from compsuite.studies.evaluations import EVALUATIONS, evaluation
from compsuite.runner import execute_parallel, stored
from compsuite.studies.base import Run
from compsuite.toolkits import get_backend
from compsuite.toolkits.base import begin_run, finish_run


def test_parallel_executor_keeps_order_and_gives_each_task_the_same_threads():
    seen = []
    tasks = [lambda threads, i=i: seen.append(threads) or i * i for i in range(5)]
    assert execute_parallel(tasks, 1) == [0, 1, 4, 9, 16] and seen == [1] * 5
    seen.clear()
    assert execute_parallel(tasks, 2) == [0, 1, 4, 9, 16] and seen == [1] * 5
    seen.clear()   # however many run at once: what --jobs changes is only that
    assert execute_parallel(tasks, 3, threads=2) == [0, 1, 4, 9, 16] and seen == [2] * 5


def test_stored_results_are_computed_once(tmp_path):
    calls = []
    f = tmp_path / "u" / "result.json"
    assert stored(f, lambda: calls.append(1) or {"a": 1}) == {"a": 1}
    assert stored(f, lambda: calls.append(1) or {"a": 2}) == {"a": 1} and calls == [1]
    assert [p.name for p in f.parent.iterdir()] == ["result.json"]   # no temporary left


def test_run_folders_refuse_another_configuration(tmp_path):
    run = tmp_path / "run"
    assert begin_run(run, "abc") is None
    assert (run / "config_hash").read_text() == "abc\n"
    assert sorted(p.name for p in run.iterdir()) == ["config_hash"]   # written atomically
    with pytest.raises(ToolkitError, match="unfinished run with another configuration"):
        begin_run(run, "xyz")
    finish_run(run, {"config_hash": "abc", "checkpoint": "c.pt"})
    assert begin_run(run, "abc") == {"config_hash": "abc", "checkpoint": "c.pt"}
    with pytest.raises(ToolkitError, match="trained with another configuration"):
        begin_run(run, "xyz")


def test_onmt_config_merges_the_data_block_and_transforms(tmp_path):
    """A study's `data:` entries and `transforms` are kept; the suite only sets the
    paths of the training and validation corpora."""
    onmt = get_backend("onmt")
    run = Run("r", "a", "onmt", args={
        "encoder_type": "rnn", "transforms": ["sentencepiece"],
        "src_subword_model": "sp.model",
        "data": {"corpus_1": {"transforms": ["filtertoolong"], "weight": 3},
                 "extra": {"path_src": "mine.src", "path_tgt": "mine.tgt"}}},
        profiles={"quick": {"train_steps": 10, "encoder_type": None}},
        defaults={"report_every": 5, "train_steps": 99})
    data = Dataset(tmp_path, formats={"onmt": tmp_path / "onmt"})
    cfg = onmt.config(run, "quick", data, tmp_path / "run", seed=3)
    assert cfg["data"]["corpus_1"] == {"transforms": ["filtertoolong"], "weight": 3,
                                       "path_src": str(tmp_path / "onmt/train.src"),
                                       "path_tgt": str(tmp_path / "onmt/train.tgt")}
    assert cfg["data"]["extra"] == {"path_src": "mine.src", "path_tgt": "mine.tgt"}
    assert cfg["data"]["valid"]["path_src"] == str(tmp_path / "onmt/valid.src")
    assert cfg["transforms"] == ["sentencepiece"] and cfg["src_subword_model"] == "sp.model"
    assert cfg["train_steps"] == 10 and cfg["report_every"] == 5 and "encoder_type" not in cfg
    assert cfg["seed"] == 3 and cfg["save_model"] == str(tmp_path / "run/checkpoints/model")


def test_fairseq_options_layer_defaults_run_and_profile():
    fairseq = get_backend("fairseq")
    run = Run("r", "a", "fairseq", args={"arch": "lstm", "lr": 0.1, "max_epoch": 25},
              profiles={"quick": {"lr": 0.003, "max_epoch": None}},
              defaults={"task": "translation_seq_acc", "log_interval": 50, "lr": 1.0})
    assert fairseq.train_args(run, "quick") == {"task": "translation_seq_acc",
                                               "log_interval": 50, "lr": 0.003, "arch": "lstm"}
    assert fairseq.train_args(run, "paper")["lr"] == 0.1


def test_a_dataset_without_a_format_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no fairseq data was prepared"):
        Dataset(tmp_path).folder("fairseq")


def test_evaluations_are_a_registry_studies_add_to():
    import compsuite.eval.pcfgset.evaluations  # noqa: F401  (registers PCFG SET's evaluations)

    assert {"accuracy", "consistency", "localism", "overgeneralisation", "per_function",
            "by_length"} <= set(EVALUATIONS)
    with pytest.raises(RegistryError, match="already registered"):
        evaluation("localism")(lambda ctx, spec: {})
    reg: Registry = Registry("evaluation")
    reg.register("mine", len)
    assert reg.get("mine") is len


def test_classifier_protocol_on_a_trained_checkpoint(tiny_study):
    """The CTL++ classifiers load through the classifier protocol, by the backend or by
    the checkpoint alone."""
    from compsuite.models.protocol import Model
    from compsuite.toolkits import load_classifier

    t = tiny_study("ctlpp")
    train = json.loads((t.runs / "A/bilstm-fairseq/seed1/train.json").read_text())
    fairseq_bin = next((t.root / "DATA/ctlpp/A").glob("*/seed1/fairseq-bin"))
    clf = load_classifier(train["checkpoint"], fairseq_bin)
    assert isinstance(clf, Model) and {"classify", "features"} <= clf.capabilities
    preds = clf.classify(["a 3", "b 4"])
    assert len(preds) == 2 and all(p in "01234567" for p in preds) and clf.calls == 1
    assert tuple(clf.features(["a 3"]).shape) == (1, 32)    # 2 x 16 units (tiny Bi-LSTM)
    same = get_backend("fairseq").load(train["checkpoint"],
                                       Dataset(fairseq_bin.parent,
                                               formats={"fairseq": fairseq_bin}), "classifier")
    assert same.classify(["a 3", "b 4"]) == preds
    with pytest.raises(ConfigError, match="cannot load a model as a classifier"):
        get_backend("onmt").load(train["checkpoint"], None, "classifier")


@pytest.mark.parametrize("jobs, threads", [(1, None), (2, None), (2, 3)])
def test_every_training_gets_the_profiles_threads_whatever_jobs(jobs, threads, tmp_path,
                                                                monkeypatch):
    """--jobs decides how many units run at once, never a training's threads: one at a
    time or side by side, each training gets the profile's (1) or --threads; each
    result records them, and the in-process evaluation runs on as many."""
    import torch

    from compsuite.registry import get_study
    from compsuite.runner import Runner

    study = get_study("majority")
    backend = get_backend(study.run("bow-sklearn").toolkit)
    seen = []
    train = backend.train

    def recorded(*a, threads=None, **k):
        seen.append(threads)
        return train(*a, threads=threads, **k)

    monkeypatch.setattr(backend, "train", recorded)
    monkeypatch.setattr(torch, "set_num_threads", lambda n: seen.append(("torch", n)))
    runner = Runner(study, "tiny", data_root=tmp_path / "DATA", runs_root=tmp_path / "runs",
                    show=False, jobs=jobs, threads=threads)
    results = runner.run(runner.plan())
    want = threads or 1
    assert seen[0] == ("torch", want) and seen[1:] == [want] * (len(seen) - 1) and len(seen) > 2
    assert all(r["threads"] == want for r in results)
