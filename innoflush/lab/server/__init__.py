"""The servers the lab runs: the backend protocol, local binaries (and a Debian root in a
chroot), Docker, the options a server is started with, and a server made for a planned
run."""
