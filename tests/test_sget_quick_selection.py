"""SGET's checkpoint selection on a sample against the full selection, on finished runs
of the quick profile: every run of ``compsuite run sget --profile quick`` (checkpoints
kept: the quick profile's ``selection: {keep: all}``) is selected again on a copy,
scoring every checkpoint on 200 of the 1,000 development lines and only the best of
them in full; the chosen checkpoint must be the one its full selection chose.

A quick run takes minutes to tens of minutes on 2 cores, so this test reads runs made
beforehand: ``COMPSUITE_QUICK_RUNS`` (the ``--runs-root`` of that command) and
``COMPSUITE_QUICK_DATA`` (its ``--data-root``; default ``DATA`` beside the runs
folder).  Without them it is skipped (data_prep/sget/doc.md gives the figures of a
run)."""
import json
import os
from pathlib import Path

import pytest

SAMPLE, FINALISTS = 200, 1


def quick_runs() -> tuple[list[Path], Path]:
    root = os.environ.get("COMPSUITE_QUICK_RUNS")
    if not root:
        pytest.skip("COMPSUITE_QUICK_RUNS is not set (the runs folder of a finished "
                    "`compsuite run sget --profile quick`)")
    data = Path(os.environ.get("COMPSUITE_QUICK_DATA") or Path(root).parent / "DATA")
    found = sorted(Path(root).glob("sget/quick/main/*/seed*/result.json"))
    if not found:
        pytest.skip(f"{root}: no finished SGET quick unit (sget/quick/main/<run>/seed<S>/"
                    "result.json)")
    return [f.parent for f in found], data


def test_a_sample_and_finalists_choose_what_the_whole_set_chose(tmp_path):
    from compsuite.data_prep.sget.dataset import encoded_text
    from compsuite.eval.sget.selection import select_checkpoint
    from compsuite.registry import get_study
    from compsuite.toolkits import get_backend

    run_dirs, data_root = quick_runs()
    study = get_study("sget")
    profile = study.profile("quick")
    data = study.prepare("main", 1, profile, data_root, show=False)
    generation = profile.generation
    checked = 0
    for run_dir in run_dirs:
        result = json.loads((run_dir / "result.json").read_text())
        full = result["checkpoint_selection"]
        if full.get("sample") or full.get("best_step") is None:
            continue   # selected on a sample already, or an evaluate-only run
        run = study.run(run_dir.parent.name)
        backend = get_backend(run.toolkit)
        data.formats[run.toolkit] = backend.write_data(data)   # as the runner does (kept)
        copy = tmp_path / run.name / run_dir.name     # one folder per seed
        copy.mkdir(parents=True)
        (copy / backend.checkpoint_folder).symlink_to(run_dir / backend.checkpoint_folder)
        sel = select_checkpoint(backend, copy, data, generation,
                                encoded_text(data.root) / "dev.ja", sample=SAMPLE,
                                finalists=FINALISTS)
        assert sel["best_step"] == full["best_step"], (run.name, full["by_step"], sel)
        assert sel["best_score"] == full["best_score"]
        n_ckpt = len(full["by_step"])
        assert sel["dev_sentences_decoded"] <= n_ckpt * SAMPLE + (
            len(sel["sample"]["chosen_from"]) * full["n_dev"])
        print(f"{run.name} {run_dir.name}: step {sel['best_step']} of {n_ckpt} checkpoints, "
              f"{sel['dev_sentences_decoded']} dev sentences decoded against "
              f"{n_ckpt * full['n_dev']}")
        checked += 1
    if not checked:
        pytest.skip("no quick unit selected on the whole development set")
