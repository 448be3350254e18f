"""What a backend's ``predict`` returns: a split's outputs beside its references (and
sources), read from whatever the toolkit wrote, in one in-memory form.  ``origin`` says
where they came from (the format and files, recorded in results); ``path`` is the
stored file of the outputs (kept: a resumed evaluation reads it back), for a study that
checksums or rereads it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_aligned


@dataclass
class Predictions:
    hypotheses: list[str]
    references: list[str]
    sources: list[str] | None = None
    origin: dict = field(default_factory=dict)  # format and file names, for results files
    path: Path | None = None

    def __post_init__(self):
        n = len(self.hypotheses)
        if len(self.references) != n or (self.sources is not None and len(self.sources) != n):
            raise DataError(f"{self.origin}: hypotheses, references and sources differ in length")

    def __len__(self) -> int:
        return len(self.hypotheses)


def read_plain(hyp: str | Path, ref: str | Path, src: str | Path | None = None,
               fmt: str = "plain") -> Predictions:
    """Aligned hypothesis and reference files (and optionally the source file)."""
    paths = [hyp, ref] + ([src] if src is not None else [])
    cols = read_aligned(*paths)
    origin = {"format": fmt, "hyp": str(hyp), "ref": str(ref)}
    if src is not None:
        origin["src"] = str(src)
    return Predictions(cols[0], cols[1], cols[2] if src is not None else None, origin,
                       Path(hyp))
