"""Keys of teardown plans made by earlier releases (the `teardown-plan-weight` migration of model/migrations/). A colour
deployed then still carries its plan in its Terraform state, which is what a destroy hands the hook
(model/teardown_plan.py): these keys are ignored. Data only.
"""

from __future__ import annotations

# Before the live weights were the only word on serving, a plan carried the config's weight too.
RETIRED_KEYS = frozenset({"weight"})
