"""IAM enforcement for the harness's LocalStack: role sessions are decided by their policies.

LocalStack community accepts every call. This package evaluates each request made with
a role session's credentials (Step Functions tasks, Lambda functions, EventBridge
targets with a role) against that role's identity policies, and each call a service
principal makes on a resource (EventBridge invoking a Lambda) against the resource's
policy, the way AWS's policy evaluation logic does. ``SFNP_IAM=enforce|audit|off``.
"""
