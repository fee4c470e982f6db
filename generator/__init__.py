"""podplan: one LLM workload spec in, a whole GPU cluster plan out.

Pipeline: spec (pydantic) -> catalog (data files) -> sizing -> plan (topology/BOM) ->
ClusterPlan -> emitters. Each stage is a pure function of the previous one's model; only
``cli`` and ``render.write`` touch the filesystem.
"""

__version__ = "0.1.0"
