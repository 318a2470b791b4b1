"""Transductive engines: "grow the tree on D ∪ {(x, c)}" for every test row x and class c
without growing whole trees.

The batched engine (certificates, exact rescoring, batched split searches, the leaf forest)
serves TPCE, Kukar & Kononenko and the Venn machine; the path engine and the naive refit are
the references it must equal. May import :mod:`treecert.tree`, :mod:`treecert.data` and the
foundation modules.

- :mod:`~treecert.transductive.engine`: :class:`TransductiveEngine`, the front the methods
  call (``engine=fast|path|naive``), with the path engine and the naive refit.
- :mod:`~treecert.transductive.batch_engine`: the batched engine (``engine=fast``), many
  (x, c) at once — not batch TPCE, which is a method (:mod:`treecert.methods.tpce_batch`);
  its walk down the base tree's certified tests in :mod:`~treecert.transductive.base_walk`.
- :mod:`~treecert.transductive.certificates`: the base tree's certificates and exact
  rescoring, which prove a test unchanged by x; :mod:`~treecert.transductive.ratio_scores`
  the same proof under gain ratio (J48's selection replayed on intervals).
- :mod:`~treecert.transductive.node_search`: batched split searches over many nodes.
- :mod:`~treecert.transductive.exact_paths`: x's paths searched exactly at every node, all
  (x, c) of a batch per tree level — missing values, anything uncertified; and x routed
  without being grown with (K&K's leave-one-out inductive step).
- :mod:`~treecert.transductive.leaf_forest`: the subtrees hanging off x's paths, grown
  leaves-only.

``docs/architecture.md`` gives every module here one line, and follows the path of one
TPCE row through them.
"""
