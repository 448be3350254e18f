"""The studies, one module each; see :mod:`compsuite.studies.base` for the interface
and ``docs/adding_a_study.md`` for how to add one."""
