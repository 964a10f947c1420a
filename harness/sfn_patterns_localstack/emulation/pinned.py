"""The one LocalStack release the harness's patches are derived from.

Every patch of LocalStack's own code checks this version before it changes anything
and does nothing on another release: a patch written against one release's internals
may silently do the wrong thing on the next. ``scripts/localstack.sh start --stock``
runs the same release with none of them.
"""

LOCALSTACK_VERSION = "4.14.0"
