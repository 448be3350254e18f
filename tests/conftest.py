import os
import sys
from pathlib import Path

# The tests run two streams at once on the suite's two cores: the tests themselves and,
# niced, the tiny profiles they read (TinyRuns, below).  A torch process with two threads
# then spins on a core the other stream holds (paradox's tiny run: 300 s of CPU instead of
# 100): every torch process of the session, this one and those it starts, takes one.
# Set before anything imports torch; a user's own setting is kept.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# The tests compare runs made on one machine, so they leave the CPU kernels to the
# libraries (`--machine-kernels`: faster, and the paper-size configurations they train a
# step of take their time); tests/test_kernels.py runs `compsuite` with the kernels
# pinned, as it runs by default.  Set before torch is imported, in every process.
os.environ["COMPSUITE_KERNELS"] = "machine"

# A user config file of the machine (~/.config/compsuite/config.yaml: executor: slurm,
# say) does not reach the tests; a test that wants one names it.
os.environ["COMPSUITE_CONFIG"] = ""

import pytest  # noqa: E402

from compsuite import timings
from compsuite.foundation.dataset import Dataset
from compsuite.studies.base import Run
from compsuite.toolkits import get_backend

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("COMPSUITE_REFERENCE", ROOT.parent / "shared" / "reference"))

# The example study of docs/adding_a_study.md joins the registry for the tests (also in
# the commands they run), so the contract tests cover a study from outside the suite.
EXAMPLE_STUDY = ROOT / "docs" / "example_study"
for var in ("COMPSUITE_EXPERIMENTS", "PYTHONPATH"):
    os.environ[var] = os.pathsep.join(p for p in (str(EXAMPLE_STUDY), os.environ.get(var)) if p)
sys.path.insert(0, str(EXAMPLE_STUDY))


def reference_path(*parts: str) -> Path:
    """A path in the studies' reference data; skips the test (naming it) when absent."""
    p = REFERENCE.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"reference data not available: {p}")
    return p


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """A small scaled-down PCFG SET corpus (raw text), generated once per session."""
    from dataclasses import replace

    from compsuite.data_prep.pcfgset import SMALL, generate

    out = tmp_path_factory.mktemp("pcfg_small") / "raw"
    generate(out, replace(SMALL, n_pairs=2000), seed=3)
    return out


# ---------------------------------------------------------------- tiny toolkit runs
#: the suite's string-to-string task (what pcfgset.yaml's toolkit_defaults give a run)
FAIRSEQ_TASK = {"task": "translation_seq_acc", "eval_accuracy": True,
                "best_checkpoint_metric": "seq_acc", "maximize_best_checkpoint_metric": True,
                "log_format": "simple"}
TINY_FAIRSEQ = {
    "arch": "transformer", "encoder_layers": 1, "decoder_layers": 1,
    "encoder_embed_dim": 16, "decoder_embed_dim": 16, "encoder_ffn_embed_dim": 32,
    "decoder_ffn_embed_dim": 32, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
    "optimizer": "adam", "lr": 0.005, "max_tokens": 2048, "max_update": 12,
    "num_workers": 0, "log_interval": 4,
}
TINY_ONMT = {
    "enc_layers": 1, "dec_layers": 1, "hidden_size": 16, "word_vec_size": 16,
    "optim": "adam", "learning_rate": 0.005, "train_steps": 12, "valid_steps": 6,
    "save_checkpoint_steps": 6, "keep_checkpoint": 2, "report_every": 4, "batch_size": 32,
    "bucket_size": 2048, "num_workers": 0,  # fast start-up on a tiny corpus
}


@pytest.fixture(scope="session")
def tiny_data(small_corpus):
    """The small corpus with both toolkits' formats beside its raw text."""
    data = Dataset(small_corpus.parent, label="tiny test")
    for toolkit in ("fairseq", "onmt"):
        data.formats[toolkit] = get_backend(toolkit).write_data(data)
    return data


@pytest.fixture(scope="session")
def tiny_runs(tiny_data, tmp_path_factory):
    """Train one tiny model per toolkit; returns {toolkit: (run_dir, train_info)}."""
    root = tmp_path_factory.mktemp("tiny_runs")
    runs = {
        "fairseq": Run("tiny-fairseq", "transformer", "fairseq", False,
                       args={**FAIRSEQ_TASK, **TINY_FAIRSEQ}),
        "onmt": Run("tiny-onmt", "lstms2s", "onmt", False, config="onmt_configs/pcfgset/lstm.yaml",
                    profiles={"tiny": TINY_ONMT}),
    }
    out = {}
    for toolkit, run in runs.items():
        run_dir = root / toolkit
        info = get_backend(toolkit).train(run, "tiny", tiny_data, run_dir, seed=1, show=False)
        out[toolkit] = (run, run_dir, info)
    return out




# ---------------------------------------------------------------- tiny profiles
class TinyRun:
    """One `compsuite run <study> --profile tiny` into a folder of its own, two units side
    by side as the ctlpp, sget and nli tiny profiles set (a thread each: for models this
    small, faster than one unit at a time on both cores)."""

    def __init__(self, study: str, root: Path):
        self.study, self.root = study, root
        self.args = ["--profile", "tiny", "--jobs", "2", "--data-root", str(root / "DATA"),
                     "--runs-root", str(root / "runs"), "--results-root", str(root / "results")]
        self.runs = root / "runs" / study / "tiny"
        self.results = root / "results" / study / "tiny"

    def run(self, *extra: str) -> int:
        from compsuite.cli import main

        return main(["run", self.study, "--quiet", *self.args, *extra])

    def result(self, unit_path: str) -> dict:
        import json

        return json.loads((self.runs / unit_path / "result.json").read_text())


# The tiny runs are the suite's longest set-ups, while most other tests keep one of the
# two cores busy.  So the modules that read a tiny run go last, and the runs they name
# (by a parameter `name` or `study`, or a module test_<study>_*.py) start with the session,
# one after another in a process of their own at a lower priority, while the other tests
# run; `tiny_study(name)` waits for its run (a study not started yet it runs itself).
_TINY_PLAN = pytest.StashKey[list]()


def _tiny_studies(item, known: list[str]) -> list[str]:
    """The studies whose tiny run ``item`` names."""
    spec = getattr(item, "callspec", None)
    for key in ("name", "study"):
        value = spec.params.get(key) if spec is not None else None
        if isinstance(value, str) and value in known:
            return [value]
    module = getattr(item, "module", None)
    return [s for s in known if module and module.__name__.startswith(f"test_{s}_")]


@pytest.hookimpl(trylast=True)   # after -k and -m deselected theirs
def pytest_collection_modifyitems(config, items):
    later = {getattr(i, "module", None) for i in items if "tiny_study" in i.fixturenames}
    later.discard(None)
    items[:] = ([i for i in items if getattr(i, "module", None) not in later]
                + [i for i in items if getattr(i, "module", None) in later])
    plan: list[str] = []
    if later:
        from compsuite.registry import studies

        known = list(studies())
        for item in items:
            if "tiny_study" in item.fixturenames:
                plan += [s for s in _tiny_studies(item, known) if s not in plan]
    config.stash[_TINY_PLAN] = plan


class TinyRuns:
    """The planned tiny runs, started one after another (``nice -n 10``) by a thread."""

    def __init__(self, runs: list[TinyRun]):
        import threading

        self.todo = list(runs)
        self.started: dict[str, tuple[TinyRun, "subprocess.Popen"]] = {}
        # as at the session's start: a test's monkeypatched variables or folder must not
        # reach a run started meanwhile
        self.env, self.cwd = dict(os.environ), os.getcwd()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._start_each, daemon=True)
        self.thread.start()

    def _start_each(self) -> None:
        import shutil
        import subprocess

        nice = ["nice", "-n", "10"] if shutil.which("nice") else []
        while True:
            with self.lock:
                if not self.todo:
                    return
                t = self.todo.pop(0)
                with open(t.root / "run.log", "w") as log:
                    proc = subprocess.Popen(
                        nice + [sys.executable, "-m", "compsuite.cli", "run", t.study,
                                "--quiet", *t.args], stdout=log, stderr=subprocess.STDOUT,
                        env=self.env, cwd=self.cwd, start_new_session=True)
                self.started[t.study] = (t, proc)
            proc.wait()

    def claim(self, name: str) -> "TinyRun | None":
        """The run of ``name`` once finished; None when it was not started (it never
        will be)."""
        with self.lock:
            self.todo = [t for t in self.todo if t.study != name]
            found = self.started.get(name)
        if found is None:
            return None
        t, proc = found
        t.returncode = proc.wait()
        if t.returncode != 0:   # shown with the failing test
            print((t.root / "run.log").read_text()[-5000:], file=sys.stderr)
        return t

    def stop(self) -> None:
        import contextlib
        import signal
        import subprocess

        with self.lock:
            self.todo = []
            running = [p for _, p in self.started.values() if p.poll() is None]
        for proc in running:   # the run ends the toolkit processes it started
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in running:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="session", autouse=True)
def tiny_runs_in_background(request, tmp_path_factory):
    plan = request.config.stash.get(_TINY_PLAN, [])
    runs = TinyRuns([TinyRun(n, tmp_path_factory.mktemp(f"tiny_{n}")) for n in plan]) \
        if plan else None
    yield runs
    if runs is not None:
        runs.stop()


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory, tiny_runs_in_background):
    """``tiny_study(name)``: the study's tiny profile, run once per session."""
    done: dict[str, TinyRun] = {}

    def get(name: str) -> TinyRun:
        if name not in done:
            bg = tiny_runs_in_background
            t = bg.claim(name) if bg is not None else None
            if t is None:
                t = TinyRun(name, tmp_path_factory.mktemp(f"tiny_{name}"))
                t.returncode = t.run()
            done[name] = t
        return done[name]
    return get


def edited_study(tmp_path, name: str, edit):
    """A suite study with its YAML edited by ``edit(raw)``, written beside a copy of
    _base.yaml in ``tmp_path`` (so an error names that file)."""
    import shutil

    import yaml

    from compsuite.registry import EXPERIMENTS_DIR, load_study

    raw = yaml.safe_load((EXPERIMENTS_DIR / f"{name}.yaml").read_text())
    edit(raw)
    shutil.copy(EXPERIMENTS_DIR / "_base.yaml", tmp_path / "_base.yaml")
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_study(path)


def fairseq_predictions(task, models, split: str = "test") -> dict[int, str]:
    """Example id -> the label ``task.predict`` gives, for every example of a binarised
    split, batched by fairseq's own iterator (batches of 8, in order)."""
    ds = task.load_dataset(split)
    itr = task.get_batch_iterator(ds, max_sentences=8, required_batch_size_multiple=8)
    preds = {}
    for sample in itr.next_epoch_itr(shuffle=False):
        for i, label in zip(sample["id"].tolist(), task.predict(models, sample["net_input"])):
            preds[i] = label
    return preds


def stored_stamps(runs: Path) -> dict[Path, int]:
    """Each file's modification time under a runs folder, but for the timings log
    (``timings.jsonl`` and a Slurm job's ``timings.d/``), which every run appends to:
    what a second run of a finished profile must leave as it was."""
    return {p: p.stat().st_mtime_ns for p in runs.rglob("*")
            if p.is_file() and p.name != timings.FILE and p.parent.name != timings.JOBS_DIR}
