"""benchmarks/bench_training.py at a tiny size: the report's structure, the parts adding
up to the wall times, and the measuring variants doing what they are for (validations
and checkpoints the suite's run does not have).  Timings are not checked."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_training",
                                                  ROOT / "benchmarks" / "bench_training.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_variant_options():
    bench = load_bench()
    assert bench.options("fairseq", "suite", 300, 5) == {"max_update": 300}
    off = bench.options("fairseq", "off", 300, 5)
    assert off["disable_validation"] and off["max_update"] == 300
    val = bench.options("fairseq", "validation", 300, 5)
    assert val["disable_validation"] is None and val["validate_interval_updates"] == 60
    assert bench.options("onmt", "checkpoints", 300, 5)["save_checkpoint_steps"] == 60
    assert bench.options("onmt", "off", 300, 5)["valid_steps"] > 600


def test_count_events(tmp_path):
    bench = load_bench()
    log = tmp_path / "train.log"
    log.write_text("x | valid on 'valid' subset | accuracy 1\nx | valid on 'test' subset |\n"
                   "Saved checkpoint a.pt (epoch 1)\nx | valid on 'valid' subset |\n")
    assert bench.count_events("fairseq", log) == (2, 1)
    log.write_text("Validation perplexity: 3\nValidation accuracy: 4\n"
                   "Saving checkpoint m_step_2.pt\nSaving checkpoint m_step_4.pt\n")
    assert bench.count_events("onmt", log) == (1, 2)


def test_loop_time(tmp_path):
    bench = load_bench()
    log = tmp_path / "train.log"
    log.write_text("2026-11-29 12:00:00 | INFO | fairseq_cli.train | done training in 24.5 "
                   "seconds\n")
    assert bench.loop_time("fairseq", log) == 24.5
    log.write_text("[2026-11-29 12:00:01,250 INFO] Start training loop and validate every 6\n"
                   "[2026-11-29 12:00:02,000 INFO] Saving checkpoint m_step_6.pt\n"
                   "[2026-11-29 12:00:04,500 INFO] Saving checkpoint m_step_12.pt\n")
    assert bench.loop_time("onmt", log) == pytest.approx(3.25)


def test_tiny_run(tmp_path, capsys):
    bench = load_bench()
    report = bench.main(["--profile", "tiny", "--updates", "2", "--events", "2",
                         "--rounds", "1", "--data-root", str(tmp_path / "DATA"),
                         "--json", str(tmp_path / "report.json")])
    out = capsys.readouterr().out
    assert "| part | fairseq suite (s) | fairseq bare (s) | onmt suite (s) | onmt bare (s) |" \
        in out
    assert (tmp_path / "report.json").is_file()
    for toolkit in ("fairseq", "onmt"):
        r = report["toolkits"][toolkit]
        for side in ("suite", "bare"):
            parts = r[side]["parts"]
            assert set(parts) == set(bench.PARTS)
            assert parts["start-up"] > 0
        # the bare loop's parts are marks on one clock within its process's wall time;
        # the suite's start-up is a run of its own (`--help`), and its updates and data
        # loading are differences of separate runs, so at two updates on a busy machine
        # they can come out above the wall time or below zero: not checked here
        bare = r["bare"]["parts"]
        assert all(v >= 0 for v in bare.values())
        assert bare["start-up"] + bare["updates"] < r["bare"]["wall"]
        assert r["bare"]["parts"]["updates"] > 0
        assert 0 < r["suite"]["loop"] < r["suite"]["wall"]
        assert r["ratio"] == pytest.approx(r["suite"]["wall"] / r["bare"]["wall"])
        raw = report["raw"][toolkit][0]
        # the measuring variants: validations and checkpoints beyond the "off" run's
        assert raw["off"]["events"][0] == 0
        assert raw["validation"]["events"][0] == 2
        assert raw["checkpoints"]["events"][1] > raw["off"]["events"][1] == 1
