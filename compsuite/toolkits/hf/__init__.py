"""The hf backend: everything of this toolkit in one place."""
from .backend import BACKEND  # noqa: F401
