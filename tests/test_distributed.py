"""fairseq multi-worker training with the plugins, as far as a CPU allows.

fairseq's single-command multi-GPU start (``fairseq-train --distributed-world-size N``)
spawns one worker per CUDA device, so on a CPU it starts none.  What it runs in each
worker is the same as the multi-node launch: one ``fairseq-train`` per worker with
``--distributed-rank R --distributed-no-spawn``.  That path runs on CPU with the gloo
backend and fairseq's own ``legacy_ddp`` gradient all-reduce (torch's DDP wrapper
insists on GPU device ids), so here two real ``fairseq-train`` processes train one
model together: each imports ``--user-dir fairseq_plugins`` itself (the known trap),
registers the task, and the validation ``seq_acc`` is reduced across both workers.
"""
import multiprocessing as mp
import socket
import subprocess
from argparse import Namespace

from compsuite.data_prep.common.writers import toolkit_command

from conftest import ROOT, TINY_FAIRSEQ


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_fairseq_train_workers_with_user_dir(tiny_data, tmp_path):
    port = _free_port()
    args = [str(tiny_data.folder("fairseq")), "--user-dir", "fairseq_plugins",  # relative, as users write it
            "--task", "translation_seq_acc", "--eval-accuracy", "--cpu",
            "--distributed-world-size", "2", "--distributed-backend", "gloo",
            "--ddp-backend", "legacy_ddp", "--distributed-no-spawn",
            "--distributed-init-method", f"tcp://127.0.0.1:{port}",
            "--save-dir", str(tmp_path / "ck"), "--max-update", "4"]
    for k, v in TINY_FAIRSEQ.items():
        if k not in ("max_update",):
            args += ["--" + k.replace("_", "-"), str(v)]
    procs = [subprocess.Popen(toolkit_command("fairseq-train") + args + ["--distributed-rank", str(r)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in (0, 1)]
    outs = [p.communicate(timeout=240)[0] for p in procs]
    for rank, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"rank {rank}:\n{out[-3000:]}"
    assert "initialized host" in outs[1] and "as rank 1" in outs[1]
    assert "training on 2 devices" in outs[0]
    assert "seq_acc" in outs[0]
    assert (tmp_path / "ck" / "checkpoint_last.pt").is_file()


def _register_in_fresh_process(user_dir: str, queue) -> None:
    from fairseq import utils
    from fairseq.criterions import CRITERION_REGISTRY
    from fairseq.models import ARCH_MODEL_REGISTRY
    from fairseq.tasks import TASK_REGISTRY

    utils.import_user_module(Namespace(user_dir=user_dir))
    utils.import_user_module(Namespace(user_dir=user_dir))  # a second import is a no-op
    queue.put([TASK_REGISTRY["translation_seq_acc"].__module__,
               TASK_REGISTRY["sequence_classification"].__module__,
               CRITERION_REGISTRY["sequence_classification"].__module__,
               TASK_REGISTRY["pcfgset_translation"].__module__,      # the names before 0.2,
               TASK_REGISTRY["ctlpp_classification"].__module__]    # for older checkpoints
              + [ARCH_MODEL_REGISTRY[a].__module__
                 for a in ("ctlpp_bilstm", "ctlpp_transformer", "ctlpp_ndr")])


def test_plugin_registers_in_a_spawned_process():
    """What torch.multiprocessing.spawn gives each worker: a fresh interpreter."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_register_in_fresh_process, args=(str(ROOT / "fairseq_plugins"), q))
    p.start()
    p.join(120)
    assert p.exitcode == 0
    assert q.get(timeout=5) == ["fairseq_plugins.tasks.translation_seq_acc",
                                "fairseq_plugins.tasks.sequence_classification",
                                "fairseq_plugins.criterions.sequence_classification",
                                "fairseq_plugins.tasks.translation_seq_acc",
                                "fairseq_plugins.tasks.sequence_classification"] + [
                                    "fairseq_plugins.models.ctlpp"] * 3
