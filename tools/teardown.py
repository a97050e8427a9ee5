"""`python -m tools.teardown`: the command Terraform runs for a colour's destroy hook (components/destroy_hook.py).
The hook itself is tools/hooks/teardown.py.

Kept because every deployed stack's state holds this command (model/hooks.py), and a destroy-time provisioner runs it as
written: a colour deployed before the hooks moved must still be destroyable. Nothing else belongs here."""

from __future__ import annotations

import sys

from tools.hooks.teardown import main

if __name__ == "__main__":
    sys.exit(main())
