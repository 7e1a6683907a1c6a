"""What several test modules share: devices, processes, reports, servers."""
