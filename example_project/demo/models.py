"""Demo models: a record of each handler run, written by the demo's consumers and tests."""

from django.db import models


class HandlerRun(models.Model):
    """One run of a handler on one message."""

    msg_id = models.BigIntegerField()
    read_ct = models.IntegerField()
    payload = models.JSONField(null=True)
    pid = models.IntegerField()
    thread = models.CharField(max_length=100)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["started_at"]

    def __str__(self) -> str:
        return f"message {self.msg_id} (read {self.read_ct}) in pid {self.pid}"
