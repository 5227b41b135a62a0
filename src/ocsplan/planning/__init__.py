"""Planning: search space, heuristic, exact models, frontiers (see the package layout)."""
