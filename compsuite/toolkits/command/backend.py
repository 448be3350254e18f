"""The ``command`` backend: a program the user brings, behind the command protocol
(:mod:`compsuite.toolkits.command.model`), as an evaluate-only run of any study.

A study's YAML declares it like any run::

    runs:
      my-system:
        architecture: my-system
        toolkit: command
        args: {command: "python ${HOME}/my_model.py --size small", timeout: 120}

and a profile (or ``compsuite run <study> --runs my-system``) evaluates it in every unit
the study plans for a run.  Nothing is trained: :meth:`CommandBackend.train` writes the
settings into the unit's folder (``command.json``, the run's "checkpoint") and every
model-in-the-loop test starts the program from there.  ``${NAME}`` in ``command``
names an environment variable (``COMPSUITE_CHECKOUT`` is the suite's checkout);
the program runs in the current folder with ``COMPSUITE_DATA`` (the dataset's raw
folder) and, where the dataset has one, ``COMPSUITE_TEXT`` (its plain-text folder) set.

Options (``args``, with per-profile overrides under ``profiles:``): ``command`` (the
program and its arguments), ``timeout`` (seconds one batch may take; default 600),
``batch_size`` (inputs per request; default 64).
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

from compsuite.foundation.checkout import ROOT
from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.models.decoding import Decoding
from compsuite.schema import check, positive, within
from compsuite.toolkits.base import TextModelBackend, UserSystem, merge

#: what an evaluate-only run's folder holds: the program and its settings
SETTINGS_FILE = "command.json"
_VAR = re.compile(r"\$\{(\w+)\}")


@dataclass
class Settings:
    """A command run's ``args``."""
    command: str
    timeout: Annotated[float, within(0, 86400, low_open=True)] = 600.0
    batch_size: Annotated[int, positive] = 64
    #: ``${NAME}`` replaced from the environment (a command from the command line, which
    #: the shell has expanded, is taken as it is)
    expand: bool = True


def expand(command: str, where: str) -> str:
    """``command`` with ``${NAME}`` replaced from the environment (and
    ``COMPSUITE_CHECKOUT``, the suite's checkout); an unset name is an error naming
    ``where``."""
    env = {"COMPSUITE_CHECKOUT": str(ROOT), **os.environ}

    def value(m: re.Match) -> str:
        name = m.group(1)
        if name not in env:
            raise ConfigError(f"{where}: '{command}' names the environment variable {name}, "
                              "which is not set")
        return shlex.quote(env[name])

    expanded = _VAR.sub(value, command)
    try:
        if not shlex.split(expanded):
            raise ConfigError(f"{where}: the command is empty")
    except ValueError as e:
        raise ConfigError(f"{where}: cannot split '{command}' into a program and its "
                          f"arguments ({e})") from None
    return expanded


def command_words(system):
    """``system`` with its ``command`` split into the program and its arguments, as
    the shell splits it; as it is where it has no command or cannot be split."""
    if not isinstance(system, dict) or not isinstance(system.get("command"), str):
        return system
    try:
        return {**system, "command": shlex.split(system["command"])}
    except ValueError:
        return system


def settings(run, profile: str) -> Settings:
    """The run's ``args`` with its profile's override, checked; errors name the key."""
    override = run.profiles.get(profile)
    at = f"{run.source or 'the study YAML'}: runs.{run.name}"
    if override is not None and not isinstance(override, dict):
        raise ConfigError(f"{at}.profiles.{profile}: a mapping of command options")
    s = check(Settings, merge(run.args, override), f"{at}.args")
    if s.expand:
        s.command = expand(s.command, f"{at}.args.command")
    return s


def model_env(data: Dataset | None) -> dict[str, str]:
    """What the program is told about the data it is evaluated on."""
    if data is None:
        return {}
    env = {"COMPSUITE_DATA": str(data.raw.resolve())}
    if data.text is not None:
        env["COMPSUITE_TEXT"] = str(Path(data.text).resolve())
    return env


def program_arguments(sources, parser, help: str) -> None:
    """The one declaration of a program's options, for ``compsuite run`` and the
    model-in-the-loop commands alike: ``--model-cmd`` (in ``sources``, with ``help``)
    and ``--model-timeout`` (in ``parser``)."""
    from compsuite.foundation.arguments import command_line, positive_float

    sources.add_argument("--model-cmd", metavar="COMMAND", type=command_line, help=help)
    parser.add_argument("--model-timeout", type=positive_float, default=None, metavar="S",
                        help="with --model-cmd: seconds one batch may take (default "
                             f"{Settings.timeout:.0f})")


class CommandBackend(TextModelBackend):
    name = "command"
    title = "a program (command protocol)"
    system_options = ("--model-cmd", "--model-timeout")

    def add_system_arguments(self, parser) -> None:
        program_arguments(parser, parser, "evaluate a program behind the command protocol "
                                          "(docs/command_protocol.md) in every unit, as the "
                                          "run --name (the profile's own runs only with "
                                          "--runs; the report lists every result in the "
                                          "runs folder)")

    def add_model_arguments(self, sources, parser, reads: str = "") -> None:
        program_arguments(sources, parser, "a program behind the command protocol (JSON "
                                           "lines on stdin/stdout; docs/command_protocol.md)"
                                           + (f"; {reads}" if reads else ""))

    def user_system(self, options) -> UserSystem | None:
        """A program (``--model-cmd``, with ``--model-timeout``), taken as it is: the
        shell has expanded the command line already."""
        command = getattr(options, "model_cmd", None)
        if not command:
            return None
        timeout = getattr(options, "model_timeout", None)
        args = {"command": command, "timeout": Settings.timeout if timeout is None else timeout,
                "expand": False}
        return UserSystem(args, "a program (--model-cmd)", "it answers by itself")

    def user_model(self, system: UserSystem, batch_size: int, env: dict | None = None):
        """The program behind the command protocol (:class:`CommandModel`)."""
        from compsuite.toolkits.command.model import CommandModel

        return CommandModel(system.args["command"], batch_size=batch_size,
                            timeout=system.args["timeout"], env=env)

    def system(self, run, profile: str) -> dict | None:
        return {"command": settings(run, profile).command}

    def same_system(self, before, now: dict) -> bool:
        """The same program however its command line is spaced: the commands are
        compared as the words the shell's rules split them into (the spaces inside a
        quoted argument count)."""
        return command_words(before) == command_words(now)

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        s = settings(run, profile)
        path = self.write_settings(Path(run_dir) / SETTINGS_FILE, asdict(s))
        return {"toolkit": self.name, "checkpoint": str(path), "evaluate_only": True,
                "command": s.command, "wall_s": 0.0, "threads": threads}

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: Decoding = Decoding()):
        from compsuite.toolkits.command.model import CommandModel

        s = self.read_settings(checkpoint, kind, Settings)
        return CommandModel(s.command, batch_size=s.batch_size, timeout=s.timeout,
                            env=model_env(data))


BACKEND = CommandBackend()
