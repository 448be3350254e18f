"""torch >= 2.6 loads with weights_only=True: both toolkits' checkpoints need the
suite's narrow allow-list.  These tests fail without it (COMPSUITE_NO_TORCH_COMPAT=1
switches the environment's startup hook off)."""
import os
import subprocess
import sys

import pytest
import torch

from compsuite.toolkits.writing import toolkit_command
from compsuite.torch_compat import toolkit_checkpoint_globals

pytestmark = pytest.mark.skipif(
    tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 6),
    reason="weights_only is the default only from torch 2.6")


def _env(compat: bool) -> dict:
    env = dict(os.environ)
    env.pop("COMPSUITE_NO_TORCH_COMPAT", None)
    if not compat:
        env["COMPSUITE_NO_TORCH_COMPAT"] = "1"
    return env


def _onmt_translate(run_dir, data, env):
    return subprocess.run(toolkit_command("onmt_translate") + [
        "-model", str(sorted((run_dir / "checkpoints").glob("*.pt"))[-1]),
        "-src", str(data.folder("onmt") / "valid.src"), "-output", str(run_dir / "compat.txt"),
        "-batch_size", "64"], capture_output=True, text=True, env=env)


def _fairseq_generate(run_dir, data, env):
    # deliberately without --user-dir: plain fairseq-generate must load it too
    return subprocess.run(toolkit_command("fairseq-generate") + [
        str(data.folder("fairseq")), "--path", str(run_dir / "checkpoints" / "checkpoint_last.pt"),
        "--gen-subset", "valid", "--beam", "1", "--batch-size", "64", "--cpu"],
        capture_output=True, text=True, env=env)


@pytest.mark.parametrize("toolkit", ["onmt", "fairseq"])
def test_toolkit_checkpoint_fails_without_and_loads_with_handling(toolkit, tiny_runs, tiny_data):
    _, run_dir, _ = tiny_runs[toolkit]
    call = _onmt_translate if toolkit == "onmt" else _fairseq_generate
    without = call(run_dir, tiny_data, _env(False))
    assert without.returncode != 0
    assert "Weights only load failed" in without.stderr + without.stdout
    with_ = call(run_dir, tiny_data, _env(True))
    assert with_.returncode == 0, with_.stderr[-2000:]


@pytest.mark.parametrize("toolkit", ["onmt", "fairseq"])
def test_allow_list_covers_exactly_what_checkpoints_hold(toolkit, tiny_runs):
    _, run_dir, _ = tiny_runs[toolkit]
    allowed = {f"{t.__module__}.{t.__qualname__}" for t in toolkit_checkpoint_globals()}
    for ckpt in (run_dir / "checkpoints").glob("*.pt"):
        assert set(torch.serialization.get_unsafe_globals_in_checkpoint(str(ckpt))) <= allowed


def test_other_classes_still_refused(tmp_path):
    """The handling is narrow: weights_only stays on for anything else."""
    code = (
        "import fractions, torch, onmt\n"   # importing onmt activates the allow-list
        f"torch.save({{'x': fractions.Fraction(1, 3)}}, {str(tmp_path / 'evil.pt')!r})\n"
        "try:\n"
        f"    torch.load({str(tmp_path / 'evil.pt')!r})\n"
        "    print('LOADED')\n"
        "except Exception as e:\n"
        "    print('REFUSED', type(e).__name__)\n"
        "import argparse\n"
        f"torch.save({{'opt': argparse.Namespace(a=1)}}, {str(tmp_path / 'ok.pt')!r})\n"
        f"print('NS', torch.load({str(tmp_path / 'ok.pt')!r})['opt'].a)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(True))
    assert "REFUSED UnpicklingError" in r.stdout and "NS 1" in r.stdout, r.stderr[-2000:]


def test_startup_hook_imports_nothing_heavy():
    r = subprocess.run([sys.executable, "-c", "import sys; print('torch' in sys.modules)"],
                       capture_output=True, text=True, env=_env(True))
    assert r.stdout.strip() == "False"
