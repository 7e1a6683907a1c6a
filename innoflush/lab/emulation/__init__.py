"""Device emulation: a real server's sync calls delayed to a device profile's distribution
(csrc/: the LD_PRELOAD library)."""
