"""`python -m tools.log_group`: the command Terraform runs for the step around a colour's control-plane log group
(components/control_plane.py).
The hook itself is tools/hooks/log_group.py.

Kept because every deployed stack's state holds this command (model/hooks.py), and a destroy-time provisioner runs it as
written: a colour deployed before the hooks moved must still be destroyable. Nothing else belongs here."""

from __future__ import annotations

import sys

from tools.hooks.log_group import main

if __name__ == "__main__":
    sys.exit(main())
