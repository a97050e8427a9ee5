"""`make bench` times configurations of its own (bench/run.py); each must be one synth accepts, or the bench measures
an error message. No timing here: the budgets are the bench's."""

from __future__ import annotations

from bench.run import APPLICATIONS, colours, many_applications
from tests.support.configs import example_raw, validated


def test_the_catalogue_subject_is_a_valid_configuration_of_that_many_applications_in_every_colour() -> None:
    config = validated({**example_raw(), **many_applications(APPLICATIONS)})
    assert len(config.applications) == APPLICATIONS
    assert len({app.namespace for app in config.applications.values()}) == APPLICATIONS
    for colour in config.clusters.values():
        assert set(colour.applications) == set(config.applications)


def test_the_colour_subjects_are_valid_configurations_with_one_serving_colour() -> None:
    for count in (2, 4, 8):
        config = validated({**example_raw(), **colours(count)})
        assert [c.weight for c in config.clusters.values()].count(100) == 1
        assert len(config.clusters) == count
