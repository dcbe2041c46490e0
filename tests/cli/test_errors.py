"""How the command line words a failure: our errors stand alone, others name their type."""

from __future__ import annotations

from sqsjobs import JobConfigError, JobFatalError
from sqsjobs.aws.explain import one_line
from sqsjobs.cli._scenario import ScenarioTimeout
from sqsjobs.infra import StackDeployError


class RefusedByPolicy(JobFatalError):
    """A user's subclass of one of our errors, defined outside the sqsjobs package."""


class Malformed(ValueError):
    """An error from a module that merely claims to be ours."""


Malformed.__module__ = "sqsjobs.aws._sqs"


def test_our_errors_are_recognised_by_class_wherever_they_are_defined() -> None:
    assert one_line(RefusedByPolicy("tenant acme-eu is suspended")) == (
        "tenant acme-eu is suspended"
    )
    assert one_line(JobConfigError("invalid_option", "Invalid lease 0: must be > 0")) == (
        "Invalid lease 0: must be > 0"
    )


def test_an_error_that_is_not_a_job_error_names_its_type_whatever_its_module() -> None:
    assert one_line(Malformed("body is not JSON")) == "Malformed: body is not JSON"
    assert one_line(KeyError("queue_url")) == "KeyError: 'queue_url'"


def test_the_deploy_and_demo_errors_stand_alone() -> None:
    deploy = StackDeployError("jobs-prod", "ROLLBACK_COMPLETE", "CloudFormation rolled back")
    assert one_line(deploy) == "CloudFormation rolled back"
    timeout = ScenarioTimeout("The demo's jobs did not finish within 0.05s (3 queued left)")
    assert one_line(timeout) == "The demo's jobs did not finish within 0.05s (3 queued left)"
