"""The paradox of compositionality (Dankers, Bruni and Hupkes 2022): the synthetic
templates' lexicon (:mod:`.lexicon`), the ten templates with their rule-based Dutch and a
parser for them (:mod:`.templates`), the generator (:mod:`.generate`), the translator
(:mod:`.translate`), the item tables (:mod:`.items`), the test sets (:mod:`.testsets`),
the quick profile's corpus (:mod:`.corpus`), natural data (:mod:`.natural`), the OPUS
pipeline (:mod:`.opus`) and the data folders the study's runner asks for
(:mod:`.dataset`)."""
