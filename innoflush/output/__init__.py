"""Output adapters: charts and HTML pages (``charts``), Prometheus text files (``prom``).

They take the result documents the library returns (a measure result, an advise report,
a lab report, a simulated sweep) and write them in a format; the commands call them, no
domain package does."""
