"""Every paper-profile configuration loads in its toolkit and runs one update on tiny
data (the models are full size; only the data and the number of steps are tiny)."""
import subprocess

import pytest
import yaml

from compsuite.toolkits.writing import toolkit_command
from compsuite.registry import get_study
from compsuite.toolkits import get_backend
from compsuite.toolkits.base import to_cli

STUDY = get_study("pcfgset")
PAPER_RUNS = STUDY.profile("paper").runs


@pytest.mark.parametrize("run_name", PAPER_RUNS)
def test_paper_config_runs_one_update(run_name, tiny_data, tmp_path):
    run = STUDY.run(run_name)
    if run.toolkit == "onmt":
        cfg = get_backend("onmt").config(run, "paper", tiny_data, tmp_path, seed=1)
        cfg.update(train_steps=1, valid_steps=1000, save_checkpoint_steps=1, report_every=1,
                   bucket_size=2048, num_workers=0)  # data loading only: fast start on tiny data
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
        cmd = toolkit_command("onmt_train") + ["-config", str(tmp_path / "config.yaml")]
        expect = tmp_path / "checkpoints" / "model_step_1.pt"
    else:
        args = get_backend("fairseq").train_args(run, "paper")
        args.update(max_update=1, max_epoch=None, cpu=True, disable_validation=True,
                    save_dir=str(tmp_path / "ck"), num_workers=0)
        cmd = toolkit_command("fairseq-train") + [str(tiny_data.folder("fairseq")), "--user-dir",
                                                   "fairseq_plugins"] + to_cli(args)
        expect = tmp_path / "ck" / "checkpoint_last.pt"
    from conftest import ROOT

    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert expect.is_file()
    # the checkpoint records the paper's architecture, not a default
    import torch

    from compsuite.torch_compat import allow_toolkit_checkpoints

    allow_toolkit_checkpoints()
    ckpt = torch.load(expect, map_location="cpu")
    if run.toolkit == "fairseq":
        model_cfg = ckpt["cfg"]["model"]
        for key in ("arch", "encoder_layers", "encoder_embed_dim", "lr"):
            if key in run.args:
                got = getattr(model_cfg, key)
                want = run.args[key]
                assert (got == want or got == [want] or str(got) == str(want)), (key, got, want)
    else:
        opt = ckpt["opt"]
        for key in ("encoder_type", "enc_layers", "hidden_size", "optim", "learning_rate"):
            assert getattr(opt, key) == cfg[key], key
