"""Networks of the plan: the InfiniBand compute fabric, the Ethernet front end, storage
back end and out-of-band networks, their cabling and media, and the address plan."""
