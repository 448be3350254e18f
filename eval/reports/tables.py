"""Markdown tables, mean ± std cells, the reports' writer, and the papers' published
numbers (read from ``eval/<study>/paper_numbers.yaml``)."""
from __future__ import annotations

import statistics as st
from pathlib import Path
from typing import Any, Sequence

import yaml

#: eval/: each study's package holds its paper_numbers.yaml
EVAL_DIR = Path(__file__).resolve().parent.parent


def paper_numbers(study: str | Path) -> dict[str, Any]:
    """A study's published numbers: ``eval/<study>/paper_numbers.yaml``, or the YAML
    file ``study`` names (a study that lives outside the suite)."""
    path = Path(study) if str(study).endswith(".yaml") else EVAL_DIR / str(study) / \
        "paper_numbers.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no published numbers for study '{study}' ({path})")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def mean_std(vals: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for a single value)."""
    return st.fmean(vals), (st.stdev(vals) if len(vals) > 1 else None)


def mean_std_cell(vals: Sequence[float]) -> str:
    """``0.46 ± 0.15`` over seeds; one value alone, without ±; '–' for none."""
    if not vals:
        return "–"
    mean, std = mean_std(vals)
    return fmt(mean) + (f" ± {fmt(std)}" if std is not None else "")


def published_cell(mean: float | None, std: float | None = None) -> str:
    """A paper's cell: ``0.75 ± 0.27``, the mean alone without a std, '–' for none."""
    if mean is None:
        return "–"
    return fmt(mean) if std is None else f"{fmt(mean)} ± {fmt(std)}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in header]] + [[fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths)) + " |",
             "| " + " | ".join("-" * w for w in widths) + " |"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in cells[1:]]
    return "\n".join(lines) + "\n"


def write_report(out_dir, report: dict, md: list[str], json_name: str = "report.json",
                 md_name: str = "report.md") -> list[Path]:
    """The report as JSON and as Markdown in ``out_dir``, each written atomically;
    returns both paths."""
    import json

    from compsuite.foundation.io import atomic_open

    with atomic_open(Path(out_dir) / json_name) as fh:
        json.dump(report, fh, indent=2)
    with atomic_open(Path(out_dir) / md_name) as fh:
        fh.write("\n".join(md))
    return [Path(out_dir) / json_name, Path(out_dir) / md_name]


def prompting_of(result: dict) -> str:
    """How a prompted model was asked (``zero-shot``, ``4-shot similar``), as its result
    records it (``usage.label``); ``""`` for any other system."""
    return str((result.get("usage") or {}).get("label") or "")


def with_prompting(name: str, result: dict) -> str:
    """``name``, followed by how a prompted model was asked (:func:`prompting_of`) where
    its row is a prompted model's and the name does not say it already."""
    said = prompting_of(result)
    return f"{name} ({said})" if said and f"({said})" not in str(name) else str(name)
