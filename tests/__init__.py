"""innoflush's tests: one folder per package, helpers/ shared."""
