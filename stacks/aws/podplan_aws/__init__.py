"""podplan's AWS stack: p5 GPU nodes with EFA, a Slurm head node and FSx for Lustre."""
