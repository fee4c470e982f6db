"""What every sizing formula reads: architectures, parameter counts, FLOPs, hardware and the
efficiency profiles of software stacks (shared by training and inference)."""
