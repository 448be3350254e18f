"""PCFG SET (Hupkes, Dankers, Mul and Bruni 2020): the study's evaluations.

* :mod:`.evaluations`: the evaluations its YAML's tests name (registered with
  ``@evaluation``), the task accuracy and the input-structure breakdown;
* :mod:`.localism`, :mod:`.overgeneralisation`: the two tests with the model in the
  loop that need more than one translation pass;
* :mod:`.released`: readers and a scorer for the authors' released prediction files;
* :mod:`.report`: the study's report (``build_report``), :mod:`.plots` its own figure;
* ``paper_numbers.yaml``: the paper's published numbers.
"""
