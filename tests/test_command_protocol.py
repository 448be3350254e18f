"""The command protocol (compsuite/toolkits/command/model.py): a program as a translator and a
classifier, its errors, the command backend, and ``--model-cmd`` in an eval command."""
from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from compsuite.models.protocol import BAR, counted
from compsuite.models.decoding import Decoding
from compsuite.toolkits.command.model import CommandError, CommandModel
from compsuite.foundation.checkout import ROOT

EXAMPLE = ROOT / "examples" / "command_model.py"
PY = sys.executable


def program(tmp_path: Path, body: str, name: str = "prog.py") -> str:
    """A protocol program from ``body`` (a function ``answer(request)`` -> dict or
    None for no answer), as a command line."""
    path = tmp_path / name
    path.write_text("import json, sys, time\n" + textwrap.dedent(body) + textwrap.dedent("""
        for line in sys.stdin:
            out = answer(json.loads(line))
            if out is not None:
                print(out if isinstance(out, str) else json.dumps(out), flush=True)
        """))
    return f"{PY} {path}"


def test_the_documented_example_is_the_tested_file():
    doc = (ROOT / "docs" / "command_protocol.md").read_text()
    block = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    assert block == EXAMPLE.read_text()
    assert 15 <= len(block.splitlines()) <= 30


def test_example_translates_and_classifies_in_batches():
    with counted(CommandModel(f"{PY} {EXAMPLE}", batch_size=2)) as m:
        out = m.translate(["a b c", "x y", "one", "p q r s", "z"])
        assert out == ["c b a", "y x", "one", "s r q p", "z"]
        assert (m.calls, m.batches) == (1, 3)    # one call, ceil(5 / 2) requests
        assert m.classify([("A man sleeps.", "A person rests."), ("p", "h")]) == \
            ["entailment", "entailment"]
        assert (m.calls, m.batches) == (2, 4)
        pid = m._proc.pid
        with pytest.raises(CommandError, match="cannot embed: this model cannot embed"):
            m.embed(["a"])
    assert m._proc is None    # closed, and the program has exited
    with pytest.raises(ProcessLookupError):
        import os
        os.kill(pid, 0)


def test_progress_moves_after_each_batch():
    seen = []
    with CommandModel(f"{PY} {EXAMPLE}", batch_size=3) as m:
        token = BAR.set(seen.append)
        m.translate([str(i) for i in range(7)])
        BAR.reset(token)
    assert seen == [3, 3, 1]


def test_features_and_embeddings(tmp_path):
    cmd = program(tmp_path, """
        def answer(r):
            if r["task"] == "features":
                return {"outputs": [[float(len(x)), 1.0] for x in r["inputs"]]}
            return {"outputs": [None if t == "unk" else [1.0, 2.0] for t in r["inputs"]]}
        """)
    with CommandModel(cmd) as m:
        f = m.features(["ab", "abcd"])
        assert f.shape == (2, 2) and f[1, 0].item() == 4.0
        assert m.embed(["copy", "unk"]) == {"copy": [1.0, 2.0]}


@pytest.mark.parametrize("body, message", [
    ("""
     def answer(r):
         sys.stderr.write("loading weights\\nout of memory\\n"); sys.stderr.flush()
         sys.exit(3)
     """, r"exited without answering a translate request \(exit 3\); its last stderr "
          r"lines:\nloading weights\nout of memory"),
    ("""
     def answer(r):
         return "Loading model..."
     """, r"answered a line that is not JSON: 'Loading model\.\.\.'.*print logs to stderr"),
    ("""
     def answer(r):
         return {"outputs": r["inputs"][:-1]}
     """, r"answered 2 outputs to a translate request of 3 inputs"),
    ("""
     def answer(r):
         return {"result": []}
     """, r'not \{"outputs": \[\.\.\.\]\}'),
    ("""
     def answer(r):
         return {"outputs": [1, 2, 3]}
     """, r"a translate output is 1, not a string"),
    ("""
     def answer(r):
         time.sleep(30)
     """, r"no answer to a translate request of 3 inputs within 1 s"),
])
def test_protocol_errors_name_the_program_and_what_it_did(tmp_path, body, message):
    cmd = program(tmp_path, body)
    m = CommandModel(cmd, timeout=1)
    with pytest.raises(CommandError, match=message) as e:
        m.translate(["a", "b", "c"])
    assert str(e.value).startswith(f"command:{cmd}")
    m.close()


def test_an_answer_that_is_not_utf8_names_the_program_and_the_request(tmp_path, capsys):
    """A program that prints Latin-1 is refused, naming its request and the inputs it
    answered (it was read as U+FFFD and scored); the stderr it writes is still quoted,
    and answer lines ending in \\r\\n are read as lines."""
    from compsuite.cli import main

    cmd = program(tmp_path, """
        n = 0
        def answer(r):
            global n
            n += 1
            text = "caf\\u00e9" if n == 2 else "cafe"
            line = json.dumps({"outputs": [text] * len(r["inputs"])}, ensure_ascii=False)
            sys.stdout.buffer.write(line.encode("latin-1") + b"\\r\\n")
            sys.stdout.flush()
        """)
    with CommandModel(cmd, batch_size=2) as m:
        with pytest.raises(CommandError) as e:
            m.translate(["a", "b", "c", "d"])
    assert str(e.value).startswith(f"command:{cmd}: its answer to translate request 2 "
                                   "(inputs 3-4 of this call) is not valid UTF-8 (byte 0xe9")
    unrolled = tmp_path / "unrolled.tsv"
    unrolled.write_text("unrolled\tappend C1 M1 , H1 K1\t*1\n"
                        "unrolled\tswap_first_last *1\tK1 M1 H1 C1\n"
                        "original\tswap_first_last append C1 M1 , H1 K1\tK1 M1 H1 C1\n")
    assert main(["eval", "pcfgset", "localism", "--model-cmd", cmd, "--unrolled",
                 str(unrolled), "--json"]) == 1
    err = capsys.readouterr().err
    assert "request 2" in err and "not valid UTF-8" in err and "Traceback" not in err


def test_a_missing_program_is_one_clear_error():
    with pytest.raises(CommandError, match="no such program 'no-such-model-program'"):
        CommandModel("no-such-model-program --x").translate(["a"])


def test_an_exited_program_is_not_restarted_silently(tmp_path):
    cmd = program(tmp_path, """
        n = 0
        def answer(r):
            global n
            n += 1
            if n > 1:
                sys.exit(0)
            return {"outputs": r["inputs"]}
        """)
    m = CommandModel(cmd)
    assert m.translate(["a"]) == ["a"]
    with pytest.raises(CommandError, match=r"exited without answering.*\(exit 0\)"):
        m.translate(["b"])


def test_command_backend_run_settings_and_environment(tmp_path, monkeypatch):
    from compsuite.foundation.dataset import Dataset
    from compsuite.foundation.errors import ConfigError
    from compsuite.studies.base import Run
    from compsuite.toolkits import get_backend

    backend = get_backend("command")
    cmd = program(tmp_path, """
        import os
        def answer(r):
            return {"outputs": [os.environ["COMPSUITE_DATA"] for _ in r["inputs"]]}
        """)
    monkeypatch.setenv("MY_PROG", cmd.split()[-1])
    run = Run("mine", "mine", "command", args={"command": f"{PY} ${{MY_PROG}}", "timeout": 5},
              source="x.yaml")
    assert not backend.trains(run)
    data = Dataset(tmp_path / "ds")
    (data.raw).mkdir(parents=True)
    (data.raw / "test.src").write_text("a\nb\n")
    (data.raw / "test.tgt").write_text("a\nb\n")
    trained = backend.train(run, "tiny", data, tmp_path / "unit", 1)
    assert trained["evaluate_only"] and json.loads(Path(trained["checkpoint"]).read_text())[
        "timeout"] == 5
    pred = backend.predict(trained, data, "test", Decoding(), tmp_path / "unit", show=False)
    assert pred.hypotheses == pred.path.read_text().splitlines() == [str(data.raw.resolve())] * 2
    bad = Run("mine", "mine", "command", args={"command": "python ${NOT_SET_ANYWHERE}"},
              source="x.yaml")
    with pytest.raises(ConfigError, match=r"x\.yaml: runs\.mine\.args\.command: .*"
                                          "NOT_SET_ANYWHERE, which is not set"):
        backend.train(bad, "tiny", data, tmp_path / "unit2", 1)
    with pytest.raises(ConfigError, match=r"runs\.mine\.args: unknown key 'timout'"):
        backend.train(Run("mine", "mine", "command", args={"command": "x", "timout": 1},
                          source="x.yaml"), "tiny", data, tmp_path / "unit3", 1)


def test_eval_pcfgset_localism_with_model_cmd(tmp_path, capsys):
    from compsuite.cli import main

    unrolled = tmp_path / "unrolled.tsv"
    unrolled.write_text("unrolled\tappend C1 M1 , H1 K1\t*1\n"
                        "unrolled\tswap_first_last *1\tK1 M1 H1 C1\n"
                        "original\tswap_first_last append C1 M1 , H1 K1\tK1 M1 H1 C1\n")
    prog = program(tmp_path, """
        from compsuite.data_prep.pcfgset.grammar import interpret
        def answer(r):
            return {"outputs": [interpret(x) for x in r["inputs"]]}
        """)
    assert main(["eval", "pcfgset", "localism", "--model-cmd", prog, "--unrolled",
                 str(unrolled), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["consistency"]["consistency"] == 1.0 and res["accuracy_unrolled"] == 1.0
    # the whole input, then one call per level of the unrolled steps
    assert res["input"]["command"] == prog and res["model_calls"] == 3
    assert res["model_batches"] == 3


def test_eval_pcfgset_overgeneralisation_with_model_cmd(tmp_path, capsys):
    from compsuite.cli import main

    prefix = tmp_path / "test_pcfg_ratio=0.001"
    Path(f"{prefix}_exception.src").write_text("copy A1 B1\nreverse A1 B1\n")
    Path(f"{prefix}_exception.tgt").write_text("B1 B1\nA1\n")      # the exceptions
    Path(f"{prefix}_original.tgt").write_text("A1 B1\nB1 A1\n")    # what the rules give
    prog = program(tmp_path, """
        from compsuite.data_prep.pcfgset.grammar import interpret
        def answer(r):
            return {"outputs": [interpret(x) for x in r["inputs"]]}
        """)
    assert main(["eval", "pcfgset", "overgeneralisation", "--model-cmd", prog,
                 "--exceptions", str(prefix), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["final"] == {"memorisation": 0.0, "overgeneralisation": 1.0, "neither": 0.0}
    assert res["input"]["command"] == prog and len(res["profile"]) == 1


def test_a_program_that_stops_reading_times_out_on_the_write(tmp_path):
    cmd = program(tmp_path, "time.sleep(60)\ndef answer(r):\n    return None\n")
    m = CommandModel(cmd, timeout=1, batch_size=1000)
    big = ["x" * 1000] * 200     # one request of 200 kB: more than a pipe's buffer
    with pytest.raises(CommandError, match=r"within 1 s \(still reading it"):
        m.translate(big)
    with pytest.raises(CommandError, match="not started again"):
        m.translate(["a"])


def test_a_failed_program_is_not_started_again(tmp_path):
    cmd = program(tmp_path, """
        def answer(r):
            sys.exit(2)
        """)
    m = CommandModel(cmd)
    with pytest.raises(CommandError, match=r"\(exit 2\)"):
        m.translate(["a"])
    with pytest.raises(CommandError, match=r"exited without answering.*not started again"):
        m.translate(["b"])


def test_a_command_from_the_command_line_is_not_expanded_again(tmp_path):
    from compsuite.studies.base import Run
    from compsuite.toolkits.command.backend import settings

    args = {"command": "awk '{print $1}' ${NOT_SET_ANYWHERE}", "expand": False}
    assert settings(Run("r", "r", "command", args=args), "tiny").command == args["command"]


def test_a_program_without_embed_still_gets_the_consistency_scored(tmp_path):
    """The documented example answers `embed` with an error: PCFG SET's substitutivity
    unit scores the consistency and records why Table 5's distances are missing; a
    second program under the same name is refused, not mixed in."""
    from compsuite.cli import main

    args = ["run", "pcfgset", "--profile", "tiny", "--parts",
            "substitutivity_equally_distributed", "--quiet", "--data-root",
            str(tmp_path / "DATA"), "--runs-root", str(tmp_path / "runs"),
            "--results-root", str(tmp_path / "results"), "--name", "example"]
    assert main([*args, "--model-cmd", f"{PY} {EXAMPLE}"]) == 0
    res = json.loads((tmp_path / "runs/pcfgset/tiny/substitutivity_equally_distributed/"
                      "example/seed1/result.json").read_text())
    assert 0 <= res["consistency"]["consistency"] <= 1 and res["system"] == {
        "command": f"{PY} {EXAMPLE}"}
    assert "cannot embed: this model cannot embed" in res["embedding_distances"]["unavailable"]
    assert main([*args, "--model-cmd", f"{PY} {EXAMPLE} --other"]) == 1
    # the same words spaced otherwise: the same program, its results kept (issue 51)
    assert main([*args, "--model-cmd", f" {PY}   '{EXAMPLE}' "]) == 0
    assert json.loads((tmp_path / "runs/pcfgset/tiny/substitutivity_equally_distributed/"
                       "example/seed1/result.json").read_text()) == res


def test_units_that_evaluate_a_programs_model_are_evaluate_only(tmp_path):
    """PCFG SET's per_function and increasing_string_length units evaluate the model of
    the program's task unit: evaluated as it is there too (before: false, as if
    trained), as in the task unit (issue 51)."""
    from compsuite.cli import main

    oracle = ROOT / "examples" / "systems" / "pcfgset_oracle.py"
    assert main(["run", "pcfgset", "--profile", "tiny", "--parts", "per_function",
                 "increasing_string_length", "--quiet", "--data-root", str(tmp_path / "DATA"),
                 "--runs-root", str(tmp_path / "runs"), "--results-root",
                 str(tmp_path / "results"), "--model-cmd", f"{PY} {oracle}"]) == 0
    results = {r["part"]: r for r in (json.loads(p.read_text()) for p in
                                      (tmp_path / "runs").rglob("result.json"))}
    assert set(results) == {"task", "per_function", "increasing_string_length"}
    assert results["per_function"]["model_from"] == "task/system/seed1"
    assert all(r["evaluate_only"] is True for r in results.values())


def test_a_command_is_the_same_system_however_it_is_spaced():
    from compsuite.toolkits import get_backend

    command = get_backend("command")
    assert command.same_system({"command": "prog --x"}, {"command": "prog  --x "})
    assert command.same_system({"command": "prog 'a b'"}, {"command": 'prog "a b"'})
    assert not command.same_system({"command": "prog 'a  b'"}, {"command": "prog 'a b'"})
    assert not command.same_system({"command": "prog a b"}, {"command": "prog 'a b'"})
    assert not command.same_system(None, {"command": "prog"})


def test_the_data_commands_offer_only_backends_that_write_a_format():
    from compsuite.cli import build_parser
    from compsuite.toolkits import backend_names, data_backend_names

    assert {"command", "files"} <= set(backend_names())
    assert not {"command", "files"} & set(data_backend_names())
    assert {"fairseq", "onmt"} <= set(data_backend_names())
    with pytest.raises(SystemExit):
        build_parser().parse_args(["data", "ctlpp", "generate", "--variant", "A", "--out",
                                   "x", "--toolkits", "command"])
