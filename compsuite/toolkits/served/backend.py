"""The ``served`` backend: a language model behind any OpenAI-compatible server (vLLM,
llama.cpp, TGI, SGLang, ``transformers serve``, a hosted API), prompted, as an
evaluate-only run of any study (docs/served_models.md).

A study's YAML declares it like any run::

    runs:
      llama3-8b:
        architecture: llama3-8b
        toolkit: served
        args: {url: "http://127.0.0.1:8000/v1", model: meta-llama/Meta-Llama-3-8B,
               api: completions, prompting: {shots: 4, strategy: similar}}

or the command line brings one (``compsuite run <study> --model-url URL --model-name
NAME [--model-api chat] [--shots K --demos similar] [--concurrency N]``, and
``--model-url`` in every model-in-the-loop command).  Nothing is trained:
:meth:`ServedBackend.train` checks that the server serves the model and writes the
settings into the unit's folder (``served.json``, the run's "checkpoint"); the request
cache (``requests.jsonl``) and the usage record (``usage.json``) are kept beside it.

Settings (``args``, over the study's ``toolkit_defaults.served``, with per-profile
overrides under ``profiles:``; ``prompting`` merges key by key): ``url`` (the API's
base, ``.../v1``), ``model`` (as the server lists it in ``GET {url}/models``), ``api``
(``completions`` or ``chat``; by default ``chat`` where the prompting says ``chat:
true``, else ``completions``), ``api_key_env`` (the variable holding the API key,
default ``COMPSUITE_API_KEY``; else ``OPENAI_API_KEY`` is read; neither set: no key),
``concurrency`` (requests at once, default 4), ``timeout`` (seconds a request may take,
default 120), ``retries`` (after the first try, default 4), ``backoff`` (seconds
before the first retry, doubled for each next one, default 1), ``prompting`` (a
:class:`compsuite.models.prompting.PromptSpec`).  ``${NAME}`` in ``url`` and ``model``
names an environment variable.  The key itself is read from the environment when the
model is asked, and is never written anywhere.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from compsuite.foundation.dataset import Dataset
from compsuite.foundation.errors import ConfigError
from compsuite.models.decoding import Decoding
from compsuite.models.prompting import PROMPTING_OPTIONS
from compsuite.schema import check, positive, within
from compsuite.toolkits.base import TextModelBackend, UserSystem, merge

#: what an evaluate-only run's folder holds: the server, the model and the prompting
SETTINGS_FILE = "served.json"
#: where the API key is read from unless ``api_key_env`` names another variable, and
#: the variable read after it
KEY_ENV = "COMPSUITE_API_KEY"
FALLBACK_KEY_ENV = "OPENAI_API_KEY"
APIS = ("completions", "chat")
_VAR = re.compile(r"\$\{(\w+)\}")


@dataclass
class Settings:
    """A served run's ``args`` (see the module docstring)."""
    url: str
    model: str
    #: None: ``chat`` where the prompting says ``chat: true``, else ``completions``
    api: Literal["completions", "chat"] | None = None
    api_key_env: str = KEY_ENV
    concurrency: Annotated[int, positive] = 4
    timeout: Annotated[float, within(0, 86400, low_open=True)] = 120.0
    retries: Annotated[int, within(0, 100)] = 4
    backoff: Annotated[float, within(0, 600)] = 1.0
    prompting: dict[str, Any] = field(default_factory=dict)
    #: ``${NAME}`` replaced from the environment (a URL from the command line, which
    #: the shell has expanded, is taken as it is)
    expand: bool = True

    def check(self, where: str) -> None:
        if not self.expand:
            self.check_url(where)
        if not self.model.strip():
            raise ConfigError(f"{where}.model: empty (the model's name as the server "
                              "lists it in GET <url>/models)")

    def check_url(self, where: str) -> None:
        """``url`` is an http(s) URL (after ``${NAME}`` was replaced)."""
        if not re.match(r"^https?://[^/\s]+", self.url):
            raise ConfigError(f"{where}.url: {self.url!r} is not an http(s) URL (the API's "
                              "base, e.g. http://127.0.0.1:8000/v1)")

    def spec(self, where: str):
        """The prompting (:class:`~compsuite.models.prompting.PromptSpec`), ``chat``
        as the API says."""
        from compsuite.models.prompting import prompt_spec

        spec = prompt_spec(self.prompting, f"{where}.prompting")
        if self.api == "chat":
            spec.chat = True
        elif self.api == "completions" and spec.chat:
            raise ConfigError(f"{where}.api: completions takes one text, and the prompting "
                              "says chat: true (messages): use api: chat (--model-api chat), "
                              "or prompting.chat: false")
        return spec

    def endpoint(self) -> str:
        """The API asked: ``api``, else as the prompting says."""
        if self.api is not None:
            return self.api
        return "chat" if (self.prompting or {}).get("chat") else "completions"


def expand(text: str, where: str) -> str:
    """``text`` with ``${NAME}`` replaced from the environment; an unset name is an
    error naming ``where``."""
    def value(m: re.Match) -> str:
        name = m.group(1)
        if name not in os.environ:
            raise ConfigError(f"{where}: {text!r} names the environment variable {name}, "
                              "which is not set")
        return os.environ[name]

    return _VAR.sub(value, text)


def merged_args(run, profile: str) -> dict:
    """The study's ``toolkit_defaults.served``, the run's ``args``, the profile's
    override, in that order (a null removes a key); ``prompting`` merged key by key (a
    null: the defaults from there on)."""
    override = run.profiles.get(profile)
    at = f"{run.source or 'the study YAML'}: runs.{run.name}"
    if override is not None and not isinstance(override, dict):
        raise ConfigError(f"{at}.profiles.{profile}: a mapping of served options")
    layers = [("toolkit_defaults.served", run.defaults or {}), ("args", run.args or {}),
              (f"profiles.{profile}", override or {})]
    prompting: dict = {}
    for name, layer in layers:
        if "prompting" not in layer:
            continue
        given = layer["prompting"]
        if given is None:   # null: the defaults (PromptSpec's)
            prompting = {}
            continue
        if not isinstance(given, dict):
            raise ConfigError(f"{at}.{name}.prompting: a mapping of prompting settings "
                              f"(template, shots, ...), not {type(given).__name__}")
        prompting = merge(prompting, given)
    args = merge(merge(run.defaults or {}, run.args), override)
    args["prompting"] = prompting
    return args


def settings(run, profile: str) -> Settings:
    """The run's settings (:func:`merged_args`), checked; errors name the key."""
    at = f"{run.source or 'the study YAML'}: runs.{run.name}"
    s = check(Settings, merged_args(run, profile), f"{at}.args")
    if s.expand:
        s.url = expand(s.url, f"{at}.args.url")
        s.model = expand(s.model, f"{at}.args.model")
        s.check_url(f"{at}.args")
    s.spec(f"{at}.args")   # checked now, not when the first request is asked
    return s


def api_key(s: Settings) -> str | None:
    """The API key: the variable ``api_key_env`` names, else ``OPENAI_API_KEY``; None
    where neither is set (a local server needs none)."""
    for name in (s.api_key_env, FALLBACK_KEY_ENV):
        value = os.environ.get(name)
        if value:
            return value
    return None


def served_model(s: Settings, spec, data: Dataset | None, folder: Path | None):
    """The :class:`~compsuite.toolkits.served.model.ServedModel` of ``s``."""
    from compsuite.toolkits.served.model import ServedModel

    return ServedModel(s.url, s.model, spec, api=s.endpoint(), data=data, folder=folder,
                       key=api_key(s), concurrency=s.concurrency, timeout=s.timeout,
                       retries=s.retries, backoff=s.backoff)


def served_arguments(sources, parser, help: str) -> None:
    """The one declaration of a served model's options, for ``compsuite run`` and the
    model-in-the-loop commands alike: ``--model-url`` (in ``sources``, with ``help``),
    the rest in ``parser`` (``--shots`` and ``--demos`` once for every prompted model:
    :func:`compsuite.models.prompting.add_prompting_arguments`)."""
    from compsuite.foundation.arguments import positive_int
    from compsuite.models.prompting import add_prompting_arguments

    sources.add_argument("--model-url", metavar="URL", help=help)
    parser.add_argument("--model-name", metavar="NAME",
                        help="with --model-url: the model, as the server lists it "
                             "(GET URL/models)")
    parser.add_argument("--model-api", choices=APIS, default=None,
                        help="with --model-url: the endpoint, /completions (one text) or "
                             "/chat/completions (messages); default: completions, or chat "
                             "where the study's prompting says chat: true")
    parser.add_argument("--concurrency", type=positive_int, default=None, metavar="N",
                        help="with --model-url: requests sent at once (default "
                             f"{Settings.concurrency})")
    add_prompting_arguments(parser)


#: the options of a served model besides --model-url (and the prompting options every
#: prompted model shares), by their attribute
QUALIFIERS = {"model_name": "--model-name", "model_api": "--model-api",
              "concurrency": "--concurrency"}


class ServedBackend(TextModelBackend):
    name = "served"
    title = "a served language model (OpenAI-compatible API)"
    system_options = ("--model-url", "--model-name", "--model-api", *PROMPTING_OPTIONS,
                      "--concurrency")

    def add_system_arguments(self, parser) -> None:
        served_arguments(parser, parser, "evaluate a language model behind an "
                                         "OpenAI-compatible server (the API's base URL, e.g. "
                                         "http://127.0.0.1:8000/v1; docs/served_models.md), "
                                         "prompted, in every unit, as the run --name (the "
                                         "API key from $COMPSUITE_API_KEY)")

    def add_model_arguments(self, sources, parser, reads: str = "") -> None:
        served_arguments(sources, parser, "a language model behind an OpenAI-compatible "
                                          "server (the API's base URL, e.g. "
                                          "http://127.0.0.1:8000/v1, with --model-name; the "
                                          "API key from $COMPSUITE_API_KEY)")

    def user_system(self, options) -> UserSystem | None:
        """A served model (``--model-url`` with ``--model-name``, and how it is asked
        and prompted), taken as it is: the shell has expanded the command line."""
        from compsuite.models.prompting import prompting_overrides

        url = getattr(options, "model_url", None)
        given = {k: v for k in QUALIFIERS if (v := getattr(options, k, None)) is not None}
        if not url:
            if given:
                option = QUALIFIERS[next(iter(given))]
                raise ConfigError(f"{option} goes with --model-url, which is not given: add "
                                  f"--model-url URL, or leave out {option}")
            return None
        if not given.get("model_name"):
            raise ConfigError("--model-url needs --model-name: the model, as the server "
                              f"lists it (GET {url.rstrip('/')}/models)")
        args: dict[str, Any] = {"url": url, "model": given["model_name"], "expand": False}
        if "model_api" in given:
            args["api"] = given["model_api"]
        if "concurrency" in given:
            args["concurrency"] = given["concurrency"]
        prompting = prompting_overrides(options)
        if prompting:
            args["prompting"] = prompting
        check(Settings, args, "options").spec("options")   # a mistake named now
        # no label: how it is prompted follows from the study's prompting too, which
        # the result's usage record names (the report labels the row by it)
        return UserSystem(args, "a served language model (--model-url)",
                          "the server decodes it")

    def user_model(self, system: UserSystem, batch_size: int, env: dict | None = None):
        """The served model, zero-shot unless the command reads a dataset
        (``COMPSUITE_DATA`` in ``env``: its raw folder), whose training split the
        demonstrations come from; no cache (no run folder)."""
        s = check(Settings, system.args, "options")
        spec = s.spec("options")
        raw = (env or {}).get("COMPSUITE_DATA")
        data = None if not raw else Dataset(Path(raw).parent, text=Path(raw))
        if spec.shots and data is None:
            raise ConfigError(f"--shots {spec.shots}: demonstrations come from a study's "
                              "training split, and this command reads none; leave out "
                              "--shots (zero-shot), or evaluate through compsuite run")
        return served_model(s, spec, data, None)

    def system(self, run, profile: str) -> dict | None:
        """The model, the API and how it is prompted: not the URL, so the same model
        served again on another host or port (a restarted server) is the same system
        (its usage record keeps the URL it was asked at)."""
        s = settings(run, profile)
        spec = s.spec("")
        return {"model": s.model, "api": s.endpoint(),
                "prompting": spec.label(), "template_sha256": spec.sha256()}

    def train(self, run, profile: str, data: Dataset, run_dir: Path, seed: int, *,
              threads: int | None = None, extra: dict | None = None,
              show: bool = True) -> dict:
        """Check that the server serves the model, and write the settings into the
        unit's folder (``served.json``, the run's "checkpoint")."""
        from compsuite.toolkits.served.client import Client
        from compsuite.toolkits.served.model import served_model_id

        s = settings(run, profile)
        client = Client(s.url, api_key(s), timeout=s.timeout, retries=s.retries,
                        backoff=s.backoff)
        try:
            model_id = served_model_id(client, s.model)
        finally:
            client.close()
        path = self.write_settings(Path(run_dir) / SETTINGS_FILE,
                                   {**asdict(s), "expand": False})   # expanded already
        return {"toolkit": self.name, "checkpoint": str(path), "evaluate_only": True,
                "url": s.url, "model": s.model, "model_id": model_id, "wall_s": 0.0,
                "threads": threads}

    def load(self, checkpoint, data: Dataset | None, kind: str = "translator",
             generation: Decoding = Decoding()):
        s = self.read_settings(checkpoint, kind, Settings)
        return served_model(s, s.spec(str(checkpoint)), data, Path(checkpoint).parent)

    def usage(self, run_dir: Path) -> dict | None:
        """What asking the model cost in ``run_dir`` (its ``usage.json``), or None."""
        from compsuite.toolkits.served.cache import read_usage

        return read_usage(run_dir)


BACKEND = ServedBackend()
