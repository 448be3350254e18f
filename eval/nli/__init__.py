"""NLI compositionality-sensitivity (Nie, Wang and Bansal 2019): the scores over label
strings (:mod:`.scores`), the lexical classifier with LMS and CS_λ (:mod:`.lexical`), a
model in the loop of the evaluation sets (:mod:`.predict`), the report (:mod:`.report`)
and the paper's numbers (``paper_numbers.yaml``)."""
