"""The contract between the stacks and the hooks Terraform runs (tools/hooks/): which module each hook's `local-exec`
command runs, and the environment variables its provisioner hands it. The stacks (components/) write these names into
the synthesized Terraform and the hooks read them: both import them from here, so neither imports the other.

A hook's module name is written into every deployed stack's state with its command, and a destroy-time provisioner
runs that command as it was written: these names never change (tools/teardown.py and its siblings stay, as shims, for
them). Two hooks' inputs live beside their data: the teardown's plan (model/teardown_plan.py `PLAN_ENV`, `FORCE_ENV`)
and a target group's detach (model/routes.py `DETACH_ENV`).
"""

from __future__ import annotations

# `python -m <module>`, as each hook's command runs it (components/destroy_hook.py `python_command`).
TEARDOWN = "tools.teardown"  # a colour's destroy hook (components/destroy_hook.py)
DETACH = "tools.detach"  # a target group's destroy hook of the traffic stack (components/application_routes.py)
LOG_GROUP = "tools.log_group"  # the step around a colour's control-plane log group (components/control_plane.py)
COMMON_GUARD = "tools.common_guard"  # the destroy-time check of common and traffic (components/deletion_guard.py)
# Each of those names -> the module under tools/hooks/ that does the work.
HOOK_MODULES = {
    TEARDOWN: "tools.hooks.teardown",
    DETACH: "tools.hooks.detach",
    LOG_GROUP: "tools.hooks.log_group",
    COMMON_GUARD: "tools.hooks.common_guard",
}

# The log-group step's provisioners hand its own input (jsonencode(self.input)) to the hook in this variable.
LOG_GROUP_ENV = "ORPHANED_LOG_GROUP"
# Set by the step's destroy provisioner only: how long to watch after the cluster's deletion, in seconds.
WATCH_ENV = "LOG_GROUP_WATCH_SECONDS"
WATCH_SECONDS = 300

# The deletion guard's provisioner hands its own input (jsonencode(self.input)) to the hook in this variable.
GUARD_ENV = "COMMON_GUARD"
