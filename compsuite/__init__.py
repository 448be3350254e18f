"""compsuite: compositional-generalisation evaluations for fairseq and OpenNMT-py.

Kept import-free: the environment's startup hook imports ``compsuite._startup_hook``
in every interpreter of the environment, so this package must cost nothing to import.
"""
__version__ = "0.2.0"
