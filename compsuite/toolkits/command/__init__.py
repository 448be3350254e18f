"""A program of the user's behind the command protocol (docs/command_protocol.md): the
backend of its evaluate-only runs and the protocol's client (model.py)."""
from .backend import BACKEND  # noqa: F401
