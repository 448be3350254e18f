"""A whole study for a system known only by its answers: ``compsuite export`` writes
every input the study's tests ask a model, ``compsuite score`` scores the answers.

Both evaluate one run of the ``files`` backend (:mod:`compsuite.toolkits.files`) in
every unit the study plans for a run, through the study's own evaluation: export with a
model that writes down what it is asked, score with one that answers from the
system's files; so the inputs exported are exactly those scored.  Layout::

    OUT/manifest.json                 study, profile, units, files, checksums, and the
                                      tests that need the model in the loop (and why)
    OUT/README.md                     the same for a reader
    OUT/<unit>/<name>.src             inputs, one per line (a pair: premise<TAB>hypothesis)
    OUT/<unit>/<name>.ids             their ids, <unit>/<name>:<line>
    HYPS/<unit>/<name>.hyp            the system's answers, one per line (what score reads)

A unit whose test needs the model itself (localism feeds the model's outputs back,
overgeneralisation reads checkpoints over training, the embedding and representation
analyses read its vectors) is listed in the manifest with the reason and skipped by
score; run those with a program behind the command protocol instead.  Nothing here
names a study.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import atomic_open, sha256_file
from compsuite.models.recording import Recording, Replaying
from compsuite.studies.base import Run

MANIFEST = "manifest.json"
FORMAT_VERSION = 1


def system_run(study, name: str, toolkit: str, args: dict) -> Run:
    """An evaluate-only run of ``toolkit`` (files, command, a served model) added to
    ``study`` under a new name, with an architecture of the same name (how reports label
    it; a prompted model's row also says how it was asked, from its results' usage).
    Like a run of the study's YAML, it starts from the study's ``toolkit_defaults`` for
    its toolkit (a study's prompt templates, say)."""
    check_name(name)
    if name in study.runs or name in study.architectures:
        raise ConfigError(f"--name {name}: the study already has a run or an architecture "
                          "of that name")
    study.architectures[name] = {"paper_name": name, "evaluate_only": True}
    defaults = (study.spec.raw.get("toolkit_defaults") or {}).get(toolkit) or {}
    return study.runs.register(name, Run(name=name, architecture=name, toolkit=toolkit,
                                         args=args, defaults=dict(defaults),
                                         source=f"the command line (--name {name})"))


#: the bytes a folder's name may have on the usual file systems (ext4, XFS, APFS, NTFS)
NAME_MAX = 255
#: the bytes a system's name may have: room left for ``<profile>-`` before it
MAX_NAME = 200


def check_name(name: str, option: str = "--name") -> str:
    """A system's name names its folders (``runs/<study>/<profile>/<dataset>/<name>``,
    ``results/<study>/<profile>-<name>``): one plain folder name, never a path that
    leads elsewhere or into a folder of its own, and short enough for a folder's name
    (:data:`MAX_NAME` bytes: file systems take :data:`NAME_MAX`, and a results folder
    puts the profile before it)."""
    size = len(name.encode("utf-8", "surrogateescape"))
    bad = ("it is empty" if not name.strip() else
           "it holds a path separator" if "/" in name or "\\" in name else
           "it starts with '.'" if name.startswith(".") else
           "it holds a control character" if any(ord(c) < 32 for c in name) else
           f"it is {size} bytes, more than the {MAX_NAME} a name may have"
           if size > MAX_NAME else None)
    if bad:
        raise ConfigError(f"{option} {name!r}: {bad}; a name is one plain folder name, "
                          "e.g. my-model")
    return name


def evaluate(runner, units, show: bool, wrap, skip: dict | None = None
             ) -> tuple[dict, dict]:
    """Each unit evaluated in turn, its models wrapped by ``wrap(unit)`` (a recording or
    a replaying of the unit's folder): (results by unit path, reasons of the units that
    need the model in the loop, by path).  ``skip``: units not to evaluate (path ->
    why), listed with the skipped."""
    from compsuite.locks import folder_lock

    # the study's data folder, held as a run holds it: neither writes a dataset while
    # the other does (a run's lock refuses this in one line, naming its PID)
    with folder_lock(Path(runner.data_root) / runner.study.name, "data"):
        return _evaluate(runner, units, show, wrap, skip)


def _evaluate(runner, units, show: bool, wrap, skip: dict | None) -> tuple[dict, dict]:
    from compsuite.models.protocol import InTheLoop
    from compsuite.runner import wave_of

    runner.wrap_model = wrap
    skipped: dict[str, str] = dict(skip or {})
    runner.prepare([u for u in units if u.path not in skipped])
    done: dict[str, dict] = {}
    waves = wave_of(units)
    for u in sorted(units, key=lambda u: waves[u.path]):   # after the units they require
        if u.path in skipped:
            continue
        blocked = [d for d in u.requires if d in skipped]
        if blocked:
            skipped[u.path] = f"it evaluates the model of {blocked[0]}: {skipped[blocked[0]]}"
            continue
        try:
            done[u.path] = runner.execute(u)
        except InTheLoop as e:
            skipped[u.path] = str(e)
            if show:
                print(f"compsuite: {u.path}: {e}", file=sys.stderr)
    return done, skipped


def export(study, profile: str, out: Path, data_root: Path, *, parts=None, seeds=None,
           show: bool = True, then=None) -> dict:
    """Write every test input of ``study``'s ``profile`` under ``out`` (see the module
    docstring); returns the manifest.  ``then(folder, manifest)``: what else is written
    into the folder before it is moved into place (the lm-eval tasks)."""
    from compsuite.runner import Runner
    from compsuite.toolkits import answers_backend

    out = Path(out)
    there = next(p for p in (out, *out.parents) if p.exists())   # out or its folder
    if not there.is_dir():
        raise ConfigError(f"{there}: a file, not a folder (export into a new folder)")
    if out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"{out}: not empty (export into a new folder)")
    out.parent.mkdir(parents=True, exist_ok=True)
    # written beside, then moved into place: a stopped export leaves no half folder
    part = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="compsuite-export-") as work:
            runner = Runner(study, profile, data_root=data_root, runs_root=Path(work),
                            show=show)
            runner.timings = None   # timings.jsonl holds the steps of compsuite run
            name = "export"
            system_run(study, name, answers_backend(), {"mode": "record",
                                                        "inputs": str(part.resolve())})
            units = runner.plan(seeds=seeds, runs=[name], parts=parts)
            if not units:
                raise ConfigError(f"{study.name} --profile {profile}: no units to export")
            done, skipped = evaluate(runner, units, show, lambda u: partial(
                Recording, folder=part.resolve() / u.path, prefix=u.path))
        manifest = describe(study, runner.profile, units, part, skipped,
                            {u.path: runner.dataset(u) for u in units})
        with atomic_open(part / MANIFEST) as fh:
            json.dump(manifest, fh, indent=2)
        with atomic_open(part / "README.md") as fh:
            fh.write(readme(manifest))
        if then is not None:
            then(part, manifest)
        if out.is_dir():
            out.rmdir()   # empty (checked above)
        part.rename(out)
    finally:
        shutil.rmtree(part, ignore_errors=True)
    return manifest


def describe(study, profile, units, out: Path, skipped: dict, data: dict) -> dict:
    """The export's manifest: per unit, what it feeds and its files (or why it needs
    the model in the loop)."""
    from compsuite import __version__

    from compsuite.models.recording import IN_THE_LOOP, read_asked

    feeds = study.parts(profile)
    entries = []
    for u in units:
        folder = out / u.path
        asked = read_asked(folder)
        partly = asked.pop(IN_THE_LOOP, [])
        entries.append({
            "unit": u.path, "part": u.part, "feeds": feeds.get(u.part, ""), "seed": u.seed,
            "dataset": u.dataset, "model_from": u.model_from,
            # what a program of the command protocol is told (COMPSUITE_DATA, _TEXT)
            "data": str(data[u.path].raw.resolve()),
            "text": str(Path(data[u.path].text).resolve()) if data[u.path].text else None,
            "files": [{"inputs": f"{u.path}/{n}.src", "ids": f"{u.path}/{n}.ids",
                       "answers": f"{u.path}/{n}.hyp", "task": a["task"], "n": a["n"],
                       "asked_as": a.get("asked_as"),
                       "sha256": sha256_file(folder / f"{n}.src")} for n, a in asked.items()],
            "model_in_the_loop": skipped.get(u.path),
            "analyses_needing_the_model": partly})
    return {"format_version": FORMAT_VERSION, "study": study.name, "profile": profile.name,
            "compsuite_version": __version__, "config_version": study.config_version,
            "units": entries,
            "counts": {"units": len(entries), "files": sum(len(e["files"]) for e in entries),
                       "inputs": sum(f["n"] for e in entries for f in e["files"]),
                       "model_in_the_loop": sum(bool(e["model_in_the_loop"])
                                                for e in entries),
                       "analyses_needing_the_model": sum(len(e["analyses_needing_the_model"])
                                                         for e in entries)}}


def readme(manifest: dict) -> str:
    lines = [f"# Test inputs of {manifest['study']} (profile {manifest['profile']})", "",
             "Answer every `<unit>/<name>.src` with `<unit>/<name>.hyp` (one answer per "
             "line, in order; a translation, or a class name for `classify` files) in a "
             "folder of your own, then run:", "",
             f"    compsuite score {manifest['study']} --profile {manifest['profile']} "
             "--from THIS_FOLDER --hyps YOUR_FOLDER", "",
             "| unit | feeds | files (task, inputs) |", "| --- | --- | --- |"]
    for e in manifest["units"]:
        files = "; ".join(f"{Path(f['inputs']).name} ({f['task']}, {f['n']})"
                          for f in e["files"]) or "-"
        if e["model_in_the_loop"]:
            files = "needs the model in the loop (use the command protocol)"
        elif e["analyses_needing_the_model"]:
            files += "; not from files: " + "; ".join(
                a.split(" (")[0] for a in e["analyses_needing_the_model"])
        lines.append(f"| {e['unit']} | {e['feeds']} | {files} |")
    return "\n".join(lines) + "\n"


def read_manifest(folder: Path, study: str, profile: str) -> dict:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise DataError(f"{path}: no such file (the folder 'compsuite export' wrote)")
    m = json.loads(path.read_text(encoding="utf-8"))
    if (m.get("study"), m.get("profile")) != (study, profile):
        raise ConfigError(f"{path}: an export of {m.get('study')} --profile "
                          f"{m.get('profile')}, not of {study} --profile {profile}")
    return m


def score(study, profile: str, inputs: Path, answers: Path, *, runs_root: Path,
          results_root: Path, data_root: Path, name: str = "system",
          show: bool = True, unanswered: dict[str, str] | None = None) -> tuple[Path, dict]:
    """Score the answer files in ``answers`` for the export in ``inputs``: the study's
    report for this one system, beside the paper's numbers; returns (report folder,
    skipped units with reasons).  ``unanswered``: exported units (their folders in the
    export) that have no answers, with why; skipped, with the units that need them."""
    from compsuite.locks import folder_lock
    from compsuite.runner import Runner
    from compsuite.toolkits import answers_backend

    check_name(name)   # before anything is read: it names the folders written
    manifest = read_manifest(inputs, study.name, profile)
    if not Path(answers).is_dir():
        raise DataError(f"{answers}: no such folder (the answers: <unit>/<name>.hyp)")
    runner = Runner(study, profile, data_root=data_root,
                    runs_root=Path(runs_root) / "scored", show=show)
    runner.timings = None   # timings.jsonl holds the steps of compsuite run
    system_run(study, name, answers_backend(), {
        "mode": "replay", "inputs": str(Path(inputs).resolve()),
        "answers": str(Path(answers).resolve())})
    # the same unit of the study, whatever the run is called in its folder's name
    exported = {(e["part"], e["dataset"], e["seed"]): e["unit"] for e in manifest["units"]}
    planned = runner.plan(seeds=sorted({e["seed"] for e in manifest["units"]}), runs=[name])
    folders = {u.path: exported.get((u.part, u.dataset, u.seed)) for u in planned}
    units = [u for u in planned if folders[u.path]]
    with folder_lock(runner.runs_dir, "runs"):
        for u in units:   # another system's answers under this name: refused, as by run
            runner.check_system(u, runner.runs_dir / u.path / "result.json")
        for u in units:   # answers may have changed since the last score: nothing reused
            shutil.rmtree(runner.runs_dir / u.path, ignore_errors=True)
        done, skipped = evaluate(runner, units, show, lambda u: partial(
            Replaying, inputs=Path(inputs).resolve() / folders[u.path],
            answers=Path(answers).resolve() / folders[u.path]), skip={
                u.path: (unanswered or {})[folders[u.path]] for u in units
                if folders[u.path] in (unanswered or {})})
    if not done:
        raise DataError(f"{answers}: no unit could be scored: " + "; ".join(
            f"{k}: {v}" for k, v in skipped.items()))
    out = Path(results_root) / study.name / f"{profile}-{name}"
    out.mkdir(parents=True, exist_ok=True)
    study.write_reports(runner.profile, [done[u.path] for u in units if u.path in done], out)
    if skipped:
        text = (out / "report.md").read_text(encoding="utf-8")
        with atomic_open(out / "report.md") as fh:
            fh.write(text + "\n## Not scored from answer files\n\n" + "\n".join(
                f"- {k}: {v}" for k, v in skipped.items()) + "\n")
    return out, skipped
