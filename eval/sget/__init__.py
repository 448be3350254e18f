"""SGET's evaluation (Kumon, Matsuoka and Yanaka 2024): what the study scores and how
its report is built.

* :mod:`.metrics`: exact match, BLEU, the breakdowns and :func:`~.metrics.score_set`
  (everything the tables need from one set of translations);
* :mod:`.partial`: the GiNZA partial match (appendix D);
* :mod:`.selection`: checkpoint selection by development exact match (section 4.1.1);
* :mod:`.scoring`: one split of a trained model's translations, and a folder of any
  system's translations (``compsuite eval sget score``), scored;
* :mod:`.report`: the report beside the paper's Tables 2, 3, 5, 6, 7, 10 and 11;
* ``paper_numbers.yaml``: the paper's published numbers.
"""
