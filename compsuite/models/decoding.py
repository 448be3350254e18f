"""How a model decodes: one typed class for the decoding settings that a study's, a
profile's and a run's ``generation`` hold, an eval command's options give, and every
translator and backend reads.

:func:`decoding` reads a mapping (a YAML's ``generation``, a command's options) into
:class:`Decoding` with :func:`compsuite.schema.check`: an unknown key, a value of the
wrong type or a combination that cannot work is a ConfigError naming the file and the
key, once, where the settings are read; everything downstream reads typed attributes.
A key left out takes the default below; ``batch_size`` left out is each model's own,
its class's ``BATCH_SIZE`` (a toolkit's translator 256, a classifier 512, a Hugging
Face model 32).  ``batch_size: auto`` sizes a Hugging Face model's batches to its
device (the largest that fits, found by halving on out-of-memory:
:mod:`compsuite.toolkits.hf.batching`); the toolkits' own commands and CTranslate2 take
their default for it.

Settings come in layers, each over the one before: the study's ``generation``, the
profile's, the run's (``runs.<run>.generation.<profile>``), the command line's
(``--engine`` ...).  :meth:`Decoding.over` is the one merge: a key given later wins, and
``engine: toolkit`` drops the CTranslate2 keys given under it.  A :class:`Decoding`
keeps the keys as given beside the settings (:attr:`Decoding.given`): results record
those (``generation`` in result.json), so a result says what was asked, not what
defaults filled in.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, Mapping

from compsuite.foundation.errors import ConfigError
from compsuite.schema import PositiveInt, check, check_keys

ENGINES = ("toolkit", "ctranslate2")
#: ``auto``: CTranslate2 decodes on a CUDA GPU where it finds one, else on the CPU
DEVICES = ("cpu", "cuda", "auto")
#: CTranslate2's compute types by device; float32 is the default everywhere
COMPUTE_TYPES = {"cpu": ("float32", "int8", "int8_float32"),
                 "cuda": ("float32", "float16", "bfloat16", "int8", "int8_float16",
                          "int8_bfloat16", "int8_float32")}
#: the keys that choose the decoding engine (CTranslate2's)
ENGINE_KEYS = ("engine", "compute_type", "device")
#: ``where`` of settings a command's options give (``--engine`` ...): a message names
#: the options rather than the YAML's keys
OPTIONS = "options"


def compute_types(device: str) -> tuple[str, ...]:
    """CTranslate2's compute types on ``device`` (``auto``: those of either device; the
    one found is checked when the model is loaded)."""
    if device == "auto":
        return tuple(dict.fromkeys(COMPUTE_TYPES["cpu"] + COMPUTE_TYPES["cuda"]))
    return COMPUTE_TYPES[device]


@dataclass(frozen=True)
class Decoding:
    """Decoding settings (see the module docstring).

    ``beam``: 1 is greedy; ``max_length``: the longest output in tokens (fairseq's
    ``--max-len-b`` with ``--max-len-a 0``, OpenNMT-py's ``-max_length``);
    ``max_new_tokens``: a Hugging Face model's generation cap (default: what fits its
    positions); ``length_penalty``: OpenNMT-py's beam length penalty (``none``, ``wu``,
    ``avg``; absent: its default); ``engine``: ``toolkit`` or ``ctranslate2``, with
    CTranslate2's ``compute_type`` (default float32: the toolkit's outputs) and
    ``device`` (``cpu``, ``cuda``, or ``auto``: a GPU where CTranslate2 finds one, else
    the CPU; default cpu); ``merge``: a Hugging Face LoRA
    adapter decodes merged into a copy of its base's weights (false: over the base
    unmerged, the memory of one model); ``given``: the keys as given, in the order
    given (what a result records; not a setting, and not compared): for settings built
    directly, those that differ from the defaults."""

    beam: PositiveInt = 1
    batch_size: PositiveInt | Literal["auto"] | None = None
    max_length: PositiveInt = 512
    max_new_tokens: PositiveInt | None = None
    length_penalty: Literal["none", "wu", "avg"] | None = None
    engine: str = "toolkit"
    compute_type: str | None = None
    device: str | None = None
    merge: bool = True
    given: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.given is None:
            object.__setattr__(self, "given", {
                f.name: getattr(self, f.name) for f in fields(self)
                if f.name in SETTINGS and getattr(self, f.name) != f.default})

    def check(self, where: str) -> None:
        """What involves several keys, or wants the engine's own wording."""
        if self.engine not in ENGINES:
            raise ConfigError(f"{where}.engine: {self.engine!r} is not an engine; "
                              f"choose one of {', '.join(ENGINES)}")
        if self.device is not None and self.device not in DEVICES:
            raise ConfigError(f"{where}.device: {self.device!r}; choose one of "
                              f"{', '.join(DEVICES)}")
        if self.engine != "ctranslate2" and (self.compute_type or self.device):
            if where == OPTIONS:
                said = ("--compute-type and --device are CTranslate2's options; add "
                        "--engine ctranslate2")
            else:
                said = (f"{where}: compute_type and device are CTranslate2's settings; add "
                        "engine: ctranslate2")
            raise ConfigError(f"{said} (the toolkits decode in float32 on the device they "
                              "find)")
        device = self.device or "cpu"
        known = compute_types(device)
        if self.compute_type is not None and self.compute_type not in known:
            raise ConfigError(f"{where}.compute_type: {self.compute_type!r} is not "
                              f"available on {device}; choose one of {', '.join(known)}")

    def batch(self, default: int) -> int:
        """The batch size, or the model's own ``default`` where none is set (or ``auto``,
        which only a Hugging Face model sizes itself: :meth:`batch_or_auto`)."""
        return default if self.batch_size in (None, "auto") else self.batch_size

    def batch_or_auto(self, default: int) -> int | str:
        """The batch size, ``"auto"``, or ``default`` where none is set."""
        return self.batch_size or default

    @property
    def fast(self) -> bool:
        """Whether CTranslate2 decodes (where it can decode as the toolkit does)."""
        return self.engine == "ctranslate2"

    def toolkit(self) -> Decoding:
        """These settings with the toolkit as the engine (CTranslate2's left out)."""
        return self.over({"engine": "toolkit"})

    def over(self, *layers: Decoding | Mapping[str, Any] | None,
             where: str = "generation") -> Decoding:
        """These settings with each of ``layers`` on top, in order (the study's, the
        profile's, the run's, the command line's): a key given later wins, and a layer
        that gives ``engine: toolkit`` drops the CTranslate2 keys (``compute_type``,
        ``device``) given under it.  The merged keys are checked (a ConfigError naming
        ``where``) and kept as :attr:`given`."""
        given = dict(self.given)
        for layer in layers:
            keys = dict(layer.given if isinstance(layer, Decoding) else layer or {})
            if keys.get("engine") == "toolkit":
                given = {k: v for k, v in given.items() if k not in ENGINE_KEYS}
            given.update(keys)
        return decoding(given, where)


#: the keys of a ``generation`` (every field of :class:`Decoding` but ``given``)
SETTINGS = tuple(f.name for f in fields(Decoding) if f.name != "given")


def decoding(value: Decoding | Mapping[str, Any] | None,
             where: str = "generation") -> Decoding:
    """``value`` as :class:`Decoding`: a mapping is checked (a ConfigError naming
    ``where`` and the key), a :class:`Decoding` is returned as it is."""
    if isinstance(value, Decoding):
        return value
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping of decoding settings "
                          f"(beam, batch_size, max_length), got {value!r}")
    given = dict(value or {})
    check_keys(given, SETTINGS, where)
    settings = check(Decoding, given, where)
    object.__setattr__(settings, "given", given)
    return settings

