"""Planning: search spaces, planners and allocations."""
