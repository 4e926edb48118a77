"""The status view (``exomonad status --tui``): the server's ``/status`` and ``/events``
shown live in a terminal.

:mod:`~exomonad.tui.model` holds the state (pure), :mod:`~exomonad.tui.render` turns it
into text (never markup), :mod:`~exomonad.tui.feed` reads the server (reconnecting), and
:mod:`~exomonad.tui.app` is the Textual app.
"""
