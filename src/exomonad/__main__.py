"""``python -m exomonad``: the same as the ``exomonad`` command."""

from exomonad.cli.main import main

main()
