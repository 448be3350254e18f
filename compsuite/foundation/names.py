"""Names the user looks things up by (studies, runs, profiles, evaluations, backends):
:class:`Registry`, a name -> entry mapping that refuses a second entry under one name and
answers an unknown name with the known ones and the nearest (:func:`near`), in the
manner of lm-evaluation-harness's registry."""
from __future__ import annotations

import difflib
from typing import Generic, Iterable, Iterator, TypeVar

from .errors import RegistryError

T = TypeVar("T")


def near(name: str, known: Iterable[str]) -> str:
    """'; did you mean 'x'?' for the nearest known name, or ''."""
    match = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean '{match[0]}'?" if match else ""


class Registry(Generic[T]):
    """A name -> entry mapping that rejects duplicates and suggests near names."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        if name in self._entries:
            raise RegistryError(f"{self.kind} '{name}' is already registered")
        self._entries[name] = entry
        return entry

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.kind} '{name}' (known: {known})"
                                f"{near(name, self._entries)}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self):
        return self._entries.items()
