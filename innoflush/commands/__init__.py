"""The command layer: every click command of `innoflush`, one module per command group.

Each command parses its options, calls the library (simulator, measure, profiles, live,
advisor, fleet, lab) and renders the result through ``innoflush.output``. Nothing below
this package imports it (tests/house/test_import_graph.py checks the order of the packages)."""
