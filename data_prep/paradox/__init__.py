"""The paradox of compositionality (Dankers, Bruni and Hupkes 2022): the synthetic
templates' lexicon (:mod:`.lexicon`), the ten templates with their rule-based Dutch and a
parser for them (:mod:`.templates`), the generator (:mod:`.generate`) and the translator
(:mod:`.translate`)."""
