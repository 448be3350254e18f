"""What a prompted model's backend records of what asking it cost, shared by the
backends of prompted models: ``usage.json`` in a unit's run folder,
which :meth:`compsuite.toolkits.base.Backend.usage` hands to the runner for the unit's
result."""
from __future__ import annotations

import json
from pathlib import Path

from compsuite.foundation.errors import DataError

#: the usage record's file in a run folder
USAGE_FILE = "usage.json"


def read_usage(folder: Path) -> dict | None:
    """``folder``'s usage record (:data:`USAGE_FILE`), or None where there is none; an
    unreadable one is a DataError naming it."""
    path = Path(folder) / USAGE_FILE
    if not path.is_file():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise DataError(f"{path}: unreadable ({e}); delete it (only the usage record is "
                        "lost)") from None
    return found if isinstance(found, dict) else None
