"""podplan's Azure stack: ND H100 v5 in one InfiniBand scale set, a Slurm head, Managed Lustre."""
