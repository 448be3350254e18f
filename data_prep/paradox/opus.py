"""``compsuite data paradox opus``: the paper profile's training data from a user's OPUS
English-Dutch corpus, with the authors' preprocessing, and the Flores-101 dev/devtest
sets.

Section 3.1 trains fairseq Transformer-base models on OPUS English-Dutch (69M pairs) at
three sizes: ``small`` (one million pairs), ``medium`` (one eighth of the corpus) and
``full`` (all of it), validating on Flores-101 ``dev`` and reporting BLEU on
``devtest``.  The authors released the commands that encode their test inputs
(``scripts/binarise_data.sh`` of i-machine-think/compositionality_paradox_mt: Moses
``tokenizer.perl -l en`` without ``-a`` and without punctuation normalisation,
``apply_bpe.py`` with one 60,000-merge code file for all three sizes, a joined
dictionary per size), not those of their training data; the same encoding is used for
every split here, with the maintained Python ports of those tools:

1. the pairs of the size are drawn uniformly without replacement (numpy, seeded;
   ``full`` keeps every pair, in order);
2. Moses tokenisation as ``tokenizer.perl -l <lang>`` (``sacremoses``: XML escaping,
   no aggressive hyphen splitting, no punctuation normalisation);
3. cleaning as ``clean-corpus-n.perl 1 250 -ratio 1.5`` (fairseq's
   ``prepare-wmt14en2de.sh``; the authors' cleaning is not released): a pair with an
   empty side, a side over 250 tokens or a token-length ratio over 1.5 is dropped and
   counted;
4. BPE (``subword-nmt``, ``@@`` continuation marker), 60,000 merges by default, learnt
   jointly on both sides of the **whole** cleaned corpus once and shared by the three
   sizes (:func:`learn_codes`; the authors apply one code file to every size), applied to
   every split;
5. ``raw/{train,valid,test}.{src,tgt}`` (valid = Flores dev, test = Flores devtest)
   for ``fairseq-preprocess --joined-dictionary``; ``text/flores/devtest.{en,nl}`` kept
   as plain text for sacrebleu (:func:`write_references`, with its own manifest);
   ``raw/codec.json`` + ``raw/bpe.codes`` describe the encoding so
   that test inputs are encoded and translations decoded the same way
   (:class:`Codec`).

Flores-101 is read from its release layout: ``dev/eng.dev``, ``dev/nld.dev``,
``devtest/eng.devtest``, ``devtest/nld.devtest`` under the folder given.  The corpus
is streamed (``.gz`` allowed); its two sides must have the same number of lines.
Tokenising and applying BPE run on ``--jobs`` processes (ordered, so the output does
not depend on the number).  A folder whose manifest matches the arguments is reused.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
from collections import Counter
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import aligned_pairs, atomic_open, iter_text, read_lines, write_lines
from compsuite.foundation.manifest import is_complete, write_manifest
from compsuite.models.protocol import Model, ModelBase

GENERATOR = "paradox.opus"
VERSION = "2"      # 2: tokenizer.perl's defaults (no -a, no normalisation); shared BPE codes
CODES_GENERATOR = "paradox.opus.bpe"
#: Moses tokenisation as the authors' ``tokenizer.perl -q -l en`` (binarise_data.sh):
#: tokenizer.perl's defaults, XML escaping on and aggressive hyphen splitting off; no
#: ``normalize-punctuation.perl`` before it
TOKENIZE = {"normalize_punctuation": False, "aggressive_dash_splits": False, "escape": True}
SIZES = {"small": "one million pairs", "medium": "one eighth of the corpus",
         "full": "the whole corpus"}
SMALL_PAIRS = 1_000_000
MEDIUM_FRACTION = 8
FLORES = {"valid": "dev", "test": "devtest"}
CODEC = "codec.json"
PACKAGES = ("compsuite", "sacremoses", "subword-nmt", "numpy")


# ----------------------------------------------------------------------------- encoding
class Codec:
    """The encoding of a prepared folder: Moses normalisation + tokenisation and BPE
    for inputs, BPE removal + Moses detokenisation for outputs (``codec.json``)."""

    def __init__(self, folder: str | Path):
        folder = Path(folder)
        path = folder / CODEC
        if not path.is_file():
            raise DataError(f"{path}: no such file (prepare the folder with "
                            "'compsuite data paradox opus')")
        self.spec = json.loads(path.read_text(encoding="utf-8"))
        self.source, self.target = self.spec["source_lang"], self.spec["target_lang"]
        self._codes = folder / self.spec["bpe_codes"]
        self._tok: dict[str, object] = {}
        self._bpe = None

    @staticmethod
    def write(folder: Path, source: str, target: str, codes: str) -> dict:
        spec = {"tokenizer": "moses", **TOKENIZE,
                "bpe": "subword_nmt", "bpe_codes": codes, "separator": "@@",
                "source_lang": source, "target_lang": target}
        with atomic_open(folder / CODEC) as fh:
            json.dump(spec, fh, indent=2)
            fh.write("\n")
        return spec

    def tokenize(self, line: str, lang: str) -> str:
        """Moses tokenisation with the folder's settings (a folder written before
        version 2 normalised punctuation and split hyphens: its codec says so)."""
        if lang not in self._tok:
            self._tok[lang] = _tokenizers((lang,))[lang]
        return _tokenize(line, self._tok[lang], self.spec)

    def bpe(self, line: str) -> str:
        if self._bpe is None:
            from subword_nmt.apply_bpe import BPE

            with open(self._codes, encoding="utf-8") as fh:
                self._bpe = BPE(fh, separator=self.spec["separator"])
        return self._bpe.process_line(line)

    def encode(self, lines: list[str], lang: str | None = None) -> list[str]:
        """Model inputs for plain sentences (source language by default)."""
        lang = lang or self.source
        return [self.bpe(self.tokenize(x, lang)) for x in lines]

    def decode(self, lines: list[str], lang: str | None = None) -> list[str]:
        """Plain sentences from model outputs (target language by default)."""
        from sacremoses import MosesDetokenizer

        detok = MosesDetokenizer(lang=lang or self.target)
        sep = self.spec["separator"] + " "
        return [detok.detokenize((x + " ").replace(sep, "").split()) for x in lines]


class CodecTranslator(ModelBase):
    """A translator of plain sentences over one that reads and writes the encoded
    form (the model protocol's ``translate``)."""

    capabilities = frozenset({"translate"})

    def __init__(self, inner: Model, codec: Codec):
        self.inner, self.codec = inner, codec
        self.name = f"{inner.name}+moses-bpe"

    def translate(self, sources: list[str]) -> list[str]:
        # the inner translator's batches are this one's (one sentence, one line)
        return self.codec.decode(self.inner.translate(self.codec.encode(list(sources))))

    def close(self) -> None:
        self.inner.close()


# ----------------------------------------------------------------------------- workers
_WORKER: dict = {}


def _tokenizers(langs) -> dict:
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    return {lang: (MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang)) for lang in langs}


def _tokenize(text: str, tools, spec: dict) -> str:
    norm, tok = tools
    if spec.get("normalize_punctuation"):
        text = norm.normalize(text)
    return tok.tokenize(text, aggressive_dash_splits=bool(spec.get("aggressive_dash_splits")),
                        return_str=True, escape=bool(spec.get("escape", True)))


def _init_worker(folder: str | None, langs: tuple[str, str]) -> None:
    _WORKER["tok"] = _tokenizers(langs)
    _WORKER["bpe"] = None
    if folder:
        from subword_nmt.apply_bpe import BPE

        with open(Path(folder) / "bpe.codes", encoding="utf-8") as fh:
            _WORKER["bpe"] = BPE(fh, separator="@@")


def _tokenize_chunk(chunk: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out = []
    for pair in chunk:
        sides = []
        for text, tools in zip(pair, _WORKER["tok"].values()):
            sides.append(_tokenize(text, tools, TOKENIZE))
        out.append(tuple(sides))
    return out


def _bpe_chunk(chunk: list[str]) -> list[str]:
    return [_WORKER["bpe"].process_line(x) for x in chunk]


def _chunks(items, size: int = 2000):
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _mapped(fn, chunks, jobs: int, initargs):
    """``fn`` over ``chunks`` in order, on ``jobs`` processes (1: in this process)."""
    if jobs <= 1:
        _init_worker(*initargs)
        for c in chunks:
            yield fn(c)
        return
    import multiprocessing as mp

    # fork (as torch's DataLoader on Linux): a spawned worker would re-run a user's
    # script that lacks an ``if __name__ == "__main__"`` guard
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(jobs, _init_worker, initargs) as pool:
        yield from pool.imap(fn, chunks)


# ----------------------------------------------------------------------------- preparing
def flores_files(flores: str | Path) -> dict[str, tuple[Path, Path]]:
    """split -> (English, Dutch) files of a Flores-101 release folder."""
    root = Path(flores)
    out = {}
    for split, name in FLORES.items():
        en, nl = root / name / f"eng.{name}", root / name / f"nld.{name}"
        for p in (en, nl):
            if not p.is_file():
                raise DataError(f"{p}: no such file (--flores names the Flores-101 folder "
                                f"holding {name}/eng.{name} and {name}/nld.{name})")
        out[split] = (en, nl)
    return out


def select(n_total: int, size: str, seed: int, small_pairs: int = SMALL_PAIRS,
           medium_fraction: int = MEDIUM_FRACTION):
    """A boolean mask over the corpus's lines: the pairs of ``size`` (None: all)."""
    import numpy as np

    if size == "full":
        return None
    k = small_pairs if size == "small" else n_total // medium_fraction
    if k >= n_total:
        return None
    mask = np.zeros(n_total, dtype=bool)
    mask[np.random.default_rng(seed).choice(n_total, size=k, replace=False)] = True
    return mask


def _clean(en: str, nl: str, max_len: int, ratio: float) -> str | None:
    """Why clean-corpus-n would drop this tokenised pair (None: kept)."""
    a, b = len(en.split()), len(nl.split())
    if a == 0 or b == 0:
        return "empty side"
    if a > max_len or b > max_len:
        return f"side over {max_len} tokens"
    if max(a, b) / min(a, b) > ratio:
        return f"token-length ratio over {ratio}"
    return None


def _cleaned(pairs, jobs: int, max_len: int, ratio: float, dropped: Counter):
    """The tokenised pairs that clean-corpus-n keeps, in order (``dropped`` counts the
    others per reason)."""
    for chunk in _mapped(_tokenize_chunk, _chunks(pairs), jobs, (None, ("en", "nl"))):
        kept = []
        for x, y in chunk:
            why = _clean(x, y, max_len, ratio)
            if why:
                dropped[why] += 1
            else:
                kept.append((x, y))
        yield len(chunk), kept


def learn_codes(en: str | Path, nl: str | Path, out: str | Path, *, merges: int = 60000,
                max_len: int = 250, ratio: float = 1.5, jobs: int = 1, show: bool = True,
                vocab: Counter | None = None) -> dict:
    """``out/bpe.codes``: ``merges`` BPE merges learnt jointly on both sides of the whole
    corpus (tokenised and cleaned as :func:`prepare` does), the one code file every
    size applies (the authors' ``binarise_data.sh`` applies one ``bpe.60000`` to all
    three); reused when its manifest matches.  ``vocab``: the whole corpus's token
    counts when the caller has them (``full`` prepares every pair anyway)."""
    from tqdm import tqdm

    out = Path(out)
    args = {"en": str(Path(en).resolve()), "nl": str(Path(nl).resolve()), "merges": merges,
            "max_len": max_len, "ratio": ratio}
    if is_complete(out, CODES_GENERATOR, args, version=VERSION):
        return json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    dropped: Counter = Counter()
    if vocab is None:
        vocab = Counter()
        bar = tqdm(desc="tokenise the whole OPUS corpus for its BPE codes", unit="pair",
                   disable=not show)
        for n, kept in _cleaned((p[1:] for p in aligned_pairs(en, nl)), jobs, max_len, ratio,
                                dropped):
            for x, y in kept:
                vocab.update(x.split())
                vocab.update(y.split())
            bar.update(n)
        bar.close()
    if not vocab:
        raise DataError(f"{en}: no training pair is left after cleaning ({dict(dropped)})")
    _learn(vocab, merges, out / "bpe.codes", show)
    return write_manifest(out, generator=CODES_GENERATOR, generator_version=VERSION, seed=None,
                          args=args, files=["bpe.codes"],
                          statistics={"token_types": len(vocab)},
                          extra={"encoding": dict(TOKENIZE)}, packages=PACKAGES)


def _learn(vocab: Counter, merges: int, path: Path, show: bool) -> None:
    import contextlib

    from subword_nmt.learn_bpe import learn_bpe

    if show:
        print(f"learning {merges} BPE merges on {len(vocab)} token types", file=sys.stderr,
              flush=True)
    words = io.StringIO("".join(f"{w} {c}\n" for w, c in sorted(vocab.items())))
    quiet = contextlib.nullcontext() if show else contextlib.redirect_stderr(io.StringIO())
    with atomic_open(path) as fh, quiet:      # (its progress bar)
        learn_bpe(words, fh, merges, min_frequency=2, is_dict=True)


def prepare(en: str | Path, nl: str | Path, flores: str | Path, out: str | Path, *,
            size: str = "small", seed: int = 1, merges: int = 60000, max_len: int = 250,
            ratio: float = 1.5, small_pairs: int = SMALL_PAIRS, jobs: int = 1,
            codes: str | Path | None = None, show: bool = True) -> dict:
    """Write the folder described in the module docstring; return its manifest.
    ``codes``: the folder of the whole corpus's BPE codes (:func:`learn_codes`), shared
    by the sizes (default ``out/bpe-codes``)."""
    import shutil

    if size not in SIZES:
        raise DataError(f"unknown size '{size}' ({', '.join(SIZES)})")
    out = Path(out)
    raw = out / "raw"
    codes = Path(codes) if codes is not None else out / "bpe-codes"
    args = {"en": str(Path(en).resolve()), "nl": str(Path(nl).resolve()),
            "flores": str(Path(flores).resolve()), "size": size, "seed": seed,
            "merges": merges, "max_len": max_len, "ratio": ratio, "small_pairs": small_pairs}
    if is_complete(raw, GENERATOR, args, version=VERSION):
        write_references(flores, out / "text")
        return json.loads((raw / "manifest.json").read_text(encoding="utf-8"))
    splits_flores = flores_files(flores)
    for d in (out / "tok", raw):
        d.mkdir(parents=True, exist_ok=True)

    n_total = sum(1 for _ in aligned_pairs(en, nl))
    if n_total == 0:
        raise DataError(f"{en}: file is empty")
    mask = select(n_total, size, seed, small_pairs)
    selected = n_total if mask is None else int(mask.sum())
    dropped: Counter = Counter()
    kept, vocab = _tokenise_selected(en, nl, mask, out / "tok", dropped, total=selected,
                                     size=size, jobs=jobs, max_len=max_len, ratio=ratio,
                                     show=show)
    if kept == 0:
        raise DataError(f"{en}: no training pair is left after cleaning ({dict(dropped)})")

    # one code file for every size, learnt on the whole corpus (whose token counts are
    # the ones just made when this size keeps every pair)
    shared = learn_codes(en, nl, codes, merges=merges, max_len=max_len, ratio=ratio, jobs=jobs,
                         show=show, vocab=vocab if mask is None else None)
    shutil.copyfile(codes / "bpe.codes", raw / "bpe.codes")
    Codec.write(raw, "en", "nl", "bpe.codes")

    counts = {"corpus_pairs": n_total, "selected_pairs": selected, "train": kept}
    codec = _apply_bpe(raw, out / "tok", splits_flores, jobs, counts)
    write_references(flores, out / "text")
    return write_manifest(
        raw, generator=GENERATOR, generator_version=VERSION, seed=seed, args=args,
        files=[f"{s}.{d}" for s in ("train", "valid", "test") for d in ("src", "tgt")]
        + ["bpe.codes", CODEC],
        counts=counts, dropped=dict(dropped),
        statistics={"token_types": len(vocab), "bpe_types_train": _bpe_types(raw),
                    "mean_tokens": {s: _mean_len(out / "tok" / f"train.{s}")
                                    for s in ("en", "nl")}},
        extra={"flores": {s: [str(a), str(b)] for s, (a, b) in splits_flores.items()},
               "encoding": codec.spec,
               "bpe_codes": {"folder": str(codes.resolve()),
                             "learnt_on": "the whole corpus",
                             "sha256": shared["sha256"]["bpe.codes"]}},
        packages=PACKAGES)


def _tokenise_selected(en: str | Path, nl: str | Path, mask, tok: Path, dropped: Counter, *,
                       total: int, size: str, jobs: int, max_len: int, ratio: float,
                       show: bool) -> tuple[int, Counter]:
    """``tok/train.{en,nl}``: the pairs that ``mask`` selects (None: all) tokenised and
    cleaned; return how many were kept and their token counts (``dropped`` counts the
    others per reason)."""
    from tqdm import tqdm

    def chosen():
        for n, x, y in aligned_pairs(en, nl):
            if mask is None or mask[n - 1]:
                yield x, y

    vocab: Counter = Counter()
    kept = 0
    bar = tqdm(total=total, desc=f"tokenise OPUS {size}", unit="pair", disable=not show)
    with atomic_open(tok / "train.en") as fe, atomic_open(tok / "train.nl") as fn:
        for n, pairs in _cleaned(chosen(), jobs, max_len, ratio, dropped):
            for x, y in pairs:
                fe.write(x + "\n")
                fn.write(y + "\n")
                vocab.update(x.split())
                vocab.update(y.split())
                kept += 1
            bar.update(n)
    bar.close()
    return kept, vocab


def _apply_bpe(raw: Path, tok: Path, splits_flores: dict, jobs: int, counts: dict) -> Codec:
    """``raw/train.{src,tgt}`` (the tokenised training pairs with BPE applied) and the
    Flores splits encoded by ``raw``'s codec, their sizes added to ``counts``; return
    the codec."""
    for side, dst in (("en", "src"), ("nl", "tgt")):
        lines = iter_text(tok / f"train.{side}")
        with atomic_open(raw / f"train.{dst}") as fh:
            for chunk in _mapped(_bpe_chunk, _chunks(lines), jobs, (str(raw), ("en", "nl"))):
                fh.writelines(x + "\n" for x in chunk)
    codec = Codec(raw)
    for split, (fen, fnl) in splits_flores.items():
        ens, nls = read_lines(fen), read_lines(fnl)
        if len(ens) != len(nls):
            raise DataError(f"line counts differ: {fen} has {len(ens)}, {fnl} has {len(nls)} lines")
        write_lines(raw / f"{split}.src", codec.encode(ens, "en"))
        write_lines(raw / f"{split}.tgt", codec.encode(nls, "nl"))
        counts[split] = len(ens)
    return codec


def _bpe_types(raw: Path) -> int:
    """Distinct BPE pieces on both sides of ``raw``'s training data."""
    pieces: Counter = Counter()
    for side in ("src", "tgt"):
        for line in iter_text(raw / f"train.{side}"):
            pieces.update(line.split())
    return len(pieces)


def write_references(flores: str | Path, text: Path) -> dict:
    """``text/flores/devtest.{en,nl}``: Flores-101 devtest as plain text (what sacreBLEU
    reads at evaluation), with a manifest; skipped when it matches."""
    args = {"flores": str(Path(flores).resolve())}
    if is_complete(text, GENERATOR + ".references", args, version=VERSION):
        return json.loads((text / "manifest.json").read_text(encoding="utf-8"))
    fen, fnl = flores_files(flores)["test"]
    ens, nls = read_lines(fen), read_lines(fnl)
    if len(ens) != len(nls):
        raise DataError(f"line counts differ: {fen} has {len(ens)}, {fnl} has {len(nls)} lines")
    write_lines(text / "flores" / "devtest.en", ens)
    write_lines(text / "flores" / "devtest.nl", nls)
    return write_manifest(text, generator=GENERATOR + ".references", generator_version=VERSION,
                          seed=None, args=args, files=["flores/devtest.en", "flores/devtest.nl"],
                          counts={"devtest": len(ens)}, extra={"flores": [str(fen), str(fnl)]})


def _mean_len(path: Path) -> float:
    n = t = 0
    for line in iter_text(path):
        n += 1
        t += len(line.split())
    return round(t / max(1, n), 2)


# ----------------------------------------------------------------------------- command
def add_arguments(ap: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import positive_int

    ap.add_argument("--en", required=True, help="the corpus's English side (one sentence a line; .gz ok)")
    ap.add_argument("--nl", required=True, help="its Dutch side, aligned line by line")
    ap.add_argument("--flores", required=True, metavar="DIR",
                    help="the Flores-101 folder (dev/eng.dev, dev/nld.dev, devtest/...)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", choices=list(SIZES), default="small",
                    help="small: 1M pairs; medium: one eighth; full: all (section 3.1)")
    ap.add_argument("--seed", type=int, default=1, help="the pair selection's seed")
    ap.add_argument("--merges", type=positive_int, default=60000, help="BPE merges (60,000)")
    ap.add_argument("--small-pairs", type=positive_int, default=SMALL_PAIRS,
                    help="pairs in the small setup (1,000,000)")
    ap.add_argument("--jobs", type=positive_int, default=1, help="tokenising processes")
    ap.add_argument("--codes", metavar="DIR",
                    help="the folder of the whole corpus's BPE codes, shared by the sizes "
                         "(learnt there once; default OUT/bpe-codes)")


def run(a: argparse.Namespace) -> int:
    m = prepare(a.en, a.nl, a.flores, a.out, size=a.size, seed=a.seed, merges=a.merges,
                small_pairs=a.small_pairs, jobs=a.jobs, codes=a.codes)
    for k, v in m["counts"].items():
        print(f"{k}: {v}", file=sys.stderr)
    for k, v in m["dropped"].items():
        print(f"dropped ({k}): {v}", file=sys.stderr)
    return 0
