"""The load on a lab server: the lab's own client processes and workloads, or the user's
load generator (--workload-cmd)."""
