# tests/terraform/test_iam_static.py reads the plan itself; this output is what each
# module call reports as its roles (role_arns), compared there with the roles planned.
output "role_arns" {
  description = "Each pattern module call's role_arns output, by pattern and call key."
  value = {
    job_poller    = { for k, m in module.job_poller : k => m.role_arns }
    semaphore     = { for k, m in module.semaphore : k => m.role_arns }
    dag_aggregate = { for k, m in module.dag_aggregate : k => m.role_arns }
    sqs_throttle  = { for k, m in module.sqs_throttle : k => m.role_arns }
  }
}
