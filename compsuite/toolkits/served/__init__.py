"""A language model behind an OpenAI-compatible server, prompted (docs/served_models.md):
the backend of its evaluate-only runs (backend.py), the model in the loop (model.py),
its HTTP client with retries (client.py) and its request cache and usage record
(cache.py)."""
from .backend import BACKEND  # noqa: F401
