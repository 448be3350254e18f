"""Manifests written beside every generated dataset.

A manifest records what produced the files (generator, its version, seed, every
argument), what came out (counts, statistics, samples dropped and why) and how to
check it (sha256 of each file, library versions).  :func:`is_complete` lets the
pipelines skip a step whose outputs already exist and match.
"""
from __future__ import annotations

import datetime as _dt
import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from .io import atomic_open, sha256_file

MANIFEST = "manifest.json"


def package_versions(names: Iterable[str]) -> dict[str, str | None]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def write_manifest(
    out_dir: str | Path,
    *,
    generator: str,
    generator_version: str,
    seed: int | None,
    args: dict[str, Any],
    files: Iterable[str | Path],
    counts: dict[str, Any] | None = None,
    statistics: dict[str, Any] | None = None,
    dropped: dict[str, int] | None = None,
    extra: dict[str, Any] | None = None,
    packages: Iterable[str] = ("compsuite",),
) -> dict[str, Any]:
    """Write ``manifest.json`` into ``out_dir`` (atomically) and return it.

    ``files`` are paths relative to ``out_dir`` (or absolute inside it).
    """
    out_dir = Path(out_dir)
    checksums = {}
    for f in files:
        p = Path(f)
        p = p if p.is_absolute() else out_dir / p
        checksums[str(p.relative_to(out_dir))] = sha256_file(p)
    manifest = {
        "generator": generator,
        "generator_version": generator_version,
        "seed": seed,
        "args": args,
        "counts": counts or {},
        "statistics": statistics or {},
        "dropped": dropped or {},
        "sha256": dict(sorted(checksums.items())),
        "versions": {"python": platform.python_version(), **package_versions(packages)},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if extra:
        manifest.update(extra)
    with atomic_open(out_dir / MANIFEST) as fh:
        json.dump(manifest, fh, indent=2, sort_keys=False)
        fh.write("\n")
    return manifest


def read_manifest(out_dir: str | Path) -> dict[str, Any] | None:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def is_complete(out_dir: str | Path, generator: str, args: dict[str, Any],
                verify_checksums: bool = True, version: str | None = None) -> bool:
    """True when ``out_dir`` holds a manifest for exactly these arguments (and, given
    ``version``, this generator version) and every file it lists is present (and, by
    default, unchanged)."""
    manifest = read_manifest(out_dir)
    if manifest is None or manifest.get("generator") != generator:
        return False
    if version is not None and manifest.get("generator_version") != version:
        return False
    if json.loads(json.dumps(args)) != manifest.get("args"):
        return False
    for rel, digest in manifest.get("sha256", {}).items():
        p = Path(out_dir) / rel
        if not p.is_file() or (verify_checksums and sha256_file(p) != digest):
            return False
    return True
