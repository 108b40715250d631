"""Tessera from Python: plan, cost, simulate and inspect distributed attention schedules.

Every function takes the command line's flags as keyword arguments (underscores for dashes;
``pass_`` for ``--pass``) and returns what the matching ``tessera ... --json`` prints, as plain
dicts and lists with units in the key names (``time_s``, ``recv_bytes_max``), which
``pandas.DataFrame(...)`` takes as they are::

    import tessera
    best = tessera.plan(gpus=64, seq="256K", model="analytic")["ranking"][0]
    ring = tessera.cost(algo="ring", gpus=8, seq="64K", bandwidth="400Gb/s")
    schedule = tessera.schedule(algo="mesh", tile="2x2", gpus=4, seq="16K")
    schedule.ops, schedule.blocks, schedule.transfers, schedule.per_gpu

Bad input raises ValueError with the message the command line prints; an unknown keyword
raises TypeError.
"""

from ._tessera import Schedule, __version__, cost, plan, read_results, schedule, schedules, simulate

__all__ = ["Schedule", "cost", "plan", "read_results", "schedule", "schedules", "simulate", "__version__"]
