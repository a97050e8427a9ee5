"""The migrations wing: every piece of this project that exists only for a deployment an earlier release made, each
with the release it came in, what keeps it alive, the condition for deleting it and the date it is due.

The support window: a deployment has 90 days (SUPPORT_WINDOW) from a release to apply it. A migration is due that many
days after the release that made it necessary (its `release.date`, written once below); by then every deployment is
expected to have applied it, and the migration's pieces go, as its `delete_when` says. tests/test_migrations.py fails
on a migration past its due date (naming it, its condition and its pieces), on a piece that does not exist, and on a
`FORMER_*` or `RETIRED*` name in model/, components/, stacks/ or tools/ that no migration lists.

A piece is a file (`path`) or a name in it (`path::name`, `path::Class.attribute`; in a file that is not Python, a text
it contains). The pieces that are plain data live beside this registry (state_moves.py, retired_settings.py,
retired_plan_keys.py); what is CDK or a command stays where it works, named here.

Not migrations, and not listed: tools/teardown.py, tools/detach.py, tools/log_group.py and tools/common_guard.py are the
hooks' commands as every deployed stack's state holds them (model/hooks.py): those names never change.

Adding one: a `Migration` in MIGRATIONS with its `Release` (issue numbers, the commit and date it reached main; reuse
the release's constant when it has one), what keeps it alive, the condition, and every piece, including its tests;
docs/upgrading.md says what an operator does. docs/contributing.md, "Migrations".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

SUPPORT_WINDOW = dt.timedelta(days=90)


@dataclass(frozen=True)
class Release:
    """A change of main that made a deployment from before need a migration."""

    issues: tuple[str, ...]  # the issues it resolved, "#29"; none when the change named no issue
    commit: str  # the commit that brought the need onto main (short hash)
    date: dt.date  # the day it reached main: the support window counts from here
    what: str

    @property
    def due(self) -> dt.date:
        return self.date + SUPPORT_WINDOW


@dataclass(frozen=True)
class Migration:
    name: str
    release: Release
    keeps_it_alive: str  # who still needs it, and why
    delete_when: str  # the condition for deleting it, and what goes then
    pieces: tuple[str, ...]  # `path` or `path::name`: everything that goes with it

    @property
    def due(self) -> dt.date:
        return self.release.due


# The releases, each dated once.
APPLICATIONS_AS_DATA = Release(
    ("#29", "#30"),
    "d846523",
    dt.date(2026, 11, 24),
    "applications as data; the traffic stack's shared load balancer instead of each colour's own",
)
PROTECTION_SWITCH = Release(
    (), "5e13341", dt.date(2026, 11, 22), "one deletion_protection switch for the table and the image repository"
)
LIVE_WEIGHTS_ONLY = Release(
    (), "6e5d02f", dt.date(2026, 11, 28), "the live weights the only word on serving (DESIGN.md, Traffic, turn 5)"
)
CONTROLLER_TARGETS = Release(
    ("#45",), "f9eecd8", dt.date(2026, 11, 29), "the load balancer controller registers targets in this project's groups only"
)
CONTRACT_1_GONE = Release(
    ("#46",),
    "a9a40fa",
    dt.date(2026, 11, 29),
    "values contract 1 and legacy colours deleted; the last release that writes contract 1 is 26641e3",
)
PER_APPLICATION_WEIGHTS = Release(
    ("#47",),
    "32c4c4b",
    dt.date(2026, 11, 29),
    "live weights per application: the weights parameter's schema 2",
)

_ASSUMED = "a role running pods assume"
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        name="common-state-moves",
        release=APPLICATIONS_AS_DATA,
        keeps_it_alive=(
            "A common applied before #29/#30 holds the sample app's role, policy and attachment, its image repository "
            "and build, and (before the component registry, 02ea3ef, 2026-11-23) the load balancer controller's role at "
            f"their former addresses: the moved blocks move them on its next `cdktf deploy common` instead of replacing "
            f"{_ASSUMED} and a repository with its images. tests/test_release_upgrade.py plans this release's common "
            "against what that release deployed (and proves #45's trust change in place)."
        ),
        delete_when=(
            "Every deployment has applied common with a release from #30 on (`terraform state list` in "
            "cdktf.out/stacks/common names no `app-role`, `lbc-role`, `image_repo` or `image-build` address): delete the "
            "maps, their wiring in stacks/common.py and the components' `moved_from`, the upgrade test, its support "
            "module and fixture. Common's synthesized JSON then loses its moved blocks."
        ),
        pieces=(
            "model/migrations/state_moves.py",
            "model/migrations/state_moves.py::FORMER_PLATFORM_ADDRESSES",
            "model/migrations/state_moves.py::FORMER_APPLICATION_ROLE",
            "model/migrations/state_moves.py::FORMER_IMAGE_REPOSITORY",
            "model/migrations/state_moves.py::FORMER_IMAGE_BUILD",
            "stacks/common.py::CommonStack",
            "components/pod_identity_role.py::PodIdentityRole.__init__",
            "components/image_repository.py::ImageRepository.__init__",
            "components/image_build.py::ImageBuild.__init__",
            "tests/test_release_upgrade.py",
            "tests/support/release_upgrade.py",
            "tests/fixtures/previous-release/common-sample-app.tf.json",
            "tests/fixtures/previous-release/README.md",
        ),
    ),
    Migration(
        name="applications-as-data-settings",
        release=APPLICATIONS_AS_DATA,
        keeps_it_alive=(
            "A configuration written for a release before #29/#30 names `dns.app_host`, `app`, "
            "`clusters.<colour>.image_tag`, `image.repository` or `traffic.shift.dns_timeout_seconds`: synth says where "
            "each went instead of only refusing it."
        ),
        delete_when=(
            "No deployment's configuration is older than #29/#30: delete RETIRED_WITH_APPLICATIONS_AS_DATA (and "
            "model/problems.py's _retired once RETIRED is empty) and the cases of the test; such a key is then refused "
            "as any unknown key is."
        ),
        pieces=(
            "model/migrations/retired_settings.py::RETIRED_WITH_APPLICATIONS_AS_DATA",
            "model/migrations/retired_settings.py::RETIRED",
            "model/problems.py::_retired",
            "tests/test_applications_config.py::test_fails_on_a_retired_key_saying_where_it_moved",
            "tests/test_config.py::test_fails_on_shift_and_teardown_settings",
        ),
    ),
    Migration(
        name="contract-1-settings",
        release=CONTRACT_1_GONE,
        keeps_it_alive=(
            "A configuration that still has a colour with `legacy_application`, or `traffic.record_ttl`: synth refuses "
            "it naming the way (the release before this one, 26641e3, retires such colours; docs/upgrading.md)."
        ),
        delete_when=(
            "No deployment's configuration is older than #46: delete RETIRED_WITH_CONTRACT_1 (and model/problems.py's "
            "_retired once RETIRED is empty) and the cases of the test, and docs/upgrading.md's stepping stone to "
            "26641e3."
        ),
        pieces=(
            "model/migrations/retired_settings.py::RETIRED_WITH_CONTRACT_1",
            "model/migrations/retired_settings.py::RETIRED",
            "model/problems.py::_retired",
            "tests/test_applications_config.py::CONTRACT_1_GONE",
            "tests/test_applications_config.py::test_fails_on_a_retired_key_saying_where_it_moved",
            "docs/upgrading.md::26641e3",
        ),
    ),
    Migration(
        name="teardown-plan-weight",
        release=LIVE_WEIGHTS_ONLY,
        keeps_it_alive=(
            "A colour last deployed before 6e5d02f carries the config's weight in its teardown plan (its state's hook "
            "input), which a destroy hands tools/hooks/teardown.py: the plan must still be read."
        ),
        delete_when=(
            "Every colour has been deployed (`cdktf deploy <colour>` updates the hook's input in place) or retired with "
            "a release from 6e5d02f on: delete RETIRED_KEYS and its use in TeardownPlan.from_json, and the test."
        ),
        pieces=(
            "model/migrations/retired_plan_keys.py",
            "model/migrations/retired_plan_keys.py::RETIRED_KEYS",
            "model/teardown_plan.py::TeardownPlan.from_json",
            "tests/test_teardown.py::test_a_plan_a_colour_was_deployed_with_before_still_runs_it",
        ),
    ),
    Migration(
        name="table-deletion-protection",
        release=PROTECTION_SWITCH,
        keeps_it_alive=(
            "A configuration from before 5e13341 sets `table.deletion_protection`, the former name of "
            "`deletion_protection`: it is still read as the one switch."
        ),
        delete_when=(
            "No deployment's configuration is older than 5e13341: delete the field and the merge of the two switches in "
            'model/loading.py, and their tests; add `table.deletion_protection` to the retired settings ("use '
            'deletion_protection") for one more window.'
        ),
        pieces=(
            "model/config/project.py::TableConfig.deletion_protection",
            "model/loading.py::_one_protection_switch",
            "tests/test_config.py::test_one_deletion_protection_switch_for_the_table_and_the_repository",
            "tests/test_config.py::test_fails_when_the_two_names_of_deletion_protection_disagree",
        ),
    ),
    Migration(
        name="lbc-controller-made-groups",
        release=CONTROLLER_TARGETS,
        keeps_it_alive=(
            "The load balancer controller's policy still lets it register targets in groups a colour's own controller "
            "made for an Ingress (tagged elbv2.k8s.aws/cluster like `<project>-*`): #45 wrote it for colours at a "
            "revision from before #30, which #46 retires first. No colour of this release makes such a group (its "
            "applications are bound with TargetGroupBindings; #45's admission and project rules refuse Ingresses and "
            "load balancer Services). #46 keeps every synthesized stack byte-identical, so the statement stays there."
        ),
        delete_when=(
            "With the next change of common's controller policy, or any release after #46: delete the statement, the "
            "`made` rows of calls.yaml and sources.yaml's paragraph on it, and made_groups in the test; `cdktf diff "
            "common` shows the policy updated in place."
        ),
        pieces=(
            "argocd/apps/platform/aws-load-balancer-controller/policy.json::TargetsInGroupsThisProjectsControllersMade",
            "argocd/apps/platform/aws-load-balancer-controller/upstream/calls.yaml::made",
            "argocd/apps/platform/aws-load-balancer-controller/upstream/sources.yaml::lbc-controller-made-groups",
            "tests/test_controller_targets.py::made_groups",
        ),
    ),
    Migration(
        name="per-colour-live-weights",
        release=PER_APPLICATION_WEIGHTS,
        keeps_it_alive=(
            'A traffic stack deployed before #47 holds the weights parameter of schema 1 (`{"blue": 100, ...}`, every '
            "application at it) until the first shift or drain of this release rewrites it per application under the "
            "traffic lock; until then the shift, --status, the teardown and retire read it as every application at "
            "those weights."
        ),
        delete_when=(
            "Every deployment has shifted or drained once with a release from #47 on (`aws ssm get-parameter --name "
            '/<project>/traffic/weights` begins `{"_schema": 2`): delete read_per_colour and its branch in parse '
            "(such a value is then refused like any other), --status's and the shift's words for schema 1, and the "
            "migration's test."
        ),
        pieces=(
            "tools/live_weights.py::read_per_colour",
            "tools/live_weights.py::PER_COLOUR_SAID",
            "tests/test_shift_applications.py::test_the_first_shift_rewrites_a_per_colour_parameter_per_application_under_the_lock",
        ),
    ),
)


def overdue(migrations: Iterable[Migration], today: dt.date) -> list[str]:
    """Each migration past its due date, said with its condition and its pieces: what the next maintainer does."""
    return [
        f"{m.name} was due on {m.due.isoformat()} ({SUPPORT_WINDOW.days} days after {m.release.commit} of "
        f"{m.release.date.isoformat()}{', ' + ' '.join(m.release.issues) if m.release.issues else ''}: "
        f"{m.release.what}). Delete it when: {m.delete_when} Its pieces: {', '.join(m.pieces)}"
        for m in migrations
        if today > m.due
    ]
