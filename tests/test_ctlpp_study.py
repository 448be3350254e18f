"""CTL++ end to end on tiny data: the generator's fairseq data, each classifier trained
a few updates with fairseq-train --user-dir fairseq_plugins, IID/OOD evaluation, the
representation analysis, the S grid and the report; a second run skips everything."""
import json
import os

import pytest
import yaml

from compsuite.registry import get_study, load_study

TINY = {"bilstm-fairseq": {"hidden_size": 16, "embed_dim": 16},
        "transformer-fairseq": {"d_model": 16, "ff": 32, "layers": 2, "weight_decay": 0.0025},
        "ndr-fairseq": {"d_model": 16, "ff": 32, "layers": 2}}
STEPS = {"batch_size": 64, "max_update": 12, "warmup_updates": 2, "lr": 0.003,
         "validate_interval_updates": 6, "save_interval_updates": 6, "num_workers": 0}


def _study(tmp_path):
    raw = yaml.safe_load(get_study("ctlpp").source.read_text())
    for name, run in raw["runs"].items():
        run["profiles"] = {"tiny": {**STEPS, **TINY[name]}}
    raw["profiles"] = {"tiny": {
        "dataset": "A", "variants": ["A", "R"], "seeds": [1], "runs": list(TINY),
        "data": {"n_train": 600, "n_test": 40},
        "grid": {"runs": ["bilstm-fairseq"], "seeds": [1], "shared_functions": [8],
                 "shared_symbols": [2]}}}
    path = tmp_path / "ctlpp.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_study(path)


def test_ctlpp_end_to_end(tmp_path):
    from compsuite.ctlpp_pipeline import collect, run_grid, run_table1
    from compsuite.eval.reports.ctlpp import build_report

    study = _study(tmp_path)
    roots = dict(data_root=tmp_path / "DATA", runs_root=tmp_path / "runs", show=False)
    t1 = run_table1(study, "tiny", jobs=2, **roots)      # two trainings side by side
    assert [(r["variant"], r["run"]) for r in t1] == [(v, r) for v in "AR" for r in TINY]
    ck = json.loads((tmp_path / "runs/ctlpp/tiny/R/bilstm-fairseq/seed1/train.json").read_text())
    assert ck["threads"] == max(1, (os.cpu_count() or 1) // 2)
    for r in t1:
        assert 0 <= r["test_ood"]["accuracy"] <= 1 and r["test_ood"]["n"] == 40
        assert set(r["test_ood"]["by_length"]) == {"2", "3", "4", "5", "6"}
        c = r["compatibility"]
        assert c["groups"] == ["a", "b"] and len(c["matrix"]) == 2
        assert sum(c["n"].values()) == 32 * 32 * 8
        reps = r["representations"]
        assert len(reps["functions"]) == 32 and len(reps["per_symbol"]) == 8
        assert set(reps["mean_similarity"]) == {"within", "between"}
    # the checkpoint is fairseq's, with the registered architecture
    ck = json.loads((tmp_path / "runs/ctlpp/tiny/A/ndr-fairseq/seed1/train.json").read_text())
    assert ck["args"]["arch"] == "ctlpp_ndr" and ck["args"]["clip_norm"] == 1.0
    grid = run_grid(study, "tiny", **roots)
    assert [(r["shared_functions"], r["shared_symbols"]) for r in grid] == [(8, 2)]
    assert "compatibility" not in grid[0]
    assert run_table1(study, "tiny", **roots) == t1          # everything skipped
    t1c, gridc = collect(study, "tiny", tmp_path / "runs")
    assert len(t1c) == 6 and len(gridc) == 1
    rep = build_report(study, "tiny", t1c, gridc, tmp_path / "results")
    md = (tmp_path / "results" / "report.md").read_text()
    assert "## Table 1" in md and "0.95" in md and "Variant S" in md
    assert {(e["architecture"], e["variant"]) for e in rep["table1"]} == {
        (a, v) for a in ("bilstm", "transformer", "ndr") for v in ("A", "R")}
    for png in ("grid_bilstm.png", "similarity_A_ndr-fairseq_seed1.png",
                "compatibility_R_transformer-fairseq_seed1.png"):
        assert (tmp_path / "results" / png).read_bytes()[:4] == b"\x89PNG", png


def test_ctlpp_paper_configs_load_and_run_one_update(tmp_path):
    """The paper-size models (Appendix A settings) build and take one update."""
    import subprocess

    from compsuite.ctlpp_pipeline import prepare
    from compsuite.data_prep.common.writers import toolkit_command
    from compsuite.registry import ROOT
    from compsuite.toolkits import _to_cli, fairseq_train_args

    study = get_study("ctlpp")
    data = prepare("A", 1, {"n_train": 600, "n_test": 40}, tmp_path / "DATA", show=False)
    for run_name in study.profile("paper").runs:
        args = fairseq_train_args(study.run(run_name), "paper")
        assert args["lr"] == 0.00015 and args["batch_size"] == 512 and args["dropout"] == 0.5
        args.update(max_update=1, cpu=True, disable_validation=True, num_workers=0,
                    save_dir=str(tmp_path / run_name))
        cmd = toolkit_command("fairseq-train") + [str(data.fairseq_bin), "--user-dir",
                                                   "fairseq_plugins"] + _to_cli(args)
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        assert (tmp_path / run_name / "checkpoint_last.pt").is_file()
        params = [ln for ln in r.stdout.splitlines() if "num. shared model params" in ln]
        assert params, r.stdout[-2000:]


def test_ctlpp_profile_data_scales_the_task(tmp_path):
    """A profile's `data:` sets any generator size (the quick profile's scaled-down
    task); an unknown key is an error that names it."""
    from compsuite.ctlpp_pipeline import jobs_for, prepare, profile_spec
    from compsuite.data_prep.common.manifest import read_manifest

    small = {"n_train": 300, "n_test": 20, "n_functions": 16, "max_length": 3}
    paths = prepare("A", 1, small, tmp_path, show=False)
    assert paths.raw.parent.name == "seed1" and paths.raw.parent.parent.name == "n300-f16-len3"
    full = prepare("A", 1, {"n_train": 300, "n_test": 20}, tmp_path, show=False)
    assert full.raw.parent.parent.name == "n300"             # the paper's sizes: no suffix
    m = read_manifest(paths.raw)
    assert m["args"]["n_functions"] == 16 and len(m["functions"]) == 16
    assert max(len(s.split()) - 1 for s in (paths.raw / "train.src").read_text().splitlines()) == 3
    with pytest.raises(ValueError, match="unknown keys.*'n_funcs'"):
        prepare("A", 1, {"n_train": 300, "n_test": 20, "n_funcs": 16}, tmp_path, show=False)
    study = get_study("ctlpp")
    raw = yaml.safe_load(study.source.read_text())
    raw["profiles"]["quick"]["data"]["n_funcs"] = 16
    bad = tmp_path / "ctlpp.yaml"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match=r"ctlpp.yaml: profiles.quick.data: unknown keys"):
        profile_spec(load_study(bad), "quick")
    assert jobs_for(study, "quick") == 2 and jobs_for(study, "paper") == 1
    assert jobs_for(study, "paper", 3) == 3
    with pytest.raises(ValueError, match="jobs"):
        jobs_for(study, "quick", 0)
    with pytest.raises(ValueError, match=r"^--jobs must be a positive integer, not 0$"):
        jobs_for(study, "quick", 0)
    raw["profiles"]["quick"]["data"].pop("n_funcs")
    raw["profiles"]["quick"]["jobs"] = 0
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match=r"ctlpp.yaml: profiles.quick.jobs must be a positive"):
        jobs_for(load_study(bad), "quick")
