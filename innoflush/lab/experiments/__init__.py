"""What the lab does with servers and load: lab run, calibrate and validate (and the change
validation of --workload-cmd), their options, predictions and judging."""
