"""The paradox study on the study interface: its YAML keys, its plan, the paper profile's
paths (environment variables, errors), the data folders, the evaluation over
fairseq's interval checkpoints (tiny run: translations stored, resumed), the report on
hand-made results beside the paper's numbers, `compsuite eval paradox score` on a plain
file from any system, and fairseq's checkpoint listing."""
import json

import pytest

from conftest import edited_study

from compsuite.cli import main
from compsuite.foundation.errors import ConfigError
from compsuite.registry import get_study
from compsuite.toolkits import get_backend



def study_with(tmp_path, edit):
    return edited_study(tmp_path, "paradox", edit)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["profiles"]["quick"]["data"].update(corpus="wmt"), "data.corpus: one of"),
    (lambda r: r["profiles"]["quick"]["data"].update(sizes=["small"]), "only for corpus: opus"),
    (lambda r: r["profiles"]["paper"]["data"].update(sizes=["huge"]), "unknown size 'huge'"),
    (lambda r: r["profiles"]["quick"]["data"].update(n_tran=5), "unknown key 'n_tran'"),
    (lambda r: r["profiles"]["quick"]["data"].update(n_train=0), "data.n_train"),
    (lambda r: r["profiles"]["quick"]["tests"].update(idioms="magpie"), "tests.idioms"),
    (lambda r: r["profiles"]["quick"]["tests"].update(n=-1), "tests.n"),
    (lambda r: r["profiles"]["quick"]["tests"].update(semi=1), "unknown key 'semi'"),
])
def test_bad_yaml_names_the_file_and_key(tmp_path, edit, message):
    with pytest.raises(ConfigError) as e:
        study_with(tmp_path, edit)
    assert str(tmp_path / "paradox.yaml") in str(e.value) and message in str(e.value)


def test_plan_and_the_paper_profiles_paths(tmp_path, monkeypatch):
    study = get_study("paradox")
    paper = study.plan(study.profile("paper"))
    assert len(paper) == 15 and {u.part for u in paper} == {"small", "medium", "full"}
    assert {u.part: u.train_options["save_epochs"][-1] for u in paper} == {
        "small": 160, "medium": 50, "full": 30}
    assert [u.path for u in study.plan(study.profile("quick"))] == [
        f"generated/transformer-fairseq/seed{s}" for s in (1,)]
    monkeypatch.delenv("PARADOX_OPUS_EN", raising=False)
    with pytest.raises(ConfigError, match="PARADOX_OPUS_EN, which is not set"):
        study.prepare("small", 1, study.profile("paper"), tmp_path)
    monkeypatch.setenv("PARADOX_OPUS_EN", str(tmp_path / "missing.en"))
    with pytest.raises(ConfigError, match=r"data\.en: .*missing\.en: no such file"):
        study.prepare("small", 1, study.profile("paper"), tmp_path)


def test_generated_data_folders(tmp_path):
    study = get_study("paradox")
    prof = study.profile("tiny")
    data = study.prepare("generated", 1, prof, tmp_path, show=False)
    root = tmp_path / "paradox" / "generated" / "train600" / "seed1"
    assert data.root == root and data.allow_unknown
    assert sorted(p.name for p in (root / "raw").iterdir()) == sorted(
        [f"{s}.{x}" for s in ("train", "valid", "test") for x in ("src", "tgt")] + ["manifest.json"])
    assert (root / "raw" / "train.src").read_bytes() == (root / "text" / "train.en").read_bytes()
    tests = json.loads((root / "tests" / "manifest.json").read_text())
    assert tests["args"]["idioms"] == "quick" and tests["args"]["n"] == 2
    stamp = (root / "raw" / "manifest.json").stat().st_mtime_ns
    study.prepare("generated", 1, prof, tmp_path, show=False)        # stored: unchanged
    assert (root / "raw" / "manifest.json").stat().st_mtime_ns == stamp


def test_fairseq_lists_interval_checkpoints(tmp_path):
    ck = tmp_path / "checkpoints"
    ck.mkdir()
    for name in ("checkpoint_2_400.pt", "checkpoint_1_200.pt", "checkpoint_last.pt",
                 "checkpoint_best.pt", "checkpoint3.pt", "checkpoint_3_1000.pt"):
        (ck / name).write_bytes(b"")
    assert [(c.at, c.path.name) for c in get_backend("fairseq").checkpoints(tmp_path, "update")
            ] == [(200, "checkpoint_1_200.pt"), (400, "checkpoint_2_400.pt"),
                  (1000, "checkpoint_3_1000.pt")]


def _result(seed, np_mean, og_by_step):
    """A hand-made result in the study's shape."""
    cells = [{"data": "synthetic", "template": str(t), "key": "NP", "metric": "np_vp",
              "score": np_mean, "n": 10, "passed": int(10 * np_mean)} for t in range(1, 11)]
    return {"part": "generated", "run": "transformer-fairseq", "seed": seed,
            "tests": {"np_vp": {"summary": [{"data": "synthetic", "key": "NP", "metric": "np_vp",
                                             "mean_over_templates": np_mean, "pooled": np_mean,
                                             "n": 100, "templates": 10}],
                                "cells": cells, "signatures": {"np_vp": "metric:np_vp|x"}}},
            "overgeneralisation_by_step": [
                {"step": step, "signatures": {"og": "metric:overgeneralisation|y"},
                 "summary": [{"data": "synthetic", "key": "by heart",
                              "metric": "overgeneralisation_word", "pooled": v,
                              "mean_over_templates": v, "n": 10, "templates": 10}]}
                for step, v in og_by_step]}


def test_report_beside_the_paper(tmp_path):
    from compsuite.eval.paradox.report import build_report

    results = [_result(1, 0.5, [(200, 0.0), (400, 0.8), (600, 0.1)]),
               _result(2, 0.7, [(200, 0.0), (400, 0.4), (600, 0.0)])]
    written = build_report(get_study("paradox"), "quick", results, tmp_path)
    assert written == [tmp_path / name for name in ("report.json", "report.md",
                                                    "systematicity.png", "overgeneralisation.png")]
    md = (tmp_path / "report.md").read_text()
    # Table 4a: ours 0.60 ± 0.14 beside the paper's small / medium / full
    assert "| np vp | synthetic | NP        | generated  | 0.60 ± 0.14 | 0.73" in md
    # Table 8: max over training per seed (0.8, 0.4) -> 0.60 ± 0.28; the paper's by heart
    assert "| synthetic | by heart | word  | generated | 0.60 ± 0.28" in md
    assert "1.00 / 1.00 / 1.00" in md and "Scaled down" in md
    assert "metric:np_vp|x" in md
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["tables"]["table4a"][0]["ours"] == [0.5, 0.7]
    for png in ("overgeneralisation.png", "systematicity.png"):
        assert (tmp_path / png).stat().st_size > 1000


def test_eval_score_any_systems_file(tmp_path, capsys):
    from compsuite.data_prep.paradox import testsets, translate

    testsets.write(tmp_path / "tests", 1, 3, tests=["np_vp"])
    inputs = (tmp_path / "tests" / "np_vp.en").read_text().splitlines()
    hyps = tmp_path / "np_vp.nl"
    hyps.write_text("\n".join(translate.translate_any(x) for x in inputs) + "\n")
    out = tmp_path / "score.json"
    assert main(["eval", "paradox", "score", "--tests", str(tmp_path / "tests"), "--test", "np_vp",
                 "--hyps", str(hyps), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert {s["key"]: s["mean_over_templates"] for s in res["summary"]} == {"NP": 1.0, "VP": 1.0}
    assert "1.000" in capsys.readouterr().out
    # fairseq-interactive / -generate output: D- lines by input id, in any order
    gen = tmp_path / "generate.txt"
    lines = []
    for i, h in reversed(list(enumerate(translate.translate_any(x) for x in inputs))):
        lines += [f"S-{i}\t{inputs[i]}", f"H-{i}\t-0.1\t{h.lower()}", f"D-{i}\t-0.1\t{h}"]
    gen.write_text("2026 | INFO | fairseq_cli.interactive | loading\n" + "\n".join(lines) + "\n")
    assert main(["eval", "paradox", "score", "--tests", str(tmp_path / "tests"), "--test",
                 "np_vp", "--fairseq-output", str(gen), "--out", str(out)]) == 0
    assert {s["key"]: s["mean_over_templates"] for s in json.loads(out.read_text())["summary"]} \
        == {"NP": 1.0, "VP": 1.0}
    gen.write_text("\n".join(lines[3:]) + "\n")   # the last input's lines missing
    assert main(["eval", "paradox", "score", "--tests", str(tmp_path / "tests"), "--test",
                 "np_vp", "--fairseq-output", str(gen)]) != 0
    assert f"missing [{len(inputs) - 1}]" in capsys.readouterr().err
    hyps.write_text("\n".join(inputs[:-1]) + "\n")
    assert main(["eval", "paradox", "score", "--tests", str(tmp_path / "tests"), "--test",
                 "np_vp", "--hyps", str(hyps)]) != 0
    err = capsys.readouterr().err
    assert f"np_vp.nl: {len(inputs) - 1} lines, but" in err and f"np_vp.en has {len(inputs)}" in err


def test_paper_config_runs_one_update(tmp_path):
    """The paper's fairseq Transformer-base (transformer_wmt_en_de, all embeddings shared,
    so a joined dictionary) loads and trains one update on tiny generated data; the
    OPUS data pipeline itself is not built yet."""
    import dataclasses
    import subprocess

    import torch

    from compsuite.toolkits.writing import toolkit_command
    from compsuite.toolkits import get_backend
    from compsuite.toolkits.base import to_cli
    from compsuite.toolkits.fairseq.backend import USER_DIR
    from compsuite.torch_compat import allow_toolkit_checkpoints

    study = get_study("paradox")
    data = study.prepare("generated", 1, study.profile("tiny"), tmp_path / "DATA", show=False)
    data = dataclasses.replace(data, joined_dictionary=True)
    fairseq = get_backend("fairseq")
    data.formats["fairseq"] = fairseq.write_data(data)
    dicts = [(data.formats["fairseq"] / f"dict.{s}.txt").read_text() for s in ("src", "tgt")]
    assert dicts[0] == dicts[1]                                  # joined
    args = fairseq.train_args(study.run("transformer-fairseq"), "paper")
    args.update(max_update=1, save_dir=str(tmp_path / "ck"), cpu=True, max_tokens=1024,
                save_interval_updates=0, disable_validation=True, seed=1)
    r = subprocess.run(toolkit_command("fairseq-train") + [str(data.formats["fairseq"]),
                       "--user-dir", str(USER_DIR)] + to_cli(args),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    allow_toolkit_checkpoints()
    cfg = torch.load(tmp_path / "ck" / "checkpoint_last.pt", map_location="cpu",
                     weights_only=False)["cfg"]["model"]
    assert (cfg.arch, cfg.encoder_layers, cfg.decoder_layers, cfg.encoder_embed_dim,
            cfg.encoder_ffn_embed_dim, cfg.encoder_attention_heads, cfg.share_all_embeddings,
            cfg.dropout) == ("transformer_wmt_en_de", 6, 6, 512, 2048, 8, True, 0.1)
