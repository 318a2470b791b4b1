"""Data: everything between a file and the in-memory :class:`~treecert.data.schema.Dataset`.

ARFF and CSV reading (whole files and streamed chunks), Weka date formats, the schema and
its alignment of test files to a training schema, fold ids, MDL discretisation and the
entropy helpers it shares, and atomic output files. This is the bottom layer above
:mod:`treecert.errors`: it may import only the standard library, numpy/pandas/liac-arff/
scipy and :mod:`treecert.errors`, :mod:`treecert.parallel`, :mod:`treecert._version`.
"""
