"""CTL++ (Csordás, Irie and Schmidhuber 2022): the study's evaluations.

* :mod:`.analyses`: IID/OOD accuracy by length, the compatibility matrix and the
  representation similarities, through the classifier protocol;
* :mod:`.report`: the study's report (``build_report``), :mod:`.plots` its own figure;
* ``paper_numbers.yaml``: the paper's published numbers.
"""
