"""``python -m treecert`` runs the command line."""

from treecert.cli import run

run()
