"""What a shift's window is judged on besides the load balancer's gate (gate.py): each application's analysis, resolved
from `traffic.shift.analysis` and `applications.<name>.analysis` (model/config/analysis.py), judged by tools/analysis/
for every application at once (one GetMetricData call a poll, not one per application), and how the report says it."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from model.config import Analysis, Config, ShiftConfig, applications, preview_hostname, public_hostname, resolved
from model.config.analysis import HostKind
from tools.analysis.verdict import Verdict
from tools.analysis.window import Subject, bake_seconds


def analyses(config: Config, settings: ShiftConfig, only: Collection[str] | None = None) -> dict[str, Analysis]:
    """Every application's analysis (only: of these applications), resolved (an application without one of its own
    takes the project's)."""
    return {
        app.name: resolved(settings.analysis, app.config.analysis)
        for app in applications(config)
        if only is None or app.name in only
    }


def subjects(config: Config, settings: ShiftConfig, target: str, only: Collection[str] | None = None) -> dict[str, Subject]:
    """The applications (only: of these) that have something to judge, each with its hosts: the target's preview host
    (that colour only, whatever the weights) and the public one (the split users get)."""
    found = {}
    for app in applications(config):
        if only is not None and app.name not in only:
            continue
        analysis = resolved(settings.analysis, app.config.analysis)
        if providers(analysis):
            hosts: dict[HostKind, str] = {
                "preview": f"https://{preview_hostname(config, app, target)}",
                "public": f"https://{public_hostname(config, app)}",
            }
            found[app.name] = Subject(analysis, hosts)
    return found


def bake(config: Config, settings: ShiftConfig, only: Collection[str] | None = None) -> int:
    """The seconds the final split is held and judged before the shift is done: the longest any application (only: of
    these, the ones the shift moves) asks for."""
    return bake_seconds(analyses(config, settings, only))


def providers(analysis: Analysis, hosts: Mapping[HostKind, str] | None = None) -> list[str]:
    """What an application's windows are judged on, one item a provider's entry, as the report and --dry-run say it."""
    said = [f"alarm {'name ' + s.name if s.name is not None else f'prefix {s.prefix}*'}" for s in analysis.alarms]
    said += [f"metric_math {q.name} ({q.comparison} {q.threshold:g} breaches)" for q in analysis.metric_math]
    said += [f"prometheus {q.name} at {q.endpoint} ({q.comparison} {q.threshold:g} breaches)" for q in analysis.prometheus]
    for check in analysis.synthetic:
        where = f"{hosts[check.host].rstrip('/')}{check.path}" if hosts else f"{check.host} host {check.path}"
        said.append(f"synthetic {check.count} x GET {where} (expects HTTP {check.expect_status})")
    return said


def describe_analysis(config: Config, settings: ShiftConfig, target: str, only: Collection[str] | None = None) -> list[str]:
    """What each window is judged on besides the gate, one line an application (only: of these; none: nothing is
    configured)."""
    found = subjects(config, settings, target, only)
    lines = [f"analysis of {app}: {'; '.join(providers(s.analysis, s.hosts))}" for app, s in found.items()]
    if seconds := bake(config, settings, only):
        lines.append(f"bake: the final split held {seconds} s under the traffic lock, judged like a step, before done")
    return lines


def breached(verdicts: Mapping[str, list[Verdict]]) -> dict[str, str]:
    """Each application whose analysis breached, with why (every breaching verdict: its value and threshold)."""
    return {
        app: "; ".join(f"{v.provider} {v.what}: {v.detail}" for v in mine if v.breach)
        for app, mine in verdicts.items()
        if any(v.breach for v in mine)
    }
