"""`innoflush advise --inventory`: a fleet of servers advised concurrently."""
