"""simpy model of InnoDB I/O."""
