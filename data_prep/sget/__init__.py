"""SGET (Kumon, Matsuoka and Yanaka 2024): the English grammar (:mod:`.grammar`), the
English-Japanese lexicon (:mod:`.lexicon`), the selectional restrictions
(:mod:`.selection`), the rule-based translator that builds the Japanese side of the
data (:mod:`.translate`), the 42 generalisation patterns (:mod:`.patterns`), the
sentence generator (:mod:`.sampler`, :mod:`.builders`, :mod:`.generate`), the Sudachi +
sentencepiece preprocessing (:mod:`.preprocess`) and the datasets the study trains on
(:mod:`.dataset`: ``text/``, ``encoded/``, ``raw/``); see ``doc.md``."""
