"""The plan lock: what is already built, read back as constraints on the next plan.

``reports/<name>/plan.lock.yaml`` records every device's identity (name, role, model,
addresses, rack slot), every rack's place on the floor, every cable by its two ends, the
devices removed so far (``retired``) and the last identity change. ``podplan plan`` reads it
from the output tree and keeps all of it; new devices get new names, free addresses, free
rack slots and free ports. ``--fresh`` ignores it.

Modules: ``model`` (the parsed lock), ``text`` (writing the file), ``read`` (reading it
back, with ``reader``'s checked line reader, errors at the file's line), ``names`` (which
devices stay, which are new, which go), ``racks`` (new devices into free rack space),
``ports`` (cables kept on their ports), ``fabric`` (the built compute fabric kept while it
serves), ``heads`` (the built management plane kept on a shrink), ``frontend`` (front-end
pairs, OOB aggregation and the storage back end as built), ``reach`` (a regrown scalable
unit's new compute racks near its built network rack, their cables within reach),
``changes`` (what moved, as notes, and what cannot move, as errors), ``freed`` (the
hardware the last change freed, as data for decommissioning).
"""
