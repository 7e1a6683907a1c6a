"""Charts and self-contained HTML pages of the commands' results (--html FILE, --png DIR).

Each chart function takes a command's result as its JSON form (what --json prints: one
source of figures) and returns a matplotlib Figure; page.py lays the charts out as
inline SVG in one page, output.py writes the page and the PNGs. matplotlib is imported
only when a page or PNG is asked for: the commands' options and checks live in
output.py, which does not import it.
"""
