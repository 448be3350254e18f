"""A memoising decorator whose cache is per thread.

Some cached objects must not be shared between threads: a SudachiPy tokenizer (and the
GiNZA pipeline, whose tokenizer is one) is a Rust object that raises ``RuntimeError:
Already borrowed`` when two threads tokenize with it at once, which the runner's parallel
executor (``--jobs``) does when two units score at the same time.  ``per_thread`` keeps
one cache per thread, so each worker thread builds its own object once and reuses it.
"""
from __future__ import annotations

import functools
import threading


def per_thread(fn):
    """``functools.cache`` with one cache per thread (positional, hashable arguments)."""
    local = threading.local()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        cache = getattr(local, "cache", None)
        if cache is None:
            cache = local.cache = {}
        key = (args, tuple(sorted(kwargs.items())))
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = fn(*args, **kwargs)
            return value

    def cache_clear():
        local.__dict__.pop("cache", None)

    wrapper.cache_clear = cache_clear
    return wrapper
