"""What a unit's job elsewhere asks for, and which executor a run uses, as the study
files, the user config file and the options say (read by :mod:`compsuite.registry`
for the study files and by :mod:`compsuite.executors`).  Names no study or toolkit."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from compsuite.foundation.errors import ConfigError
from compsuite.schema import PositiveInt, check, within

EXECUTORS = ("local", "slurm")
#: the user's own defaults (``executor:``, ``resources:``), e.g. their cluster's
#: partition: ``$COMPSUITE_CONFIG``, else this file under ``$XDG_CONFIG_HOME``
#: (``~/.config``); ``COMPSUITE_CONFIG=`` (empty) reads none
USER_CONFIG = Path("compsuite") / "config.yaml"


def _at_least_zero(value: Any, where: str) -> None:
    if value < 0:
        raise ConfigError(f"{where}: a number of GPUs (0 or more), not {value!r}")


@dataclass(frozen=True)
class Resources:
    """What one unit's Slurm job asks for: ``gpus`` per node (more than one: the
    toolkit's own multi-GPU training inside the job), ``cpus`` per task (by default the
    profile's ``threads``, which its training uses), ``mem_gb``, ``time_min`` (its time limit; a job that reaches
    it is requeued and resumes), ``partition`` (the cluster's default where absent).

    Read from, each over the one before: the user config's ``resources:``, the
    profile's ``resources:``, the run's ``resources: {<profile>: ...}`` in the study
    file, then ``--slurm-*`` options (:func:`resources_for`)."""

    gpus: Annotated[int, _at_least_zero] = 0
    cpus: PositiveInt = 1
    mem_gb: Annotated[float, within(0, float("inf"), low_open=True)] | None = None
    time_min: PositiveInt = 60
    partition: str | None = None

    def parameters(self) -> dict[str, Any]:
        """submitit's ``update_parameters`` for these resources."""
        out: dict[str, Any] = {"timeout_min": self.time_min, "cpus_per_task": self.cpus,
                               "tasks_per_node": 1, "nodes": 1}
        if self.gpus:
            out["gpus_per_node"] = self.gpus
        if self.mem_gb is not None:
            out["mem_gb"] = self.mem_gb
        if self.partition:
            out["slurm_partition"] = self.partition
        return out


def check_resources(value: Any, where: str) -> dict:
    """A (partial) ``resources:`` mapping, checked key by key (numbers that are not,
    unknown keys: an error naming ``where``); returns the keys it sets."""
    check(Resources, value, where)
    return dict(value or {})


@dataclass(frozen=True)
class UserConfig:
    """The user config file's keys."""

    executor: Literal["local", "slurm"] | None = None
    resources: dict[str, Any] | None = None


def user_config_path() -> Path | None:
    """The user config file in use (whether or not it exists), or None."""
    given = os.environ.get("COMPSUITE_CONFIG")
    if given is not None:
        return Path(given).expanduser() if given.strip() else None
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / USER_CONFIG


def user_config() -> UserConfig:
    """The user config file's settings (none where it does not exist)."""
    path = user_config_path()
    if path is None or not path.is_file():
        if path is not None and os.environ.get("COMPSUITE_CONFIG"):
            raise ConfigError(f"COMPSUITE_CONFIG={path}: no such file")
        return UserConfig()
    from compsuite.foundation.io import load_mapping

    cfg = check(UserConfig, load_mapping(path), str(path))
    if cfg.resources is not None:
        check_resources(cfg.resources, f"{path}: resources")
    return cfg


def executor_name(option: str | None, profile, user: UserConfig) -> str:
    """Where the units execute: ``--executor``, else the profile's ``executor:``, else
    the user config's, else ``local``."""
    return option or profile.executor or user.executor or "local"


def resources_for(study, profile, run_name: str, user: UserConfig,
                  options: dict[str, Any], threads: int = 1) -> Resources:
    """The resources of one run's jobs (see :class:`Resources` for the order); CPUs
    as many as the training's ``threads`` where none of them says."""
    run = study.run(run_name)
    merged: dict[str, Any] = {"cpus": threads}
    for layer in (user.resources, profile.resources, run.resources.get(profile.name), options):
        merged.update(layer or {})
    return Resources(**merged)
