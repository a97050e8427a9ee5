"""Our construct library: one building block per module.

Importing this package registers the provider packages lazily. A cdktf provider package's
`__init__` imports every one of its submodules (2,135 for aws, about 13 s of a 25 s synth); the
submodules themselves need only the package's `_jsii` module, which loads the jsii assembly.
So the package is registered without running its `__init__`, each submodule we use is
imported on demand, and the jsii runtime imports any other type's module the moment it meets
one (its lazy-loading support, `_try_import_type_module`).
"""

from __future__ import annotations

import importlib.util
import sys

PROVIDER_PACKAGES = ("cdktf_cdktf_provider_aws", "cdktf_cdktf_provider_helm", "cdktf_cdktf_provider_kubernetes")


def register_provider_packages_lazily() -> None:
    for name in PROVIDER_PACKAGES:
        if name in sys.modules:
            continue  # already imported (eagerly, by someone else): nothing to save
        spec = importlib.util.find_spec(name)
        if spec is None:
            raise ModuleNotFoundError(f"{name} is not installed: run `make synth`")
        # module_from_spec sets __path__ (so submodules resolve) without executing __init__.py.
        sys.modules[name] = importlib.util.module_from_spec(spec)


register_provider_packages_lazily()
