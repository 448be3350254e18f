"""Several ``fairseq-preprocess`` calls in one process: ``python -m
compsuite.toolkits.fairseq.preprocess_many CALLS.json``, where the file holds a
list of argument lists (what would follow ``fairseq-preprocess`` on a command line).

Each call is fairseq's own preprocessing (``fairseq_cli.preprocess``: its parser and its
``main``), run in order; only the interpreter start and the imports of fairseq and torch
(seconds each) are shared, which is most of a small call's time.  Output goes to stdout
and stderr as the console script's would, one ``== fairseq-preprocess ARGS`` line before
each call; the first call that fails ends the process with its exit status.
"""
from __future__ import annotations

import json
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m compsuite.toolkits.fairseq.preprocess_many "
              "CALLS.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        calls = json.load(fh)
    from fairseq import options
    from fairseq_cli import preprocess  # sets up fairseq's console logging, as the script

    for call in calls:
        print("== fairseq-preprocess " + " ".join(call), flush=True)
        before = list(preprocess.logger.handlers)
        try:
            preprocess.main(options.get_preprocessing_parser().parse_args(call))
        except SystemExit as e:          # argparse's errors
            return int(e.code or 1)
        finally:
            for h in preprocess.logger.handlers[len(before):]:   # main() adds a file log
                preprocess.logger.removeHandler(h)
                h.close()
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
