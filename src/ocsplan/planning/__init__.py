"""Planning: the search space, the heuristic, the exact models and the planner registry."""
