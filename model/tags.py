"""The default tags every resource of a stack carries (stacks/base.py): the keys are defined here, once, because the
guards find the project's running resources by them (components/stack_tagged.py, components/configured_colours.py)."""

from __future__ import annotations

PROJECT_TAG = "Project"  # the configuration's `project`
STACK_TAG = "Stack"  # the stack's name: common, traffic, or the colour
MANAGED_BY_TAG = "ManagedBy"
MANAGED_BY = "cdktf"
