"""Pages in the status counters: how many a workload dirties for the first time, how many
come back to the flush list after their write, and how many go through the doublewrite
buffer — what the simulator's pages_dirtied_per_trx, hot_page_share and
dblwr_page_share are, read from a run's deltas (the lab's runs and the advisor's window
alike)."""

from __future__ import annotations


def page_counts(deltas: dict) -> tuple[int | None, int | None, int]:
    """(pages created, pages flushed, pages doublewritten) of a run's status deltas: what
    page_reentry splits (flushed: Innodb_buffer_pool_pages_flushed, else pages written)."""
    return (deltas.get("Innodb_pages_created"),
            deltas.get("Innodb_buffer_pool_pages_flushed", deltas.get("Innodb_pages_written")),
            deltas.get("Innodb_dblwr_pages_written", 0))


def page_reentry(commits: int, created: int | None, flushed: int | None,
                 dirty_growth: int | None, dblwr_pages: int) -> dict | None:
    """Which pages come back to the flush list after their write, from a run's counters.

    The E pages a run added to the flush list (flushed F + dirty growth) are first
    entries — the pages it created (Innodb_pages_created), or where more, the dirty growth
    (clean pages changed for the first time: an update workload) — and re-entries R:
    pages changed again after a write. Of the pages flushed, the rewrites Rw went through
    the doublewrite buffer — where some pages bypass it (MariaDB: re-initialised ones,
    first writes of new pages), Rw = min(doublewritten, R) — and the rest were first
    writes. Then ``pages_dirtied_per_trx`` = first entries / commits,
    ``hot_page_share`` = (R − Rw) / (F − Rw), the first writes' pages that came back,
    and ``dblwr_page_share`` = (doublewritten − Rw) / (F − Rw) of first writes. None
    when a count is missing or fewer than 100 pages were flushed."""
    if created is None or flushed is None or dirty_growth is None or flushed < 100 \
            or commits <= 0:
        return None
    entries = max(0, flushed + dirty_growth)
    first_entries = min(entries, max(created, dirty_growth))
    reentries = entries - first_entries
    rewrites = min(dblwr_pages, reentries) if dblwr_pages < flushed else 0
    first = flushed - rewrites
    hot = round(min(1.0, max(0.0, (reentries - rewrites) / first)), 4)
    share = round(min(1.0, max(0.0, (dblwr_pages - rewrites) / first)), 4)
    pages = round(first_entries / commits, 4)
    return {"pages_dirtied_per_trx": pages, "hot_page_share": hot, "dblwr_page_share": share,
            "lines": [
                f"pages_dirtied_per_trx = {pages:.4g} (first entries {first_entries:,} / "
                f"commits: of the {entries:,} pages added to the flush list (flushed "
                f"{flushed:,} + dirty growth {dirty_growth:,}), the larger of "
                f"Innodb_pages_created {created:,} and the dirty growth)",
                f"hot_page_share = {hot:.3g} ({reentries:,} pages re-entered the flush list "
                f"after a write; {rewrites:,} of the flushed were rewrites (doublewritten), "
                f"{first:,} first writes: (re-entered − rewrites) / first writes)",
                f"dblwr_page_share = {share:.3g} (Innodb_dblwr_pages_written {dblwr_pages:,} "
                "less the rewrites, / first writes"
                + (": the rest went straight to their files)" if share < 1 else ")")]}


def new_page_dblwr_share(new_pages_per_trx: float, dirtied_per_trx: float) -> dict | None:
    """dblwr_page_share where a window flushed too few pages to count it (page_reentry
    None), for a server that writes the pages it created straight to their files
    (MariaDB: a re-initialised page's redo rebuilds it): the share of the pages first
    dirtied that are not the new pages its tablespaces grow by (a workload whose deletes
    free as much as it inserts takes its new pages from its own free space, and its
    first entries are mostly existing pages). {"dblwr_page_share", "line"}; None
    without the figures."""
    if dirtied_per_trx <= 0 or new_pages_per_trx < 0:
        return None
    share = round(min(1.0, max(0.0, 1.0 - new_pages_per_trx / dirtied_per_trx)), 4)
    return {"dblwr_page_share": share,
            "line": f"dblwr_page_share = {share:.3g} (estimated, too few pages flushed to "
                    f"count: of the {dirtied_per_trx:.4g} pages a commit dirties first, "
                    f"the {new_pages_per_trx:.4g} its tablespaces grow by are new pages "
                    "written straight to their files, the rest go through the doublewrite "
                    "buffer)"}
