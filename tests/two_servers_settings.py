"""Settings of a subprocess in the two-server tests: the example project, plus alias "second"
(``PGMQ_SECOND_DATABASE``, a JSON ``DATABASES`` entry) holding the queues named ``second_*``."""

import json
import os

from example_project.settings import *  # noqa: F403
from example_project.settings import DATABASES, PGMQ

DATABASES = {**DATABASES, "second": json.loads(os.environ["PGMQ_SECOND_DATABASE"])}
PGMQ = {**PGMQ, "QUEUE_DATABASES": [("second_*", "second")]}
