"""What the deployment is, in plain Python: the config, the common-outputs contract, the workloads,
the values handed to the charts and the teardown plan.

Nothing here imports cdktf, constructs or a provider package (tests/test_layout.py checks), so
the operator commands and the build scripts can use it without the jsii runtime.
"""
