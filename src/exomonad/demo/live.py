"""``exomonad demo --live``: the real models instead of the scripted ones.

Each CLI still talks to a server on loopback, but that server relays every request to
the vendor's API (:meth:`exomonad.scripted.base.ScriptedServer.relay_to`) and records
it, so the demo measures the same hops. Keys come from the environment and are given to
each CLI in its launcher only.
"""

from __future__ import annotations

from collections.abc import Mapping

from exomonad.errors import ExomonadError

__all__ = ["LIVE_KEYS", "LiveKeysMissing", "live_keys", "upstream"]

#: The variable each CLI's key comes from, and whose it is.
LIVE_KEYS = {
    "ANTHROPIC_API_KEY": "Claude Code, the lead",
    "GEMINI_API_KEY": "Gemini CLI",
    "OPENAI_API_KEY": "Codex CLI",
}
#: Where each relay forwards to: (the variable that overrides it, the public API).
UPSTREAMS = {
    "anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    "gemini": ("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"),
    "openai": ("OPENAI_BASE_URL", "https://api.openai.com"),
}


class LiveKeysMissing(ExomonadError):
    """``--live`` without the API keys it needs (the message names them)."""


def live_keys(env: Mapping[str, str]) -> dict[str, str]:
    """The three API keys from ``env``, or :class:`LiveKeysMissing` naming the missing.

    >>> live_keys({"ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"})
    Traceback (most recent call last):
    ...
    exomonad.demo.live.LiveKeysMissing: --live runs the real models and needs their API keys ...
    """
    missing = [k for k in LIVE_KEYS if not env.get(k, "").strip()]
    if missing:
        named = ", ".join(f"{k} ({LIVE_KEYS[k]})" for k in missing)
        raise LiveKeysMissing(
            f"--live runs the real models and needs their API keys in the environment; "
            f"missing: {named}. Without --live the demo runs offline against scripted "
            "models and needs no key."
        )
    return {k: env[k].strip() for k in LIVE_KEYS}


def upstream(api: str, env: Mapping[str, str]) -> str:
    """The base URL the relay for ``api`` (``anthropic``, ``gemini``, ``openai``) forwards
    to; an OpenAI base URL's trailing ``/v1`` is dropped (Codex's paths carry it).

    >>> upstream("openai", {"OPENAI_BASE_URL": "https://gateway.example/openai/v1/"})
    'https://gateway.example/openai'
    """
    var, default = UPSTREAMS[api]
    url = (env.get(var) or default).rstrip("/")
    return url.removesuffix("/v1") if api == "openai" else url
