# No inputs: the configuration shows the provider block and one module call.
