"""The study interface.

A study is one module (the package ``compsuite/studies/<study>/``, or any module a
study YAML names with ``module:``) that exports ``STUDY``, a subclass of :class:`Study`.
The runner, the command line and the registry know nothing else about it.  A study:

* declares its command-line subcommands (``compsuite data <study> ...``,
  ``compsuite eval <study> ...``): :meth:`Study.commands` (the suite's studies keep
  them in ``compsuite/studies/<study>/commands.py``);
* declares its own YAML keys as types (:attr:`study_schema`, :attr:`profile_schema`:
  dataclasses that :func:`compsuite.schema.check` reads, with errors naming the file
  and the key) and checks what involves its runs (:meth:`check_profile`);
* plans its units of work for a profile (:meth:`plan`, :meth:`parts`);
* prepares the raw data a unit needs (:meth:`prepare`; the runner has the toolkit
  backends write their formats from it);
* evaluates a trained model (:meth:`evaluate`, given a :class:`Context`);
* writes its report from the stored results (:meth:`report`: every study's report
  builder has the signature ``build_report(study, profile, results, out_dir)`` and
  returns the paths it wrote).

The values a study is given and returns are defined here too: what its YAML says
(:class:`StudySpec`, with its :class:`Run` and :class:`Profile` entries, read by
:mod:`compsuite.registry`), its units of work (:class:`Unit`) and what its ``evaluate``
gets (:class:`Context`, with the :class:`Finished` units it needs).

See ``docs/adding_a_study.md`` for a worked example.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from compsuite import schema
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.io import atomic_open
from compsuite.foundation.names import Registry
from compsuite.models.decoding import OPTIONS, Decoding
from compsuite.models.protocol import Model
from compsuite.toolkits import Backend, get_backend


# ----------------------------------------------------------------------------- the YAML
@dataclass
class Run:
    """One architecture trained with one toolkit.

    ``args``: the toolkit's options (fairseq-train arguments; OpenNMT-py config keys,
    over the base file ``config``); ``profiles``: profile -> overrides (a mapping, or
    an OpenNMT-py YAML file); ``defaults``: the study's ``toolkit_defaults`` for this
    toolkit, applied first; ``gpu``: options added last when training on a GPU (e.g.
    OpenNMT-py's ``model_dtype: fp16``), so one config serves CPU and GPU users;
    ``generation``: profile -> the run's decoding settings there, over the profile's
    (e.g. a model decoded greedily where the profile's others use a beam)."""

    name: str
    architecture: str
    toolkit: str
    paper_setup: bool = False  # the toolkit the paper used for this architecture
    config: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    gpu: dict[str, Any] = field(default_factory=dict)
    #: the study file that declares the run (for errors naming its keys)
    source: str = ""
    #: profile -> what each of its units' Slurm jobs asks for (``gpus``, ``cpus``,
    #: ``mem_gb``, ``time_min``, ``partition``: compsuite/executors.py)
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    generation: dict[str, Decoding] = field(default_factory=dict)


@dataclass
class Profile:
    """A named set of settings: ``paper`` (the paper's), ``quick`` (minutes on a CPU),
    ``tiny`` (seconds, for the tests).  ``options``: the study's own profile keys."""

    name: str
    description: str
    seeds: list[int]
    runs: list[str]
    jobs: int = 1
    options: dict[str, Any] = field(default_factory=dict)
    #: its decoding settings: the study's ``generation``, the profile's on top (e.g. a
    #: shorter max_length)
    generation: Decoding = field(default_factory=Decoding)
    #: ``options`` read into the study's ``profile_schema`` (a dataclass instance; set
    #: by ``Study.validate``)
    settings: Any = None
    #: where its units execute unless ``--executor`` says (None: the user config's,
    #: else local) and its jobs' resources on a cluster (compsuite/executors.py)
    executor: str | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    #: the CPU threads of every training and in-process evaluation, whatever runs
    #: beside it (``--jobs`` only decides how many run at once): a result's arithmetic
    #: does not depend on it
    threads: int = 1


@dataclass
class StudySpec:
    """What every study's YAML has; ``raw`` is the whole merged file, for the keys the
    study's module reads itself."""

    name: str
    title: str
    paper: str
    config_version: int
    module: str
    architectures: dict[str, dict]
    runs: Registry[Run]
    profiles: Registry[Profile]
    generation: Decoding
    source: Path
    raw: dict[str, Any]
    run_all: bool = True


# ----------------------------------------------------------------------------- the study
class Study:
    #: the study's own top-level YAML keys, as a dataclass (see compsuite.schema); read
    #: into :attr:`settings` by :meth:`validate`
    study_schema: type | None = None
    #: the study's own keys in a profile (besides description, seeds, runs, jobs,
    #: generation), as a dataclass; read into ``profile.settings`` by :meth:`validate`
    profile_schema: type | None = None
    #: top-level YAML keys this study reads (derived from ``study_schema``)
    study_keys: frozenset[str] = frozenset()
    #: keys this study reads in a profile (derived from ``profile_schema``)
    profile_keys: frozenset[str] = frozenset()
    #: whether the study's models decode outputs (translators, not classifiers): its
    #: report.md then ends with how each run decoded (:func:`decoding_section`)
    decodes: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.study_schema is not None:
            cls.study_keys = schema.keys(cls.study_schema)
        if cls.profile_schema is not None:
            cls.profile_keys = schema.keys(cls.profile_schema)

    def __init__(self, spec: StudySpec):
        self.spec = spec
        #: the study's own top-level keys read into ``study_schema`` (None without one)
        self.settings = None

    # ------------------------------------------------------------------ the spec
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def source(self) -> Path:
        return self.spec.source

    @property
    def architectures(self) -> dict[str, dict]:
        return self.spec.architectures

    @property
    def generation(self) -> Decoding:
        return self.spec.generation

    @property
    def config_version(self) -> int:
        return self.spec.config_version

    @property
    def runs(self):
        return self.spec.runs

    @property
    def profiles(self):
        return self.spec.profiles

    def profile(self, name: str) -> Profile:
        return self.spec.profiles.get(name)

    def run(self, name: str) -> Run:
        return self.spec.runs.get(name)

    def trains(self, run: str) -> bool:
        """Whether the run trains a model (False: an evaluate-only run, a model or a
        program the user brings, which takes every test the study has)."""
        r = self.run(run)
        return get_backend(r.toolkit).trains(r)

    def where(self, *keys: str) -> str:
        """``<file>: key.key`` for error messages."""
        return f"{self.source}: {'.'.join(keys)}" if keys else str(self.source)

    # ------------------------------------------------------------------ to implement
    @classmethod
    def commands(cls) -> dict[str, Callable[[argparse.ArgumentParser], None]]:
        """Command groups this study adds: ``{"data": add, "eval": add}``, where
        ``add(parser)`` fills ``compsuite data <study>`` (``compsuite eval <study>``)
        with subcommands, each setting ``func`` to a function of the parsed arguments
        that returns an exit code."""
        return {}

    def validate(self) -> None:
        """Read the study's own keys into its schemas (one shared check: errors name the
        file and the key), then :meth:`check_profile` each profile."""
        if self.study_schema is not None:
            own = {k: v for k, v in self.spec.raw.items() if k in self.study_keys}
            self.settings = schema.check(self.study_schema, own, str(self.source))
        for name, prof in self.profiles.items():
            where = self.where("profiles", name)
            if self.profile_schema is not None:
                prof.settings = schema.check(self.profile_schema, prof.options, where)
            self.check_profile(prof, where)

    def check_profile(self, profile: Profile, where: str) -> None:
        """What the schema cannot say alone: references to the study's runs and the
        like (raise ConfigError starting with ``where``)."""

    def parts(self, profile: Profile) -> dict[str, str]:
        """The groups of units ``--parts`` can select: name -> description."""
        raise NotImplementedError

    def plan(self, profile: Profile, seeds: list[int] | None = None,
             runs: list[str] | None = None) -> list[Unit]:
        """The profile's units of work; ``seeds`` / ``runs`` replace the profile's."""
        raise NotImplementedError

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        """Generate (or find, by manifest) the raw data of ``dataset`` for ``seed``."""
        raise NotImplementedError

    def evaluate(self, ctx: Context) -> dict:
        """Score the unit's model; the runner stores the dict after its provenance."""
        raise NotImplementedError

    def report(self, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
        """Write the report into ``out_dir`` (``report.md`` and ``report.json`` at
        least) with the study's ``build_report(self, profile, results, out_dir)``;
        returns the paths written."""
        raise NotImplementedError

    def findings(self, profile: Profile) -> list:
        """The paper's findings the suite checks on each seed's results
        (:class:`compsuite.eval.reports.findings.Finding`); none by default."""
        return []

    def write_reports(self, profile: Profile, results: list[dict], out_dir: Path) -> list[Path]:
        """:meth:`report`, then ``findings.md`` / ``findings.json`` (each of
        :meth:`findings` checked seed by seed) where the study has findings; returns
        the paths written."""
        from compsuite.eval.reports import findings

        written = self.report(profile.name, results, out_dir)
        if self.decodes and results:
            report = Path(out_dir) / "report.md"
            text = report.read_text(encoding="utf-8")
            with atomic_open(report) as fh:
                fh.write(text.rstrip("\n") + "\n\n" + decoding_section(results))
        return written + findings.write(out_dir, self.title, self.name, profile.name,
                                        self.findings(profile), results)


def decoding_section(results: list[dict]) -> str:
    """report.md's section on how each run decoded, as its results record it (their
    ``toolkit`` and ``generation``, the settings given): the engine and the settings,
    one row per run and settings, with the parts decoded so."""
    from compsuite.eval.reports.tables import markdown_table

    rows: dict[tuple, list[str]] = {}
    for r in results:
        g = {**vars(Decoding()), **(r.get("generation") or {})}
        toolkit = r.get("toolkit") or "?"
        parts = rows.setdefault((r.get("run"), *decoded_by(toolkit, g)), [])
        if r.get("part") not in parts:
            parts.append(r.get("part"))
    return ("## Decoding\n\nHow each run's outputs were decoded, as its results record "
            "it (docs/fast_decoding.md: where CTranslate2 gives the toolkit's outputs):\n\n"
            + markdown_table(["run", "decoded by", "settings", "parts"],
                             [[*key, ", ".join(map(str, parts))]
                              for key, parts in rows.items()]))


def decoded_by(toolkit: str, g: dict) -> tuple[str, str]:
    """The engine that decoded a result's outputs and its settings, in words, from the
    result's ``toolkit`` and its ``generation`` over the defaults (``g``)."""
    from compsuite.toolkits import data_backend_names, title

    name = title(toolkit)
    if toolkit not in data_backend_names():   # a program, answer files, a served model
        return name, "its own (the suite's decoding settings do not reach it)"
    settings = ["greedy" if g["beam"] == 1 else f"beam {g['beam']}",
                f"at most {g['max_length']} tokens"]
    if g["length_penalty"] is not None:
        settings.append(f"length penalty {g['length_penalty']}")
    if g["max_new_tokens"] is not None:
        settings.append(f"at most {g['max_new_tokens']} new tokens")
    if g["engine"] != "ctranslate2":
        return name, ", ".join(settings)
    return (f"CTranslate2 ({g['compute_type'] or 'float32'}, device {g['device'] or 'cpu'}) "
            f"where it decodes as {name} does, else {name}", ", ".join(settings))


# ----------------------------------------------------------------------------- units
@dataclass
class Unit:
    """One unit of work: a run (architecture x toolkit) trained with one seed on one
    dataset and evaluated, or a model of another unit evaluated on this unit's data.

    ``part``: the group ``--parts`` selects (a test, a table); ``dataset``: the key the
    study prepares data from; ``path``: the run folder under ``runs/<study>/<profile>``;
    ``params``: the study's own fields, recorded in the result; ``model_from``: for a
    unit that trains nothing, the path of the unit whose model it evaluates;
    ``needs``: units that must finish first; ``train_options``: options this unit adds
    to its run's training config."""

    part: str
    run: str
    seed: int
    dataset: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    model_from: str | None = None
    needs: tuple[str, ...] = ()
    train_options: dict | None = None

    @property
    def trains(self) -> bool:
        return self.model_from is None

    @property
    def requires(self) -> tuple[str, ...]:
        """Every unit that must finish first: ``needs`` and ``model_from``."""
        return self.needs + ((self.model_from,) if self.model_from else ())


@dataclass
class Finished:
    """A unit whose result is stored, and the data it was trained or evaluated on."""

    unit: Unit
    result: dict
    data: Dataset


@dataclass
class Context:
    """What a study's ``evaluate`` gets: the unit, its run and folder, its data, the
    model to evaluate (``checkpoint``, trained on ``model_data``), and the finished
    units it needs (``deps``, by path)."""

    study: Study
    profile: Profile
    unit: Unit
    run: Run
    run_dir: Path
    data: Dataset
    checkpoint: str
    model_data: Dataset
    trained: dict | None
    deps: dict[str, Finished]
    show: bool = True
    #: what every model of this unit is wrapped in before it is asked (``compsuite
    #: export`` records what it is asked, ``score`` replays answers), or None
    wrap: Callable[[Model], Model] | None = None
    #: the command line's decoding settings (``--engine`` ...), over the unit's
    options: dict[str, Any] = field(default_factory=dict)
    #: the CPU threads the unit has (the profile's ``threads``; None on a GPU): what its
    #: evaluation may use for work it spreads over processes (parses), as its training
    #: did; none changes a result
    threads: int | None = None

    @property
    def backend(self) -> Backend:
        return get_backend(self.run.toolkit)

    @property
    def decoding(self) -> Decoding:
        """The unit's decoding settings (:func:`unit_decoding`)."""
        return unit_decoding(self.profile, self.run, self.options)

    @property
    def generation(self) -> dict:
        """:attr:`decoding`'s keys as given (what a result records)."""
        return dict(self.decoding.given)

    def load(self, checkpoint: str | Path | None = None, data: Dataset | None = None,
             kind: str = "translator"):
        """A model of this unit's run in the loop (a translator or a classifier): by
        default the unit's own, read with the data it was trained on; it counts what it
        is asked (:class:`~compsuite.models.protocol.Counting`)."""
        from compsuite.models.protocol import counted

        model = self.backend.load(checkpoint or self.checkpoint,
                                  data if data is not None else self.model_data, kind,
                                  self.decoding)
        return counted(model if self.wrap is None else self.wrap(model), str(self.unit.path))

    def predict(self, split: str, trained: dict | None = None,
                generation: Decoding | None = None, out_dir: Path | None = None):
        """The run's :class:`~compsuite.models.predictions.Predictions` on ``split`` of
        this unit's data, by its backend (``trained``: another checkpoint of the run;
        ``out_dir``: where they are kept, by default the unit's folder)."""
        return self.backend.predict(trained if trained is not None else self.trained,
                                    self.data, split,
                                    generation if generation is not None else self.decoding,
                                    out_dir if out_dir is not None else self.run_dir,
                                    show=self.show, wrap=self.wrap)


def unit_decoding(profile: Profile, run: Run, options: dict[str, Any] | None = None
                  ) -> Decoding:
    """A unit's decoding settings: the study's and the profile's (``profile.generation``),
    the run's in that profile, then the command line's ``options`` (``--engine`` ...)."""
    return profile.generation.over(run.generation.get(profile.name), options,
                                   where=OPTIONS)
