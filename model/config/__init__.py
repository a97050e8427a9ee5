"""The one typed configuration, read from `cdktf.json` -> `context.config` (model/loading.py): one module per section,
each holding its settings (pydantic models: types, ranges, choices, patterns, descriptions) and the rules that check
them; model/rules.py gathers the rules and the warnings.

    fields.py             what every section is built of (Section, Shown, shared patterns and bounds)
    analysis.py           `traffic.shift.analysis` and `applications.<name>.analysis`: what else a shift window shows
    checks.py             what every rule is written with (check, the warnings' prefixes)
    project.py            Config: the project's own settings and one setting per section; tags, table, image, state
    vpc.py                `network` (named for what it is: components/network.py has the module name)
    dns.py                `dns`
    eks.py                `eks`
    traffic_settings.py   `traffic` (stacks/traffic.py has the module name)
    applications.py       `applications`, and Application: an entry with what its name derives
    application_rules.py  the rules of `applications`
    argocd.py             `argocd`, its single sign-on one model per kind
    gitops.py             `gitops`
    platform_release.py   `platform` and what each colour runs, resolved
    clusters.py           `clusters`: each colour's cluster
    across.py             the rules that span sections

The names the rest of the tree uses are importable from here.
"""

from model.config.across import ALB_RULES, FORWARD_TARGET_GROUPS
from model.config.analysis import (
    AlarmSelector,
    Analysis,
    AnalysisConfig,
    MetricMathQuery,
    PrometheusQuery,
    SyntheticCheck,
    resolved,
)
from model.config.applications import (
    APPLICATION_PATTERN,
    APPLICATION_POLICY_VALUES,
    BLUE_GREEN,
    DEFAULT_APPLICATION_GROUP,
    DEFAULT_IMAGE_TAG,
    Application,
    ApplicationConfig,
    ApplicationImageConfig,
    ApplicationProbeConfig,
    application,
    application_workloads,
    applications,
    image_repository_name,
    preview_hostname,
    public_hostname,
    shared_roles,
)
from model.config.argocd import ArgoCdConfig, ArgoCdSsoConfig, GithubSsoConfig, OidcSsoConfig, SamlSsoConfig
from model.config.checks import LOUD, LOUD_PREFIXES, MOVING
from model.config.clusters import (
    SUPPORTED_KUBERNETES_VERSIONS,
    ClusterConfig,
    ColourApplicationConfig,
    NodeGroupConfig,
    SupportType,
)
from model.config.dns import DnsConfig
from model.config.eks import PLACEHOLDER_API_NETWORK, EksConfig
from model.config.fields import COLOUR_PATTERN, COMMON_STACK, MAX_WEIGHT, Shown
from model.config.gitops import PLACEHOLDER_REPO_URL, GitOpsConfig
from model.config.platform_release import ApplicationRelease, ColourPlatformConfig, ColourRelease, PlatformConfig, pin_advice
from model.config.project import TABLE_KEY, Config, StateConfig, cluster_name, cluster_names
from model.config.traffic_settings import (
    DEFAULT_RULE_GROUPS,
    MAX_SHIFT_INTERVAL_SECONDS,
    MIN_SHIFT_INTERVAL_SECONDS,
    ShiftConfig,
    TrafficConfig,
)
from model.config.vpc import EKS_UNSUPPORTED_ZONE_IDS, INTERFACE_ENDPOINTS, NetworkConfig, subnet_cidrs

__all__ = [
    "ALB_RULES",
    "APPLICATION_PATTERN",
    "APPLICATION_POLICY_VALUES",
    "BLUE_GREEN",
    "COLOUR_PATTERN",
    "COMMON_STACK",
    "DEFAULT_APPLICATION_GROUP",
    "DEFAULT_IMAGE_TAG",
    "DEFAULT_RULE_GROUPS",
    "EKS_UNSUPPORTED_ZONE_IDS",
    "FORWARD_TARGET_GROUPS",
    "INTERFACE_ENDPOINTS",
    "LOUD",
    "LOUD_PREFIXES",
    "MAX_SHIFT_INTERVAL_SECONDS",
    "MAX_WEIGHT",
    "MIN_SHIFT_INTERVAL_SECONDS",
    "MOVING",
    "PLACEHOLDER_API_NETWORK",
    "PLACEHOLDER_REPO_URL",
    "SUPPORTED_KUBERNETES_VERSIONS",
    "TABLE_KEY",
    "AlarmSelector",
    "Analysis",
    "AnalysisConfig",
    "Application",
    "ApplicationConfig",
    "ApplicationImageConfig",
    "ApplicationProbeConfig",
    "ApplicationRelease",
    "ArgoCdConfig",
    "ArgoCdSsoConfig",
    "ClusterConfig",
    "ColourApplicationConfig",
    "ColourPlatformConfig",
    "ColourRelease",
    "Config",
    "DnsConfig",
    "EksConfig",
    "GitOpsConfig",
    "GithubSsoConfig",
    "MetricMathQuery",
    "NetworkConfig",
    "NodeGroupConfig",
    "OidcSsoConfig",
    "PlatformConfig",
    "PrometheusQuery",
    "SamlSsoConfig",
    "ShiftConfig",
    "Shown",
    "StateConfig",
    "SupportType",
    "SyntheticCheck",
    "TrafficConfig",
    "application",
    "application_workloads",
    "applications",
    "cluster_name",
    "cluster_names",
    "image_repository_name",
    "pin_advice",
    "preview_hostname",
    "public_hostname",
    "resolved",
    "shared_roles",
    "subnet_cidrs",
]
