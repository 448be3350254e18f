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

from compsuite.toolkits.writing import toolkit_command

from conftest import ROOT, TINY_FAIRSEQ


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: What a worker prints when it aborts at interpreter exit, after training: gloo's threads
#: are torn down while joinable (fairseq never destroys the process group).  Seen once in
#: CI on rank 1 with rank 0 finished; 0 of 25 repeats here reproduced it.
TEARDOWN_ABORT = "terminate called without an active exception"


def _train_two_workers(data, save_dir):
    port = _free_port()
    args = [str(data), "--user-dir", "fairseq_plugins",  # relative, as users write it
            "--task", "translation_seq_acc", "--eval-accuracy", "--cpu",
            "--distributed-world-size", "2", "--distributed-backend", "gloo",
            "--ddp-backend", "legacy_ddp", "--distributed-no-spawn",
            "--distributed-init-method", f"tcp://127.0.0.1:{port}",
            "--save-dir", str(save_dir), "--max-update", "4"]
    for k, v in TINY_FAIRSEQ.items():
        if k not in ("max_update",):
            args += ["--" + k.replace("_", "-"), str(v)]
    procs = [subprocess.Popen(toolkit_command("fairseq-train") + args + ["--distributed-rank", str(r)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in (0, 1)]
    outs = [p.communicate(timeout=240)[0] for p in procs]
    return [p.returncode for p in procs], outs


def _aborted_at_exit(rcs, outs) -> bool:
    """Rank 0 trained to the end and rank 1 only aborted in teardown (SIGABRT, gloo)."""
    return (rcs[0] == 0 and "done training" in outs[0] and rcs[1] == -6
            and outs[1].rstrip().endswith(TEARDOWN_ABORT))


def test_two_fairseq_train_workers_with_user_dir(tiny_data, tmp_path):
    save_dir = tmp_path / "ck"
    rcs, outs = _train_two_workers(tiny_data.folder("fairseq"), save_dir)
    if _aborted_at_exit(rcs, outs):  # the known exit-time race: one more try, not more
        save_dir = tmp_path / "ck-retry"
        rcs, outs = _train_two_workers(tiny_data.folder("fairseq"), save_dir)
    for rank, (rc, out) in enumerate(zip(rcs, outs)):
        assert rc == 0, f"rank {rank}:\n{out[-3000:]}"
    assert "initialized host" in outs[1] and "as rank 1" in outs[1]
    assert "training on 2 devices" in outs[0]
    assert "seq_acc" in outs[0]
    assert (save_dir / "checkpoint_last.pt").is_file()


def test_teardown_abort_is_recognised_narrowly():
    done = "... | INFO | fairseq_cli.train | done training in 3.1 seconds\n"
    aborted = "... warnings ...\nterminate called without an active exception\n"
    assert _aborted_at_exit([0, -6], [done, aborted])
    assert not _aborted_at_exit([0, 1], [done, aborted])            # another exit status
    assert not _aborted_at_exit([0, -6], ["no end\n", aborted])     # rank 0 did not finish
    assert not _aborted_at_exit([0, -6], [done, "Traceback ...\n"])  # another failure


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
