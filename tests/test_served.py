"""The ``served`` backend (compsuite/toolkits/served/) against a real server: ``transformers
serve`` on 127.0.0.1 serving a tiny Llama built from a config (tests/served_server.py;
nothing downloaded), and tiny ``http.server`` servers that misbehave on purpose.

Shown: translation and classification through the backend (completions and chat);
``compsuite run`` of a prompted study end to end, from the command line (``--model-url``)
and from the study's YAML, with the usage record in each result; a second run sends 0
requests (the request cache); a server stopped mid-run and started again, the same
command resumes to the same results; an unreachable URL, a wrong model name, a server
answering 500 or malformed JSON give one-line errors naming the URL, no traceback,
nothing half-written; retries with backoff on 429 and time-outs; an empty and an
over-long answer recorded and scored as wrong; the API key in no file and no output.

The study run end to end is the example study of docs/adding_a_study.md (majority
letter: a classification, 40 test inputs), with prompting in its YAML; PCFG SET's tiny
profile asks ~18,000 questions, minutes against this server on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")
pytest.importorskip("transformers")

from compsuite.cli import main  # noqa: E402
from compsuite.foundation.checkout import ROOT  # noqa: E402
from compsuite.foundation.dataset import Dataset  # noqa: E402
from compsuite.foundation.errors import ConfigError, ToolkitError  # noqa: E402
from compsuite.studies.base import Run  # noqa: E402
from compsuite.toolkits import get_backend  # noqa: E402
from served_server import NOTHING, Served, bad_server, build_model, free_port, get  # noqa: E402

SECRET = "sk-test-SECRET"
BACKEND = get_backend("served")
STUDY = "majority_prompted"
#: the example study, prompted: its toolkit_defaults.served give every served run,
#: from the YAML or the command line, its prompting (2 demonstrations, 3 tokens)
STUDY_YAML = f"""
study: {STUDY}
include: {ROOT}/compsuite/experiments/_base.yaml
module: majority_study
title: "Majority letter, prompted (a test study)"
paper: "none"
config_version: 1
run_all: false
architectures:
  bow: {{paper_name: bag of words}}
  tiny-lm: {{paper_name: a tiny served LM, evaluate_only: true}}
toolkit_defaults:
  served:
    concurrency: 2
    retries: 1
    backoff: 0.05
    timeout: 20
    prompting: {{template: "letters: {{input}} most:", shots: 2, max_tokens: 3}}
runs:
  bow-sklearn: {{architecture: bow, toolkit: sklearn_bow, args: {{C: 1.0}}}}
  tiny-lm:
    architecture: tiny-lm
    toolkit: served
    args: {{url: "${{SERVED_URL}}", model: "${{SERVED_MODEL}}"}}
    profiles:
      one-at-a-time: {{concurrency: 1}}
profiles:
  tiny:
    description: "a few questions"
    seeds: [1]
    runs: [bow-sklearn]
    data: {{n_train: 60, n_test: 40}}
  one-at-a-time:
    description: "the same, one request at a time"
    seeds: [1]
    runs: [tiny-lm]
    data: {{n_train: 60, n_test: 40}}
"""


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``transformers serve`` of the tiny model, started once for the module."""
    root = tmp_path_factory.mktemp("served")
    folder = build_model(root / "tiny-llama")
    with Served(folder, root / "server.log") as s:
        yield s


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("studies")
    (folder / f"{STUDY}.yaml").write_text(STUDY_YAML, encoding="utf-8")
    return folder


@pytest.fixture
def env(monkeypatch, study_dir, server):
    """The test study in the registry, the server's URL and model for its YAML run, and
    the API key set."""
    dirs = [str(study_dir), os.environ.get("COMPSUITE_EXPERIMENTS", "")]
    monkeypatch.setenv("COMPSUITE_EXPERIMENTS", os.pathsep.join(d for d in dirs if d))
    monkeypatch.setenv("SERVED_URL", server.url)
    monkeypatch.setenv("SERVED_MODEL", server.model)
    monkeypatch.setenv("COMPSUITE_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return server


def posts(server: Served) -> int:
    """The completion requests the server has answered so far (its log)."""
    text = server.log.read_text(encoding="utf-8", errors="replace")
    return text.count('"POST /v1/completions') + text.count('"POST /v1/chat/completions')


def roots(tmp: Path) -> list[str]:
    return ["--runs-root", str(tmp / "runs"), "--data-root", str(tmp / "DATA"),
            "--results-root", str(tmp / "results"), "--quiet"]


def results(tmp: Path, run: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((tmp / "runs").rglob("result.json"))
            if json.loads(p.read_text())["run"] == run]


def cached(folder: Path) -> dict[str, str]:
    """Request key -> the answer's raw text, from a run folder's request cache."""
    lines = (folder / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["key"]: r["text"] for r in map(json.loads, lines)}


def dataset(root: Path, test: list[str], refs: list[str]) -> Dataset:
    raw = root / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    train = [("copy A B", "A B"), ("reverse A B", "B A"), ("echo C", "C C"),
             ("copy D", "D")]
    for split, rows in (("train", train), ("test", list(zip(test, refs)))):
        (raw / f"{split}.src").write_text("".join(s + "\n" for s, _ in rows))
        (raw / f"{split}.tgt").write_text("".join(t + "\n" for _, t in rows))
    return Dataset(root, ("train", "test"))


def one_line(err: str) -> str:
    """The error the command line printed: one line, no traceback."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("compsuite: error: ")
    return lines[0]


def nothing_half_written(tmp: Path) -> None:
    runs = tmp / "runs"
    assert not list(runs.rglob("result.json"))
    assert not [p for p in runs.rglob("*") if p.name.endswith(".tmp")]
    for f in runs.rglob("requests.jsonl"):   # whole lines only
        assert f.read_text().endswith("\n") or not f.read_text()


# ----------------------------------------------------------------------------- the backend
def test_translation_through_the_backend_is_the_servers_greedy_answer(server, tmp_path):
    """Each answer is the server's own greedy completion of the prompt (asked here by
    hand), cut at the stop; an input ending in <nothing> gets an empty answer and one
    that runs to max_tokens is cut there: both recorded, and scored as wrong."""
    from compsuite.eval.metrics.accuracy import accuracy_with_breakdown

    data = dataset(tmp_path / "data", ["copy A B C", f"reverse B {NOTHING}", "copy A B C"],
                   ["A B C", "B", "A B C"])
    run = Run("lm", "lm", "served", args={"url": server.url, "model": server.model,
                                          "prompting": {"shots": 2, "max_tokens": 5}})
    trained = BACKEND.train(run, "tiny", data, tmp_path / "run", 1, show=False)
    assert trained["evaluate_only"] and trained["model_id"] == server.model
    before = posts(server)
    preds = BACKEND.predict(trained, data, "test", None, tmp_path / "run", show=False)
    assert posts(server) - before == 2   # the same prompt twice: asked once
    long, empty = preds.hypotheses[0], preds.hypotheses[1]
    assert empty == "" and long and preds.hypotheses[2] == long
    assert accuracy_with_breakdown(preds.hypotheses, preds.references).accuracy == 0.0
    records = [json.loads(x) for x in (tmp_path / "run/requests.jsonl").read_text().splitlines()]
    by_text = {r["prompt"].rsplit("\n\n", 1)[-1]: r for r in records}
    assert by_text["copy A B C"]["finish_reason"] == "length"
    assert by_text["copy A B C"]["tokens_out"] == 5
    assert by_text[f"reverse B {NOTHING}"]["text"] == ""
    # the same prompt, by hand: the same text
    import urllib.request

    prompt = by_text["copy A B C"]["prompt"]
    assert prompt.count("\n\n") == 2   # two demonstrations, then the input
    req = urllib.request.Request(server.url + "/completions", data=json.dumps(
        {"model": server.model, "prompt": prompt, "max_tokens": 5, "temperature": 0}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        assert json.loads(r.read())["choices"][0]["text"] == by_text["copy A B C"]["text"]
    kept = [json.loads(x) for x in (tmp_path / "run/answers.jsonl").read_text().splitlines()]
    assert [(k["label"], k["index"], k["input"], k["answer"]) for k in kept] == [
        ("translate test", i, x, h) for i, (x, h) in enumerate(zip(preds.sources,
                                                                  preds.hypotheses))]
    assert kept[1]["raw"] == "" and kept[0]["raw"].strip() == long
    assert kept[0]["finish_reason"] == "length" and not kept[0]["cached"]
    usage = BACKEND.usage(tmp_path / "run")
    assert usage["requests_sent"] == 2 and usage["requests_cached"] == 0
    assert usage["answers_empty"] == 1 and usage["answers_cut"] == 2
    assert usage["tokens_out"] == 6 and usage["tokens_in"] > 0
    assert usage["model"] == server.model and usage["label"] == "2-shot random"
    assert usage["decoding"] == {"temperature": 0, "max_tokens": 5, "stop": ["\n"]}


def test_chat_sends_messages_and_caches_apart(server, tmp_path):
    data = dataset(tmp_path / "data", ["copy A B"], ["A B"])
    out = {}
    for api in ("completions", "chat"):
        run = Run("lm", "lm", "served", args={"url": server.url, "model": server.model,
                                              "api": api, "prompting": {"max_tokens": 4}})
        trained = BACKEND.train(run, "tiny", data, tmp_path / api, 1, show=False)
        model = BACKEND.load(trained["checkpoint"], data, "translator")
        out[api] = model.translate(["copy A B"])
        assert model.answers[0].raw.strip() and out[api][0]
        rec = json.loads((tmp_path / api / "requests.jsonl").read_text())
        assert rec["prompt"] == ("copy A B" if api == "completions" else
                                 [{"role": "user", "content": "copy A B"}])
    assert BACKEND.usage(tmp_path / "chat")["label"] == "zero-shot, chat"
    assert cached(tmp_path / "chat").keys().isdisjoint(cached(tmp_path / "completions"))


def test_classification_reads_the_class_from_the_answer(server, tmp_path):
    """The class whose word the answer starts with; none: "" (scored wrong).  Words
    chosen from what this random model answers, so that both happen."""
    data = dataset(tmp_path / "data", [], [])
    pairs = [(f"{a} dog", f"{b} cat") for a in ("the", "one", "a", "every")
             for b in ("some", "no", "two")]
    template = "{premise} ? {hypothesis} :"
    probe = Run("lm", "lm", "served", args={"url": server.url, "model": server.model,
                                            "prompting": {"max_tokens": 2}})
    t = BACKEND.train(probe, "tiny", data, tmp_path / "probe", 1, show=False)
    said = BACKEND.load(t["checkpoint"], data).translate(
        [template.format(premise=p, hypothesis=h) for p, h in pairs])
    words = sorted({x.split()[0] for x in said if x.split()})
    word = next(w for w in words
                if 0 < sum(x.lower().startswith(w.lower()) for x in said) < len(said))
    expected = ["entailment" if x.lower().startswith(word.lower()) else "" for x in said]
    labels = {"entailment": word, "neutral": "zzz-never"}
    run = Run("lm", "lm", "served", args={"url": server.url, "model": server.model,
                                          "prompting": {"template": template,
                                                        "max_tokens": 2, "labels": labels}})
    t = BACKEND.train(run, "tiny", data, tmp_path / "clf", 1, show=False)
    clf = BACKEND.load(t["checkpoint"], data, "classifier")
    assert clf.classify(pairs) == expected and "" in expected
    assert [a.raw.strip() for a in clf.answers] == said


def test_classification_without_labels_takes_the_training_classes(server, tmp_path):
    data = dataset(tmp_path / "data", [], [])
    (data.raw / "train.tgt").write_text("yes\nno\nyes\nno\n")
    run = Run("lm", "lm", "served", args={"url": server.url, "model": server.model,
                                          "prompting": {"max_tokens": 2}})
    t = BACKEND.train(run, "tiny", data, tmp_path / "clf", 1, show=False)
    clf = BACKEND.load(t["checkpoint"], data, "classifier")
    assert clf.classify(["the dog"]) == [""]   # this model says neither
    assert clf.prompter.spec.labels == {"no": "no", "yes": "yes"}
    (data.raw / "train.tgt").write_text("".join(f"answer {i}\n" for i in range(4)) * 20)
    (data.raw / "train.src").write_text("x\n" * 80)
    clf = BACKEND.load(t["checkpoint"], data, "classifier")
    assert clf.classify(["x"])   # 4 classes: fine
    (data.raw / "train.tgt").write_text("".join(f"answer {i}\n" for i in range(80)))
    clf = BACKEND.load(t["checkpoint"], data, "classifier")
    with pytest.raises(ConfigError, match="prompting.labels"):
        clf.classify(["x"])


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_log_probabilities_pick_the_class_where_the_server_gives_them(tmp_path, api):
    """A server that gives the first token's alternatives: the likeliest that starts a
    class word wins, whatever the text says; asked with logprobs."""
    if api == "chat":
        logprobs = {"content": [{"token": " maybe", "logprob": -0.1, "top_logprobs": [
            {"token": " maybe", "logprob": -0.1}, {"token": " Yes", "logprob": -0.5},
            {"token": " no", "logprob": -2.0}]}]}
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content":
                "maybe so"}, "logprobs": logprobs, "finish_reason": "stop"}]}
    else:
        logprobs = {"tokens": [" maybe"], "token_logprobs": [-0.1], "top_logprobs": [
            {" maybe": -0.1, " Yes": -0.5, " no": -2.0}]}
        body = {"choices": [{"index": 0, "text": " maybe so", "logprobs": logprobs,
                             "finish_reason": "stop"}]}
    sent = []

    def answer(h):
        if h.command == "POST":
            sent.append(json.loads(h.body))
            return 200, json.dumps({**body, "model": "tiny", "usage": {
                "prompt_tokens": 7, "completion_tokens": 2}}).encode()
        return None

    from compsuite.models.prompting import PromptSpec
    from compsuite.toolkits.served.model import ServedModel

    with bad_server(answer) as (url, _):
        m = ServedModel(url, "tiny", PromptSpec(labels={"entailment": "yes",
                                                        "contradiction": "no"}), api=api)
        assert m.classify([("a", "b")]) == ["entailment"]
    assert sent[0]["logprobs"] is True if api == "chat" else sent[0]["logprobs"] == 5
    assert sent[0].get("top_logprobs") == (5 if api == "chat" else None)
    assert sent[0]["temperature"] == 0 and sent[0]["model"] == "tiny"


# ----------------------------------------------------------------------------- end to end
def test_a_study_end_to_end_then_a_second_run_sends_nothing(env, tmp_path, capsys):
    """``compsuite run`` with --model-url (the study's toolkit_defaults.served apply),
    then again: the stored result; the result deleted, again: the answers come from the
    cache, 0 requests; a second run name asks the same questions, cached per run."""
    server = env
    cmd = ["run", STUDY, "--profile", "tiny", "--model-url", server.url, "--model-name",
           server.model, "--name", "cli-lm", *roots(tmp_path)]
    before = posts(server)
    assert main(cmd) == 0
    assert posts(server) - before == 40
    [r] = results(tmp_path, "cli-lm")
    assert r["usage"]["requests_sent"] == 40 and r["usage"]["requests_cached"] == 0
    assert r["usage"]["label"] == "2-shot random" and r["usage"]["model"] == server.model
    assert r["usage"]["decoding"]["max_tokens"] == 3 and r["usage"]["api"] == "completions"
    assert r["system"]["model"] == server.model and 0 <= r["accuracy"] <= 1
    unit = tmp_path / "runs" / STUDY / "tiny" / "cli-lm" / "seed1"
    assert main(cmd) == 0 and posts(server) - before == 40
    (unit / "result.json").unlink()
    assert main(cmd) == 0
    assert posts(server) - before == 40   # not one more request
    [again] = results(tmp_path, "cli-lm")
    assert again["usage"]["requests_sent"] == 40 and again["usage"]["requests_cached"] == 40
    assert again["accuracy"] == r["accuracy"]
    # the prompting changed under the same name: another system, refused
    assert main([*cmd, "--shots", "1"]) == 1
    assert "holds the results of another system" in one_line(capsys.readouterr().err)
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err


def test_a_server_stopped_mid_run_and_started_again_resumes_to_the_same_results(
        env, tmp_path, capsys):
    """The YAML's run, one request at a time: the server stopped after 15 answers, the
    run fails in one line; started again, the same command sends only the rest and
    gives what an uninterrupted run gives."""
    server = env
    cmd = ["run", STUDY, "--profile", "one-at-a-time", *roots(tmp_path / "a")]
    unit = tmp_path / "a" / "runs" / STUDY / "one-at-a-time" / "tiny-lm" / "seed1"
    cache = unit / "requests.jsonl"
    stopped = threading.Event()

    def stop_after(n: int) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if cache.is_file() and cache.read_text().count("\n") >= n:
                server.stop()
                stopped.set()
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=stop_after, args=(15,), daemon=True)
    watcher.start()
    try:
        assert main(cmd) == 1
    finally:
        watcher.join()
        if server.proc is None:   # stopped: started again, on the same port
            server.start()
    assert stopped.is_set()
    err = one_line(capsys.readouterr().err)
    assert server.url in err and "start the server or correct --model-url" in err, err
    nothing_half_written(tmp_path / "a")
    answered = len(cached(unit))
    assert 15 <= answered < 40
    before = posts(server)
    assert main(cmd) == 0
    assert posts(server) - before == 40 - answered
    [resumed] = results(tmp_path / "a", "tiny-lm")
    # uninterrupted, in another folder
    assert main(["run", STUDY, "--profile", "one-at-a-time", *roots(tmp_path / "b")]) == 0
    [whole] = results(tmp_path / "b", "tiny-lm")
    other = tmp_path / "b" / "runs" / STUDY / "one-at-a-time" / "tiny-lm" / "seed1"
    assert cached(unit) == cached(other)
    for k in ("accuracy", "breakdown"):
        assert resumed[k] == whole[k]
    assert resumed["usage"]["requests_sent"] == 40 and whole["usage"]["requests_sent"] == 40


@pytest.mark.parametrize("case", ["unreachable", "wrong model", "500", "malformed JSON"])
def test_server_failures_are_one_line_errors_naming_the_url(env, tmp_path, capsys, case):
    server = env
    answers = {"500": (500, b'{"error": "boom"}'), "malformed JSON": (200, b"<html>oops")}
    url, model = server.url, server.model
    with bad_server(lambda h: None if h.command == "GET" else answers[case]) as (bad, asked):
        if case == "unreachable":
            url = f"http://127.0.0.1:{free_port()}/v1"
        elif case == "wrong model":
            model = "no-such-model"
        elif case in answers:
            url, model = bad, "tiny"
        rc = main(["run", STUDY, "--profile", "tiny", "--model-url", url, "--model-name",
                   model, "--concurrency", "1", *roots(tmp_path)])
    assert rc == 1
    err = one_line(capsys.readouterr().err)
    assert url in err
    said = {"unreachable": "no server answers (connection refused), 2 tries; start the "
                           "server or correct --model-url",
            "wrong model": f"the server serves no model 'no-such-model' (it serves: "
                           f"{server.model}); correct --model-name",
            "500": "the server answered 500 (Internal Server Error): {\"error\": \"boom\"}, "
                   "2 tries; see the server's log",
            "malformed JSON": "answered 200 with what is not JSON"}[case]
    assert said in err, err
    nothing_half_written(tmp_path)
    if case == "500":   # retried once (retries: 1), then stopped asking
        assert sum(a.startswith("POST") for a in asked) == 2
    if case == "malformed JSON":   # not retried: it would answer the same
        assert sum(a.startswith("POST") for a in asked) == 1


def test_the_api_key_is_sent_and_written_nowhere(env, tmp_path, capsys, monkeypatch):
    seen = []

    def answer(h):
        seen.append(h.headers.get("Authorization"))
        if h.command == "POST":
            return 200, json.dumps({"choices": [{"index": 0, "text": " a b",
                                                 "finish_reason": "stop"}]}).encode()
        return None

    with bad_server(answer) as (url, _):
        assert main(["run", STUDY, "--profile", "tiny", "--model-url", url, "--model-name",
                     "tiny", "--name", "keyed", *roots(tmp_path)]) == 0
        first = len(seen)
        monkeypatch.delenv("COMPSUITE_API_KEY")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
        assert main(["run", STUDY, "--profile", "tiny", "--model-url", url, "--model-name",
                     "tiny", "--name", "other", *roots(tmp_path)]) == 0
    assert first >= 41 and set(seen[:first]) == {f"Bearer {SECRET}"}
    assert len(seen) > first and set(seen[first:]) == {"Bearer sk-other"}
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "requests.jsonl" for p in files)
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
        assert b"sk-other" not in p.read_bytes(), p


# ----------------------------------------------------------------------------- retries
def test_429_and_5xx_are_retried_after_deterministic_waits(tmp_path):
    from compsuite.toolkits.served.client import Client, waits

    assert waits(4, 1.0) == [1, 2, 4, 8] and waits(8, 10)[-1] == 30
    left = [429, 503, 502]

    def answer(h):
        if h.command == "POST":
            if left:
                return left.pop(0), b'{"error": "busy"}'
            return 200, json.dumps({"choices": [{"text": "ok", "finish_reason": "stop"}],
                                    "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
                                   ).encode()
        return None

    slept = []
    with bad_server(answer) as (url, asked):
        c = Client(url, retries=3, backoff=0.5, sleep=slept.append)
        reply = c.complete("completions", {"model": "tiny", "prompt": "x"})
    assert reply.text == "ok" and reply.tries == 4 and (reply.tokens_in, reply.tokens_out) == (3, 1)
    assert slept == [0.5, 1.0, 2.0]
    left[:] = [500] * 5
    with bad_server(answer) as (url, asked):
        c = Client(url, retries=2, backoff=0.5, sleep=slept.append)
        with pytest.raises(ToolkitError, match=r"answered 500 .*, 3 tries; see the server's"):
            c.complete("completions", {"model": "tiny", "prompt": "x"})
        assert len(asked) == 3
    left[:] = [404]
    with bad_server(answer) as (url, asked):
        with pytest.raises(ToolkitError, match="404 .*no such endpoint"):
            Client(url, retries=2, sleep=slept.append).complete(
                "completions", {"model": "tiny", "prompt": "x"})
        assert len(asked) == 1   # a 4xx other than 429: not retried


def test_a_request_that_takes_too_long_is_retried_then_named(tmp_path):
    from compsuite.toolkits.served.client import Client

    def answer(h):
        if h.command == "POST":
            time.sleep(1.0)
            return 200, b"{}"
        return None

    with bad_server(answer) as (url, asked):
        c = Client(url, timeout=0.2, retries=1, sleep=lambda s: None)
        with pytest.raises(ToolkitError, match=r"no answer within 0.2 s, 2 tries; raise the "
                                               r"run's timeout"):
            c.complete("completions", {"model": "tiny", "prompt": "x"})


def test_a_server_without_a_model_list_is_taken_at_its_word():
    from compsuite.toolkits.served.client import Client
    from compsuite.toolkits.served.model import served_model_id

    with bad_server(lambda h: (404, b"no") if h.command == "GET" else None) as (url, _):
        assert served_model_id(Client(url), "mine") == "mine"
    with bad_server(lambda h: (200, b'{"data": "x"}')) as (url, _):
        with pytest.raises(ToolkitError, match="not a list of models"):
            served_model_id(Client(url), "mine")


# ----------------------------------------------------------------------------- the cache
def test_a_torn_last_line_is_cut_and_asked_again(tmp_path):
    from compsuite.toolkits.served.cache import RequestCache

    path = tmp_path / "requests.jsonl"
    path.write_text('{"key": "a", "text": "one"}\n{"key": "b", "te')
    cache = RequestCache(path)
    assert cache.get("a")["text"] == "one" and cache.get("b") is None
    cache.put("b", {"text": "two"})
    assert [json.loads(x)["key"] for x in path.read_text().splitlines()] == ["a", "b"]
    path.write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(Exception, match=r"requests.jsonl:2: not a cached answer"):
        RequestCache(path)


def test_concurrent_answers_are_whole_lines_in_input_order(server, tmp_path):
    from compsuite.models.prompting import PromptSpec
    from compsuite.toolkits.served.model import ServedModel

    sources = [f"copy {a} {b}" for a in "ABCDEF" for b in "GHIJ"]
    one = ServedModel(server.url, server.model, PromptSpec(max_tokens=2), concurrency=1)
    many = ServedModel(server.url, server.model, PromptSpec(max_tokens=2), concurrency=4,
                       folder=tmp_path)
    assert many.translate(sources) == one.translate(sources)
    assert len(cached(tmp_path)) == len(sources)


# ----------------------------------------------------------------------------- settings
def test_settings_merge_the_study_defaults_the_run_and_the_profile(monkeypatch):
    from compsuite.toolkits.served.backend import settings

    monkeypatch.setenv("HOST", "127.0.0.1:8000")
    run = Run("lm", "lm", "served", source="s.yaml",
              defaults={"concurrency": 8, "prompting": {"template": "Q: {input} A:",
                                                        "shots": 4}},
              args={"url": "http://${HOST}/v1", "model": "m", "prompting": {"shots": 2}},
              profiles={"tiny": {"prompting": {"strategy": "similar"}, "timeout": 5}})
    s = settings(run, "tiny")
    assert s.url == "http://127.0.0.1:8000/v1" and s.concurrency == 8 and s.timeout == 5
    spec = s.spec("x")
    assert (spec.template, spec.shots, spec.strategy) == ("Q: {input} A:", 2, "similar")
    assert BACKEND.system(run, "tiny") == {   # not the URL: a restarted server's port
        "model": "m", "api": "completions",
        "prompting": "2-shot similar", "template_sha256": spec.sha256()}
    assert settings(run, "tiny").url == "http://127.0.0.1:8000/v1"
    monkeypatch.delenv("HOST")
    with pytest.raises(ConfigError, match=r"s.yaml: runs.lm.args.url: .* HOST, which is not"):
        settings(run, "tiny")
    bad = Run("lm", "lm", "served", source="s.yaml", args={"url": "localhost", "model": "m"})
    with pytest.raises(ConfigError, match=r"runs.lm.args.url: 'localhost' is not an http"):
        settings(bad, "tiny")
    bad = Run("lm", "lm", "served", source="s.yaml", args={
        "url": "http://h/v1", "model": "m", "api": "completions", "prompting": {"chat": True}})
    with pytest.raises(ConfigError, match=r"args.api: completions takes one text"):
        settings(bad, "tiny")
    chat = Run("lm", "lm", "served", args={"url": "http://h/v1", "model": "m",
                                           "prompting": {"chat": True}})
    assert settings(chat, "tiny").endpoint() == "chat"


def test_options_bring_a_served_system_and_the_key_stays_out(monkeypatch, server):
    from compsuite.commands import load_model_from_options, model_source

    def ns(**kw):
        base = {k: None for k in ("model_url", "model_name", "model_api", "shots", "demos",
                                  "concurrency", "model_cmd", "model_timeout", "hf_model",
                                  "checkpoint", "batch_size", "engine", "compute_type",
                                  "device")}
        return argparse.Namespace(**{**base, **kw})

    monkeypatch.setenv("COMPSUITE_API_KEY", SECRET)
    system = BACKEND.user_system(ns(model_url=server.url, model_name=server.model, shots=0,
                                    concurrency=2))
    assert system.args == {"url": server.url, "model": server.model, "expand": False,
                           "concurrency": 2, "prompting": {"shots": 0}}
    with pytest.raises(ConfigError, match="--model-url needs --model-name"):
        BACKEND.user_system(ns(model_url=server.url))
    with pytest.raises(ConfigError, match="--model-name goes with --model-url"):
        BACKEND.user_system(ns(model_name="m"))
    assert BACKEND.user_system(ns()) is None
    a = ns(model_url=server.url, model_name=server.model)
    model = load_model_from_options(a)
    assert model.translate(["copy A B"]) and model.calls == 1
    assert model_source(a) == {"system": {"toolkit": "served", "url": server.url,
                                          "model": server.model, "expand": False}}
    with pytest.raises(ConfigError, match="--shots 2: demonstrations come from"):
        load_model_from_options(ns(model_url=server.url, model_name=server.model, shots=2))
    assert SECRET not in repr(system) + repr(model_source(a))


def test_the_options_are_on_run_and_the_eval_commands(capsys):
    for args in (["run", "--help"], ["eval", "pcfgset", "localism", "--help"]):
        with pytest.raises(SystemExit):
            main(args)
        out = capsys.readouterr().out
        for option in ("--model-url", "--model-name", "--model-api", "--shots", "--demos",
                       "--concurrency"):
            assert option in out, (args, option)


def test_eval_commands_take_a_served_model(env, tmp_path, capsys):
    """A model-in-the-loop command with --model-url: one that asks through
    compsuite.commands, and one whose study code chose between a program and
    checkpoints; a wrong model name is the same one-line error there."""
    server = env
    prefix = tmp_path / "test_pcfg_ratio=0.001"
    Path(f"{prefix}_exception.src").write_text("copy A1 B1\nreverse A1 B1\n")
    Path(f"{prefix}_exception.tgt").write_text("B1 B1\nA1\n")
    Path(f"{prefix}_original.tgt").write_text("A1 B1\nB1 A1\n")
    served = ["--model-url", server.url, "--model-name", server.model]
    before = posts(server)
    assert main(["eval", "pcfgset", "overgeneralisation", *served, "--exceptions",
                 str(prefix), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["input"]["system"]["url"] == server.url and len(res["profile"]) == 1
    assert res["final"]["neither"] == 1.0   # noise, neither rule nor exception
    assert posts(server) - before == 2
    unrolled = tmp_path / "unrolled.tsv"
    unrolled.write_text("unrolled\tappend C1 M1 , H1 K1\t*1\n"
                        "unrolled\tswap_first_last *1\tK1 M1 H1 C1\n"
                        "original\tswap_first_last append C1 M1 , H1 K1\tK1 M1 H1 C1\n")
    assert main(["eval", "pcfgset", "localism", *served, "--unrolled", str(unrolled),
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["input"]["system"]["model"] == server.model
    assert main(["eval", "pcfgset", "localism", "--model-url", server.url, "--model-name",
                 "nope", "--unrolled", str(unrolled), "--json"]) == 1
    assert "the server serves no model 'nope'" in one_line(capsys.readouterr().err)
