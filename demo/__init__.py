"""`make demo`: ExoMonad's main job, end to end, on this machine (see __main__)."""
