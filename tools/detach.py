"""`python -m tools.detach`: the command Terraform runs for a target group's destroy hook of the traffic stack
(components/application_routes.py).
The hook itself is tools/hooks/detach.py.

Kept because every deployed stack's state holds this command (model/hooks.py), and a destroy-time provisioner runs it as
written: a colour deployed before the hooks moved must still be destroyable. Nothing else belongs here."""

from __future__ import annotations

import sys

from tools.hooks.detach import main

if __name__ == "__main__":
    sys.exit(main())
