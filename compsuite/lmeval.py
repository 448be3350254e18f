"""A study's answer-only tests as lm-evaluation-harness tasks, and the way back.

``compsuite export <study> --lm-eval DIR`` writes the study's export (:mod:`compsuite.export`:
every input its tests ask, ``<unit>/<name>.src`` with ids) and, under ``DIR/lm_eval/``,
one lm-eval task for each exported file (:func:`write_tasks`)::

    DIR/lm_eval/<task>.yaml          the task: generate_until, greedy, the prompt
                                     spec's stop strings and answer length
    DIR/lm_eval/docs/<task>.jsonl    its documents: id, unit, file, line, kind,
                                     input (a pair: premise, hypothesis), prompt, target
    DIR/lm_eval/utils.py             lm-eval's hooks, each handing over to this module
    DIR/lm_eval/prompting.json       the prompt spec the prompts were built with
    DIR/lm_eval/tasks.json           task -> unit, file, kind, references, metric
    DIR/lm_eval/README.md            the tasks, and the tests that have none (why)

so that ``lm_eval --include_path DIR --tasks compsuite_<study>_<test> --model ...``
runs them with any of lm-eval's model backends.  Everything that decides a score is
the suite's: the prompts are built by :class:`compsuite.models.prompting.Prompter`
from the study's own prompting settings (``toolkit_defaults: {<toolkit>: {prompting:
...}}`` of its YAML, over the defaults: zero-shot, ``{input}``), an answer is read
from the model's text by the same spec (stop strings, first line; a class by its
label word), and a task's metric is the suite's sequence accuracy
(:func:`compsuite.eval.metrics.accuracy.sequence_accuracy`; for a classification,
the share of answers that are the gold class), computed by ``utils.py``'s
aggregation over (answer, reference) pairs.

**References** are found without knowing the study: a file's inputs are the lines of
some ``{split}.src`` of the dataset's model text or raw folder (a pair: of
``{split}.premise`` and ``{split}.hypothesis``) whose ``{split}.tgt`` (or
``{split}.label``) holds what the model should answer.  A file without references (a
consistency test's inputs, whose score compares the model's answers with one another;
the overgeneralisation inputs) still gets a task, without a metric: lm-eval collects
its answers, which the way back scores.

**The way back**: ``compsuite score <study> --from DIR --lm-eval-samples SAMPLES``
reads the samples ``lm_eval --log_samples`` wrote (:func:`read_samples`: each
document's id and its filtered response, read as the task read it), writes them as the
export's answer files (``<unit>/<name>.hyp``, :func:`write_answers`) and scores them
through the study's own evaluation, as ``compsuite score --hyps`` does: the study's
whole report (consistency, breakdowns, the paper's numbers beside), for every unit
whose files were all answered; the others are listed with the reason.

Task names: ``compsuite_<study>_<unit>`` for a unit with one file, and
``compsuite_<study>_<unit>_<file>`` (tagged ``compsuite_<study>_<unit>``, which runs
them all) for a unit with several; ``<unit>`` is the unit's folder without the run
(``systematicity``, ``A``), with ``_seed<S>`` for seeds after the profile's first;
every task is also tagged ``compsuite_<study>``.  Nothing here names a study or a
toolkit.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import atomic_open, read_lines

#: the folder of an export that holds the lm-eval tasks
FOLDER = "lm_eval"
TASKS = "tasks.json"
PROMPTING = "prompting.json"
PREFIX = "compsuite"
#: the metric of a task with references, by the kind of its inputs
METRICS = {"translate": "seq_acc", "classify": "accuracy"}
FORMAT_VERSION = 1

UTILS = '''"""lm-evaluation-harness hooks of a compsuite export (written by `compsuite export
--lm-eval`).  Each hands over to compsuite.lmeval, so that the documents, the reading of
an answer and the metric are the suite's own: run lm_eval where compsuite is importable
(the suite's environment)."""
from pathlib import Path

from compsuite import lmeval

HERE = Path(__file__).resolve().parent


def load_docs(docs, **kwargs):
    return lmeval.load_docs(HERE, docs)


def process_results(doc, results):
    return lmeval.process_results(HERE, doc, results)


def seq_acc(items):
    return lmeval.aggregate(items)


def accuracy(items):
    return lmeval.aggregate(items)
'''


# ----------------------------------------------------------------------------- prompting
def study_prompting(study) -> dict:
    """The study's prompting settings: the ``prompting`` of its YAML's
    ``toolkit_defaults`` (every prompted toolkit shares one; the first found), or {}."""
    for settings in (study.spec.raw.get("toolkit_defaults") or {}).values():
        if isinstance(settings, dict) and isinstance(settings.get("prompting"), dict):
            return dict(settings["prompting"])
    return {}


def prompt_settings(study, shots: int | None = None, strategy: str | None = None):
    """The :class:`~compsuite.models.prompting.PromptSpec` of the exported prompts: the
    study's settings, ``shots`` and ``strategy`` (``--shots``, ``--demos``) over them."""
    from compsuite.models.prompting import prompt_spec

    value = study_prompting(study)
    if shots is not None:
        value["shots"] = shots
    if strategy is not None:
        value["strategy"] = strategy
    where = f"{study.source}: toolkit_defaults.<toolkit>.prompting" + (
        " with --shots/--demos" if shots is not None or strategy is not None else "")
    spec = prompt_spec(value, where)
    spec.check(where)
    return spec


# ----------------------------------------------------------------------------- names
def _name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


def unit_tag(entry: dict, first_seed: int) -> str:
    """A unit's part of its tasks' names: its folder without the run, and without the
    seed for the profile's first seed (``systematicity``; ``A``; ``A_seed2``)."""
    parts = entry["unit"].split("/")
    run = parts[-2] if len(parts) >= 2 else ""
    keep = [p for p in parts if p != run and p != f"seed{first_seed}"]
    return _name("_".join(keep)) or "unit"


def task_names(manifest: dict) -> dict[str, tuple[str, str | None]]:
    """Each exported file (``<unit>/<name>``) -> (its task, the tag of its unit's tasks
    or None where the unit has one file)."""
    study = _name(manifest["study"])
    first = min((e["seed"] for e in manifest["units"]), default=1)
    out: dict[str, tuple[str, str | None]] = {}
    for e in manifest["units"]:
        if e["model_in_the_loop"] or not e["files"]:
            continue
        tag = f"{PREFIX}_{study}_{unit_tag(e, first)}"
        several = len(e["files"]) > 1
        for f in e["files"]:
            key = f["inputs"][:-len(".src")]
            out[key] = ((f"{tag}_{_name(Path(key).name)}", tag) if several else (tag, None))
    return out


# ----------------------------------------------------------------------------- references
def _pairs(folder: Path, stem: str) -> list[str] | None:
    premise, hypothesis = folder / f"{stem}.premise", folder / f"{stem}.hypothesis"
    if not hypothesis.is_file():
        return None
    from compsuite.models.recording import as_line

    return [as_line((p, h)) for p, h in zip(read_lines(premise, allow_empty=True),
                                             read_lines(hypothesis, allow_empty=True))]


def find_references(lines: Sequence[str], folders: Iterable[Path]) -> list[Path]:
    """The files of what the model should answer to ``lines`` (an exported file's
    inputs): beside each ``{split}.src`` (a pair: ``{split}.premise`` and
    ``.hypothesis``) of ``folders`` whose lines are exactly ``lines``, its
    ``{split}.tgt`` or ``{split}.label`` of as many lines.  One file (or several of the
    same lines) is the reference; none, or several that differ (the same inputs with
    two answers, e.g. an exception and the rule), is none."""
    from compsuite.models.recording import as_line

    n = len(lines)
    found: list[Path] = []
    for folder in folders:
        if folder is None or not Path(folder).is_dir():
            continue
        folder = Path(folder)
        candidates = [(p.stem, p) for p in sorted(folder.glob("*.src"))] + \
                     [(p.stem, p) for p in sorted(folder.glob("*.premise"))]
        for stem, path in candidates:
            if _count(path) != n:
                continue
            inputs = ([as_line(x) for x in read_lines(path, allow_empty=True)]
                      if path.suffix == ".src" else _pairs(folder, stem))
            if inputs != list(lines):
                continue
            for suffix in (".tgt", ".label"):
                ref = folder / f"{stem}{suffix}"
                if ref.is_file() and _count(ref) == n:
                    found.append(ref)
                    break
    return found


def references(lines: Sequence[str], folders: Iterable[Path]) -> tuple[Path | None, str]:
    """(the reference file of ``lines``, or None; why none)."""
    found = find_references(lines, folders)
    if not found:
        return None, "no file of the dataset holds answers to these inputs"
    if len({tuple(read_lines(p, allow_empty=True)) for p in found}) > 1:
        return None, ("the dataset answers these inputs in several ways ("
                      + ", ".join(p.name for p in found) + "): the study decides which")
    return found[0], ""


def _count(path: Path) -> int:
    return len(read_lines(path, allow_empty=True))


# ----------------------------------------------------------------------------- writing
def _dataset(entry: dict):
    """The unit's dataset as the export saw it (its raw and model text folders)."""
    from compsuite.foundation.dataset import Dataset

    raw = Path(entry["data"])
    return Dataset(root=raw.parent, text=Path(entry["text"]) if entry.get("text") else None)


def _split_pair(line: str) -> tuple[str, str]:
    premise, _, hypothesis = line.partition("\t")
    return premise, hypothesis


def write_tasks(out: Path, manifest: dict, spec) -> dict:
    """The lm-eval tasks of the export in ``out`` (its ``manifest``), prompted by
    ``spec``, under ``out/lm_eval/`` (see the module docstring); returns the index
    written to ``tasks.json``."""
    from compsuite.models.prompting import Prompter

    out = Path(out)
    folder = out / FOLDER
    names = task_names(manifest)
    tasks: dict[str, dict] = {}
    for e in manifest["units"]:
        if e["model_in_the_loop"]:
            continue
        data = _dataset(e)
        prompter = Prompter(spec, data)
        search = [data.text, data.raw] if data.text else [data.raw]
        for f in e["files"]:
            key = f["inputs"][:-len(".src")]
            task, tag = names[key]
            lines = read_lines(out / f["inputs"], allow_empty=True)
            ids = read_lines(out / f["ids"], allow_empty=True)
            pair = any("\t" in x for x in lines) and f["task"] == "classify"
            items = [_split_pair(x) for x in lines] if pair else lines
            ref_file, why = references(lines, search)
            refs = read_lines(ref_file, allow_empty=True) if ref_file else None
            prompts = prompter.prompts(items)
            with atomic_open(folder / "docs" / f"{task}.jsonl") as fh:
                for i, (line, item, prompt) in enumerate(zip(lines, items, prompts)):
                    doc: dict[str, Any] = {"id": ids[i], "unit": e["unit"],
                                           "file": Path(key).name, "line": i + 1,
                                           "kind": f["task"]}
                    if pair:
                        doc["premise"], doc["hypothesis"] = item
                    doc["input"] = line
                    doc["prompt"] = prompt.text
                    doc["target"] = refs[i] if refs is not None else ""
                    doc["scored"] = refs is not None
                    fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
            metric = METRICS.get(f["task"]) if refs is not None else None
            tags = [f"{PREFIX}_{_name(manifest['study'])}"] + ([tag] if tag else [])
            with atomic_open(folder / f"{task}.yaml") as fh:
                fh.write(task_yaml(task, tags, spec, metric, e, f, ref_file, why))
            tasks[task] = {"unit": e["unit"], "file": key, "kind": f["task"], "n": f["n"],
                           "tags": tags, "metric": metric,
                           "references": str(ref_file) if ref_file else None,
                           "no_references": why or None,
                           "inputs": f["inputs"], "answers": f["answers"]}
    index = {"format_version": FORMAT_VERSION, "study": manifest["study"],
             "profile": manifest["profile"], "prompting": spec.label(),
             "prompting_sha256": spec.sha256(), "tasks": tasks,
             "not_exported": {e["unit"]: e["model_in_the_loop"] for e in manifest["units"]
                              if e["model_in_the_loop"]}}
    with atomic_open(folder / PROMPTING) as fh:
        json.dump(spec.as_dict(), fh, indent=2, ensure_ascii=False)
    with atomic_open(folder / TASKS) as fh:
        json.dump(index, fh, indent=2)
    with atomic_open(folder / "utils.py") as fh:
        fh.write(UTILS)
    with atomic_open(folder / "README.md") as fh:
        fh.write(readme(index, manifest))
    return index


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)   # a YAML double-quoted scalar


def until(spec) -> list[str]:
    """lm-eval's stop strings: the spec's, and a line break where an answer is its
    first line."""
    stops = [s for s in spec.stop if s]
    if spec.first_line and "\n" not in stops:
        stops.append("\n")
    return stops


def task_yaml(task: str, tags: list[str], spec, metric: str | None, entry: dict, f: dict,
              refs: Path | None, why: str = "") -> str:
    lines = [f"# {entry['unit']}: {Path(f['inputs']).name} ({f['task']}, {f['n']} inputs); "
             f"written by compsuite export --lm-eval",
             f"# prompts: {spec.label()} (compsuite.models.prompting, {PROMPTING})",
             f"# references: {refs}" if refs else
             f"# no references ({why}): lm-eval collects the answers, `compsuite score "
             "--lm-eval-samples` scores them with the study's own evaluation",
             f"task: {task}",
             "tag:"] + [f"  - {t}" for t in tags] + [
             "custom_dataset: !function utils.load_docs",
             "dataset_kwargs:",
             f"  docs: {_quoted(f'docs/{task}.jsonl')}",
             "test_split: test",
             "output_type: generate_until",
             'doc_to_text: "{{prompt}}"',
             'doc_to_target: "{{target}}"',
             "generation_kwargs:",
             "  until: [" + ", ".join(_quoted(s) for s in until(spec)) + "]",
             "  do_sample: false",
             "  temperature: 0.0",
             f"  max_gen_toks: {spec.max_tokens}",
             "process_results: !function utils.process_results"]
    if metric:
        lines += ["metric_list:", f"  - metric: {metric}",
                  f"    aggregation: !function utils.{metric}", "    higher_is_better: true"]
    else:
        lines += ["metric_list: []"]
    lines += ["metadata:", f"  version: {FORMAT_VERSION}"]
    return "\n".join(lines) + "\n"


def readme(index: dict, manifest: dict) -> str:
    study, profile = index["study"], index["profile"]
    rows = ["# lm-evaluation-harness tasks of " f"{study} (profile {profile})", "",
            f"Prompts: {index['prompting']} ({PROMPTING}). Run, from any folder:", "",
            f"    lm_eval --include_path THIS_EXPORT --tasks {PREFIX}_{_name(study)} "
            "--model hf --model_args pretrained=MODEL --log_samples --output_path OUT", "",
            "and score the answers it logged with the study's own evaluation:", "",
            f"    compsuite score {study} --profile {profile} --from THIS_EXPORT "
            "--lm-eval-samples OUT", "",
            "A task with references is scored by lm-eval with the suite's sequence "
            "accuracy; one without collects the answers that compsuite score scores "
            "(consistency and the like).", "",
            "| task | unit | inputs | metric in lm-eval |", "| --- | --- | --- | --- |"]
    for name, t in index["tasks"].items():
        rows.append(f"| {name} | {t['unit']} | {Path(t['inputs']).name} ({t['kind']}, "
                    f"{t['n']}) | {t['metric'] or 'none: ' + t['no_references']} |")
    if index["not_exported"]:
        rows += ["", "Not tasks (they need the model in the loop):", ""]
        rows += [f"- {u}: {why}" for u, why in index["not_exported"].items()]
    partly = [(e["unit"], a) for e in manifest["units"] for a in e["analyses_needing_the_model"]
              if not e["model_in_the_loop"]]
    if partly:
        rows += ["", "Analyses no answers can give (not in any score from lm-eval):", ""]
        rows += [f"- {u}: {a}" for u, a in partly]
    return "\n".join(rows) + "\n"


# ----------------------------------------------------------------------------- lm-eval's hooks
_PROMPTERS: dict[Path, Any] = {}


def prompter(folder: Path):
    """The :class:`~compsuite.models.prompting.Prompter` of the spec in
    ``folder/prompting.json`` (read once), for reading answers."""
    folder = Path(folder)
    if folder not in _PROMPTERS:
        from compsuite.models.prompting import Prompter, prompt_spec

        path = folder / PROMPTING
        if not path.is_file():
            raise DataError(f"{path}: no such file (the lm-eval tasks 'compsuite export "
                            "--lm-eval' wrote)")
        _PROMPTERS[folder] = Prompter(prompt_spec(json.loads(path.read_text("utf-8")),
                                                  str(path)))
    return _PROMPTERS[folder]


def load_docs(folder: Path, docs: str) -> dict:
    """lm-eval's ``custom_dataset``: the task's documents (``folder/docs``), as its one
    split ``test``."""
    import datasets

    path = Path(folder) / docs
    if not path.is_file():
        raise DataError(f"{path}: no such file (export the study again with --lm-eval)")
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return {"test": datasets.Dataset.from_list(rows)}


def answer_of(folder: Path, doc: dict, response: str) -> str:
    """What the suite reads as the answer in ``response``: the text up to the spec's
    stop strings (and first line break), or for a classification with label words, the
    class whose word it starts with (``""``: none)."""
    p = prompter(folder)
    text = p.extract(response if isinstance(response, str) else "")
    if doc.get("kind") == "classify" and p.spec.labels:
        return p.to_label(text)
    return text


def process_results(folder: Path, doc: dict, results: Sequence[str]) -> dict:
    """lm-eval's ``process_results``: per document (answer, reference) under the task's
    metric, or nothing where the task has no references."""
    if not doc.get("scored"):
        return {}
    return {METRICS[doc["kind"]]: (answer_of(folder, doc, results[0]), doc["target"])}


def aggregate(items: Sequence) -> float:
    """lm-eval's aggregation: the suite's sequence accuracy of the answers against the
    references."""
    from compsuite.eval.metrics.accuracy import sequence_accuracy

    return sequence_accuracy([a for a, _ in items], [r for _, r in items]).accuracy


# ----------------------------------------------------------------------------- the way back
def read_index(export: Path) -> dict:
    path = Path(export) / FOLDER / TASKS
    if not path.is_file():
        raise DataError(f"{path}: no such file (export with --lm-eval DIR, and give that "
                        "DIR to --from)")
    return json.loads(path.read_text(encoding="utf-8"))


def sample_files(samples: Path) -> list[Path]:
    """The samples ``lm_eval --log_samples`` wrote under ``samples`` (its output path,
    or the folder of one model in it), newest last."""
    samples = Path(samples)
    if not samples.is_dir():
        raise DataError(f"{samples}: no such folder (lm_eval's --output_path, run with "
                        "--log_samples)")
    files = sorted(samples.rglob("samples_*.jsonl"), key=lambda p: (_stamp(p)[1], p.name))
    if not files:
        raise DataError(f"{samples}: no samples_*.jsonl (run lm_eval with --log_samples "
                        "and give its --output_path)")
    models = sorted({str(p.parent) for p in files})
    if len(models) > 1:
        raise DataError(f"{samples}: samples of several models ({', '.join(models)}): give "
                        "the folder of one")
    return files


def read_samples(export: Path, samples: Path, show: bool = True) -> dict[str, dict[int, str]]:
    """The answers lm-eval logged for the export in ``export``: exported file
    (``<unit>/<name>``) -> line -> answer, read from each sample's filtered response as
    its task read it; a later samples file of the same task replaces an earlier one."""
    index = read_index(export)
    folder = Path(export) / FOLDER
    by_task: dict[str, Path] = {}
    for path in sample_files(samples):
        task = _task_of(path, index["tasks"])
        if task is None:
            continue
        if task in by_task and show:
            print(f"compsuite: {task}: {path.name} replaces {by_task[task].name}",
                  file=sys.stderr)
        by_task[task] = path
    if not by_task:
        raise DataError(f"{samples}: no samples of this export's tasks "
                        f"({PREFIX}_{_name(index['study'])}_...)")
    answers: dict[str, dict[int, str]] = {}
    for task, path in sorted(by_task.items()):
        info = index["tasks"][task]
        inputs = read_lines(Path(export) / info["inputs"], allow_empty=True)
        got = answers.setdefault(info["file"], {})
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    s = json.loads(line)
                    doc, resp = s["doc"], s["filtered_resps"]
                except (ValueError, KeyError, TypeError):
                    raise DataError(f"{path}:{n}: not a sample lm_eval logged (JSON with "
                                    "doc and filtered_resps)") from None
                i = int(doc.get("line", 0))
                if not 1 <= i <= len(inputs) or inputs[i - 1] != doc.get("input"):
                    raise DataError(f"{path}:{n}: input {str(doc.get('input'))[:60]!r} is not "
                                    f"line {i} of {info['inputs']} (samples of another "
                                    "export?)")
                resp = resp[0] if isinstance(resp, list) and resp else resp
                got[i] = answer_of(folder, doc, resp if isinstance(resp, str) else "")
    return answers


#: lm-eval's name of a samples file: ``samples_<task>_<date and time>.jsonl``
SAMPLES_NAME = re.compile(r"^samples_(.+)_(\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")


def _stamp(path: Path) -> tuple[str, str]:
    """(task, date and time) of a samples file's name."""
    m = SAMPLES_NAME.match(path.name)
    return (m.group(1), m.group(2)) if m else (path.name[len("samples_"):-len(".jsonl")], "")


def _task_of(path: Path, tasks: dict) -> str | None:
    """The task of a samples file, if it is one of ``tasks``."""
    task = _stamp(path)[0]
    return task if task in tasks else None


def write_answers(export: Path, samples: Path, hyps: Path, show: bool = True
                  ) -> dict[str, str]:
    """The export's answer files (``hyps/<unit>/<name>.hyp``) from lm-eval's samples,
    for each file whose every input was answered; returns the units not answered
    whole, with the reason (their tasks not run, or run with --limit)."""
    index = read_index(export)
    answers = read_samples(export, samples, show)
    hyps = Path(hyps)
    absent: dict[str, list[str]] = {}
    partial: dict[str, list[str]] = {}
    tags: dict[str, str] = {}
    for task, info in index["tasks"].items():
        got = answers.get(info["file"], {})
        if len(got) == info["n"]:
            with atomic_open(hyps / info["answers"]) as fh:
                fh.writelines(got[i].replace("\n", " ") + "\n"
                              for i in range(1, info["n"] + 1))
            continue
        target = hyps / info["answers"]
        if target.is_file():
            target.unlink()   # an earlier run's answers are not this one's
        if got:
            partial.setdefault(info["unit"], []).append(
                f"{task} has {len(got)} of its {info['n']} answers")
        else:
            absent.setdefault(info["unit"], []).append(task)
        tags[info["unit"]] = info["tags"][-1] if len(info["tags"]) > 1 else task
    why: dict[str, str] = {}
    for unit in tags:
        if unit in partial:
            why[unit] = ("; ".join(partial[unit]) + " (lm_eval --limit?): the study scores a "
                         "test on all its inputs")
        else:
            every = len(absent[unit]) == sum(t["unit"] == unit
                                             for t in index["tasks"].values())
            run = tags[unit] if every else " ".join(absent[unit])
            why[unit] = f"not answered in the samples (lm_eval --tasks {run})"
    if len(tags) == len({t["unit"] for t in index["tasks"].values()}):
        raise DataError(f"{samples}: no test is answered whole: " + "; ".join(
            f"{u}: {w}" for u, w in why.items() if u in partial))
    return why
