"""The foundation: what every layer of the suite stands on, importing nothing of the suite.

* :mod:`.errors`: the user-facing errors (:class:`~.errors.UserError` and its kinds);
* :mod:`.io`: atomic writers and checked readers;
* :mod:`.manifest`: the ``manifest.json`` written beside every dataset;
* :mod:`.dataset`: :class:`~.dataset.Dataset`, a dataset's folders as every layer
  passes them on.

data_prep, eval, the toolkit backends, the studies and the command line all import from
here; nothing here imports them (``tests/test_imports.py``).  docs/architecture.md says
why the layer is called the foundation.
"""
