"""Data: everything between a file and the in-memory :class:`~treecert.data.schema.Dataset`.

This is the bottom layer above the foundation modules: it may import only the standard
library, numpy/pandas/liac-arff/scipy and :mod:`treecert.errors`, :mod:`treecert.parallel`,
:mod:`treecert._version`.

- :mod:`~treecert.data.schema`: ``Attribute``, ``Schema``, ``Dataset``.
- :mod:`~treecert.data.sources` and :mod:`~treecert.data.table`: opening a file (format,
  gzip, stdin, decoding) into the raw table both readers fill.
- :mod:`~treecert.data.arff_reader`, :mod:`~treecert.data.arff_writer`,
  :mod:`~treecert.data.csv_reader`, :mod:`~treecert.data.dates`: the formats.
- :mod:`~treecert.data.loading`: training data (``load_dataset``, ``check_trainable``).
- :mod:`~treecert.data.alignment`: test data against a trained schema.
- :mod:`~treecert.data.stream`: the same, in chunks, for ``predict`` on large files.
- :mod:`~treecert.data.folds`: stratified fold ids and folds files.
- :mod:`~treecert.data.discretize`: Weka's MDL discretisation and the entropy helpers it
  shares with the transductive certificates.
- :mod:`~treecert.data.coerce`: numeric-array checks with one-line errors.
- :mod:`~treecert.data.inmemory`: numpy arrays and DataFrames read, checked and encoded as a
  ``Dataset``'s matrix, for the scikit-learn estimator.
- :mod:`~treecert.data.fileio`: atomic output files (a command's set of them staged
  together), locked output directories and JSON-safe records.
- :mod:`~treecert.data.csv_writer`: tables as CSV, the bytes pandas writes, without pandas.
"""
