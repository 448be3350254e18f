"""Class dictionaries of the classification tasks.

``fairseq-preprocess`` pads every dictionary it builds to a multiple of
``--padding-factor`` (8 by default) by appending filler symbols ``madeupword0000``,
``madeupword0001``, ...  In a dictionary of classes those are not classes: a model must
not get an output for them, nor a prediction name one.  Fillers only ever follow the
real symbols, so dropping them leaves every real class at its index.
"""

import re

#: the filler symbols fairseq-preprocess appends to reach ``--padding-factor``
FILLER = re.compile(r"madeupword\d{4}")


def class_names(labels) -> list:
    """The class names of a fairseq ``Dictionary``: its symbols after the special ones,
    without filler symbols (which must all come last)."""
    names = [labels[i] for i in range(labels.nspecial, len(labels))]
    real = [n for n in names if not FILLER.fullmatch(n)]
    if names[:len(real)] != real:
        raise ValueError("a class dictionary has a filler symbol (madeupwordNNNN) before a "
                         "real class: " + " ".join(names))
    return real


def trim_filler_outputs(state_dict, prefix: str, num_classes: int) -> None:
    """An output layer ``<prefix>.weight``/``.bias`` saved with rows for filler classes
    (models trained before the fillers were dropped) cut to ``num_classes`` rows, in
    place, so that such checkpoints load; the rows cut were never a target."""
    for key in (f"{prefix}.weight", f"{prefix}.bias"):
        t = state_dict.get(key)
        if t is not None and t.shape[0] > num_classes:
            state_dict[key] = t[:num_classes].clone()
