"""Optimizers of the plugins (imported by ``fairseq_plugins/__init__.py``: fairseq itself
imports only a user dir's ``tasks/`` and ``models/``)."""
