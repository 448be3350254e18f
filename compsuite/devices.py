"""Which device the suite's models run on: the toolkit backends train on a GPU when one
is there, and the Hugging Face translator and classifier decode on it."""
from __future__ import annotations


def cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch is a dependency
        return False
