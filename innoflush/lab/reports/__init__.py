"""The lab's reports: text tables, JSON and the Markdown validation reports."""
