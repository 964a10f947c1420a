"""Patches to LocalStack 4.9.2's services, each applied once by :mod:`..plugins`.

Each module patches one behaviour, checks the pinned version first and does nothing
on any other, and says in its docstring what AWS does and what 4.9.2 did instead.
"""
