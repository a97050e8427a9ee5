"""`python -m tools.common_guard`: the command Terraform runs for the destroy-time check of common and of the traffic stack
(components/deletion_guard.py).
The hook itself is tools/hooks/common_guard.py.

Kept because every deployed stack's state holds this command (model/hooks.py), and a destroy-time provisioner runs it as
written: a colour deployed before the hooks moved must still be destroyable. Nothing else belongs here."""

from __future__ import annotations

import sys

from tools.hooks.common_guard import main

if __name__ == "__main__":
    sys.exit(main())
