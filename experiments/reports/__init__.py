"""The experiments' reports, one module each, and their shared helpers (common.py)."""
