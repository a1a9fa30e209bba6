"""Django models over django-pgmq's tables."""

from __future__ import annotations

import warnings

from django.db import models
from django.db.models.functions import Now
from django.utils.translation import gettext_lazy as _

from .consumer_settings import CONSUMER_DEFAULTS


def _renamed(new: str) -> property:
    """A deprecated alias of field ``new`` (pgmq's vocabulary now): reading or setting
    it, or passing it to the model's constructor, warns and uses ``new``."""

    def warn(record: models.Model) -> None:
        old = next(n for n, v in vars(type(record)).items() if v is alias)
        warnings.warn(
            f"{type(record).__name__}.{old} is deprecated: use {new}",
            DeprecationWarning,
            stacklevel=3,
        )

    def get(record: models.Model) -> object:
        warn(record)
        return getattr(record, new)

    def set_(record: models.Model, value: object) -> None:
        warn(record)
        setattr(record, new, value)

    alias = property(get, set_, doc=f"Deprecated: use {new}.")
    return alias


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
        verbose_name = _("queue")
        verbose_name_plural = _("queues")
        # The dashboard's purge action needs its own permission (view/change/delete cover the rest).
        permissions = [("purge_queue", "Can purge queue")]

    def __str__(self) -> str:
        return self.queue_name


class QueueConfig(models.Model):
    """Consumer settings of one queue, written by the worker and read by the admin.

    The worker resolves each setting from its command line, then the handler's
    ``@consumer(...)`` arguments, then this row, then the defaults, and writes
    the result back here, so the admin knows each queue's ``max_receive_count`` and
    dead-letter queue.
    """

    class OnSuccess(models.TextChoices):
        ARCHIVE = "archive", "archive"
        DELETE = "delete", "delete"

    queue = models.CharField(max_length=47, primary_key=True)
    max_receive_count = models.PositiveIntegerField(
        default=CONSUMER_DEFAULTS["max_receive_count"],
        db_column="max_reads",  # the column keeps its name (the admin's SQL reads it)
        help_text="Reads after which a failing message is dead-lettered; 0: never.",
    )
    dead_letter_queue = models.CharField(max_length=47, blank=True)
    on_success = models.CharField(
        max_length=7, choices=OnSuccess.choices, default=CONSUMER_DEFAULTS["on_success"]
    )
    vt = models.PositiveIntegerField(
        default=CONSUMER_DEFAULTS["vt"], help_text="Visibility timeout, seconds."
    )
    batch = models.PositiveIntegerField(
        default=CONSUMER_DEFAULTS["batch"], help_text="Messages read at a time."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["queue"]
        verbose_name = "queue configuration"

    def __str__(self) -> str:
        return self.queue

    # Deprecated name of max_receive_count (the queue attribute's and the worker's).
    max_reads = _renamed("max_receive_count")


class WorkerQuerySet(models.QuerySet):
    """Workers by liveness: a worker that stops heartbeating expires."""

    def alive(self) -> WorkerQuerySet:
        return self.filter(expires_at__gt=Now())

    def expired(self) -> WorkerQuerySet:
        return self.filter(expires_at__lte=Now())


class Worker(models.Model):
    """A running ``pgmq_consume`` process; removed on a clean stop, aged out when killed."""

    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    queues = models.JSONField(default=list)
    concurrency = models.PositiveIntegerField(default=1)
    started_at = models.DateTimeField(db_default=Now())
    heartbeat_at = models.DateTimeField(db_default=Now())
    expires_at = models.DateTimeField()
    processed = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)

    objects = WorkerQuerySet.as_manager()

    class Meta:
        ordering = ["started_at"]

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}"


class QueueSample(models.Model):
    """A queue's figures at one moment, written by workers' heartbeats for the admin's charts."""

    queue = models.CharField(max_length=47)
    sampled_at = models.DateTimeField(db_default=Now())
    # pgmq's names for the messages in a queue, those ready to read, those read and not yet
    # visible again, and those sent with a delay (``pgmq.metrics()``, pgmq._queue_figures);
    # the columns keep their first names.
    queue_length = models.BigIntegerField(db_column="depth")
    queue_visible_length = models.BigIntegerField(db_column="visible")
    in_flight_length = models.BigIntegerField(db_column="in_flight")
    delayed_length = models.BigIntegerField(db_column="delayed")
    archive_size = models.BigIntegerField()
    total_messages = models.BigIntegerField()
    # When the oldest message then in the queue was sent (None: empty); the overview's
    # "oldest age" order, which holds however old the sample is.
    oldest_enqueued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["queue", "sampled_at"]
        indexes = [
            models.Index(fields=["queue", "sampled_at"], name="pgmq_sample_queue_at"),
            models.Index(fields=["sampled_at"], name="pgmq_sample_at"),
        ]

    def __str__(self) -> str:
        return f"{self.queue} @ {self.sampled_at:%Y-%m-%d %H:%M:%S}"

    # Deprecated names of queue_length, queue_visible_length, in_flight_length and
    # delayed_length (pgmq's names).
    depth = _renamed("queue_length")
    visible = _renamed("queue_visible_length")
    in_flight = _renamed("in_flight_length")
    delayed = _renamed("delayed_length")


class HandlerTiming(models.Model):
    """Handler durations of one queue in one worker process over one sample interval."""

    id = models.BigAutoField(primary_key=True)
    queue = models.CharField(max_length=47)
    recorded_at = models.DateTimeField(db_default=Now())
    calls = models.PositiveIntegerField()
    p50_ms = models.FloatField()
    p95_ms = models.FloatField()

    class Meta:
        ordering = ["queue", "recorded_at"]
        indexes = [models.Index(fields=["queue", "recorded_at"], name="pgmq_timing_queue_at")]

    def __str__(self) -> str:
        return f"{self.queue} @ {self.recorded_at:%Y-%m-%d %H:%M:%S}"


class TaskResultRecord(models.Model):
    """One Django task enqueued with ``django_pgmq.tasks.PgmqBackend``: its state and result.

    The backend's ``get_result`` reads it; the worker updates it per attempt. The
    message on the pgmq queue only points here (by ``id``). Finished rows are
    purged after the backend's retention (worker maintenance, ``pgmq_maintain``).
    """

    class Status(models.TextChoices):
        # The values of Django's TaskResultStatus.
        READY = "READY", _("Ready")
        RUNNING = "RUNNING", _("Running")
        FAILED = "FAILED", _("Failed")
        SUCCESSFUL = "SUCCESSFUL", _("Successful")

    id = models.UUIDField(_("ID"), primary_key=True)
    backend = models.CharField(_("backend"), max_length=100)
    queue_name = models.CharField(_("queue"), max_length=47)
    task_path = models.CharField(_("task"), max_length=255)
    priority = models.SmallIntegerField(_("priority"), default=0)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.READY
    )
    args = models.JSONField(_("arguments"), default=list)
    kwargs = models.JSONField(_("keyword arguments"), default=dict)
    run_after = models.DateTimeField(_("run after"), null=True, blank=True)
    enqueued_at = models.DateTimeField(_("enqueued"))
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    last_attempted_at = models.DateTimeField(_("last attempted"), null=True, blank=True)
    return_value = models.JSONField(_("return value"), null=True, blank=True)
    errors = models.JSONField(_("errors"), default=list, blank=True)
    worker_ids = models.JSONField(_("workers"), default=list, blank=True)
    max_attempts = models.PositiveIntegerField(
        _("max attempts"),
        default=1,
        help_text=_("Attempts (workers) after which a failure is final."),
    )
    msg_id = models.BigIntegerField(
        _("message ID"), null=True, blank=True, help_text=_("Its message on the queue.")
    )

    class Meta:
        ordering = ["-enqueued_at"]
        verbose_name = _("task result")
        verbose_name_plural = _("task results")
        indexes = [
            models.Index(fields=["status", "finished_at"], name="pgmq_task_status_finished"),
            models.Index(fields=["task_path"], name="pgmq_task_path"),
            models.Index(fields=["queue_name", "status"], name="pgmq_task_queue_status"),
            models.Index(fields=["enqueued_at"], name="pgmq_task_enqueued"),
        ]

    def __str__(self) -> str:
        return f"{self.task_path} ({self.status})"
