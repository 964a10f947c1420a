"""Apply Terraform configurations to LocalStack, and check that nothing is left after.

:mod:`.workspace` stages a configuration and runs Terraform against an endpoint;
:mod:`.leftovers` lists what a name prefix still owns after a destroy.
"""
