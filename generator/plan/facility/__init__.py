"""The physical side of the plan: rack layout, the floor the racks stand on, and the power,
cooling, weight and PDU figures of each rack and of the site."""
