"""What `innoflush advise` is asked, as one object: built once by the command and used
as it is live, on a capture (``--from``) and for every host of an inventory.

    from innoflush.advisor.request import AdviseRequest
    from innoflush.advisor.advise import advise_capture
    from innoflush.live.capture import read_capture
    report = advise_capture(read_capture("db1-capture/"), AdviseRequest(profile=...))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError
from ..live.sampling import check_sampling
from ..profiles import load_profile
from ..simulator.request import MAX_CONNECTIONS
from .rules import check_rule_ids

DURABILITY = ("strict", "relaxed")


@dataclass
class AdviseRequest:
    """interval_s, samples: the sampling of a live server (a capture brings its own).
    profile: the device (a DeviceProfile; with ``measure`` it is probed in the datadir
    instead); without either, nothing is predicted. profile_ref: a saved profile's name or
    path, loaded into profile by load_device() once check() has passed (a command's usage
    errors come before a profile that fails to load). durability: "strict" keeps every
    committed transaction through a power loss, "relaxed" accepts losing about a second.
    connections, cpu_cores: what the sampling cannot see (a capture), or a value over
    it. workload_profile (a WorkloadProfile): predict with its per-transaction costs
    instead of the measured ones. ignore_rules: rule ids whose findings are left out.
    predict: False skips the simulated predictions. seed: the simulations'."""

    interval_s: float = 10.0
    samples: int = 1
    profile: Any = None
    profile_ref: str | None = None
    measure: bool = False
    durability: str = "strict"
    connections: int | None = None
    cpu_cores: int | None = None
    workload_profile: Any = None
    ignore_rules: list[str] = field(default_factory=list)
    predict: bool = True
    seed: int = 1

    def check(self) -> AdviseRequest:
        """Refuse what cannot be asked, before any server is read (the usage errors of
        the command, exit 2); the rule ids each once."""
        check_sampling(self.interval_s, self.samples)
        if self.connections is not None and not 1 <= self.connections <= MAX_CONNECTIONS:
            raise OptionError(f"--connections must be at least 1 and at most "
                              f"{MAX_CONNECTIONS} (the simulator's; got {self.connections})")
        if self.cpu_cores is not None and self.cpu_cores < 1:
            raise OptionError("--cpu-cores must be at least 1")
        if (self.profile is not None or self.profile_ref) and self.measure:
            raise OptionError("give --profile or --measure, not both")
        if self.durability not in DURABILITY:
            raise OptionError(f"--durability {self.durability!r}: one of "
                              f"{', '.join(DURABILITY)}")
        self.ignore_rules = check_rule_ids(self.ignore_rules)
        return self

    @property
    def predicts(self) -> bool:
        """Whether a prediction is wanted: a device given or measured, and predict on."""
        return (self.profile is not None or bool(self.profile_ref) or self.measure) \
            and self.predict

    def load_device(self) -> AdviseRequest:
        """Load profile_ref into profile (a clear error, exit 2, when it does not load)."""
        if self.profile_ref:
            self.profile = load_profile(self.profile_ref)
        return self
