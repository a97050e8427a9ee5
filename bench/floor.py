"""The floor: what any CDKTF app with our provider bindings costs before doing anything of its own.

Imports the same bindings the project imports (cdktf, the aws, helm and kubernetes providers)
and synthesizes three trivial stacks, nothing else. With `--lazy` it first registers the
provider packages the way the project does (components/__init__.py), to show how much of the
project's lead over the floor is that trick alone.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(outdir: str, *, lazy: bool) -> None:
    if lazy:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        import components  # noqa: F401  (registers the provider packages without their __init__)
    from cdktf import App, TerraformOutput, TerraformStack
    from cdktf_cdktf_provider_aws.provider import AwsProvider
    from cdktf_cdktf_provider_helm.provider import HelmProvider
    from cdktf_cdktf_provider_kubernetes.provider import KubernetesProvider

    app = App(outdir=outdir)
    for name in ("common", "blue", "green"):
        stack = TerraformStack(app, name)
        AwsProvider(stack, "aws", region="ap-northeast-1")
        HelmProvider(stack, "helm")
        KubernetesProvider(stack, "kubernetes")
        TerraformOutput(stack, "name", value=name)
    app.synth()


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--lazy"]
    main(arguments[0] if arguments else "cdktf.out", lazy="--lazy" in sys.argv[1:])
