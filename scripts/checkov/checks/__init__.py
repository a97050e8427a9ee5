"""The project's own checkov checks (loaded with --external-checks-dir; see ingress_hosts.py)."""
