"""Builds the whole App from one validated config: common plus one stack per colour."""

from __future__ import annotations

from cdktf import App

from model.config import Config
from stacks.cluster import ClusterStack
from stacks.common import CommonStack


def build(app: App, config: Config) -> App:
    CommonStack(app, config=config)
    for colour, cluster in config.clusters.items():
        ClusterStack(app, colour, config=config, cluster=cluster)
    return app
