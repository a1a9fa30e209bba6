"""``python -m benchmarks.celery``: Celery brokers side by side (see celery_transport.py).

The figures, the brokers and the method are described in benchmarks/celery_transport.py,
which is also the workers' Celery app.
"""

from __future__ import annotations

import sys

from benchmarks.celery_transport import main

if __name__ == "__main__":
    sys.exit(main())
