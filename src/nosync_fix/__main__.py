"""``python -m nosync_fix`` runs the command line."""

from .cli import main

main()
