"""The project's own checkov checks (loaded with --external-checks-dir; see internet_ingress.py)."""
