"""Developer tooling for the SQL API in ``django_pgmq/sql/``: nothing at run time imports it.

- ``migrate``: ``python -m django_pgmq.sqltools.migrate check`` (the migrations' frozen SQL
  and the live files give the same schema) and ``make "why"`` (write the next migration);
- ``schema``: the ``pgmq`` schema's signature read from pg_catalog, and two compared;
- ``attributes``: ``attributes_declared.py`` rendered from the declared queue attributes
  (written by ``regenerate``), and the docs table rendered from it, which
  ``docs/hooks.py`` calls at each docs build;
- ``regenerate``: ``python -m django_pgmq.sqltools.regenerate [--check] [--why "..."]``
  runs every generator (migration, attributes, translation catalogue, command reference),
  or fails on what is stale (CI).

It ships in the wheel so that an installed project can run ``migrate check`` too.
"""
