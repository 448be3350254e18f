"""SGET preprocessing (Kumon et al. 2024, section 4.1.1): Sudachi word segmentation of
the Japanese, sentencepiece BPE on both sides, in the format of the released
``{train,dev,test,gen}_{en,ja}_encoded_sp.txt`` files that the authors' OpenNMT-py
configurations read.

What the released encodings are, established against them: they are reproduced
*exactly* by the steps below with models trained on the released training text (dev
5,000/5,000 and test 5,000/5,000 lines on both sides; training 44,100/44,100 Japanese
lines).  That check used the authors' repository (ynklab/SGET, ``data/bpe/``), whose
``train.txt`` is too large to be stored: the Japanese training text was recovered by
joining the released training pieces (lossless up to NFKC), the English by splitting
the marker-free pieces into the words of the dev/test/lexicon vocabulary (44,096 of
44,100 lines unambiguous).  The steps:

* Japanese: SudachiPy split mode **C** (the library's default) with the ``core``
  dictionary, words joined by single spaces; then a sentencepiece **BPE** model of
  **650** pieces, character coverage **0.995**, trained on the segmented *training*
  split only;
* English: punctuation (``. , ? !``) split off the preceding word with a space; then a
  BPE model of **300** pieces, character coverage **1.0**, trained on the training
  split only (the paper's text swaps the two sizes: a 300-piece Japanese model cannot
  be trained, the Japanese training text alone has more distinct characters);
* both: the word-boundary marker ``▁`` removed from every piece (a piece that was only
  the marker disappears), pieces separated by single spaces.  sentencepiece's default
  ``nmt_nfkc`` normalisation also turns full-width ``？`` into ``?``.

Modes A and C give the same Japanese word boundaries where the released pieces can tell
(every word boundary of either mode is a piece boundary in the released files), but a
mode-A segmentation followed by BPE differs in 35 development lines (``ス ケ ッ チ``
against the released ``ス ケ ッチ``): mode C is the one that reproduces them.

Because the marker is removed, English word boundaries are lost in the encoded text
(``A h or se``), exactly as in the released data; the Japanese side loses nothing that
matters, since Japanese is written without spaces: :func:`detokenise` joins a model's
Japanese output back into plain text before scoring.

Models are trained from an in-memory iterator and written atomically, with one thread
and a fixed seed, so the same inputs give byte-identical ``.model`` files (no input
path is recorded in them).

Public functions: :func:`read_released`, :func:`segment_ja`, :func:`split_punct_en`,
:func:`pretokenise`, :func:`train_bpe`, :func:`load_sentencepiece`, :func:`encode`,
:func:`strip_marker`, :func:`detokenise`, :func:`prepare` (and
:func:`remove_old_layout`, which clears a version-1 output's ``raw/``) and :func:`main`
(the ``compsuite data sget prepare`` command).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from compsuite.data_prep.common.tokenisers import sudachi
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open, iter_lines, write_lines
from compsuite.foundation.manifest import is_complete, read_manifest, write_manifest

#: 2: the text as read is written to ``text/`` (version 1 wrote it to ``raw/``)
VERSION = "2"
GENERATOR = "sget.preprocess"

#: the released files, in the order they are processed; ``train`` is required
SPLITS = ("train", "dev", "test", "gen")
#: the folder of ``out_dir`` with the text as read (plain English and Japanese, patterns)
TEXT = "text"
LANGS = ("en", "ja")
MARKER = "\u2581"  # sentencepiece's word-boundary marker

SUDACHI_DICT = "core"
SUDACHI_MODE = "C"
JA_VOCAB = 650
JA_COVERAGE = 0.995
EN_VOCAB = 300
EN_COVERAGE = 1.0
SEED = 1

#: packages whose versions change the output (recorded in every manifest)
PACKAGES = ("compsuite", "sudachipy", "sudachidict-core", "sentencepiece")

_PUNCT = re.compile(r"\s*([.,?!])")
_SPACES = re.compile(r"\s+")


# ----------------------------------------------------------------------------- input
@dataclass(frozen=True)
class Example:
    english: str
    japanese: str
    pattern: str


def read_released(path: str | Path) -> list[Example]:
    """A released ``english<TAB>japanese<TAB>pattern`` file.

    Raises :class:`DataError` naming the file (and the line) for a missing or empty
    file, a line without exactly three tab-separated columns, or an empty column.
    """
    path = Path(path)
    out: list[Example] = []
    for n, line in enumerate(iter_lines(path), start=1):
        cols = line.split("\t")
        if len(cols) != 3:
            raise DataError(f"{path}: line {n}: expected 3 tab-separated columns "
                            f"(english, japanese, pattern), found {len(cols)}: {line[:80]!r}")
        english, japanese, pattern = (c.strip() for c in cols)
        if not (english and japanese and pattern):
            which = [k for k, v in zip(("english", "japanese", "pattern"),
                                       (english, japanese, pattern)) if not v]
            raise DataError(f"{path}: line {n}: empty {' and '.join(which)} column")
        out.append(Example(english, japanese, pattern))
    if not out:
        raise DataError(f"{path}: file is empty")
    return out


# ----------------------------------------------------------------------------- pre-tokenisation
def segment_ja(lines: Iterable[str], *, mode: str = SUDACHI_MODE,
               dict_name: str = SUDACHI_DICT) -> list[str]:
    """Sudachi word segmentation: each line's words (surface forms) joined by single
    spaces; whitespace in the input is not a word."""
    tok = sudachi(mode, dict_name)
    out = []
    for line in lines:
        words = [m.surface() for m in tok.tokenize(line)]
        out.append(" ".join(w for w in words if w.strip()))
    return out


def split_punct_en(lines: Iterable[str]) -> list[str]:
    """Split ``. , ? !`` off the preceding word (``changed.`` -> ``changed .``)."""
    return [_SPACES.sub(" ", _PUNCT.sub(r" \1", line)).strip() for line in lines]


def pretokenise(lines: Iterable[str], lang: str, *, sudachi_mode: str = SUDACHI_MODE,
                dict_name: str = SUDACHI_DICT) -> list[str]:
    """What BPE is trained on and applied to: Sudachi words (``ja``) or English with
    its punctuation split off (``en``)."""
    if lang == "ja":
        return segment_ja(lines, mode=sudachi_mode, dict_name=dict_name)
    if lang == "en":
        return split_punct_en(lines)
    raise ValueError(f"unknown language {lang!r} (en or ja)")


# ----------------------------------------------------------------------------- BPE
def train_bpe(lines: Sequence[str], model_prefix: str | Path, vocab_size: int,
              character_coverage: float, *, seed: int = SEED, num_threads: int = 1,
              **options) -> Path:
    """Train a sentencepiece BPE model on already pre-tokenised ``lines`` and write
    ``<model_prefix>.model`` and ``<model_prefix>.vocab`` atomically; returns the
    ``.model`` path.

    Deterministic: one thread, a fixed seed, every sentence used (no sampling), and the
    model trained from memory so no input path is stored in it.  ``options`` go to
    ``SentencePieceTrainer.train`` (e.g. ``hard_vocab_limit=False``).
    """
    import sentencepiece as spm

    if not lines:
        raise ValueError("no training sentences for BPE")
    spm.set_random_generator_seed(seed)
    buf = io.BytesIO()
    settings = dict(model_type="bpe", vocab_size=vocab_size,
                    character_coverage=character_coverage, num_threads=num_threads,
                    input_sentence_size=0, shuffle_input_sentence=False, minloglevel=2)
    settings.update(options)
    try:
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf,
                                       **settings)
    except RuntimeError as e:
        raise ValueError(f"sentencepiece could not train a {vocab_size}-piece model "
                         f"({model_prefix}): {e}") from None
    model = Path(f"{model_prefix}.model")
    with atomic_open(model, "wb") as fh:
        fh.write(buf.getvalue())
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    with atomic_open(Path(f"{model_prefix}.vocab")) as fh:
        for i in range(sp.get_piece_size()):
            fh.write(f"{sp.id_to_piece(i)}\t{sp.get_score(i):g}\n")
    return model


def load_sentencepiece(path: str | Path):
    import sentencepiece as spm

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such sentencepiece model")
    return spm.SentencePieceProcessor(model_file=str(path))


def strip_marker(pieces: Iterable[str]) -> list[str]:
    """Remove the word-boundary marker from each piece; drop pieces left empty."""
    out = []
    for p in pieces:
        p = p.replace(MARKER, "")
        if p:
            out.append(p)
    return out


def encode(lines: Iterable[str], model, lang: str, *, keep_marker: bool = False,
           pretokenised: bool = False, sudachi_mode: str = SUDACHI_MODE,
           dict_name: str = SUDACHI_DICT) -> list[str]:
    """Pre-tokenise (unless ``pretokenised``), apply the BPE ``model`` (a processor or a
    path) and write the pieces space-separated, the marker removed as in the released
    files (kept with ``keep_marker``, which :func:`detokenise` can invert exactly)."""
    sp = load_sentencepiece(model) if isinstance(model, (str, Path)) else model
    lines = list(lines)
    if not pretokenised:
        lines = pretokenise(lines, lang, sudachi_mode=sudachi_mode, dict_name=dict_name)
    pieces = sp.encode(lines, out_type=str)
    if keep_marker:
        return [" ".join(p) for p in pieces]
    return [" ".join(strip_marker(p)) for p in pieces]


def detokenise(lines: Iterable[str], lang: str = "ja") -> list[str]:
    """Undo :func:`encode` on model outputs before scoring.

    Japanese: the pieces (and any marker) are joined without spaces, which restores the
    sentence (Japanese has no spaces; ``?`` stays the NFKC form of ``？``, which the
    metrics normalise anyway).  English: only marker-keeping encodings can be undone
    (word boundaries are gone once the marker is removed); the result keeps the split
    punctuation (``changed .``).
    """
    out = []
    for n, line in enumerate(lines, start=1):
        if lang == "ja":
            out.append("".join(line.split()).replace(MARKER, ""))
        elif lang == "en":
            if MARKER not in line and len(line.split()) > 1:
                raise ValueError(f"line {n}: English pieces without the word-boundary marker "
                                 "cannot be joined into words; encode with keep_marker=True")
            out.append(" ".join("".join(line.split()).replace(MARKER, " ").split()))
        else:
            raise ValueError(f"unknown language {lang!r} (en or ja)")
    return out


# ----------------------------------------------------------------------------- prepare
def remove_old_layout(out_dir: str | Path) -> list[Path]:
    """Delete the plain text a version-1 preparation wrote to ``out_dir/raw/`` (now
    ``text/``): only the files its own manifest lists, then the folder if that left it
    empty.  Anything else, or a folder without such a manifest, is left alone.  Returns
    the files deleted."""
    out_dir = Path(out_dir)
    manifest = read_manifest(out_dir)
    if not manifest or manifest.get("generator") != GENERATOR or \
            manifest.get("generator_version") != "1":
        return []
    gone = []
    for rel in manifest.get("sha256", {}):
        p = out_dir / rel
        if Path(rel).parts[:1] == ("raw",) and p.is_file():
            p.unlink()
            gone.append(p)
    with contextlib.suppress(OSError):
        (out_dir / "raw").rmdir()
    return gone


def _args(src_dir, from_released, en_vocab, ja_vocab, en_coverage, ja_coverage, seed,
          splits, sudachi_mode, dict_name) -> dict:
    return {"src_dir": str(Path(src_dir).resolve()), "from_released": from_released,
            "en_vocab": en_vocab, "ja_vocab": ja_vocab, "en_coverage": en_coverage,
            "ja_coverage": ja_coverage, "seed": seed, "splits": list(splits),
            "sudachi_mode": sudachi_mode, "sudachi_dict": dict_name,
            "en_pretokenise": "split . , ? ! off words", "model_type": "bpe",
            "bpe_trained_on": "train"}


def prepare(src_dir: str | Path, out_dir: str | Path, *, from_released: bool = True,
            en_vocab: int = EN_VOCAB, ja_vocab: int = JA_VOCAB,
            en_coverage: float = EN_COVERAGE, ja_coverage: float = JA_COVERAGE,
            seed: int = SEED, splits: Sequence[str] = SPLITS,
            sudachi_mode: str = SUDACHI_MODE, dict_name: str = SUDACHI_DICT,
            force: bool = False) -> dict:
    """Read ``{split}.txt`` (``english<TAB>japanese<TAB>pattern``) from ``src_dir``, train
    the two BPE models on the training split and write into ``out_dir``:

    * ``{split}.en``, ``{split}.ja``: the encoded text OpenNMT-py reads (the format of the
      released ``{split}_{en,ja}_encoded_sp.txt``);
    * ``text/{split}.en``, ``text/{split}.ja``, ``text/{split}.pattern``: the text as
      read, plain (for scoring detokenised outputs against ``text/{split}.ja``, per
      pattern);
    * ``sp/en.model``, ``sp/en.vocab``, ``sp/ja.model``, ``sp/ja.vocab``;
    * ``manifest.json``: arguments, line counts, checksums of every file, the versions
      of sudachipy, sudachidict-core and sentencepiece.

    ``from_released`` says the input is the authors' release (recorded; the format is
    the same for the suite's own generated data).  A finished ``out_dir`` with the same
    arguments is left as it is (``force`` redoes it).  Returns the manifest.
    """
    src_dir, out_dir = Path(src_dir), Path(out_dir)
    splits = tuple(splits)
    if "train" not in splits:
        raise ValueError("the splits must include 'train' (the BPE models are trained on it)")
    args = _args(src_dir, from_released, en_vocab, ja_vocab, en_coverage, ja_coverage, seed,
                 splits, sudachi_mode, dict_name)
    if not force and is_complete(out_dir, GENERATOR, args, version=VERSION):
        return read_manifest(out_dir)

    data = {s: read_released(src_dir / f"{s}.txt") for s in splits}
    remove_old_layout(out_dir)
    files: list[str] = []
    for s, rows in data.items():
        for suffix, col in (("en", [r.english for r in rows]), ("ja", [r.japanese for r in rows]),
                            ("pattern", [r.pattern for r in rows])):
            write_lines(out_dir / TEXT / f"{s}.{suffix}", col)
            files.append(f"{TEXT}/{s}.{suffix}")

    settings = {"en": (en_vocab, en_coverage), "ja": (ja_vocab, ja_coverage)}
    stats: dict = {}
    for lang in LANGS:
        pre = {s: pretokenise([getattr(r, "english" if lang == "en" else "japanese")
                               for r in rows], lang, sudachi_mode=sudachi_mode,
                              dict_name=dict_name) for s, rows in data.items()}
        vocab, coverage = settings[lang]
        model = train_bpe(pre["train"], out_dir / "sp" / lang, vocab, coverage, seed=seed)
        files += [f"sp/{lang}.model", f"sp/{lang}.vocab"]
        sp = load_sentencepiece(model)
        lang_stats = {"pieces": sp.get_piece_size()}
        for s, lines in pre.items():
            enc = encode(lines, sp, lang, pretokenised=True)
            write_lines(out_dir / f"{s}.{lang}", enc)
            files.append(f"{s}.{lang}")
            n_pieces = sum(len(e.split()) for e in enc)
            lang_stats[f"{s}_mean_pieces"] = round(n_pieces / len(enc), 3)
            unk = sum(e.split().count(sp.id_to_piece(sp.unk_id())) for e in enc)
            if unk:
                lang_stats[f"{s}_unk_pieces"] = unk
        stats[lang] = lang_stats

    counts = {s: len(rows) for s, rows in data.items()}
    counts["patterns"] = {s: len({r.pattern for r in rows}) for s, rows in data.items()}
    return write_manifest(
        out_dir, generator=GENERATOR, generator_version=VERSION, seed=seed, args=args,
        files=files, counts=counts, statistics=stats, packages=PACKAGES,
        extra={"format": "pieces space-separated, word-boundary marker removed "
                         "(as the released *_encoded_sp.txt)"})


# ----------------------------------------------------------------------------- command line
def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``compsuite data sget prepare``."""
    from compsuite.foundation.arguments import positive_int

    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-released", metavar="DIR",
                     help="folder with the released train.txt, dev.txt, test.txt, gen.txt")
    src.add_argument("--from-generated", metavar="DIR",
                     help="folder with the suite's generated {split}.txt (same format)")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--splits", nargs="+", default=list(SPLITS))
    ap.add_argument("--en-vocab", type=positive_int, default=EN_VOCAB)
    ap.add_argument("--ja-vocab", type=positive_int, default=JA_VOCAB)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--force", action="store_true", help="redo a finished output folder")


def run(a: argparse.Namespace) -> int:
    manifest = prepare(a.from_released or a.from_generated, a.out,
                       from_released=a.from_released is not None, en_vocab=a.en_vocab,
                       ja_vocab=a.ja_vocab, seed=a.seed, splits=a.splits, force=a.force)
    counts = ", ".join(f"{s} {n}" for s, n in manifest["counts"].items() if s != "patterns")
    print(f"{a.out}: {counts} lines; BPE pieces: en {manifest['statistics']['en']['pieces']}, "
          f"ja {manifest['statistics']['ja']['pieces']}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``compsuite data sget prepare --from-released DIR --out OUT``."""
    ap = argparse.ArgumentParser(
        prog="compsuite data sget prepare",
        description="Sudachi + sentencepiece BPE preprocessing of SGET data for OpenNMT-py "
                    "(reproduces the released *_encoded_sp.txt files).")
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
