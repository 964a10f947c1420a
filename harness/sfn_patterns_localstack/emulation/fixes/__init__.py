"""Patches to LocalStack 4.14.0's services, each applied once by :mod:`..plugins`.

Each module patches one behaviour, checks the pinned version (:mod:`..pinned`) first and
does nothing on any other, and says in its docstring what AWS does and what 4.14.0 does
instead. None is applied in a stock LocalStack (``server.start(stock=True)``).
"""
