"""The paradox of compositionality (Dankers, Bruni and Hupkes 2022): the consistency and
overgeneralisation metrics (:mod:`.metrics`), a model in the loop of the tests
(:mod:`.evaluate`), the report (:mod:`.report`, its figures in :mod:`.plots`) and the
paper's numbers (``paper_numbers.yaml``)."""
