"""``python -m treecert`` runs the command line."""

from treecert.cli.app import run

run()
