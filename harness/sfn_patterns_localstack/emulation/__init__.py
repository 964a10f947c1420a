"""What makes LocalStack behave like AWS: fixes, the Lambda executor, providers, IAM."""
