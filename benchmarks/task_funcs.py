"""The benchmark's Django tasks (for either backend): a no-op and a 1 ms one."""

import time

from django_pgmq.tasks.compat import task


@task()
def echo(value: int) -> int:
    return value


@task()
def pause(value: int) -> int:
    """Sleep 1 ms (a task that waits on something), then return its argument."""
    time.sleep(0.001)
    return value
