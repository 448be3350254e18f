"""A study's answer-only tests as lm-evaluation-harness tasks (compsuite/lmeval.py):
``compsuite export --lm-eval`` writes them, the pinned ``lm_eval`` runs them with its
own ``hf`` backend on a tiny causal LM built here from a config (nothing downloaded,
offline), and ``compsuite score --lm-eval-samples`` scores the answers lm_eval logged
with the study's own evaluation: the score lm_eval prints is the one the suite computes
from the same answers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compsuite.cli import main
from compsuite.foundation.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
#: what the tiny model answers to every prompt (a reference of PCFG SET's tiny test set)
ANSWER = "H1 B1 V1"


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    root = tmp_path_factory.mktemp("lmeval")
    out = root / "export"
    assert main(["export", "pcfgset", "--profile", "tiny", "--lm-eval", str(out),
                 "--data-root", str(root / "DATA"), "--quiet"]) == 0
    return root, out


def docs(out: Path, task: str) -> list[dict]:
    path = out / "lm_eval" / "docs" / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_file_of_an_answer_only_test_is_a_task(export):
    root, out = export
    manifest = json.loads((out / "manifest.json").read_text())
    index = json.loads((out / "lm_eval" / "tasks.json").read_text())
    tasks = index["tasks"]
    exported = {f["inputs"] for e in manifest["units"] for f in e["files"]}
    assert {t["inputs"] for t in tasks.values()} == exported
    # localism feeds the model's outputs back: no task, and the reason
    assert list(index["not_exported"]) == ["localism/export/seed1"]
    assert "feeds the model's own outputs back" in index["not_exported"]["localism/export/seed1"]
    assert "compsuite_pcfgset_task" in tasks and "compsuite_pcfgset_systematicity" in tasks
    # a unit of several files: a task each, tagged with the unit's name
    per = [t for t in tasks if t.startswith("compsuite_pcfgset_per_function_")]
    assert len(per) == 10 and all(
        tasks[t]["tags"] == ["compsuite_pcfgset", "compsuite_pcfgset_per_function"] for t in per)
    # the references are the dataset's own, found by the inputs
    raw = Path(next(e["data"] for e in manifest["units"] if e["unit"] == "task/export/seed1"))
    task = docs(out, "compsuite_pcfgset_task")
    assert [d["input"] for d in task] == (raw / "test.src").read_text().splitlines()
    assert [d["target"] for d in task] == (raw / "test.tgt").read_text().splitlines()
    assert [d["id"] for d in task] == (out / "task/export/seed1/translate-test.ids"
                                       ).read_text().splitlines()
    # the study's prompting (toolkit_defaults.*.prompting), zero-shot
    from compsuite.models.prompting import Prompter, prompt_spec
    from compsuite.registry import read_yaml, studies

    spec = prompt_spec(read_yaml(studies().get("pcfgset"))["toolkit_defaults"]["served"][
        "prompting"], "pcfgset")
    assert task[0]["prompt"] == Prompter(spec).prompts([task[0]["input"]])[0].text
    assert task[0]["prompt"].endswith(f"Input: {task[0]['input']}\nOutput:")
    assert tasks["compsuite_pcfgset_task"]["metric"] == "seq_acc"
    # the exception inputs have two answers in the data (the exception, the rule): the
    # study decides which counts, so lm-eval only collects the answers
    og = tasks["compsuite_pcfgset_overgeneralisation"]
    assert og["metric"] is None and "several ways" in og["no_references"]
    yaml = (out / "lm_eval" / "compsuite_pcfgset_task.yaml").read_text()
    for line in ("task: compsuite_pcfgset_task", "output_type: generate_until",
                 '  until: ["\\n"]', "  do_sample: false", "  max_gen_toks: 128",   # the study's prompting.max_tokens
                 "process_results: !function utils.process_results",
                 "    aggregation: !function utils.seq_acc"):
        assert line in yaml.splitlines()
    assert "metric_list: []" in (out / "lm_eval" / "compsuite_pcfgset_overgeneralisation.yaml"
                                 ).read_text()


def constant_model(folder: Path, prompts: list[str], answer: str) -> Path:
    """A tiny Llama built from a config (a BPE tokenizer trained on the prompts) and
    trained for a moment to answer ``answer`` and a line break after any prompt: the
    answers are known, and a few of them are right."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from compsuite.toolkits.hf.backend import train_tokenizer

    tok = train_tokenizer(prompts[:500] + [f" {answer}\n"], 300)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=256, pad_token_id=tok.pad_token_id,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(1)
    model = LlamaForCausalLM(cfg)
    said = tok(f" {answer}\n")["input_ids"]
    asked = [tok(p)["input_ids"] for p in prompts[:64]]
    width = max(len(p) for p in asked) + len(said)
    ids = torch.full((len(asked), width), tok.pad_token_id)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for i, p in enumerate(asked):
        ids[i, :len(p) + len(said)] = torch.tensor(p + said)
        mask[i, :len(p) + len(said)] = 1
        labels[i, len(p):len(p) + len(said)] = torch.tensor(said)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(150):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def printed_value(stdout: str, task: str, metric: str) -> str:
    """The value lm_eval's results table prints for ``task``'s ``metric``."""
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 7 and cells[0] == task and cells[4] == metric:
            return cells[6]
    raise AssertionError(f"no row for {task} {metric} in lm_eval's table:\n{stdout}")


@pytest.fixture(scope="module")
def lm_eval_run(export):
    root, out = export
    task = docs(out, "compsuite_pcfgset_task")
    # trained on the prompts whose reference is the answer first: some answers are right
    right = {d["prompt"] for d in task if d["target"] == ANSWER}
    prompts = sorted((d["prompt"] for d in task), key=lambda p: p not in right)
    model = constant_model(root / "model", prompts, ANSWER)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    samples = root / "lm-eval-out"
    proc = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args",
         f"pretrained={model},dtype=float32", "--device", "cpu", "--include_path", str(out),
         "--tasks", "compsuite_pcfgset_task,compsuite_pcfgset_overgeneralisation",
         "--batch_size", "64", "--log_samples", "--output_path", str(samples)],
        cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root, out, samples, proc.stdout


def test_lm_eval_prints_the_score_the_suite_gives_the_answers_it_logged(lm_eval_run):
    root, out, samples, stdout = lm_eval_run
    (results,) = samples.rglob("results_*.json")
    by_lm_eval = json.loads(results.read_text())["results"]["compsuite_pcfgset_task"]["seq_acc,none"]
    (logged,) = samples.rglob("samples_compsuite_pcfgset_task_*.jsonl")
    rows = sorted((json.loads(line) for line in logged.read_text().splitlines()),
                  key=lambda s: s["doc"]["line"])
    answers = [first_line(s["filtered_resps"][0]) for s in rows]
    right = sum(a == s["doc"]["target"] for a, s in zip(answers, rows))
    assert len(rows) == 2353 and answers.count(ANSWER) > len(rows) // 2 and right >= 2
    assert by_lm_eval == right / len(rows)
    print(f"lm_eval: seq_acc {by_lm_eval} ({right} of {len(rows)}), printed "
          f"{printed_value(stdout, 'compsuite_pcfgset_task', 'seq_acc')}")

    assert main(["score", "pcfgset", "--profile", "tiny", "--from", str(out),
                 "--lm-eval-samples", str(samples), "--data-root", str(root / "DATA"),
                 "--runs-root", str(root / "runs"), "--results-root", str(root / "results"),
                 "--quiet"]) == 0
    # the answers the way back wrote, in the export's order, are those lm_eval logged
    hyps = root / "runs" / "lm-eval-answers" / "pcfgset" / "tiny-system"
    assert (hyps / "task/export/seed1/translate-test.hyp").read_text().splitlines() == answers
    result = json.loads((root / "runs/scored/pcfgset/tiny/task/system/seed1/result.json"
                         ).read_text())
    assert result["accuracy"] == by_lm_eval
    print(f"compsuite score: accuracy {result['accuracy']} ({result['correct']} of "
          f"{result['n']})")
    assert printed_value(stdout, "compsuite_pcfgset_task", "seq_acc") == f"{by_lm_eval:.4f}"
    # the test lm-eval cannot score (no references) is scored by the study's evaluation
    og = json.loads((root / "runs/scored/pcfgset/tiny/overgeneralisation/system/seed1/"
                     "result.json").read_text())
    assert og["evaluation"] == "overgeneralisation" and "peak_overgeneralisation" in og
    report = (root / "results" / "pcfgset" / "tiny-system" / "report.md").read_text()
    assert ("- systematicity/system/seed1: not answered in the samples (lm_eval --tasks "
            "compsuite_pcfgset_systematicity)") in report
    assert ("- per_function/system/seed1: not answered in the samples (lm_eval --tasks "
            "compsuite_pcfgset_per_function)") in report


def test_a_part_of_a_test_is_not_scored_as_the_test(lm_eval_run, tmp_path, capsys):
    root, out, samples, _ = lm_eval_run
    (logged,) = samples.rglob("samples_compsuite_pcfgset_task_*.jsonl")
    limited = tmp_path / "limited" / "model"
    limited.mkdir(parents=True)
    (limited / logged.name).write_text("".join(logged.read_text().splitlines(True)[:5]))
    args = ["score", "pcfgset", "--profile", "tiny", "--from", str(out), "--data-root",
            str(root / "DATA"), "--runs-root", str(tmp_path / "runs"), "--results-root",
            str(tmp_path / "results"), "--quiet"]
    assert main(args + ["--lm-eval-samples", str(tmp_path / "limited")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"compsuite: error: {tmp_path / 'limited'}: no test is answered "
                          "whole: task/export/seed1: compsuite_pcfgset_task has 5 of its "
                          "2353 answers (lm_eval --limit?)") and err.count("\n") == 1
    # samples of another export: refused, naming the line
    row = json.loads(logged.read_text().splitlines()[0])
    row["doc"]["input"] = "copy A1"
    (limited / logged.name).write_text(json.dumps(row) + "\n")
    assert main(args + ["--lm-eval-samples", str(tmp_path / "limited")]) == 1
    assert f"{limited / logged.name}:1: input 'copy A1' is not line 1" in capsys.readouterr().err
    # no samples at all; no answers given
    (limited / logged.name).unlink()
    assert main(args + ["--lm-eval-samples", str(tmp_path / "limited")]) == 1
    assert "no samples_*.jsonl (run lm_eval with --log_samples" in capsys.readouterr().err
    assert main(args) == 2
    assert "give the answers: --hyps DIR, or --lm-eval-samples DIR" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_references_are_found_by_the_inputs(tmp_path):
    from compsuite.lmeval import references

    (tmp_path / "test.premise").write_text("a b\nc d\n")
    (tmp_path / "test.hypothesis").write_text("b a\nd c\n")
    (tmp_path / "test.label").write_text("entailment\nneutral\n")
    (tmp_path / "x_one.src").write_text("f A1\nf B1\n")
    (tmp_path / "x_one.tgt").write_text("A1\nB1\n")
    (tmp_path / "x_two.src").write_text("f A1\nf B1\n")
    (tmp_path / "x_two.tgt").write_text("A1 A1\nB1 B1\n")
    assert references(["a b\tb a", "c d\td c"], [tmp_path]) == (tmp_path / "test.label", "")
    assert references(["a b\tb a"], [tmp_path])[0] is None
    ref, why = references(["f A1", "f B1"], [tmp_path])
    assert ref is None and "several ways (x_one.tgt, x_two.tgt)" in why
    (tmp_path / "x_two.tgt").write_text("A1\nB1\n")   # the same answers twice: one
    assert references(["f A1", "f B1"], [tmp_path])[0] == tmp_path / "x_one.tgt"


def test_the_prompting_options_are_checked_before_any_work(tmp_path, capsys):
    from compsuite.lmeval import prompt_settings
    from compsuite.registry import get_study

    spec = prompt_settings(get_study("pcfgset"), 2, "similar")
    assert (spec.shots, spec.strategy, spec.label()) == (2, "similar", "2-shot similar")
    with pytest.raises(ConfigError, match="shots: 0 or more"):
        prompt_settings(get_study("pcfgset"), -1)
    assert main(["export", "pcfgset", "--profile", "tiny", "--out", str(tmp_path / "x"),
                 "--shots", "2"]) == 2
    assert "--shots and --demos shape the prompts of --lm-eval tasks" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_class_is_read_from_its_label_word_as_the_suite_reads_it(tmp_path):
    from compsuite import lmeval

    (tmp_path / "prompting.json").write_text(json.dumps({
        "template": "{premise} Question: {hypothesis}? Answer:", "stop": ["."],
        "labels": {"entailment": "yes", "contradiction": "no", "neutral": "maybe"}}))
    doc = {"kind": "classify", "scored": True, "target": "entailment"}
    assert lmeval.answer_of(tmp_path, doc, " Yes. And more\nlines") == "entailment"
    assert lmeval.answer_of(tmp_path, doc, " perhaps") == ""   # no class: wrong
    assert lmeval.process_results(tmp_path, doc, [" no"]) == {
        "accuracy": ("contradiction", "entailment")}
    assert lmeval.process_results(tmp_path, {**doc, "scored": False}, [" no"]) == {}
    assert lmeval.aggregate([("entailment", "entailment"), ("", "neutral")]) == 0.5
