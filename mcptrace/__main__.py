"""``python -m mcptrace`` runs the command-line interface."""

from mcptrace.cli import main

main()
