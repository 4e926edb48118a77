"""Small shared helpers with no ExoMonad dependencies."""
