"""``exomonad teammate``: ExoMonad as Claude Code's ``CLAUDE_CODE_TEAMMATE_COMMAND``.

Claude Code (2.1.330, ``teammateMode: "tmux"``) splits a pane per teammate and runs the
teammate command there. Routed by configuration, a Claude teammate is exec'd as the real
``claude`` with the same arguments; any other runtime (Gemini CLI) runs on a
pseudo-terminal this process owns, fed its inbox exactly once, in order.
"""
