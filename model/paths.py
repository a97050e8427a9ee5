"""Where the repository is: the one place that knows, so no module counts `.parent`s of its own."""

from __future__ import annotations

from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
# The Helm charts of this repository: Argo CD's values, the App of Apps and the sample app.
CHARTS_DIR = PROJECT_DIR / "argocd"
