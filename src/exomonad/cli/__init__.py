"""The ``exomonad`` command line: one command per user task."""
