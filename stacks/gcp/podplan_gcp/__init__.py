"""podplan's GCP stack: A3 Mega GPU nodes with 8 GPU NIC VPCs, a Slurm head, Managed Lustre."""
