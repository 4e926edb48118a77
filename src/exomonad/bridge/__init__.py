"""Runtime services over the team files and the panes: ledger, delivery, watcher."""
