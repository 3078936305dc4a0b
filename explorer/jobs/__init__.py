"""Slow work a shared server runs once for every session, on a floor above what it runs: model loads and jobs in
threads no page owns (``worker``), training runs in child processes (``training``)."""
