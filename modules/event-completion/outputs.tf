output "table_name" {
  description = "Name of the token table (pk = job id)."
  value       = one(aws_dynamodb_table.tokens[*].name)
}

output "table_arn" {
  description = "ARN of the token table, known at plan time."
  value       = var.create ? local.table_arn : null
}

output "function_name" {
  description = "Name of the completion function (completion events, parks, direct completions)."
  value       = module.function.function_name
}

output "function_arn" {
  description = "ARN of the completion function, known at plan time: the Resource of a park task's Parameters.FunctionName."
  value       = var.create ? local.function_arn : null
}

output "rule_name" {
  description = "Name of the EventBridge rule on the completion events."
  value       = one(aws_cloudwatch_event_rule.completion[*].name)
}

output "park_policy_statements" {
  description = "IAM statements a state machine role needs to park its tasks through the completion function."
  value = var.create ? [{
    sid       = "ParkOnCompletionEvents"
    actions   = ["lambda:InvokeFunction"]
    resources = [local.function_arn, "${local.function_arn}:*"]
  }] : []
}

output "token_writer_policy_statements" {
  description = "IAM statements a function needs to park tokens itself (sfn_patterns.event_completion.tokens.TokenTable)."
  value = var.create ? concat([{
    sid       = "ParkTokens"
    actions   = ["dynamodb:UpdateItem"]
    resources = [local.table_arn]
    }],
    # The token table's key: DynamoDB asks the caller for kms:Decrypt on every write.
    var.kms_key_arn == null ? [] : [{
      sid       = "UseTheTokenTableKey"
      actions   = ["kms:Decrypt"]
      resources = [var.kms_key_arn]
    }],
  ) : []
}

output "role_arn" {
  description = "ARN of the completion function's IAM role (null when create is false)."
  value       = module.function.role_arn
}
