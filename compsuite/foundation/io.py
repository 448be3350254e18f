"""Atomic writers and checked readers shared by every layer of the suite.

Readers never truncate silently: mismatched line counts, empty files and missing
files raise :class:`~.errors.DataError` naming the file (and the line where one is at
fault).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

import yaml

from .errors import ConfigError, DataError


def current_umask() -> int:
    """The process's file-creation mask, read without changing it (Linux reports it in
    /proc; elsewhere it is set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8"):
    """Write to a temporary file beside ``path`` and move it into place on success.

    A crash or interrupt leaves the old file (or none), never a half-written one.  The
    file gets the mode an ordinary ``open`` would give it (0644 under umask 022; the
    temporary file is private until it is complete).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            os.fchmod(fh.fileno(), 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> int:
    """Atomically write one item per line; returns the number of lines."""
    n = 0
    with atomic_open(path) as fh:
        for line in lines:
            if "\n" in line:
                raise DataError(f"{path}: line {n + 1} contains a newline")
            fh.write(line + "\n")
            n += 1
    return n


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def utf8_error(origin: str | os.PathLike, n: int, where: str, raw: bytes,
               e: UnicodeDecodeError) -> DataError:
    """``origin: line n (where): not valid UTF-8 (byte 0x..: reason); ...``"""
    return DataError(f"{origin}: line {n} ({where}): not valid UTF-8 (byte "
                     f"0x{raw[e.start]:02x}: {e.reason}); save it as UTF-8, e.g. with "
                     "iconv -t UTF-8")


def stdin_lines(stream=None) -> Iterator[str]:
    """The lines of standard input (``stream``, by default ``sys.stdin``), newline kept,
    decoded as UTF-8 line by line: invalid UTF-8 is a DataError naming the line and the
    byte offset.  A text stream without a binary buffer is read as it is."""
    import sys

    stream = sys.stdin if stream is None else stream
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        yield from stream
        return
    offset = 0
    for n, raw in enumerate(buffer, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise utf8_error("<stdin>", n, f"byte offset {offset + e.start}", raw, e) from None
        offset += len(raw)
        yield line[:-2] + "\n" if line.endswith("\r\n") else line


def not_utf8(path: str | os.PathLike, gzipped: bool = False) -> DataError | None:
    """The error for a file that is not valid UTF-8, naming its first bad line and the
    byte offset (from 0; of the uncompressed text when ``gzipped``) of the bad byte;
    None for a file that is valid UTF-8.  Reads the lines one by one in binary."""
    import gzip

    offset = 0
    with (gzip.open if gzipped else open)(path, "rb") as fh, \
            contextlib.suppress(gzip.BadGzipFile, EOFError):
        for n, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                where = f"byte offset {offset + e.start}" + (" of the uncompressed text"
                                                             if gzipped else "")
                return utf8_error(path, n, where, raw, e)
            offset += len(raw)
    return None


@contextlib.contextmanager
def open_text(path: str | os.PathLike):
    """``open(path, encoding="utf-8")`` for reading a user's file: invalid UTF-8 met in
    the ``with`` block is a DataError naming the line and the byte offset."""
    try:
        with open(path, encoding="utf-8") as fh:
            yield fh
    except UnicodeDecodeError:
        error = not_utf8(path)
        if error is None:  # not the file's bytes
            raise
        raise error from None


def iter_lines(path: str | os.PathLike) -> Iterator[str]:
    """Stream a text file's lines without their newline; invalid UTF-8 is a DataError
    naming the line and the byte offset."""
    return iter_text(path, gzipped=False)


def iter_text(path: str | os.PathLike, gzipped: bool | None = None) -> Iterator[str]:
    """Like :func:`iter_lines`, for a user's corpus that may be gzipped (``.gz``, or
    ``gzipped``)."""
    import gzip

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if gzipped is None:
        gzipped = path.suffix == ".gz"
    try:
        with (gzip.open if gzipped else open)(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                yield line.rstrip("\n").rstrip("\r")
    except UnicodeDecodeError:
        raise (not_utf8(path, gzipped) or DataError(f"{path}: not valid UTF-8")) from None
    except (gzip.BadGzipFile, EOFError) as e:
        raise DataError(f"{path}: not a whole gzip file ({e})") from None


def aligned_pairs(a: str | os.PathLike, b: str | os.PathLike,
                  max_lines: int | None = None) -> Iterator[tuple[int, str, str]]:
    """(line number, line of ``a``, line of ``b``) of two files aligned line by line,
    streamed; a file that ends first is an error naming both files and the line, and so
    are two empty files."""
    from itertools import zip_longest

    n = 0
    for n, (x, y) in enumerate(zip_longest(iter_text(a), iter_text(b)), 1):
        if max_lines is not None and n > max_lines:
            return
        if x is None or y is None:
            longer, shorter = (b, a) if x is None else (a, b)
            raise DataError(f"{longer} has more lines than {shorter} (line {n})")
        yield n, x, y
    if not n:
        raise DataError(f"{a} and {b}: the files are empty")


def read_lines(path: str | os.PathLike, allow_empty: bool = False) -> list[str]:
    lines = list(iter_lines(path))
    if not lines and not allow_empty:
        raise DataError(f"{path}: file is empty")
    return lines


def read_aligned(*paths: str | os.PathLike) -> list[list[str]]:
    """Read files that must be aligned line by line (source/target, hyp/ref, ...)."""
    columns = [read_lines(p) for p in paths]
    counts = {str(p): len(c) for p, c in zip(paths, columns)}
    if len(set(counts.values())) > 1:
        desc = ", ".join(f"{p} has {n}" for p, n in counts.items())
        raise DataError(f"line counts differ: {desc} lines")
    return columns


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that gives a key twice (PyYAML's own keeps
    the last one silently).  A merge key (``<<``) may still be overridden."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    seen = first.setdefault(key, key_node)
                except TypeError:   # an unhashable key: PyYAML's own error follows
                    continue
                if seen is not key_node:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} is given twice in one mapping (first on "
                        f"line {seen.start_mark.line + 1}); keep one", key_node.start_mark)
        return super().construct_mapping(node, deep)


def yaml_problem(e: yaml.YAMLError) -> str:
    """PyYAML's error in one line: where (line and column, from 1) and the problem, with
    what the parser was reading where it says so."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None)
    if mark is None or not problem:
        return " ".join(str(e).split())
    text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, at = getattr(e, "context", None), getattr(e, "context_mark", None)
    if context and at is not None and (at.line, at.column) != (mark.line, mark.column):
        text += f" ({context} from line {at.line + 1}, column {at.column + 1})"
    return " ".join(text.split())


def load_mapping(path: str | Path, what: str = "a mapping at the top level") -> dict:
    """A YAML file that must hold a mapping; a missing file, malformed YAML (a key given
    twice in a mapping included) or anything else is a one-line ConfigError naming the
    file (and the line and column where the YAML is at fault)."""
    path = Path(path)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ConfigError(str(not_utf8(path) or f"{path}: not valid UTF-8")) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: malformed YAML: {yaml_problem(e)}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected {what}")
    return raw


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def translate_stream(lines: Iterable[str], translate, errors: type | tuple, out, err,
                     keep_going: bool = False, origin: str = "") -> int:
    """A rule-based translator's command loop: one sentence per line to ``out``.  A line
    ``translate`` rejects (raising one of ``errors``) stops with exit status 2 and the
    error on ``err`` (``<origin>: line N: ...``), or with ``keep_going`` becomes an empty
    line, counted on ``err`` at the end."""
    failed = total = 0
    where = f"{origin}: " if origin else ""
    for n, line in enumerate(lines, 1):
        total = n
        try:
            out.write(translate(line.rstrip("\n")) + "\n")
        except errors as e:
            if not keep_going:
                print(f"{where}line {n}: {e}", file=err)
                return 2
            failed += 1
            out.write("\n")
    if keep_going:
        print(f"{failed} of {total} line(s) could not be translated (empty lines written)",
              file=err)
    return 0


def remove_path(path: str | os.PathLike) -> None:
    """Delete a file or a folder (a checkpoint is either, by toolkit)."""
    import shutil

    if Path(path).is_dir():
        shutil.rmtree(path)
    else:
        Path(path).unlink()
