"""Alarm evaluation without a request per step (LocalStack 4.14.0).

LocalStack's CloudWatch (provider v2) evaluates each metric alarm every ``Period`` x
``EvaluationPeriods`` seconds (``alarm_scheduler.calculate_alarm_state``): the
evaluation and a state change are what AWS does (threshold, M of N,
``TreatMissingData``, SNS and Lambda actions). Each evaluation makes its calls through
an internal boto3 client: one DescribeAlarms and ``EvaluationPeriods + 2``
GetMetricData requests, each serialized, sent through the gateway's handler chain and
parsed again. With a module's dozen alarms on 10 s periods that is several requests
per second for as long as the deployment lives, on a machine that runs the suite on
two cores.

The patch hands the scheduler a client that calls the provider's methods directly,
in the alarm's account and region; what is evaluated, and how, is LocalStack's own
code, unchanged.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

from .sink import cloudwatch_provider

LOG = logging.getLogger(__name__)


class DirectCloudWatch:
    """The three CloudWatch calls the alarm scheduler makes, as direct provider calls.

    The keyword names are boto3's, as the scheduler passes them.
    """

    def __init__(self, account_id: str, region: str) -> None:
        from localstack.aws.api import RequestContext

        self._context = RequestContext(None)
        self._context.account_id = account_id
        self._context.region = region

    def describe_alarms(self, AlarmNames: list[str]) -> dict[str, Any]:
        """The named alarms."""
        return cloudwatch_provider().describe_alarms(self._context, alarm_names=AlarmNames)

    def get_metric_data(
        self, MetricDataQueries: list[dict], StartTime: Any, EndTime: Any
    ) -> dict[str, Any]:
        """The queries' data between the two times."""
        return cloudwatch_provider().get_metric_data(
            self._context, MetricDataQueries, StartTime, EndTime
        )

    def set_alarm_state(
        self, AlarmName: str, StateValue: str, StateReason: str, StateReasonData: str | None = None
    ) -> None:
        """A new state, with its actions (SNS, Lambda) when the state changes."""
        cloudwatch_provider().set_alarm_state(
            self._context, AlarmName, StateValue, StateReason, StateReasonData
        )


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.cloudwatch import alarm_scheduler
        from localstack.utils.aws import arns
    except ImportError:
        return False
    original = getattr(alarm_scheduler, "get_cloudwatch_client_for_region_of_alarm", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning(
            "sfn-patterns alarm evaluation not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def client_for(alarm_arn: str) -> DirectCloudWatch:
        parsed = arns.parse_arn(alarm_arn)
        return DirectCloudWatch(parsed["account"], parsed["region"])

    client_for._sfnp_patched = True
    alarm_scheduler.get_cloudwatch_client_for_region_of_alarm = client_for
    return True
