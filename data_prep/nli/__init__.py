"""NLI compositionality-sensitivity (Nie, Wang and Bansal 2019): the SNLI / MultiNLI
reader (:mod:`.snli`), the adversaries (:mod:`.adversaries`), the synthetic corpus
(:mod:`.synthetic`), the dataset builder (:mod:`.corpus`) and the datasets the study's
runner asks for (:mod:`.dataset`)."""
