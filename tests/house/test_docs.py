"""The docs against the code: options tables, JSON keys, links, the README's length.

- Every command has one options table (a generated block, `make docs`), and its options
  are click's: an option missing from the page and a stale one both fail.
- Every JSON key table (`<!-- json-keys NAME [prefix=P,...] -->` before a Markdown table
  whose first column lists keys in backticks, `[]` for list elements, `.*` for a map whose
  keys are not listed) matches real `--json` output both ways: a key the output has and the
  page lacks fails, and so does a key the page lists and no output has (unless its meaning
  says it appears "only with/when/in ..."). simulate, tps, profiles and measure are run
  here; advise and the lab are compared with the JSON example `make docs` captured from a
  real run, and with the key lists the code has.
- README.md is at most 300 lines, and every relative link in it and in docs/ resolves.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main as cli
from tests.helpers.docs_keys import (
    DOCS,
    ROOT,
    compare_keys,
    doc_blocks,
    documented_keys,
    example_json,
    make_docs,
)

# ---- options ---------------------------------------------------------------------------------

def _table_names(body: str) -> set[str]:
    """The option names of a generated options table (its first column's code spans)."""
    names = set()
    for line in body.splitlines():
        if not line.startswith("| ") or line.startswith("| option ") or line.startswith("|---"):
            continue
        first = re.split(r"(?<!\\)\|", line)[1]
        names |= {n.replace("\\|", "|") for n in re.findall(r"`([^`]+)`", first)}
    return names


def _options_blocks() -> dict[str, list[tuple[Path, str]]]:
    found: dict[str, list[tuple[Path, str]]] = {}
    for path, spec, body in doc_blocks():
        kind, _, words = spec.partition(" ")
        if kind == "options":
            found.setdefault(words.strip(), []).append((path, body))
    return found


def test_every_command_has_one_options_table():
    found = _options_blocks()
    commands = set(make_docs.leaf_commands())
    assert commands - set(found) == set(), "commands without an options table in docs/"
    assert set(found) - commands == set(), "options tables of commands that do not exist"
    twice = {c: [str(p.relative_to(ROOT)) for p, _ in v] for c, v in found.items() if len(v) > 1}
    assert not twice, f"commands with more than one options table: {twice}"


@pytest.mark.parametrize("command", sorted(make_docs.leaf_commands()))
def test_options_table_matches_click(command):
    (path, body), = _options_blocks()[command]
    documented = _table_names(body) - set(make_docs.help_names(command))
    params = make_docs.leaf_commands()[command].params
    code = {n for p in params for n in make_docs.param_names(p)}
    where = path.relative_to(ROOT)
    assert code - documented == set(), f"{where}: options missing from `{command}`'s table"
    assert documented - code == set(), f"{where}: `{command}`'s table has stale options"


def test_cheap_generated_blocks_are_current(capsys):
    """Options tables and call blocks are what `make docs` would write now."""
    rc = make_docs.main(["--check"])
    assert rc == 0, capsys.readouterr().err


def test_trim_keeps_selected_lines_and_marks_cuts():
    text = "a\nb\nc\n\nd\ne\n"
    assert make_docs.trim_text(text, "head 1") == "a\n...\n"
    assert make_docs.trim_text(text, "block ^b; grep ^e") == "...\nb\nc\n...\ne\n"
    obj = {"l": [{"x": 1}, {"x": 1, "y": 2}], "m": {"a": 1, "b": 2, "c": 3, "d": 4}}
    assert make_docs.trim_json(obj, ("m",)) == {
        "l": [{"x": 1, "y": 2}, {"...": "1 more"}], "m": {"a": 1, "b": 2, "c": 3, "...": "..."}}


# ---- JSON keys -------------------------------------------------------------------------------



def run_json(*args: str, env: dict | None = None):
    result = CliRunner().invoke(cli, [*args, "--json"], env=env, catch_exceptions=False)
    assert result.exit_code in (0, 3), result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """A small real measurement (JSON) and the profile it saved."""
    d = tmp_path_factory.mktemp("docs-measure")
    (d / "probe").mkdir()
    env = {"INNOFLUSH_HOME": str(d / "home")}
    out = run_json("measure", str(d / "probe"), "--sizes", "16k", "--ops", "none,fsync",
                   "--direct", "on", "--count", "30", "--warmup", "1", "--file-size", "1M",
                   "--save", "docs-test", env=env)
    profile = run_json("profiles", "show", "docs-test", env=env)
    return out, profile


def test_measure_keys(measured):
    compare_keys("measure", measured[0], example_json("measure-json"))


def test_profile_file_keys(measured):
    from innoflush.profiles.model import TOP_KEYS
    builtin = Path(importlib.util.find_spec("innoflush.profiles").origin).parent / "builtin"
    files = [json.loads(p.read_text()) for p in sorted(builtin.glob("*.json"))]
    compare_keys("profile", measured[1], *files, example_json("profiles-show-json"))
    top = {k for k in documented_keys()["profile"].keys if "." not in k and "[" not in k}
    assert top == TOP_KEYS


def test_profiles_list_and_compare_keys():
    compare_keys("profiles-list", run_json("profiles", "list"),
                 example_json("profiles-list-json"))
    compare_keys("profiles-compare", run_json("profiles", "compare", "samsung-990-pro",
                                              "samsung-pm9a3", "hdd-wd2502abys"),
                 example_json("profiles-compare-json"))


def test_simulate_keys():
    from innoflush.simulator import ServerConfig, Workload
    from innoflush.simulator.request import ROW_KEYS
    out = run_json("simulate", "--profile", "samsung-990-pro", "--connections", "1",
                   "--duration", "1")
    compare_keys("simulate", out, example_json("simulate-json"))
    doc = documented_keys()["simulate"].keys
    for prefix, cls in (("workload", Workload), ("rows[].runs[].config", ServerConfig)):
        listed = {k[len(prefix) + 1:] for k in doc if k.startswith(prefix + ".")}
        assert listed == {f.name for f in dataclasses.fields(cls)}, prefix
    assert set(ROW_KEYS) <= {k[len("rows[]."):] for k in doc if k.startswith("rows[].")}


def test_tps_keys_without_the_check():
    out = run_json("tps", "--profile", "hdd-wd2502abys", "--target-tps", "200", "--no-check")
    compare_keys("tps", out, example_json("tps-json"))


@pytest.mark.slow
def test_tps_keys_with_the_check():
    compare_keys("tps", run_json("tps", "--profile", "hdd-wd2502abys", "--target-tps", "200"))


def test_advise_keys():
    from innoflush.simulator import ServerConfig, Workload
    out = example_json("advise-json")
    compare_keys("advise", out)
    assert set(out["fit"]["config"]) == {f.name for f in dataclasses.fields(ServerConfig)}
    assert set(out["fit"]["workload"]) <= {f.name for f in dataclasses.fields(Workload)}


@pytest.mark.parametrize("name", ["lab-run", "lab-calibrate", "lab-validate"])
def test_lab_keys(name):
    compare_keys(name, example_json(f"{name}-json"))


def test_lab_validate_changes_keys():
    """lab validate --workload-cmd: a report built by its own code from synthetic runs
    (its real runs take minutes)."""
    from tests.helpers.lab_reports import replicated_report, synthetic_report
    compare_keys("lab-validate-changes", synthetic_report(), replicated_report())


def test_lab_compared_figures():
    from innoflush.lab.reports.report import FIGURES
    doc = documented_keys()
    for side in ("measured", "predicted"):
        for fig, _label in FIGURES:
            assert f"runs[].{side}.{fig}" in doc["lab-run"].keys
            assert f"devices[].cells[].{side}.{fig}" in doc["lab-validate"].keys


def test_every_key_table_is_checked():
    names = {"measure", "profile", "profiles-list", "profiles-compare", "simulate", "tps",
             "advise", "lab-run", "lab-calibrate", "lab-validate", "lab-validate-changes"}
    assert set(documented_keys()) == names


# ---- the README and the links ----------------------------------------------------------------

def test_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= 300, f"README.md has {lines} lines; reference belongs in docs/"


def test_validation_page_is_the_current_state():
    """docs/validation.md says where the model stands; how it got there is the notebook's
    (docs/validation/notebook/, an index newest first)."""
    lines = (ROOT / "docs" / "validation.md").read_text().count("\n")
    assert lines <= 250, f"docs/validation.md has {lines} lines; investigations go to the notebook"
    index = (ROOT / "docs" / "validation" / "notebook" / "README.md").read_text()
    dated = sorted((p.name for p in (ROOT / "docs" / "validation" / "notebook").glob("20*.md")),
                   reverse=True)
    assert dated and all(name in index for name in dated)
    listed = [n[:10] for n in re.findall(r"\((20[^)]+\.md)\)", index)]
    assert listed == sorted(listed, reverse=True), "the index is newest first"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _prose(path.read_text()).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            s = _slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def _prose(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in LINK_RE.findall(re.sub(r"`[^`\n]*`", "", _prose(page.read_text()))):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"
