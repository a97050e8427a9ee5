"""The stacks, the typed config and the common-outputs contract."""

import components  # noqa: F401  -- registers the provider packages lazily before any stack imports one
