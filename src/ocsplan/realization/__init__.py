"""Realization: physical fabric files, wiring, port coloring, circuits and their validator."""
