"""Device probe: write/sync latency distributions and device facts."""
