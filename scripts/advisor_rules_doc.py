#!/usr/bin/env python3
"""Write docs/advisor-rules.md from the advisor's rule table (innoflush/advisor/rules/).

    scripts/advisor_rules_doc.py            write the page
    scripts/advisor_rules_doc.py --check    exit 1 (one line) when the page is stale

tests/advisor/test_advisor_rules_doc.py checks that the committed page is what this produces.
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from innoflush.advisor.rules.doc import DOC_PATH, main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(default_path=REPO / DOC_PATH))
