"""compsuite: compositional-generalisation evaluations of your own models: trained with
fairseq, OpenNMT-py or Hugging Face, a program of yours, or answer files.

Kept import-free: the environment's startup hook imports ``compsuite._startup_hook``
in every interpreter of the environment, so this package must cost nothing to import.
"""
__version__ = "0.2.0"
