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


def _command(run, tiny_data, folder):
    """The toolkit's training command of ``run``'s paper configuration for one update
    into ``folder``: (command, the checkpoint it must write, the OpenNMT-py config)."""
    if run.toolkit == "onmt":
        cfg = get_backend("onmt").config(run, "paper", tiny_data, folder, seed=1)
        cfg.update(train_steps=1, valid_steps=1000, save_checkpoint_steps=1, report_every=1,
                   bucket_size=2048, num_workers=0)  # data loading only: fast start on tiny data
        (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
        cmd = toolkit_command("onmt_train") + ["-config", str(folder / "config.yaml")]
        return cmd, folder / "checkpoints" / "model_step_1.pt", cfg
    args = get_backend("fairseq").train_args(run, "paper")
    args.update(max_update=1, max_epoch=None, cpu=True, disable_validation=True,
                save_dir=str(folder / "ck"), num_workers=0)
    cmd = toolkit_command("fairseq-train") + [str(tiny_data.folder("fairseq")), "--user-dir",
                                               "fairseq_plugins"] + to_cli(args)
    return cmd, folder / "ck" / "checkpoint_last.pt", None


@pytest.fixture(scope="module")
def one_update(tiny_data, tmp_path_factory):
    """Every paper run's one update, two trainings side by side (a thread each: most of
    a run's time is its toolkit's start, on one core): run name -> (exit code, output,
    checkpoint, OpenNMT-py config)."""
    import os

    from conftest import ROOT

    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    jobs = {name: _command(STUDY.run(name), tiny_data, tmp_path_factory.mktemp(name))
            for name in PAPER_RUNS}
    done = {}
    names = list(jobs)
    for start in range(0, len(names), 2):
        procs = {n: subprocess.Popen(jobs[n][0], cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env)
                 for n in names[start:start + 2]}
        for n, proc in procs.items():
            out, _ = proc.communicate(timeout=300)
            done[n] = (proc.returncode, out, *jobs[n][1:])
    return done


@pytest.mark.parametrize("run_name", PAPER_RUNS)
def test_paper_config_runs_one_update(run_name, one_update):
    run = STUDY.run(run_name)
    returncode, output, expect, cfg = one_update[run_name]
    assert returncode == 0, output[-3000:]
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
