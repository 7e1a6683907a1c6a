"""The buffer pool's dirty pages (the flush list, the pages being written) and the
tablespace files they are written to (fil_system's unflushed spaces, their growth)."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from .carry import Carry
from .config import ServerConfig, Workload
from .events import SimGen
from .flavors import PAGE_BYTES

if TYPE_CHECKING:
    from .server import Server


class FlushList:
    """Dirty pages in oldest-modification order, as [lsn, pages, hot, rewrites] chunks.

    Of a chunk's pages, `hot` are pages the workload goes on modifying (after a write
    one is dirtied again by the next commits: Workload.hot_page_share), and `rewrites`
    (a part of the hot ones) were written before: MariaDB writes a page re-initialised
    since its last write — a page first dirtied as a new page — straight to its file,
    a rewrite through the doublewrite buffer."""

    __slots__ = ("chunks", "pages")

    def __init__(self) -> None:
        self.chunks: deque[list[int]] = deque()
        self.pages = 0

    def add(self, lsn: int, pages: int, hot: int = 0, rewrites: int = 0) -> None:
        if self.chunks and self.chunks[-1][0] == lsn:
            c = self.chunks[-1]
            c[1] += pages
            c[2] += hot
            c[3] += rewrites
        else:
            self.chunks.append([lsn, pages, hot, rewrites])
        self.pages += pages

    def oldest_lsn(self) -> int | None:
        return self.chunks[0][0] if self.chunks else None

    def take(self, n: int, slots: float | None = None,
             first_share: float = 1.0) -> tuple[int, int, int]:
        """Remove up to n of the oldest pages, and no more than fill `slots` doublewrite
        slots (a rewrite takes one, a first write `first_share`; None: no limit).
        Returns (pages, hot, rewrites); within a chunk (one LSN) rewrites go first, then
        the hot pages' first writes."""
        taken = hot_taken = rew_taken = 0
        left = float(1 << 62) if slots is None else slots
        chunks = self.chunks
        # (min() spelt out: this loop runs once per chunk, a page or a few each)
        while chunks and taken < n and left >= 1:
            c = chunks[0]
            if not c[2]:
                # no hot pages, so no rewrites (a part of them): first writes only, the
                # general case below with r = h = 0 (most chunks of most workloads)
                f = c[1]
                if n - taken < f:
                    f = n - taken
                if first_share > 0:
                    fits = int(left / first_share)
                    if fits < f:
                        f = fits
                left -= f * first_share
                taken += f
                if f == c[1]:
                    chunks.popleft()
                    continue
                c[1] -= f
                if not f:
                    break
                continue
            rw = c[3]
            r = 0
            if rw:
                r = n - taken
                whole = int(left)
                if whole < r:
                    r = whole
                if rw < r:
                    r = rw
                left -= r
            first_cap = n - taken - r
            if first_share > 0:
                fits = int(left / first_share)
                if fits < first_cap:
                    first_cap = fits
            f = c[1] - rw
            if first_cap < f:
                f = first_cap
            h = c[2] - rw     # the hot pages' first writes go before the cold
            if f < h:
                h = f
            left -= f * first_share
            c[1] -= r + f
            c[2] -= r + h
            c[3] -= r
            taken += r + f
            hot_taken += r + h
            rew_taken += r
            if c[1] == 0:
                chunks.popleft()
            elif r + f == 0:
                break
        self.pages -= taken
        return taken, hot_taken, rew_taken

    def pages_older_than(self, lsn: int, limit: int) -> int:
        n = 0
        for chunk_lsn, pages, _, _ in self.chunks:
            if chunk_lsn > lsn or n >= limit:
                break
            n += pages
        return min(n, limit)


class BufferPool:
    """The dirty pages: those on the flush list, the segments being written (which hold
    back the checkpoint until they complete), and the tablespace files written since
    their last sync.

    The workload's per-commit figures are means; the carries turn them into whole pages
    (carry.py)."""

    __slots__ = ("workload", "rng", "size_pages", "flush_list", "inflight_lsns",
                 "dirty_carry", "hot_carry", "dblwr_carry", "hot_pages_clean",
                 "pages_dirtied", "growth_carry", "unflushed", "_file_draws")

    def __init__(self, config: ServerConfig, workload: Workload, rng: np.random.Generator):
        self.workload = workload
        self.rng = rng
        self.size_pages = config.innodb_buffer_pool_size // PAGE_BYTES
        self.flush_list = FlushList()
        self.inflight_lsns: list[int] = []   # oldest LSN of each segment being written
        self.dirty_carry = Carry()
        self.hot_carry = Carry()
        self.dblwr_carry = Carry()
        self.hot_pages_clean = 0   # hot pages written back, dirtied again at the next commit
        self.pages_dirtied = 0
        self.growth_carry = 0.0   # inserts since the last extension (Server.connection)
        self.unflushed: dict[int, int] = {}   # tablespace: bytes written since its sync
        self._file_draws: list[int] = []

    def preload(self, age: int, pages: int, span: int | None = None) -> None:
        """`pages` dirty pages spread evenly over the last `span` (default: all) of the
        first `age` bytes of redo."""
        span = age if span is None else min(span, age)
        chunks = min(pages, 16)
        for i in range(chunks):
            share = pages // chunks + (1 if i < pages % chunks else 0)
            self.flush_list.add(max(1, age - span + span * (i + 1) // chunks), share,
                                self.hot_pages(share))

    def note_modification(self, lsn: int) -> None:
        """buf_flush_note_modification at a transaction's mini-transaction commits: the
        pages it dirties for the first time enter the flush list, and so do the hot
        pages written back since the last commit."""
        carry = self.dirty_carry   # Carry.take, inlined (once per commit)
        frac = carry.frac + self.workload.pages_dirtied_per_trx
        k = int(frac)
        carry.frac = frac - k
        if k:
            self.flush_list.add(lsn, k, self.hot_pages(k) if self.workload.hot_page_share
                                else 0)
            self.pages_dirtied += k
        if self.hot_pages_clean:
            # a hot page is changed again within a few hundred commits of its write:
            # at once, next to the redo the cleaner works in (tens of MB)
            k = self.hot_pages_clean
            self.hot_pages_clean = 0
            self.flush_list.add(lsn, k, k, k)
            self.pages_dirtied += k

    def hot_pages(self, k: int) -> int:
        """How many of k pages dirtied for the first time the workload goes on changing."""
        share = self.workload.hot_page_share
        if not share:
            return 0
        return self.hot_carry.take(k * share, k)

    def oldest_modification(self) -> int | None:
        """buf_pool.get_oldest_modification(0): the oldest page dirty or still being
        written; None when there is none."""
        oldest = self.flush_list.oldest_lsn()
        if self.inflight_lsns:
            inflight = min(self.inflight_lsns)
            oldest = inflight if oldest is None else min(oldest, inflight)
        return oldest

    def dirty_share(self) -> float:
        """Dirty pages, % of the buffer pool."""
        return 100.0 * self.flush_list.pages / self.size_pages

    def take_segment(self, n: int, slots: int,
                     first_share: float) -> tuple[int, int, int, int]:
        """Up to n of the oldest pages for one doublewrite segment (FlushList.take); they
        are in flight until segment_written. Returns (oldest LSN, pages, hot, rewrites)."""
        oldest = self.flush_list.oldest_lsn()
        assert oldest is not None, "a segment is taken from a non-empty flush list"
        k, hot, rewrites = self.flush_list.take(n, slots, first_share)
        self.inflight_lsns.append(oldest)
        return oldest, k, hot, rewrites

    def segment_written(self, oldest: int, hot: int) -> None:
        """A segment's pages are written and clean: the workload's next changes dirty its
        hot pages again."""
        self.inflight_lsns.remove(oldest)
        self.hot_pages_clean += hot

    def spaces_written(self, k: int) -> set[int]:
        """The tablespaces k page writes land on (uniform over the workload's files)."""
        n = self.workload.tablespaces
        if n == 1:
            return {0}
        draws = self._file_draws
        if len(draws) < k:
            draws.extend(self.rng.integers(0, n, size=max(4096, k)).tolist())
        files = set(draws[-k:])
        del draws[-k:]
        return files

    def mark_unflushed(self, spaces: set[int]) -> None:
        """Page writes to these tablespaces wait for the files' next sync."""
        for f in spaces:
            self.unflushed[f] = self.unflushed.get(f, 0) + PAGE_BYTES

    def next_unflushed(self) -> int | None:
        """A tablespace off the unflushed list, for its sync: the bytes written to it
        since its last one (None: every file is synced)."""
        if not self.unflushed:
            return None
        return self.unflushed.popitem()[1]


def fil_flush_file_spaces(srv: Server) -> SimGen[None]:
    """fil_flush_file_spaces: one sync per tablespace written since its last sync."""
    buf_pool = srv.buf_pool
    c = srv.counters
    while (nbytes := buf_pool.next_unflushed()) is not None:
        yield from srv.device.sync(srv.sync_op, nbytes, srv.data_direct)
        c["Innodb_data_fsyncs"] += 1
        c["data_file_syncs"] += 1
