"""The command line: one thin module per subcommand over :mod:`treecert.api`.

Only this package may import typer and rich. It may import every other layer; nothing
imports it (except ``python -m treecert``).
"""
