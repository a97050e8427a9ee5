"""Builds the whole App from one validated config: common plus one stack per colour."""

from __future__ import annotations

from cdktf import App

from stacks.cluster import ClusterStack
from stacks.common import CommonStack
from stacks.config import Config


def build(app: App, config: Config) -> App:
    CommonStack(app, config=config)
    for colour, cluster in config.clusters.items():
        ClusterStack(app, colour, config=config, cluster=cluster)
    return app
