"""The operator commands: every program under tools/, in one list, with one line each of what it is for. The tests and
the bench read their lists from here (tests/test_deployer_commands.py scans each command's AWS calls,
tests/test_layout.py imports each to prove it loads no CDK module, bench/run.py times their start), and
tests/test_layout.py fails when a module under tools/ with a `main()` or a `__main__` is missing here, or when an
entry names a module that is not there. The standard library and model/hooks.py only (the hooks' names, which deployed
stacks hold), nothing of the rest of tools/: reading the list loads no command.
"""

from __future__ import annotations

from dataclasses import dataclass

from model import hooks

OPERATOR = "operator"  # a person or a CI job runs it, with the deployer's (or the traffic operator's) credentials
TERRAFORM = "terraform"  # a hook: Terraform runs it (local-exec) during a deploy or a destroy
ADMINISTRATOR = "administrator"  # an account administrator runs it once; the deployer never holds its actions


@dataclass(frozen=True)
class Command:
    module: str  # what `python -m` runs (a package runs its __main__.py)
    purpose: str
    run_by: str = OPERATOR
    main: str = ""  # the module whose main() the command runs (a package's __main__.py, a hook's shim); default: itself

    @property
    def entry(self) -> str:
        """The module that defines the command's main()."""
        return self.main or self.module


def _hook(module: str, purpose: str) -> Command:
    """A hook Terraform runs by the name deployed stacks hold (model/hooks.py); its shim runs tools/hooks/'s main()."""
    return Command(module, purpose, run_by=TERRAFORM, main=hooks.HOOK_MODULES[module])


COMMANDS: tuple[Command, ...] = (
    Command("tools.readiness", "has a colour proven itself? what the shift checks first", main="tools.readiness.report"),
    Command("tools.shift", "moves the traffic in gated steps, or at once (--now); --status", main="tools.shift.command"),
    Command("tools.retire", "checks a colour serves nothing, then `cdktf destroy <colour>`"),
    Command("tools.patch", "the newest AMI release and add-on versions for a colour; --write pins them"),
    Command("tools.calendar", "each colour on the EKS support calendar, and the newest version with a release"),
    Command("tools.state_bucket", "creates or repairs the S3 bucket of the Terraform state", run_by=ADMINISTRATOR),
    _hook(hooks.TEARDOWN, "a colour's destroy hook: its applications and targets go before its cluster"),
    _hook(hooks.LOG_GROUP, "a colour's control-plane log group: removes what a destroyed colour left"),
    _hook(hooks.DETACH, "takes a target group out of its weighted rule before Terraform deletes it"),
    _hook(hooks.COMMON_GUARD, "refuses to destroy common or traffic while a colour's cluster runs"),
)
