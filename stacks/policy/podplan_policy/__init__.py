"""podplan's CrossGuard policies for its AWS, GCP and Azure stacks (see rules.py)."""
