"""Device probe: write/sync latency distributions and device facts.

Library entry points: ``measure(path, ...) -> MeasureResult`` (``.to_dict()`` is the
``--json`` document, ``.to_profile(name)`` a DeviceProfile), ``measure_profile(path,
name, ...) -> DeviceProfile``, ``gather_facts(path)`` and ``plp_verdict(facts, ...)``.
"""

from .facts import gather_facts
from .plp import plp_verdict
from .result import MeasureResult, TestResult, TestSpec
from .run import measure, measure_profile, plan_tests, quick_tests

__all__ = ["MeasureResult", "TestResult", "TestSpec", "gather_facts", "measure",
           "measure_profile", "plan_tests", "plp_verdict", "quick_tests"]
