"""A live server, read-only: connecting (connect), what it is (facts) and what it does
over an interval (sampling). The advisor and the lab both stand on this layer."""
