"""The benchmark's Django task: returns its argument (for either backend)."""

from django_pgmq.tasks.compat import task


@task()
def echo(value: int) -> int:
    return value
