"""Every unreleased migration, back and forth, keeps queues and their attributes working.

For each migration N from 0008 (the first after 0.1.0) to the head: back to N's
predecessor and forward to the head, with queues of every kind (sqltools.migrate's
EVERY_KIND) and one queue per attribute that changes what a read or a send does
(max_in_flight with a message in flight, rate_limit, deduplication_window, paused,
delivery_delay, priorities, max_receive_count with a dead-letter queue). After each
round trip the attributes are as set, each still does what it says, and the schema
of pgmq (per-queue objects included) is the one the head installed (sqltools.schema).

Every N, not a subset: the loop runs in one child process (tests/migration_round_trip.py)
with in-process ``migrate`` calls, about 20 s on a loaded 2-CPU machine. Going back past
0013 (the attributes table) is refused while a queue has attributes (schema_guard):
for N up to 0013 the refusal is checked, then the round trip runs with the attributes
cleared and sets them again. The checks are of behaviour, never of a state table, so
they hold whatever stores the limits.
"""

from __future__ import annotations

import json

import pytest

from tests.scratch import MIGRATIONS

pytestmark = pytest.mark.slow

UNRELEASED = sorted(p.name[:4] for p in MIGRATIONS.glob("00*.py") if p.name[:4] > "0007")


def test_every_unreleased_migration_round_trip_keeps_attributes_enforced(scratch):
    assert UNRELEASED[0] == "0008"
    done = scratch.python("tests/migration_round_trip.py", *UNRELEASED)
    assert done.returncode == 0, done.stderr[-3000:]
    rounds = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(name[:4] for name in rounds if name != "head") == UNRELEASED
    problems = {name: r["problems"] for name, r in rounds.items() if r["problems"]}
    assert problems == {}
