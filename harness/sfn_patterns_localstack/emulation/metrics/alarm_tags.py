"""PutMetricAlarm's tags go to the tag store, not into the alarm (LocalStack 4.14.0).

CloudWatch provider v2 keeps a metric alarm as its whole PutMetricAlarm request,
``Tags`` included, and never records the tags for ListTagsForResource. Two faults
follow: a client on CloudWatch's default protocol (Smithy RPC v2 CBOR: the Terraform
AWS provider, any recent AWS SDK but boto3) gets a 500 from DescribeAlarms, whose
CBOR serializer refuses the ``Tags`` member that a MetricAlarm does not have (the
provider then retries until its timeout); and a tagged alarm reads back untagged, so
a second ``terraform plan`` would want to add the tags again. The patch takes the
tags out of the request and tags the alarm's ARN, as TagResource does.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.cloudwatch.provider_v2 import CloudwatchProvider
        from localstack.utils.aws import arns
    except ImportError:
        return False
    original = getattr(CloudwatchProvider, "put_metric_alarm", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning("sfn-patterns alarm tags not applied (localstack %s)", version.__version__)
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def put_metric_alarm(self: Any, context: Any, request: Any) -> None:
        tags = request.pop("Tags", None)
        original(self, context, request)
        if tags:
            arn = arns.cloudwatch_alarm_arn(
                request["AlarmName"], account_id=context.account_id, region_name=context.region
            )
            self.get_store(context.account_id, context.region).TAGS.tag_resource(arn, tags)

    put_metric_alarm._sfnp_patched = True
    CloudwatchProvider.put_metric_alarm = put_metric_alarm
    return True
