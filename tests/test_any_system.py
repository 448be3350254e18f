"""Any system in the loop, end to end for all five studies (tiny profiles): the toy
programs of examples/systems (the suite's own interpreters and rule-based translators
behind the command protocol) as an evaluate-only run of each study, perfect and with a
known share of answers corrupted; and the same answers as files through ``compsuite
export`` / ``compsuite score``, which must give the same numbers."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from compsuite.cli import main
from compsuite.foundation.checkout import ROOT
from compsuite.registry import get_study

sys.path.insert(0, str(ROOT / "examples" / "systems"))
from toy import corrupted  # noqa: E402

PERCENT = 30
STUDIES = ("pcfgset", "ctlpp", "sget", "paradox", "nli")


def oracle(study: str, percent: int = 0) -> str:
    return f"{sys.executable} {ROOT}/examples/systems/{study}_oracle.py --corrupt {percent}"


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    root = tmp_path_factory.mktemp("any-system")
    return {k: root / k for k in ("runs", "results", "exports", "answers")}


@pytest.fixture
def study_roots(roots, tiny_study, request):
    """Our own runs and results; the data of the session's tiny run of the study (the
    same data, generated once)."""
    return {**roots, "DATA": tiny_study(request.node.callspec.params["study"]).root / "DATA"}


def run_program(study: str, name: str, percent: int, roots: dict) -> dict[str, dict]:
    """``compsuite run <study> --profile tiny --model-cmd ...``: the run's results by
    unit part and dataset."""
    assert main(["run", study, "--profile", "tiny", "--model-cmd", oracle(study, percent),
                 "--name", name, "--data-root", str(roots["DATA"]),
                 "--runs-root", str(roots["runs"]), "--results-root", str(roots["results"]),
                 "--quiet"]) == 0
    folder = roots["runs"] / study / "tiny"
    found = [json.loads(p.read_text()) for p in folder.rglob("result.json")]
    return {(r["part"], r["dataset"]): r for r in found if r["run"] == name}


def answer_export(study: str, export: Path, answers: Path, percent: int) -> None:
    """Answer every exported file with the program (as a user would with any system:
    read each .src, write its .hyp), told each unit's data as the suite tells it."""
    from compsuite.toolkits.command.model import CommandModel

    m = json.loads((export / "manifest.json").read_text())
    for unit in m["units"]:
        env = {"COMPSUITE_DATA": unit["data"], **({"COMPSUITE_TEXT": unit["text"]}
                                                   if unit["text"] else {})}
        with CommandModel(oracle(study, percent), env=env) as model:
            for f in unit["files"]:
                lines = (export / f["inputs"]).read_text(encoding="utf-8").splitlines()
                if f["task"] == "classify":
                    items = [line.split("\t") if "\t" in line else line for line in lines]
                    out = model.classify(items)
                else:
                    out = model.translate(lines)
                path = answers / f["answers"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("".join(o + "\n" for o in out), encoding="utf-8")


def export_and_score(study: str, name: str, percent: int, roots: dict) -> dict[str, dict]:
    export = roots["exports"] / study
    if not export.is_dir():
        assert main(["export", study, "--profile", "tiny", "--out", str(export),
                     "--data-root", str(roots["DATA"]), "--quiet"]) == 0
    answers = roots["answers"] / f"{study}-{percent}"
    answer_export(study, export, answers, percent)
    assert main(["score", study, "--profile", "tiny", "--from", str(export), "--hyps",
                 str(answers), "--name", name, "--data-root", str(roots["DATA"]),
                 "--runs-root", str(roots["runs"]), "--results-root",
                 str(roots["results"]), "--quiet"]) == 0
    assert (roots["results"] / study / f"tiny-{name}" / "report.md").is_file()
    folder = roots["runs"] / "scored" / study / "tiny"
    found = [json.loads(p.read_text()) for p in folder.rglob("result.json")]
    return {(r["part"], r["dataset"]): r for r in found if r["run"] == name}


def data(study: str, dataset: str, roots: dict):
    """A unit's prepared dataset (already there: prepared by the run)."""
    s = get_study(study)
    return s.prepare(dataset, 1, s.profile("tiny"), roots["DATA"], show=False)


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def right(inputs) -> float:
    """The share of ``inputs`` the corrupting program answers right."""
    return 1 - sum(corrupted(x, PERCENT) for x in inputs) / len(inputs)


# ----------------------------------------------------------------------------- per study
def check_pcfgset(perfect, bad, roots):
    for (part, _), r in perfect.items():
        if part in ("task", "systematicity", "productivity"):
            assert r["accuracy"] == 1.0, part
        elif part.startswith("substitutivity") or part == "localism":
            assert r["consistency"]["consistency"] == 1.0, part
        if part.startswith("substitutivity"):   # `embed`: a synonym shares its vector
            distances = r["embedding_distances"]["distances"]
            assert distances and all(d["to_synonym"] == 0.0 for d in distances.values())
        elif part == "per_function":
            assert r["accuracy"] == 1.0
        elif part == "overgeneralisation":   # the rules, never the exceptions
            assert r["final"]["overgeneralisation"] == 1.0
    assert perfect[("localism", next(d for p, d in perfect if p == "localism"))][
        "accuracy_unrolled"] == 1.0
    (key,) = [k for k in bad if k[0] == "task"]
    srcs = lines(data("pcfgset", key[1], roots).raw / "test.src")
    assert bad[key]["accuracy"] == pytest.approx(right(srcs), abs=1e-12)
    loc = [r for (p, _), r in bad.items() if p == "localism"][0]
    assert loc["consistency"]["consistency"] < 1.0   # corrupted steps fed back


def check_ctlpp(perfect, bad, roots):
    for (part, dataset), r in perfect.items():
        assert r["test_iid"]["accuracy"] == r["test_ood"]["accuracy"] == 1.0
        assert ("compatibility" in r) == (part == "table1")
        if part == "table1":
            assert all(v == 1.0 for row in r["compatibility"]["matrix"] for v in row)
            # `features`: the one-hot of the answer, the same for one symbol's inputs
            assert r["representations"]["mean_similarity"] == {"within": 1.0, "between": 1.0}
    for (_, dataset), r in bad.items():
        raw = data("ctlpp", dataset, roots).raw
        for split in ("test_iid", "test_ood"):
            assert r[split]["accuracy"] == pytest.approx(right(lines(raw / f"{split}.src")),
                                                         abs=1e-12)


def check_sget(perfect, bad, roots):
    ((_, dataset), r), = perfect.items()
    assert r["checkpoint_selection"]["kept"].endswith("(evaluate-only)")
    for split in ("test", "gen"):
        assert r["splits"][split]["exact_match"] == 1.0
        assert r["splits"][split]["bleu"]["score"] == pytest.approx(100.0)
    assert r["splits"]["gen"]["partial_match"] == 1.0
    text = data("sget", dataset, roots).text
    for split in ("test", "gen"):
        assert bad[("main", dataset)]["splits"][split]["exact_match"] == pytest.approx(
            right(lines(text / f"{split}.src")), abs=1e-12)


def check_paradox(perfect, bad, roots):
    from compsuite.eval.paradox.evaluate import read_test

    ((_, dataset), r), = perfect.items()
    tests = data("paradox", dataset, roots).root / "tests"
    for test, res in r["tests"].items():
        assert all(row["mean_over_templates"] == 1.0 for row in res["summary"]), test
    (over,) = r["overgeneralisation_by_step"]
    assert all(row["pooled"] == 0.0 for row in over["summary"])
    for test, res in bad[("generated", dataset)]["tests"].items():
        inputs, samples = read_test(tests, test)
        pairs = [(inputs[s["inputs"][0]], inputs[s["inputs"][-1]]) for s in samples]
        both_or_neither = sum(corrupted(a, PERCENT) == corrupted(b, PERCENT) for a, b in pairs)
        metric = {"np_vp": "np_vp", "s_conj_s": "s_conj_s",
                  "substitutivity": "substitutivity_full"}[test]
        cells = [c for c in res["cells"] if c["metric"] == metric]
        assert sum(c["passed"] for c in cells) == both_or_neither, test


def check_nli(perfect, bad, roots):
    from compsuite.data_prep.nli.corpus import read_split

    ((_, dataset), r), = perfect.items()
    assert all(v["score"]["whole"] == 100.0 for v in r["eval"].values())
    from compsuite.foundation.manifest import read_manifest

    raw = data("nli", dataset, roots).raw
    sets = read_manifest(raw)["statistics"]["eval_sets"]
    assert sets
    for name, v in bad[("synthetic", dataset)]["eval"].items():
        cols = read_split(raw, sets[name])
        pairs = [[p, h] for p, h in zip(cols["premise"], cols["hypothesis"])]
        assert v["score"]["whole"] == pytest.approx(100 * right(pairs))


CHECKS = {"pcfgset": check_pcfgset, "ctlpp": check_ctlpp, "sget": check_sget,
          "paradox": check_paradox, "nli": check_nli}


def strip(result: dict) -> dict:
    """A result without what names the run or its folder (to compare two routes)."""
    drop = {"run", "architecture", "toolkit", "unit", "checkpoint", "git", "model_from",
            "predictions", "predictions_sha256", "checkpoint_selection", "train_wall_s",
            "threads", "evaluate_only", "answers", "command", "model", "system"}

    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in drop}
        return [clean(v) for v in x] if isinstance(x, list) else x

    return clean(result)


@pytest.mark.parametrize("study", STUDIES)
def test_a_program_in_the_loop_and_its_answer_files(study, study_roots):
    roots = study_roots
    perfect = run_program(study, "oracle", 0, roots)
    bad = run_program(study, "oracle30", PERCENT, roots)
    assert perfect and set(perfect) == set(bad)
    CHECKS[study](perfect, bad, roots)
    report = (roots["results"] / study / "tiny" / "report.md").read_text()
    assert "oracle30" in report
    # the same answers as files: the same numbers, but for the tests that need the
    # model itself (localism) and the representation analyses
    scored = export_and_score(study, "oracle-files", 0, roots)
    assert scored
    # every unit evaluates the system as it is, those on another unit's model too
    assert all(r["evaluate_only"] is True for r in [*perfect.values(), *scored.values()])
    for key, r in scored.items():
        want = strip(perfect[key])
        got = strip(r)
        for k in ("embedding_distances", "representations"):
            want.pop(k, None)
            got.pop(k, None)
        assert got == want, key
    missing = set(perfect) - set(scored)
    assert {p for p, _ in missing} <= {"localism"}
