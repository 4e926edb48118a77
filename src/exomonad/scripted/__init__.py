"""Scripted stand-ins for the model APIs the agent CLIs call, on loopback.

Each one is a small HTTP server on 127.0.0.1 that speaks just enough of one vendor's API
for the pinned CLI to run unchanged, offline and without an API key: the reply to each
main-loop request comes from a script (or a responder function), every request is
recorded, and waiters block on a condition until the request they expect arrives.

* :mod:`exomonad.scripted.anthropic`: the Messages API, for Claude Code (``ScriptedClaude``).
* :mod:`exomonad.scripted.gemini`: the Generative Language API, for Gemini CLI
  (``ScriptedGemini``).
* :mod:`exomonad.scripted.openai`: the Responses API, for Codex CLI (``ScriptedCodex``).

``exomonad demo`` and the end-to-end tests drive the real CLIs with them.
"""
