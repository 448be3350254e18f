"""A system known only by its answer files: the backend of ``compsuite export`` and
``compsuite score`` (the recording and replaying are compsuite.models.recording)."""
from .backend import BACKEND  # noqa: F401
