"""How a model decodes: one typed class for the decoding settings that a study's and a
profile's ``generation`` hold, an eval command's options give, and every translator and
backend reads.

:func:`decoding` reads a mapping (a YAML's ``generation``, a command's options) into
:class:`Decoding` with :func:`compsuite.schema.check`: an unknown key, a value of the
wrong type or a combination that cannot work is a ConfigError naming the file and the
key, once, where the settings are read; everything downstream reads typed attributes.
A key left out takes the default below; ``batch_size`` left out is each model's own
(a toolkit's translator 256, a classifier 512, a Hugging Face model 32).  ``batch_size:
auto`` sizes a Hugging Face model's batches to its device (the largest that fits, found
by halving on out-of-memory: :mod:`compsuite.toolkits.hf.batching`); the toolkits'
own commands and CTranslate2 take their default for it.

Results record the settings as given (``generation`` in result.json: the keys the study
and the profile set), so a result says what was asked, not what defaults filled in.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, Mapping

from compsuite.foundation.errors import ConfigError
from compsuite.schema import PositiveInt, check

ENGINES = ("toolkit", "ctranslate2")
#: ``auto``: CTranslate2 decodes on a CUDA GPU where it finds one, else on the CPU
DEVICES = ("cpu", "cuda", "auto")
#: CTranslate2's compute types by device; float32 is the default everywhere
COMPUTE_TYPES = {"cpu": ("float32", "int8", "int8_float32"),
                 "cuda": ("float32", "float16", "bfloat16", "int8", "int8_float16",
                          "int8_bfloat16", "int8_float32")}
#: the keys that choose the decoding engine (CTranslate2's)
ENGINE_KEYS = ("engine", "compute_type", "device")


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
    unmerged, the memory of one model)."""

    beam: PositiveInt = 1
    batch_size: PositiveInt | Literal["auto"] | None = None
    max_length: PositiveInt = 512
    max_new_tokens: PositiveInt | None = None
    length_penalty: Literal["none", "wu", "avg"] | None = None
    engine: str = "toolkit"
    compute_type: str | None = None
    device: str | None = None
    merge: bool = True

    def check(self, where: str) -> None:
        """What involves several keys, or wants the engine's own wording."""
        if self.engine not in ENGINES:
            raise ConfigError(f"{where}.engine: {self.engine!r} is not an engine; "
                              f"choose one of {', '.join(ENGINES)}")
        if self.device is not None and self.device not in DEVICES:
            raise ConfigError(f"{where}.device: {self.device!r}; choose one of "
                              f"{', '.join(DEVICES)}")
        if self.engine != "ctranslate2" and (self.compute_type or self.device):
            raise ConfigError(f"{where}: compute_type and device are CTranslate2's settings; "
                              "add engine: ctranslate2 (the toolkits decode in float32 on the "
                              "device they find)")
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
        return replace(self, engine="toolkit", compute_type=None, device=None)



def decoding(value: Decoding | Mapping[str, Any] | None,
             where: str = "generation") -> Decoding:
    """``value`` as :class:`Decoding`: a mapping is checked (a ConfigError naming
    ``where`` and the key), a :class:`Decoding` is returned as it is."""
    if isinstance(value, Decoding):
        return value
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping of decoding settings "
                          f"(beam, batch_size, max_length), got {value!r}")
    return check(Decoding, dict(value or {}), where)
