"""The signature of a number: the metric that made it, the metric's version and the
settings that change it, in the spirit of sacreBLEU's ``Signature``.

Every metric and score the suite writes builds its signature as a :class:`Signature`
and stores ``format()``'s string beside the number (``signature`` in result.json,
``exact_signature``, ``partial_signature``, ...)::

    >>> Signature("seq_acc", "1", {"match": "exact", "tok": "whitespace"}).format()
    'metric:seq_acc|match:exact|tok:whitespace|version:1'

The string is sacreBLEU's form, ``key:value`` pairs joined by ``|``: the metric's name
first (``metric:<name>``), then its settings in order, then ``version:<version>``, then
``extra`` settings, which follow the version where a signature was extended after it
was first written (NLI's options; SGET's segmentation after sacreBLEU's own BLEU
signature).  A signature taken from sacreBLEU (:meth:`Signature.from_sacrebleu`) is
written as sacreBLEU writes it, without the ``metric:`` pair.  As in sacreBLEU, a
setting whose value is None is left out and a bool is written ``yes`` / ``no``.

:meth:`Signature.parse` reads a string back into name, version and settings, so the
settings of every stored number can be read from the string beside it.

Two settings strings of the same form are a model's, not a metric's, and are not built
here: the NLI lexical classifier's (``data_prep/nli/lexical.py``, below eval; NLI's
accuracy quotes it whole as ``lms:``) and the CTranslate2 engine's
(``compsuite/models/ctranslate2.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

#: the key that names the metric in a formatted signature
NAME_KEY = "metric"
VERSION_KEY = "version"


def _value(value: Any) -> str:
    """A setting's value as the signature writes it (bools as sacreBLEU writes them)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _pairs(settings: Mapping[str, Any]) -> list[str]:
    return [f"{k}:{_value(v)}" for k, v in settings.items() if v is not None]


@dataclass(frozen=True, eq=False)
class Signature:
    """A metric's name and version and the settings that change its numbers.

    ``settings`` and ``extra`` are ordered mappings (their order is the string's);
    ``named`` is False for a signature that, like sacreBLEU's, does not write the
    metric's name."""

    name: str
    version: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    named: bool = True

    def __post_init__(self):
        for what in ("settings", "extra"):
            value = MappingProxyType(dict(getattr(self, what)))
            reserved = {NAME_KEY, VERSION_KEY} & set(value)
            if reserved:
                raise ValueError(f"{sorted(reserved)[0]!r} is not a setting of a signature "
                                 "(it is the metric's name or version)")
            object.__setattr__(self, what, value)
        object.__setattr__(self, "version", str(self.version))

    def format(self) -> str:
        """The sacreBLEU-style string: ``metric:<name>|<settings>|version:<v>|<extra>``."""
        pairs = [f"{NAME_KEY}:{self.name}"] if self.named else []
        pairs += _pairs(self.settings) + [f"{VERSION_KEY}:{self.version}"] + _pairs(self.extra)
        return "|".join(pairs)

    def __str__(self) -> str:
        return self.format()

    def _key(self) -> tuple:
        return (self.name, self.version, tuple(self.settings.items()),
                tuple(self.extra.items()), self.named)

    def __eq__(self, other) -> bool:
        return isinstance(other, Signature) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def with_settings(self, **settings) -> "Signature":
        """This signature with ``settings`` changed in place or, if new, added after the
        version (so the strings written before them stay as they were)."""
        own = {k: settings.pop(k) if k in settings else v for k, v in self.settings.items()}
        return Signature(self.name, self.version, own, {**self.extra, **settings}, self.named)

    def as_dict(self) -> dict:
        """Name, version and settings as plain data (``from_dict`` reads it back)."""
        out = {"name": self.name, "version": self.version, "settings": dict(self.settings)}
        if self.extra:
            out["extra"] = dict(self.extra)
        if not self.named:
            out["named"] = False
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Signature":
        return cls(data["name"], data["version"], data.get("settings", {}),
                   data.get("extra", {}), data.get("named", True))

    @classmethod
    def from_sacrebleu(cls, name: str, signature, **extra) -> "Signature":
        """sacreBLEU's own signature (``metric.get_signature()``, read through its
        ``info`` mapping, as sacreBLEU formats it: version last, None left out),
        followed by ``extra`` settings of the suite's."""
        info = dict(signature.info)
        version = info.pop(VERSION_KEY)
        return cls(name, version, info, extra, named=False)

    @classmethod
    def parse(cls, text: str, name: str | None = None) -> "Signature":
        """A formatted signature read back.  Without ``metric:<name>`` first (sacreBLEU's
        strings) the signature is unnamed and ``name`` names it.  Values are strings; a
        value that itself holds ``|`` (NLI's ``lms:``, a whole classifier signature)
        is read as several settings."""
        pairs = []
        for part in text.split("|"):
            key, sep, value = part.partition(":")
            if not sep:
                raise ValueError(f"{part!r} in the signature {text!r} is not key:value")
            pairs.append((key, value))
        named = bool(pairs) and pairs[0][0] == NAME_KEY
        if named:
            name = pairs.pop(0)[1]
        keys = [k for k, _ in pairs]
        if keys.count(VERSION_KEY) != 1:
            raise ValueError(f"the signature {text!r} has no single version")
        at = keys.index(VERSION_KEY)
        if name is None:
            raise ValueError(f"the signature {text!r} names no metric: give its name")
        return cls(name, pairs[at][1], dict(pairs[:at]), dict(pairs[at + 1:]), named)
