"""Models in the loop: one protocol for every model, whatever serves it."""
