"""NLI compositionality-sensitivity (Nie, Wang and Bansal 2019): readers, adversaries."""
