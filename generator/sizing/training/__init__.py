"""Training: memory, communication and step time of a parallel layout, the layouts that
exist, and the planner that searches them."""
