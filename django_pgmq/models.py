"""Django models over django-pgmq's tables."""

from __future__ import annotations

from django.db import models


class Queue(models.Model):
    """A row of ``pgmq.meta``: one queue. Read-only to Django; create queues with the manager."""

    queue_name = models.CharField(max_length=47, primary_key=True)
    is_partitioned = models.BooleanField()
    is_unlogged = models.BooleanField()
    created_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = 'pgmq"."meta'
        ordering = ["queue_name"]
        # The dashboard's purge action needs its own permission (view/change/delete cover the rest).
        permissions = [("purge_queue", "Can purge queue")]

    def __str__(self) -> str:
        return self.queue_name
