"""Every prompted study's tiny profile end to end through a real ``transformers serve``
(tests/served_server.py: a tiny Llama built from a config, nothing downloaded), by the
study's own YAML run ``prompted-lm-served`` (its ``toolkit_defaults.served.prompting``,
and the tiny profile's 4-token answers): each result records how the model was asked
and what it cost, each report names the prompted row with its shots and strategy, and
findings.md judges it where the study's findings read its rows.  A k-shot run from the
command line draws demonstrations from the study's training split.

PCFG SET's tiny profile asks about 60,000 questions (its task and the tests that read
the task's model 28,404, each of the four other tests 2,353 to 4,706, localism 17,262),
about 15 minutes against this server on 2 cores: here its overgeneralisation test; the
rest by hand (docs/served_models.md), localism's model-in-the-loop calls through
``compsuite eval pcfgset localism --model-url`` in tests/test_served.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")

from compsuite.cli import main  # noqa: E402
from served_server import Served, build_model  # noqa: E402

RUN = "prompted-lm-served"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("prompted")
    with Served(build_model(root / "model"), root / "server.log") as s:
        yield s


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def roots(tmp: Path, data: Path) -> list[str]:
    return ["--data-root", str(data), "--runs-root", str(tmp / "runs"),
            "--results-root", str(tmp / "results"), "--quiet"]


def results(tmp: Path, study: str, run: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in
            sorted((tmp / "runs" / study / "tiny").rglob("result.json")) if p.parent.parent.name == run]


@pytest.mark.parametrize("study, parts, scored", [
    ("sget", [], ["test", "gen"]),
    ("paradox", [], ["np_vp", "substitutivity"]),
    ("nli", [], ["synthetic"]),
    ("pcfgset", ["overgeneralisation"], ["overgeneralisation"]),
])
def test_a_prompted_study_end_to_end(study, parts, scored, server, data_root, tmp_path,
                                     monkeypatch):
    monkeypatch.setenv("COMPSUITE_LM_URL", server.url)
    monkeypatch.setenv("COMPSUITE_LM_MODEL", server.model)
    cmd = ["run", study, "--profile", "tiny", "--runs", RUN, *roots(tmp_path, data_root)]
    if parts:
        cmd += ["--parts", *parts]
    assert main(cmd) == 0
    found = results(tmp_path, study, RUN)
    assert found, f"no result of {RUN}"
    text = json.dumps(found)
    for name in scored:
        assert name in text
    for r in found:
        u = r["usage"]
        if r.get("model_from"):   # another unit's model: counted in that unit's folder
            assert u["counted_in"] == r["model_from"]
        assert u["label"] == "zero-shot" and u["model"] == server.model
        assert u["requests_sent"] + u["requests_cached"] > 0 and u["tokens_in"] > 0
        assert u["decoding"]["max_tokens"] == 4 and len(u["template_sha256"]) == 64
        assert r["evaluate_only"] and r["system"]["model"] == server.model
    report = (tmp_path / "results" / study / "tiny" / "report.md").read_text()
    assert "zero-shot" in report    # the prompted row, named with how it was asked
    if study == "nli":   # findings read the rows by name: the prompted one is judged
        findings = (tmp_path / "results" / study / "tiny" / "findings.md").read_text()
        assert "a prompted LM (zero-shot)" in findings


def test_k_shot_from_the_command_line_draws_from_the_training_split(server, data_root,
                                                                    tmp_path):
    """SGET 2-shot similar: the demonstrations are the training split's nearest
    sentences (answers.jsonl keeps each raw answer beside the one read), the prompts
    longer than zero-shot's, and the report names the setting."""
    base = ["run", "sget", "--profile", "tiny", "--model-url", server.url, "--model-name",
            server.model, "--max-tokens", "4", *roots(tmp_path, data_root)]
    assert main([*base, "--name", "zero"]) == 0
    assert main([*base, "--name", "two", "--shots", "2", "--demos", "similar"]) == 0
    [zero] = results(tmp_path, "sget", "zero")
    [two] = results(tmp_path, "sget", "two")
    assert two["usage"]["label"] == "2-shot similar"
    assert two["usage"]["requests_sent"] == zero["usage"]["requests_sent"]
    assert two["usage"]["tokens_in"] > 2 * zero["usage"]["tokens_in"]
    answers = [json.loads(line) for line in
               (tmp_path / "runs/sget/tiny/main/two/seed1/answers.jsonl").open()]
    assert answers and all({"raw", "answer"} <= set(a) for a in answers)
    report = (tmp_path / "results" / "sget" / "tiny" / "report.md").read_text()
    assert "two (2-shot similar)" in report and "zero (zero-shot)" in report
