"""Test setup for the resolver: nothing beyond the shared helpers in ``defs.py``."""
