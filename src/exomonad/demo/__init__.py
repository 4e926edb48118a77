"""``exomonad demo``: ExoMonad's main job, end to end, with the real CLIs.

The real Claude Code 2.1.330 leads in tmux; the person asks it for two teammates, and
it spawns a Gemini CLI and a Codex CLI worker with its own ``Agent`` tool. ExoMonad
gives each its own git worktree, types its task into it, gates its tool calls with one
policy (a forced push to ``main`` is denied, and the reason reaches the model), and
carries each worker's ``notify_parent`` into the lead's inbox, where the lead's next
model request reads it. Offline, every model is scripted (:mod:`exomonad.scripted`);
``--live`` relays to the real ones. Every hop is timed.

* :mod:`exomonad.demo.script`: the workers, their tasks, the scripted models' replies.
* :mod:`exomonad.demo.stage`: model servers, CLI homes, the project.
* :mod:`exomonad.demo.play`: the scene, hop by hop.
* :mod:`exomonad.demo.timeline`: the hops and their latencies.
* :mod:`exomonad.demo.run`: ``exomonad demo`` itself; :mod:`exomonad.demo.live`.
"""
