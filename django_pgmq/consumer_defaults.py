"""The consumer settings' defaults, declared once.

The worker uses them for a setting nothing else gives (``worker/config.py``), and
`QueueConfig`'s fields take them as their defaults, so the admin shows, for a queue no
worker has configured yet, what a worker would use. tests/unit/test_consumer_defaults.py
fails when either drifts from here. Standard library only (models.py imports it).
"""

from __future__ import annotations

from typing import Any

CONSUMER_DEFAULTS: dict[str, Any] = {
    "batch": 10,
    "vt": 30,
    "max_receive_count": 5,
    "on_success": "archive",
    "retry_delay": 1.0,
}
