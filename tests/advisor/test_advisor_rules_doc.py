"""docs/advisor-rules.md is generated from the rule table: the committed page must be
exactly what the generator writes (scripts/advisor_rules_doc.py), so it cannot drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from innoflush.advisor.rules import RULES
from innoflush.advisor.rules.doc import DOC_PATH, main, render_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_committed_page_is_the_generated_one():
    committed = (ROOT / DOC_PATH).read_text(encoding="utf-8")
    assert committed == render_markdown(), (
        f"{DOC_PATH} is stale: run scripts/advisor_rules_doc.py")


def test_page_has_a_section_per_rule():
    page = render_markdown()
    for rule in RULES:
        section = page.split(f"### `{rule.id}`\n", 1)[1].split("\n### ", 1)[0]
        for label, text in (("Severity", rule.severity), ("Setting", rule.setting),
                            ("Fires when", rule.summary), ("Recommends", rule.recommends),
                            ("Risk", rule.risk), ("Source", rule.source)):
            assert f"- **{label}:** {text}\n" in section, (rule.id, label)


def test_check_mode(tmp_path, capsys):
    page = tmp_path / "rules.md"
    assert main(["--check", str(page)]) == 1                    # missing
    assert main([str(page)]) == 0 and page.read_text() == render_markdown()
    assert main(["--check", str(page)]) == 0
    page.write_text(render_markdown().replace("data-safety", "data safety", 1))
    capsys.readouterr()
    assert main(["--check", str(page)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "scripts/advisor_rules_doc.py" in out[0]


def test_script_checks_the_committed_page():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "advisor_rules_doc.py"),
                        "--check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
