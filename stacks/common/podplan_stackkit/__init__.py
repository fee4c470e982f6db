"""Shared pieces of podplan's Pulumi stacks: validated config reads and Slurm bootstrap.

Installed into each stack's virtual environment from ``stacks/common`` (see each stack's
``requirements.txt``); the stacks themselves stay small and cloud-specific.
"""
