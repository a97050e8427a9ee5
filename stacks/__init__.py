"""The stacks (common, one per colour) and the app that builds them; the data they are built from is in model/."""

import components  # noqa: F401  -- registers the provider packages lazily before any stack imports one
