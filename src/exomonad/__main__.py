"""``python -m exomonad``: the same as the ``exomonad`` command."""

from exomonad.entry import main

if __name__ == "__main__":
    main()
