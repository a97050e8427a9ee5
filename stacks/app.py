"""Builds the whole App from one validated config: common plus one stack per colour."""

from __future__ import annotations

from pathlib import Path

from cdktf import App

from model.config import Config
from stacks.cluster import ClusterStack
from stacks.common import CommonStack
from stacks.traffic import TrafficStack


def build(app: App, config: Config) -> App:
    CommonStack(app, config=config)
    TrafficStack(app, config=config)
    for colour, cluster in config.clusters.items():
        ClusterStack(app, colour, config=config, cluster=cluster)
    return app


def synthesize_into(config: Config, outdir: Path) -> None:
    """Everything synthesized in-process into outdir (what `cdktf synth` writes to cdktf.out)."""
    outdir.mkdir(parents=True, exist_ok=True)
    build(App(outdir=str(outdir)), config).synth()
