"""Memory budgets of the batched engine, and the byte-bounded cache that keeps to them.

Everything the batched engine (:mod:`treecert.transductive.batch_engine`) keeps between
calls — certificate tables, per-node rescoring tables, the tables of the nodes searched
below a changed test, the Venn machine's hanging leaves and their nodes' splits —
lives in a :class:`ByteLRU` of a fixed budget, and everything it holds during one call is
sized from the budgets below, so that its memory depends on the training data (rows n,
attributes p, classes K, tree depth) and never on the number of test rows:

    peak ≈ 8·n·p·(3K + 6)     data, its augmented copy, value ranks, and one node's
                              rescoring table while it is built (p numeric columns;
                              a nominal column's integer codes on the split finders
                              take less than its share)
         + 16·n·depth         the base tree's per-node rows and weights
         + COMPETITOR_BYTES + SCORE_BYTES + TABLE_BYTES + LEAF_BYTES   caches, 4 × 128 MiB
         + SPLIT_BYTES        the hanging nodes' splits, 32 MiB
         + CHILD_BYTES        the rows of x's nodes below changed tests, 64 MiB
         + ~40·FINDER_X_CELLS the x rows of one augmented split finder (~40 MiB)
         + ~50·WALK_ENTRIES   rows held by the jobs of one part of a batch (~800 MiB at
                              most: a walking job holds rows only at the nodes it
                              searches; the exact paths' parts, PATH_ENTRIES, are smaller
                              and never held at the same time)
         + ~150 MiB           one batched split search (node_search.SEARCH_CELLS) and
                              one group of certificate tables (CHUNK_CELLS)
         + ~130 MiB           one chunk of Venn rows (venn_fast._ATOMS_PER_BATCH)

per engine; a process keeps the engines of its last two training sets
(:meth:`BatchEngine.shared <treecert.transductive.batch_engine.BatchEngine.shared>`), so
a cross-validation holds the previous fold's beside the current one's, its caches emptied
(:func:`memory_formula` states it for the command line help). Budgets are module
constants so that tests can shrink them: results never depend on them.
"""

from __future__ import annotations

from collections import OrderedDict

MIB = 1 << 20

#: Bounds of the Competitors tables kept between walks (cut tables of node groups, and the
#: per-change bounds).
COMPETITOR_BYTES = 128 * MIB
#: Per-node rescoring tables (NodeScores) kept between walks.
SCORE_BYTES = 128 * MIB
#: Tables of the training rows of nodes searched below a changed test
#: (:class:`~treecert.transductive.label_search.NodeTable`), kept between walks.
TABLE_BYTES = 128 * MIB
#: Training rows of the nodes on x's paths below a changed test, by their key, with their
#: class counts and stopping flags (``BatchEngine._x_child``), kept between walks.
CHILD_BYTES = 64 * MIB
#: Leaves of the subtrees hanging off x's paths (Venn machine), kept between batches.
LEAF_BYTES = 128 * MIB
#: Splits of the hanging subtrees' nodes by their rows and weights (Venn machine), kept
#: between batches (``label_search._SPLIT_BYTES`` a node: 32 MiB hold ~100 000; on
#: shuttle-shaped data 16 MiB found nearly every node that 512 MiB did).
SPLIT_BYTES = 32 * MIB
#: Training-row entries (rows + weights + search copies) held by the jobs of one batch:
#: a batch of jobs is cut into parts of at most PATH_ENTRIES // n jobs.
PATH_ENTRIES = 1 << 22
#: The same bound for the parts of a certified walk (``BatchEngine.grow_batch``: parts of
#: at most WALK_ENTRIES // n jobs). Larger: a walking job holds rows only at the nodes it
#: searches, mostly far smaller than the root, and a larger part shares each search round
#: and each node's table among more jobs, which the walk order makes alike
#: (shuttle-shaped TPCE, 2 500 rows of fold 6: 2^22 67.3 s, 2^23 56.0 s, 2^24 46.8 s,
#: 2^25 42.1 s, peak 488, 529, 635, 867 MiB).
WALK_ENTRIES = 1 << 24
#: Numeric cells (x rows × numeric attributes) of the x rows one augmented split finder
#: holds: the parts of a batch share it, and its value ranks and codes, up to this many
#: (1 << 20: 8 MiB an array; the finder holds about five).
FINDER_X_CELLS = 1 << 20
#: Training-row entries of one call of the exact paths (a speed bound, below
#: PATH_ENTRIES): a call costs a round per depth whatever its jobs, so larger calls share
#: each round among more jobs, but past about this many entries its arrays outgrow the
#: caches (10 numeric columns, 1 500 rows, 5 % unknown: 2^22 entries a call took 1.3x
#: the time of 2^20).
CALL_ENTRIES = 1 << 20
#: Jobs of one certified walk (their records, ~0.5 KB each): a walk costs a round per depth
#: whatever its jobs, so one test file's jobs walk together up to this many.
WALK_JOBS = 1 << 13
#: Entries of one group of Competitors tables (rows × classes; the nodes a walk reaches
#: first are tabled together, in groups of at most this many).
CHUNK_CELLS = 1 << 21


def memory_formula() -> str:
    """The peak memory of the batched transductive engine, for ``--help`` texts."""
    return ("Memory of the transductive engine, as measured (peak RSS of a whole 10-fold "
            "evaluate): 100 MB on credit-g and diabetes, 210-280 MB on segment-challenge, "
            "130 MB for tpce and 1.3 GB for venn on soybean (19 classes); BENCHMARKS.md has "
            "the large cases (under 1 GB at 58,000 rows). Its bound: about "
            "8·n·p·(3K + 6) + 16·n·d bytes for n training rows, p attributes, K classes and "
            "a tree of depth d, plus caches and batch buffers that fill up to 1.7 GiB only "
            "on large training sets, whatever the number of test rows; a process keeps the "
            "engines of its last two training sets.")


def rows_key(rows, weights) -> tuple:
    """A cache key of training rows and their weights: their bytes (equal iff they are)."""
    return (rows.tobytes(), weights.tobytes())


def key_bytes(key: tuple) -> int:
    """Bytes held by a cache key: its byte strings', 8 per other item."""
    return sum(len(k) if isinstance(k, bytes) else 8 for k in key)


class ByteLRU:
    """A dict bounded by the bytes of its values: the least recently used entries go first
    once the total passes ``budget`` (the newest entry always stays)."""

    def __init__(self, budget: int, on_evict=None) -> None:
        self.budget = budget
        self.on_evict = on_evict
        self.items: OrderedDict = OrderedDict()
        self.sizes: dict = {}
        self.bytes = 0

    def __contains__(self, key) -> bool:
        return key in self.items

    def __len__(self) -> int:
        return len(self.items)

    def get(self, key, default=None):
        if key not in self.items:
            return default
        self.items.move_to_end(key)
        return self.items[key]

    def put(self, key, value, nbytes: int, *, shrink: bool = True) -> None:
        """Hold ``value``; without ``shrink`` the budget is restored only by the next
        :meth:`shrink` (for values that must outlive the current call)."""
        if key in self.items:
            self.bytes -= self.sizes[key]
        self.items[key] = value
        self.items.move_to_end(key)
        self.sizes[key] = int(nbytes)
        self.bytes += int(nbytes)
        if shrink:
            self.shrink()

    def resize(self, key, nbytes: int, *, shrink: bool = True) -> None:
        """A held value grew (or shrank) to ``nbytes``."""
        if key in self.items:
            self.bytes += int(nbytes) - self.sizes[key]
            self.sizes[key] = int(nbytes)
            if shrink:
                self.shrink()

    def grow(self, key, extra: int, *, shrink: bool = True) -> None:
        """A held value grew by ``extra`` bytes (its key's bytes are not counted again)."""
        if key in self.items:
            self.resize(key, self.sizes[key] + int(extra), shrink=shrink)

    def shrink(self, keep: int = 1) -> None:
        """Drop the oldest entries until within budget (keeping the newest ``keep``)."""
        while self.bytes > self.budget and len(self.items) > keep:
            self._drop_oldest()

    def clear(self) -> None:
        """Drop every entry (``on_evict`` called for each, oldest first)."""
        while self.items:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        old, value = self.items.popitem(last=False)
        self.bytes -= self.sizes.pop(old)
        if self.on_evict is not None:
            self.on_evict(value)
