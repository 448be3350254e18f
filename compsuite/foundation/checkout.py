"""Where the checkout is: the folder that holds compsuite/, fairseq_plugins/ (fairseq's
``--user-dir``) and onmt_configs/ (the suite is installed editable, setup.py)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
