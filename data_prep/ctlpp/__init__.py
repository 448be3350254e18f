"""CTL++ (Csordás, Irie and Schmidhuber 2022): compositions of bijective symbol
functions, variants A, R and S."""
from .generate import GENERATOR, CTLConfig, generate  # noqa: F401
