"""Devices as the advisor's rules see them: a volatile cache, power-loss protection, no verdict."""

from __future__ import annotations

from innoflush.advisor.rules import DeviceFacts

VOLATILE = DeviceFacts(name="consumer", title="Consumer NVMe", source="profile",
                       klass="consumer NVMe", plp="no", verdict="volatile-cache",
                       o_direct_no_fsync_safe=False, reasons=["fsync 2.9 ms"],
                       filesystem="ext4", fsync_ns=2.9e6, fdatasync_ns=2.8e6,
                       fsync_exact=True, fdatasync_exact=True)



PLP = DeviceFacts(name="plp", title="Enterprise NVMe", source="profile",
                  klass="enterprise NVMe", plp="yes",
                  verdict="non-volatile-cache-or-flush-ignored", o_direct_no_fsync_safe=True,
                  reasons=["fsync 40 µs"], filesystem="xfs", fsync_ns=40e3,
                  fdatasync_ns=25e3, fsync_exact=True, fdatasync_exact=True)



NO_VERDICT = DeviceFacts(name="cloud", title="Cloud disk", source="profile",
                         klass="cloud block storage", plp="unknown", verdict="unknown",
                         o_direct_no_fsync_safe=None, filesystem="ext4", fsync_ns=800e3,
                         fdatasync_ns=60e3, fsync_exact=True, fdatasync_exact=True)

