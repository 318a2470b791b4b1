"""Transductive engines: "grow the tree on D ∪ {(x, c)}" for every test row x and class c
without growing whole trees.

The batched engine (certificates, exact rescoring, batched split searches, the leaf forest)
serves TPCE, Kukar & Kononenko and the Venn machine; the path engine and the naive refit are
the references it must equal. May import :mod:`treecert.tree`, :mod:`treecert.data` and the
foundation modules.
"""
