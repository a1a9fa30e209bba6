"""What a run measures: the targets, the phases, and which target runs in which phase."""

from __future__ import annotations

from dataclasses import dataclass

from .profiles import Profile


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    store: str  # ours | pgmq | raw
    client: str  # sql | manager | manager-prepared | worker | worker-batch
    kinds: frozenset[str]  # phase kinds it takes part in
    attributes: str = ""  # queue attributes (JSON) set on the fresh queue
    sqlfile: str = ""  # the clients' statements, when not the store's

    @property
    def ours(self) -> bool:
        return self.store == "ours"


ALL = frozenset({"send", "read", "e2e", "notify"})
# Peers first, so each django-pgmq line can show its ratios as soon as it is printed.
TARGETS = [
    Target("pgmq-sql", "pgmq 1.13 SQL functions", "pgmq", "sql", ALL),
    Target("raw", "raw table (PK only)", "raw", "sql", ALL),
    Target("ours-sql", "django-pgmq SQL functions", "ours", "sql", ALL),
    # Queue attributes: a read of a queue with priorities, and send_batch with a
    # deduplication window, every message carrying its own deduplication_id.
    Target(
        "ours-priorities",
        "django-pgmq SQL, queue with priorities",
        "ours",
        "sql",
        frozenset({"read"}),
        attributes='{"priorities": true}',
    ),
    Target(
        "ours-dedup-ids",
        "django-pgmq SQL, the same sends, no window",
        "ours",
        "sql",
        frozenset({"send"}),
        sqlfile="fn_dedup.sql",
    ),
    Target(
        "ours-dedup",
        "django-pgmq SQL, deduplication window",
        "ours",
        "sql",
        frozenset({"send"}),
        attributes='{"deduplication_window": 300}',
        sqlfile="fn_dedup.sql",
    ),
    Target(
        "ours-manager",
        "django-pgmq QueueManager",
        "ours",
        "manager",
        frozenset({"send", "read", "e2e"}),
    ),
    # The manager with psycopg's prepared statements on (OPTIONS prepare_threshold): its
    # reads and acknowledgements run the queue's own statement, prepared per connection.
    Target(
        "ours-manager-prepared",
        "django-pgmq QueueManager, prepared statements on",
        "ours",
        "manager-prepared",
        frozenset({"send", "read", "e2e"}),
    ),
    Target(
        "ours-worker", "django-pgmq pgmq_consume", "ours", "worker", frozenset({"e2e", "notify"})
    ),
    Target(
        "ours-worker-batch",
        "pgmq_consume, batch handler",
        "ours",
        "worker-batch",
        frozenset({"e2e"}),
    ),
]
PEERS = ("pgmq-sql", "raw")


@dataclass(frozen=True)
class Phase:
    name: str
    kind: str  # send | read | e2e | notify
    batch: int = 1
    ack: str = "archive"
    size: int = 22


def phases() -> list[Phase]:
    """Every phase, in the order they run."""
    found = [Phase(f"send b{b}", "send", b) for b in (1, 10, 100)]
    for ack in ("archive", "delete"):
        found += [Phase(f"read+{ack} b{b}", "read", b, ack) for b in (1, 10, 100)]
    found += [
        Phase("e2e 22B", "e2e", 10, "archive", 22),
        Phase("e2e 1KB", "e2e", 10, "archive", 1024),
    ]
    found.append(Phase("notify", "notify", 1))
    return found


def targets(profile: Profile, chosen: list[str] | None, worker_available: bool) -> list[Target]:
    """The targets of this run (the worker ones only where pgmq_consume exists)."""
    result = []
    for target in TARGETS:
        if chosen and target.key not in chosen:
            continue
        if target.client == "worker-batch" and not (profile.worker_batch_target or chosen):
            continue
        if target.client.startswith("worker") and not worker_available:
            continue
        result.append(target)
    return result
