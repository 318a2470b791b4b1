"""``python -m treecert`` runs the command line."""

from treecert.cli.main import run

run()
