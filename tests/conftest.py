"""Root conftest: shared fixture plugins."""

pytest_plugins = ["tests.support.tmux"]
