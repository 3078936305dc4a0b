"""Performance benchmark (see README.md here)."""
