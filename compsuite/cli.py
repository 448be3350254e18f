"""The ``compsuite`` command line.  Subcommands parse arguments and call the rooms
(``data_prep``, ``eval``, the runner); each study adds its own ``data`` and ``eval``
subcommands (``compsuite/studies/<study>/commands.py``), so nothing here names a study.

    compsuite list                                   studies, profiles, parts
    compsuite data <study> ...                       generate and convert a study's data
    compsuite eval accuracy|consistency ...          score output files of any system
    compsuite eval <study> ...                       a study's model-in-the-loop tests
    compsuite run <study> --profile quick|paper|tiny [--parts ...] [--jobs N]
    compsuite report <study> --profile quick|paper|tiny
    compsuite times <study> --profile quick|paper|tiny   where a run's time went
    compsuite export <study> --profile P --out DIR   every test input, for any system
    compsuite score <study> --profile P --from DIR --hyps HYPDIR
    compsuite export <study> --profile P --lm-eval DIR   the tests as lm-eval tasks
    compsuite score <study> --profile P --from DIR --lm-eval-samples OUT
    compsuite paths

Errors of the user's making (a missing file, a mismatched line count, a malformed
config, an unknown name) print one line naming what is at fault; anything else is a
bug and keeps its traceback.  Ctrl-C or SIGTERM stops the toolkit processes the command
started and prints one line saying how to resume (exit 130 or 143).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from pathlib import Path

from compsuite.foundation.errors import ConfigError, UserError
from compsuite.processes import Stopped, handlers

#: the run name of ``--model-cmd``/``--hf-model`` (and of ``score``) without ``--name``
DEFAULT_NAME = "system"


def _fail(msg: str, code: int = 1) -> int:
    print(f"compsuite: error: {msg}", file=sys.stderr)
    return code


# ----------------------------------------------------------------------------- eval
def cmd_eval_accuracy(a) -> int:
    from compsuite.commands import output_options, outputs_given
    from compsuite.eval.metrics.accuracy import accuracy_with_breakdown
    from compsuite.models.predictions import read_plain
    from compsuite.eval.readers.predictions import read_tsv
    from compsuite.studies.evaluations import BREAKDOWNS

    own = outputs_given(a)   # a toolkit's own output file (--<toolkit> FILE)
    if own:
        preds = own[0].read_outputs(own[1])
    elif a.tsv:
        preds = read_tsv(a.tsv)
    elif a.hyp and a.ref:
        preds = read_plain(a.hyp, a.ref, a.src)
    else:
        return _fail(f"give {', '.join(o + ' FILE' for o in output_options())}, --tsv FILE, "
                     "or --hyp H with --ref R", 2)
    features = None
    if a.breakdown:
        if preds.sources is None:
            return _fail("--breakdown needs the sources: add --src (or use "
                         f"{'/'.join([*output_options(), '--tsv'])})", 2)
        rows = [BREAKDOWNS.get(a.breakdown)(s) for s in preds.sources]
        features = {k: [r[k] for r in rows] for k in rows[0]}
    res = accuracy_with_breakdown(preds.hypotheses, preds.references, features)
    out = {**res.as_dict(), "input": preds.origin}
    if a.out:
        from compsuite.commands import write_json

        write_json(a.out, out)
    if a.plot:
        if not features:
            return _fail("--plot needs --breakdown", 2)
        from compsuite.eval.reports.plots import accuracy_by_feature

        accuracy_by_feature({a.label or "model": res.breakdown}, a.plot)
    if a.json:
        print(json.dumps(out))
    else:
        from compsuite.eval.reports.tables import markdown_table

        print(markdown_table(["metric", "value", "n", "signature"],
                             [["sequence accuracy", res.accuracy, res.n, res.signature]]))
        for feat, groups in res.breakdown.items():
            print(f"\naccuracy by {feat}\n")
            print(markdown_table([feat, "accuracy", "n"],
                                 [[k, v["accuracy"], v["n"]] for k, v in groups.items()]))
    return 0


def cmd_eval_consistency(a) -> int:
    from compsuite.eval.metrics.consistency import consistency
    from compsuite.eval.readers.predictions import read_tsv
    from compsuite.foundation.errors import DataError
    from compsuite.foundation.io import read_aligned, read_lines

    if a.tsv_a and a.tsv_b:
        pa, pb = read_tsv(a.tsv_a), read_tsv(a.tsv_b)
        if len(pa) != len(pb):
            raise DataError(f"{a.tsv_a} has {len(pa)} predictions but {a.tsv_b} has {len(pb)}")
        for i, (x, y) in enumerate(zip(pa.references, pb.references), start=2):
            if x.split() != y.split():
                raise DataError(f"targets differ at line {i} of {a.tsv_a} and {a.tsv_b}: "
                                "the pairs must share their meaning")
        outs_a, outs_b, refs = pa.hypotheses, pb.hypotheses, pa.references
        origin = {"format": "tsv", "a": a.tsv_a, "b": a.tsv_b}
    elif a.hyp_a and a.hyp_b:
        cols = read_aligned(*[p for p in (a.hyp_a, a.hyp_b, a.ref) if p])
        outs_a, outs_b = cols[0], cols[1]
        refs = cols[2] if a.ref else None
        origin = {"format": "plain", "a": a.hyp_a, "b": a.hyp_b, "ref": a.ref}
    else:
        return _fail("give --hyp-a A --hyp-b B [--ref R], or --tsv-a A --tsv-b B", 2)
    cats = None
    if a.categories:
        cats = read_lines(a.categories)
        if len(cats) != len(outs_a):
            raise DataError(f"{a.categories} has {len(cats)} lines for {len(outs_a)} pairs")
    res = consistency(outs_a, outs_b, refs, cats)
    out = {**res.as_dict(), "input": origin}
    if a.json:
        print(json.dumps(out))
    else:
        from compsuite.eval.reports.tables import markdown_table

        keys = ["consistency", "consistent_correct", "consistent_incorrect",
                "consistency_incorrect"]
        print(markdown_table(["", *keys, "n"],
                             [["all", *[getattr(res, k) for k in keys], res.n]]
                             + [[c, *[v.get(k) for k in keys], v["n"]]
                                for c, v in res.breakdown.items()]))
        print(f"signature: {res.signature}")
    return 0


# ----------------------------------------------------------------------------- run / report
def _study(a):
    """The study named on the command line, with the program of ``--model-cmd`` (if
    any) as one more, evaluate-only, run named ``--name``."""
    from compsuite.commands import engine_settings, unused_engine
    from compsuite.registry import get_study

    study = get_study(a.study)
    if system_options(a):
        from compsuite.export import system_run
        from compsuite.toolkits import user_system

        name = DEFAULT_NAME if a.name is None else a.name
        toolkit, system = user_system(a)   # the backend whose options these are
        unused_engine(engine_settings(a, alone=False), system.what, system.instead)
        system_run(study, name, toolkit, system.args)
        a.runs = list(dict.fromkeys([*(a.runs or []), name]))
    return study


def system_backends() -> list:
    """The backends that bring a system of the user's to ``compsuite run``
    (:attr:`~compsuite.toolkits.base.Backend.system_options`), in name order."""
    from compsuite.toolkits import backends

    return [b for b in backends() if b.system_options]


def system_options(a) -> str | None:
    """The option of ``run`` that brings a system (the first of a backend's
    ``system_options``: ``--model-cmd``, ``--hf-model``), checked: one at most, and an
    option that goes with one is refused without it (rather than ignored while the
    whole profile trains)."""
    def given(option):
        return getattr(a, option.lstrip("-").replace("-", "_"), None)

    groups = [b.system_options for b in system_backends()]
    brought = [g[0] for g in groups if given(g[0])]
    if len(brought) > 1:
        raise ConfigError(f"give {' or '.join(brought)}, not both (one system per --name)")
    needs: dict[str, list[str]] = {}   # an option shared by backends goes with any of them
    for g in groups:
        for o in g[1:]:
            needs.setdefault(o, []).append(g[0])
    for option, needed in [*needs.items(), ("--name", [g[0] for g in groups])]:
        if given(option) is not None and not any(map(given, needed)):
            needed = " or ".join(needed)
            raise ConfigError(f"{option} goes with {needed}, which is not given (without "
                              "it the profile's own runs would run instead): add "
                              f"{needed}, or leave out {option}")
    return brought[0] if brought else None


def _runner(a, study=None):
    """The runner of ``compsuite run``/``report``; the decoding engine options
    (``--engine`` ...) go over every unit's ``generation`` (``Decoding.over``)."""
    from compsuite.commands import engine_settings
    from compsuite.runner import Runner

    return Runner(study or _study(a), a.profile,
                  data_root=Path(getattr(a, "data_root", "DATA")),
                  runs_root=Path(a.runs_root), show=not getattr(a, "quiet", False),
                  jobs=getattr(a, "jobs", None), threads=getattr(a, "threads", None),
                  decoding=engine_settings(a, alone=False))   # over each run's


def cmd_run(a) -> int:
    study = _study(a)
    runner = _runner(a, study)
    _executor(a, runner)
    units = runner.plan(seeds=a.seeds, runs=a.runs, parts=a.parts)
    if a.runs:
        wanted = a.parts or runner.study.parts(runner.profile)
        empty = [p for p in wanted if not any(u.part == p for u in units)]
        if empty:
            print(f"compsuite: note: with --runs {' '.join(a.runs)}, no units of "
                  f"{', '.join(empty)}", file=sys.stderr)
    if not units:
        return _fail("nothing to run: the selection leaves no units", 2)
    with runner.command(getattr(a, "started", None)) as outcome:   # in timings.jsonl
        runner.run(units)
        if getattr(runner.executor, "detach", False):   # submitted: its jobs run on
            where = shlex.join(["--profile", runner.profile.name, "--runs-root", a.runs_root])
            print(f"compsuite: submitted; see them with: compsuite status {study.name} "
                  f"{where}; collect them with: compsuite report {study.name} {where} "
                  + shlex.join(["--results-root", a.results_root])
                  + " (it waits for them), or the same run command without --detach",
                  file=sys.stderr)
            return 0
        outcome["code"] = cmd_report(a, study)
    return outcome["code"]


def cmd_report(a, study=None) -> int:
    if getattr(a, "executor", None) and a.command == "report":
        return _fail("report takes no --executor: it waits for the Slurm jobs its runs "
                     "folder records (.slurm/jobs.json) and collects them; leave out "
                     f"--executor {a.executor} (--no-wait: report the finished units now)", 2)
    runner = _runner(a, study)
    study, profile = runner.study, runner.profile.name
    out_jobs: dict[str, str] = {}
    if a.command == "report":   # run has waited for its own jobs
        from compsuite.executors import before_report

        out_jobs = before_report(runner, wait=not a.no_wait)
    results = runner.collect()
    for r in results:   # a run of a program or a model the user brought: labelled by name
        arch = study.architectures.setdefault(r["architecture"], {
            "paper_name": r["architecture"], "evaluate_only": True})
        said = (r.get("usage") or {}).get("label")   # how a prompted model was asked
        if said and f"({said})" not in arch["paper_name"]:
            arch["paper_name"] = f"{arch['paper_name']} ({said})"
    if not results and out_jobs:
        return _fail(f"no results under {runner.runs_dir} yet: {len(out_jobs)} unit(s) still "
                     "queued or running as Slurm jobs; compsuite report without --no-wait "
                     "waits for them and collects", 2)
    if not results:
        return _fail(f"no results under {runner.runs_dir}; run 'compsuite run {study.name} "
                     f"--profile {profile}' first", 2)
    if out_jobs:
        from compsuite.executors import left_out

        left_out(out_jobs)
    out = Path(a.results_root) / study.name / profile
    out.mkdir(parents=True, exist_ok=True)
    if a.command != "run":   # timings.jsonl holds the steps of compsuite run
        runner.timings = None
    written = runner.write_reports(results, out)
    print(headline(out / "report.md"))
    print(f"\nthe whole report: {out / 'report.md'}; results in {out}/ "
          f"({', '.join(Path(p).name for p in written)})")
    return 0


def headline(report: Path, rows: int = 12) -> str:
    """What ``run``, ``report`` and ``score`` print of a report (the whole of it is in
    the file): its title, and its first table with the heading above it (at most
    ``rows`` rows)."""
    lines = report.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")),
               len(lines))
    heads = [line for line in lines[:start] if line.startswith("#")]
    table = lines[start:end]
    more = len(table) - 2 - rows
    shown = heads[:1] + heads[1:][-1:] + [""] + table[:rows + 2]
    if more > 0:
        shown.append(f"({more} more rows in {report.name})")
    return "\n".join(shown)


def cmd_export(a) -> int:
    from compsuite.export import export
    from compsuite.registry import get_study

    study = get_study(a.study)
    then, out = None, a.out or a.lm_eval
    if a.lm_eval:
        from compsuite import lmeval

        spec = lmeval.prompt_settings(study, a.shots, a.demos)   # checked before any work
        tasks: dict = {}
        then = lambda folder, manifest: tasks.update(   # noqa: E731
            lmeval.write_tasks(folder, manifest, spec))
    elif a.shots is not None or a.demos is not None:
        return _fail("--shots and --demos shape the prompts of --lm-eval tasks; give "
                     "--lm-eval DIR", 2)
    m = export(study, a.profile, Path(out), Path(a.data_root), parts=a.parts,
               seeds=a.seeds, show=not a.quiet, then=then)
    print(export_summary(out, m["counts"]))
    if a.lm_eval:
        scored = sum(bool(t["metric"]) for t in tasks["tasks"].values())
        n = len(tasks["tasks"])
        print(f"lm-eval: {n} task{'' if n == 1 else 's'} ({scored} with references, scored "
              f"by lm-eval; prompts {tasks['prompting']}) in {out}/lm_eval/ (README.md); "
              f"run: lm_eval --include_path {out} --tasks "
              f"{next(iter(tasks['tasks']), '')} ...")
    return 0


def export_summary(out: str, c: dict) -> str:
    """What ``export`` prints: what it wrote, and what score cannot take from files
    (whole units, and analyses of units otherwise exported), as README.md lists them."""
    def count(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    units, analyses = c["model_in_the_loop"], c.get("analyses_needing_the_model", 0)
    needs = ([count(units, "unit needs", "units need") + " the model in the loop"]
             if units else []) + ([count(analyses, "analysis needs", "analyses need")
                                   + " the model itself (not from files)"] if analyses else [])
    return (f"wrote {out}/: {c['inputs']} inputs in {c['files']} files for "
            f"{count(c['units'], 'unit', 'units')} (manifest.json, README.md); "
            + (" and ".join(needs) + ": use a program (--model-cmd) for those, listed in "
               "README.md" if needs else "score takes every test from these files"))


def cmd_score(a) -> int:
    from compsuite.export import check_name, score
    from compsuite.registry import get_study

    inputs, unanswered = Path(getattr(a, "from")), None
    if a.lm_eval_samples:   # lm-eval's logged answers, written as the answer files first
        from compsuite.lmeval import write_answers

        check_name(a.name)
        hyps = Path(a.hyps) if a.hyps else (Path(a.runs_root) / "lm-eval-answers" / a.study
                                            / f"{a.profile}-{a.name}")
        unanswered = write_answers(inputs, Path(a.lm_eval_samples), hyps, show=not a.quiet)
    elif a.hyps:
        hyps = Path(a.hyps)
    else:
        return _fail("give the answers: --hyps DIR, or --lm-eval-samples DIR (lm_eval's "
                     "--output_path, run with --log_samples)", 2)
    out, skipped = score(get_study(a.study), a.profile, inputs,
                         hyps, runs_root=Path(a.runs_root),
                         results_root=Path(a.results_root), data_root=Path(a.data_root),
                         name=a.name, show=not a.quiet, unanswered=unanswered)
    print(headline(out / "report.md"))
    print(f"\nthe whole report: {out / 'report.md'}; results in {out}/"
          + (f"; {len(skipped)} units not scored from answer files (listed at the end of "
             "report.md)" if skipped else ""))
    return 0


def cmd_status(a) -> int:
    """Each unit of a profile: done, queued or running (its Slurm job, or the PID of the
    local run executing it), failed (its log), cancelled before it started, not started."""
    from compsuite.executors import unit_states
    from compsuite.runner import running_locally

    runner = _runner(a)
    units = runner.plan(seeds=a.seeds, runs=a.runs, parts=a.parts)
    # without a selection, the units of a user's system too (its run is not planned)
    states = unit_states(runner.runs_dir, units, recorded=not (a.seeds or a.runs or a.parts))
    for i, (path, state, _) in enumerate(states):
        pid = running_locally(runner.runs_dir, path) if state != "done" else None
        if pid is not None:
            states[i] = (path, "running", f"PID {pid} (a local run)")
    width = max((len(p) for p, _, _ in states), default=4)
    for path, state, detail in states:
        print(f"{path:<{width}}  {state:<11}  {detail}".rstrip())
    counts: dict[str, int] = {}
    for _, state, _ in states:
        counts[state] = counts.get(state, 0) + 1
    print(f"{runner.study.name} ({runner.profile.name}): "
          + ", ".join(f"{n} {state}" for state, n in counts.items()), file=sys.stderr)
    return 0


def cmd_times(a) -> int:
    """Where the time of a profile's runs went, by phase, from the steps its
    ``compsuite run`` commands recorded (compsuite/timings.py)."""
    from compsuite import timings
    from compsuite.eval.reports.tables import markdown_table

    runner = _runner(a)
    path = runner.runs_dir / timings.FILE
    found = timings.files(path)   # the main file, or the Slurm jobs' files beside it
    if not found:
        return _fail(f"no timings under {runner.runs_dir} ({timings.FILE}); run "
                     f"'compsuite run {runner.study.name} --profile {runner.profile.name}' "
                     "first", 2)
    records = timings.read(path)
    commands = [r for r in records if r["phase"] == timings.COMMAND]
    jobs = len(found) - (path in found)
    where = f"{path} and {jobs} Slurm job file(s) in {timings.JOBS_DIR}" if jobs else path

    def seen(key: str) -> str:
        return ", ".join(dict.fromkeys(str(r.get(key)) for r in commands)) or "–"

    print(f"{runner.study.name} ({runner.profile.name}): {len(commands)} compsuite run "
          f"command(s) in {where} (git {seen('git')}; threads {seen('threads')}, jobs "
          f"{seen('jobs')})\n")
    print(markdown_table(["phase", "steps", "skipped", "step time (s)", "elapsed (s)"],
                         [[phase, n, skipped, f"{step_s:.1f}", f"{wall_s:.1f}"]
                          for phase, n, skipped, step_s, wall_s in timings.summary(records)]))
    print("steps: those that ran (done, or stopped or failed part way); step time: "
          "their seconds, added up; elapsed: the wall time they cover (steps side by "
          "side count once); skipped: steps found stored; "
          f"start-up: {timings.STARTUP}; other: {timings.OTHER}")
    return 0


def cmd_list(a) -> int:
    from compsuite.registry import get_study, studies
    from compsuite.runner import Runner

    for name in studies():
        s = get_study(name)
        print(f"{name}: {s.title}  [{s.source}]")
        for pname, p in s.profiles.items():
            units = Runner(s, pname, show=False).plan()
            counts = {}
            for u in units:
                counts[u.part] = counts.get(u.part, 0) + 1
            print(f"  profile {pname}: {p.description}".rstrip())
            print(f"    seeds {p.seeds}, runs {', '.join(p.runs)}, jobs {p.jobs}; "
                  f"{len(units)} units: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        parts = {k: v for _, p in s.profiles.items() for k, v in s.parts(p).items()}
        print("  parts: " + "; ".join(f"{k} ({v})" for k, v in parts.items()))
    return 0


def cmd_paths(a) -> int:
    from compsuite.foundation.checkout import ROOT
    from compsuite.registry import experiment_dirs

    print(json.dumps({"checkout": str(ROOT), "fairseq_user_dir": str(ROOT / "fairseq_plugins"),
                      "onmt_configs": str(ROOT / "onmt_configs"),
                      "experiments": [str(p) for p in experiment_dirs()]}, indent=2))
    return 0


# ----------------------------------------------------------------------------- parser
def add_exchange_commands(sub) -> None:
    """``compsuite export`` and ``compsuite score``: a study for a system known only by
    its answer files."""
    from compsuite.models.prompting import STRATEGIES

    ex = sub.add_parser("export", help="every test input of a study as plain files, for "
                                       "any system to answer")
    ex.add_argument("study", help="a study (compsuite list)")
    ex.add_argument("--profile", default="quick")
    where = ex.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="a new folder")
    where.add_argument("--lm-eval", metavar="DIR",
                       help="a new folder: the export, and lm-evaluation-harness tasks of "
                            "its tests (DIR/lm_eval/; lm_eval --include_path DIR)")
    ex.add_argument("--shots", type=int, metavar="K",
                    help="with --lm-eval: demonstrations in each prompt, drawn from the "
                         "study's training split (default: the study's prompting, else 0)")
    ex.add_argument("--demos", choices=STRATEGIES,
                    help="with --lm-eval: how the demonstrations are drawn")
    ex.add_argument("--parts", nargs="+", metavar="PART", help="only these parts")
    ex.add_argument("--seeds", type=int, nargs="+", help="instead of the profile's")
    ex.add_argument("--data-root", default="DATA")
    ex.add_argument("--quiet", action="store_true", help="no progress bars")
    ex.set_defaults(func=cmd_export)
    sc = sub.add_parser("score", help="score a system's answers to an export: the study's "
                                      "report beside the paper's numbers")
    sc.add_argument("study", help="a study (compsuite list)")
    sc.add_argument("--profile", default="quick")
    sc.add_argument("--from", required=True, metavar="DIR", help="the folder export wrote")
    sc.add_argument("--hyps", metavar="DIR",
                    help="the answers: <unit>/<name>.hyp for each exported <unit>/<name>.src "
                         "(with --lm-eval-samples: where they are written, by default "
                         "RUNS_ROOT/lm-eval-answers/<study>/<profile>-<name>)")
    sc.add_argument("--lm-eval-samples", metavar="DIR",
                    help="the answers lm_eval logged (its --output_path, run with "
                         "--log_samples) for the tasks of an export --lm-eval")
    sc.add_argument("--name", default=DEFAULT_NAME,
                    help="the system's name in the report and its folders, one plain folder "
                         "name; scoring other answers under a name in use is refused")
    sc.add_argument("--runs-root", default="runs")
    sc.add_argument("--results-root", default="results")
    sc.add_argument("--data-root", default="DATA")
    sc.add_argument("--quiet", action="store_true", help="no progress bars")
    sc.set_defaults(func=cmd_score)


def add_status_command(sub) -> None:
    """``compsuite status``: each unit of a profile and where it is."""
    st = sub.add_parser("status", help="each unit of a profile: done, queued, running "
                                       "(its Slurm job or a local run), failed (its log), "
                                       "cancelled (before it started), not started")
    st.add_argument("study", help="a study (compsuite list)")
    st.add_argument("--profile", default="quick")
    st.add_argument("--runs-root", default="runs")
    st.add_argument("--seeds", type=int, nargs="+", help="instead of the profile's")
    st.add_argument("--runs", nargs="+", help="only these runs (architecture-toolkit)")
    st.add_argument("--parts", nargs="+", metavar="PART", help="only these parts")
    st.set_defaults(func=cmd_status)


def add_times_command(sub) -> None:
    """``compsuite times``: where a profile's run spent its time."""
    t = sub.add_parser("times", help="where a profile's run spent its time: data, "
                                     "training, evaluation, report (from its timings.jsonl)")
    t.add_argument("study", help="a study (compsuite list)")
    t.add_argument("--profile", default="quick")
    t.add_argument("--runs-root", default="runs")
    t.set_defaults(func=cmd_times)


def add_executor_arguments(r) -> None:
    """``compsuite run``'s options of where the units execute (compsuite/executors.py)."""
    from compsuite.foundation.arguments import positive_float, positive_int
    from compsuite.resources import EXECUTORS

    r.add_argument("--executor", choices=EXECUTORS, default=None,
                   help="local: on this machine (default, unless the profile or the user "
                        "config says executor: slurm); slurm: each unit a Slurm job, "
                        "through submitit")
    s = r.add_argument_group("with --executor slurm: each unit's job")
    s.add_argument("--slurm-partition", metavar="NAME")
    s.add_argument("--slurm-time", type=positive_int, metavar="MIN",
                   help="time limit in minutes (default 60; a job that reaches it is "
                        "requeued and resumes)")
    s.add_argument("--slurm-cpus", type=positive_int, metavar="N",
                   help="CPUs per job (default: the threads of its training, --threads)")
    s.add_argument("--slurm-gpus", type=int, metavar="N",
                   help="GPUs per job (default 0; more than 1: the toolkit's own multi-GPU "
                        "training in the job)")
    s.add_argument("--slurm-mem-gb", type=positive_float, metavar="GB")
    s.add_argument("--detach", action="store_true",
                   help="submit every unit's job and return (compsuite status shows them; "
                        "the same compsuite run, or compsuite report, collects)")


SLURM_OPTIONS = {"slurm_partition": "partition", "slurm_time": "time_min",
                 "slurm_cpus": "cpus", "slurm_gpus": "gpus", "slurm_mem_gb": "mem_gb"}


def _executor(a, runner) -> None:
    """The executor asked for (``--executor``, else the profile's ``executor:``, else
    the user config's, else local), set on ``runner``; checked before any work: Slurm
    options without the Slurm executor, no sbatch, no submitit, resources that are not
    numbers (from the options, the study file or the user config)."""
    from compsuite.executors import JOBS_FOLDER, SlurmExecutor, check_slurm
    from compsuite.resources import check_resources, executor_name, resources_for, user_config

    given = {k: v for k in SLURM_OPTIONS if (v := getattr(a, k, None)) is not None}
    if getattr(a, "detach", False):
        given["detach"] = True
    user = user_config()
    if executor_name(getattr(a, "executor", None), runner.profile, user) != "slurm":
        if given:
            option = "--" + next(iter(given)).replace("_", "-")
            if getattr(a, "executor", None):
                raise ConfigError(f"{option} goes with --executor slurm, not --executor "
                                  f"{a.executor}: give --executor slurm, or leave out {option}")
            raise ConfigError(f"{option} goes with --executor slurm, which is not given "
                              "(nor executor: slurm in the profile or the user config)")
        return
    detach = bool(given.pop("detach", False))
    options = {}
    for k, v in given.items():   # each named by its option
        options.update(check_resources({SLURM_OPTIONS[k]: v}, "--" + k.replace("_", "-")))
    check_slurm()
    study, profile = runner.study, runner.profile
    runner.executor = SlurmExecutor(
        runner.runs_dir / JOBS_FOLDER, detach=detach,
        resources_of=lambda u: resources_for(study, profile, u.run, user, options,
                                             runner.threads))


def add_system_arguments(r) -> None:
    """``compsuite run``'s options that add the user's system as one more run: each
    backend's own (:meth:`~compsuite.toolkits.base.Backend.add_system_arguments`), then
    ``--name``."""
    for backend in system_backends():
        backend.add_system_arguments(r)
    r.add_argument("--name", metavar="NAME",
                   help=f"with {' or '.join(b.system_options[0] for b in system_backends())}: "
                        "the run's name in the report and its folders, one plain folder "
                        f"name (default {DEFAULT_NAME})")
    from compsuite.commands import engine_arguments

    engine_arguments(r)   # over every unit's generation (docs/fast_decoding.md)


def build_parser() -> argparse.ArgumentParser:
    from compsuite.commands import output_arguments
    from compsuite.registry import load_plugins, read_yaml, studies
    from compsuite.studies.evaluations import BREAKDOWNS

    plugins = load_plugins()  # study name -> class; registers evaluations and breakdowns
    p = argparse.ArgumentParser(prog="compsuite", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    groups = {"data": sub.add_parser("data", help="generate and convert a study's data"),
              "eval": sub.add_parser("eval", help="score model outputs, or run a study's "
                                                  "model-in-the-loop tests")}
    subs = {"data": groups["data"].add_subparsers(dest="study", required=True),
            "eval": groups["eval"].add_subparsers(dest="metric", required=True)}

    esub = subs["eval"]
    acc = esub.add_parser("accuracy", help="sequence accuracy (exact match)")
    output_arguments(acc)   # --<toolkit> FILE: a toolkit's own output file
    acc.add_argument("--hyp", help="hypotheses, one per line (e.g. onmt_translate -output)")
    acc.add_argument("--ref", help="references, one per line")
    acc.add_argument("--src", help="sources, one per line (for --breakdown)")
    acc.add_argument("--tsv", help="TSV with a 'source target prediction' header")
    acc.add_argument("--breakdown", choices=sorted(BREAKDOWNS),
                     help="accuracy by input structure (a study's analysis of the sources)")
    acc.add_argument("--json", action="store_true", help="print one JSON object")
    acc.add_argument("--out", help="also write the JSON result to this file")
    acc.add_argument("--plot", help="write a PNG of the breakdown (needs --breakdown)")
    acc.add_argument("--label", help="model label in the plot")
    acc.set_defaults(func=cmd_eval_accuracy)
    con = esub.add_parser("consistency", help="consistency over aligned output pairs")
    con.add_argument("--hyp-a", help="outputs for the first inputs (e.g. test.src)")
    con.add_argument("--hyp-b", help="outputs for the paired inputs (e.g. test_twin.src)")
    con.add_argument("--ref", help="references: adds the correct/incorrect breakdown")
    con.add_argument("--tsv-a", help="TSV predictions (source target prediction), first inputs")
    con.add_argument("--tsv-b", help="TSV predictions for the paired inputs")
    con.add_argument("--categories", help="one category per pair (e.g. test.category)")
    con.add_argument("--json", action="store_true", help="print one JSON object")
    con.set_defaults(func=cmd_eval_consistency)

    for name, cls in plugins.items():   # each study's own subcommands
        title = read_yaml(studies().get(name)).get("title", name)
        for group, add in cls.commands().items():
            add(subs[group].add_parser(name, help=title))

    add_run_commands(sub)
    add_status_command(sub)
    add_times_command(sub)
    add_exchange_commands(sub)
    sub.add_parser("list", help="studies, profiles and parts").set_defaults(func=cmd_list)
    sub.add_parser("paths", help="where the plugins and configs are").set_defaults(func=cmd_paths)
    return p


def add_run_commands(sub) -> None:
    """``compsuite run`` and ``compsuite report``: a study's profile, where its runs and
    results are, and for ``run`` what to run, how many side by side and where."""
    from compsuite.foundation.arguments import positive_int

    for name, func, helptext in (("run", cmd_run, "data, training, evaluation, report"),
                                 ("report", cmd_report, "tables and plots from finished runs")):
        r = sub.add_parser(name, help=helptext)
        r.add_argument("study", help="a study (compsuite list)")
        r.add_argument("--profile", default="quick")
        r.add_argument("--runs-root", default="runs")
        r.add_argument("--results-root", default="results")
        if name == "run":
            r.add_argument("--seeds", type=int, nargs="+", help="instead of the profile's")
            r.add_argument("--runs", nargs="+", help="only these runs (architecture-toolkit)")
            r.add_argument("--parts", nargs="+", metavar="PART",
                           help="only these parts of the study, with the units they need "
                                "(compsuite list names them)")
            r.add_argument("--jobs", type=positive_int, metavar="N",
                           help="trainings (and datasets prepared) side by side (default: the "
                                "profile's `jobs`, else 1); it changes no result")
            r.add_argument("--openblas-kernels", action="store_true",
                           help="the default: the pinned kernels (torch's and oneDNN's at "
                                "AVX2), with OpenBLAS on its Haswell kernels doing the "
                                "single-precision matrix products: the same numbers on every "
                                "x86 CPU with AVX2 and FMA; given explicitly, an error where "
                                "OpenBLAS cannot run instead of MKL's branch with a note "
                                "(docs/reproducibility.md)")
            r.add_argument("--mkl-kernels", action="store_true",
                           help="the pinned kernels with MKL's COMPATIBLE branch doing the "
                                "matrix products (the default before issue 52, about half "
                                "OpenBLAS's speed; other numbers than the default's, the "
                                "same on every x86 CPU)")
            r.add_argument("--machine-kernels", action="store_true",
                           help="let torch, oneDNN and MKL choose their CPU kernels for this "
                                "CPU (faster) instead of the pinned ones: results may then "
                                "differ between machines")
            r.add_argument("--threads", type=positive_int, metavar="N",
                           help="CPU threads of each training and of the evaluation (default: "
                                "the profile's `threads`, else 1); recorded in each result")
            r.add_argument("--data-root", default="DATA")
            r.add_argument("--quiet", action="store_true", help="no progress bars")
            add_executor_arguments(r)
            add_system_arguments(r)
        else:
            r.add_argument("--no-wait", action="store_true",
                           help="report the finished units now, without waiting for the "
                                "Slurm jobs of the runs folder still queued or running "
                                "(named on stderr)")
            r.add_argument("--executor", help=argparse.SUPPRESS)   # refused: no need
        r.set_defaults(func=func)


@contextlib.contextmanager
def _output_lock(args):
    """A ``data`` command holds the lock of the folder it writes (``--out``: one
    process per folder, as a run holds its runs and data folders), and refuses a folder
    inside one that a run holds (``DATA/<study>``)."""
    from compsuite.locks import folder_lock, inside_lock

    if args.command == "data" and getattr(args, "out", None):
        with inside_lock(args.out), folder_lock(args.out, "data"):
            yield
    else:
        yield


def stopped_message(e: Stopped, argv: list[str]) -> str:
    """One line: what stopped the command, which toolkit processes it ended, and how to
    go on (``run`` resumes: finished units are kept; a cut-short step is redone)."""
    ended = f"ended {', '.join(e.stopped)}; " if e.stopped else ""
    again = shlex.join(["compsuite", *argv])
    if argv[:1] == ["run"]:
        return (f"stopped by {e}: {ended}finished units are kept; resume with: {again}")
    return f"stopped by {e}: {ended}run it again with: {again}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    import time

    started = time.time()   # a run's wall time begins here (timings.jsonl)
    from compsuite.kernels import setup

    with handlers():
        try:
            setup(argv)   # before torch: the CPU kernels pinned, here and in every child
        except ValueError as e:   # COMPSUITE_KERNELS set to something else
            return _fail(str(e))
        try:
            args = build_parser().parse_args(argv)
            args.started = started
            with _output_lock(args):
                return args.func(args)
        except BrokenPipeError:  # e.g. piped into `head`
            sys.stderr.close()
            return 0
        except UserError as e:
            return _fail(str(e))
        except Stopped as e:
            print(f"\ncompsuite: {stopped_message(e, argv)}", file=sys.stderr, flush=True)
            return e.exit_code


if __name__ == "__main__":
    sys.exit(main())
