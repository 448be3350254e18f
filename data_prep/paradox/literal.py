"""Whether a Dutch translation of an idiom is literal: it holds one of the idiom's
keywords (Dankers et al. 2022, section 4.3: the translation overgeneralises), and the
word tokens that is read on.  Shared by the test-set build (natural idiom sentences
whose reference is itself literal are left out, by the authors' substring rule:
``testsets.py``) and the overgeneralisation metric (``eval/paradox/metrics.py``)."""
from __future__ import annotations

import re
from typing import Iterable

_PUNCT = re.compile(r"([.,!?;:\"“”„()])")
#: how a keyword is matched: as a whole word (ours) or anywhere in the text (the authors')
MATCHES = ("word", "substring")


def words(text: str) -> list[str]:
    """Whitespace tokens, punctuation split off."""
    return _PUNCT.sub(r" \1 ", text).split()


def overgeneralised(translation: str, keywords: Iterable[str], match: str = "word") -> bool:
    """Whether the translation holds a literal keyword: a whole word (``match="word"``,
    ours) or anywhere inside the text (``"substring"``, the authors')."""
    if match not in MATCHES:
        raise ValueError(f"match: one of {', '.join(MATCHES)}, not {match!r}")
    kws = [k.lower() for k in keywords if k.strip()]
    if match == "substring":
        low = translation.lower()
        return any(k in low for k in kws)
    ws = [w.lower() for w in words(translation)]
    joined = " " + " ".join(ws) + " "
    return any(f" {' '.join(k.split())} " in joined for k in kws)
