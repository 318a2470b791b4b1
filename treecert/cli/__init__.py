"""The command line: one thin module per subcommand over :mod:`treecert.api`.

Only this package may import typer and rich. It may import every other layer; nothing
imports it (except ``python -m treecert``).

- :mod:`~treecert.cli.main`: the app, its commands in help order, ``main``/``run`` (errors
  to one line and exit 2, Ctrl-C to 130).
- one module per subcommand: :mod:`~treecert.cli.train`, :mod:`~treecert.cli.predict`,
  :mod:`~treecert.cli.evaluate`, :mod:`~treecert.cli.compare`, :mod:`~treecert.cli.prune`,
  :mod:`~treecert.cli.calibrate`, :mod:`~treecert.cli.show`, :mod:`~treecert.cli.merge`.
- :mod:`~treecert.cli.options`: every option several commands share, declared once.
- :mod:`~treecert.cli.common`, :mod:`~treecert.cli.progress`,
  :mod:`~treecert.cli.experiment`: messages and input loading, progress bars, and what
  evaluate, compare and merge share.
- :mod:`~treecert.cli.plain_values`: option values converted without pydantic (start-up).

Start-up is paid by every shell call, so importing the app (:mod:`~treecert.cli.main`) and
``--help`` load typer and nothing heavy: numpy, pandas, rich and the layers below are imported
inside the commands that use them (``tests/test_startup.py``).
"""
