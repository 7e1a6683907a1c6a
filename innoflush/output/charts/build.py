"""The page of each command, from its JSON form (and its text report)."""

from __future__ import annotations

from collections.abc import Callable

from . import advise_charts, check_charts, lab_charts, measure_charts, sim_charts
from .page import Page

BUILDERS: dict[str, Callable[[dict, str | None], Page]] = {
    "measure": measure_charts.measure_page,
    "profiles compare": measure_charts.compare_page,
    "simulate": sim_charts.simulate_page,
    "tps": sim_charts.tps_page,
    "advise": advise_charts.advise_page,
    "advise check": check_charts.check_page,
    "lab run": lab_charts.run_page,
    "lab validate": lab_charts.validate_page,
}


def build_page(kind: str, data: dict, text: str | None = None) -> Page:
    return BUILDERS[kind](data, text)
