"""Where the code builds a record (a class of `django_pgmq.records`) from a named
statement's rows, found by reading the source: no list to keep.

A *source* is a statement of ``sql/queries.sql`` whose rows reach a record through
`plumbing._record` (or a helper that calls it, or ``Record(**{...})`` of a row read by
name), with the fields the code fills itself (``_record``'s keywords) and the columns it
reads by name besides (``row["bucket_start"]``). A *positional read* is a record built
from a row by position: ``Record(*row)``, ``Record(row[0], ...)``, values unpacked from
a row (``a, b = row``), or ``_record`` given rows fetched as tuples.

The reading is per function and follows names: a fetch (``_fetch_named``, ``_fetch``,
``run(..., fetch=sqlrun.NAMED)``, ``named_row``, and any function that passes a
parameter as the statement's name to one of them) gives rows; iterating, indexing or
unpacking them gives a row or its values; ``_record``, or a function that passes a
parameter to it, builds the record. What it cannot follow (a row handed through an
object's attribute) it does not see: `tests/integration/test_records_read_by_name.py`
checks that what it sees is what the code has.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "django_pgmq"

ROWS, ROW, VALUE = "rows", "row", "value"  # what a name holds: a fetch's rows, one row, a value
NAMED_FETCHERS = {"_fetch_named", "named_row"}
FETCHERS = NAMED_FETCHERS | {"_fetch", "_fetch_prepared", "run"}
ONE_ROW = {"named_row"}
PARAM = "param:"  # a statement name that is the function's parameter (a wrapper's, a builder's)


@dataclass(frozen=True)
class Source:
    """Rows of ``statement`` become ``record`` at ``where``; ``extras`` are the fields
    the code fills itself, ``read`` the columns it reads by name besides the fields."""

    statement: str
    record: str
    extras: frozenset[str]
    read: frozenset[str]
    where: str


@dataclass(frozen=True)
class PositionalRead:
    """A record built from a statement's row by position at ``where``."""

    record: str
    statements: frozenset[str]
    how: str
    where: str


@dataclass(frozen=True)
class Held:
    """What a name holds: rows, a row or a value taken by position, of which statements,
    and whether the rows are read by column name."""

    kind: str
    statements: frozenset[str]
    named: bool


@dataclass
class Found:
    sources: list[Source] = field(default_factory=list)
    positional: list[PositionalRead] = field(default_factory=list)
    named: set[str] = field(default_factory=set)  # every statement fetched by column name
    unfollowed: list[str] = field(
        default_factory=list
    )  # records built where rows were not followed


@dataclass(frozen=True)
class Wrapper:
    """A function that runs the statement named by its parameter ``index``."""

    index: int
    named: bool  # always by name (else: by name when called with named=True)


@dataclass(frozen=True)
class Builder:
    """A function that builds ``record`` from its parameter ``index`` by column name."""

    index: int
    record: str
    extras: frozenset[str]
    read: frozenset[str]
    where: str


def _called(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _fetch_mode(node: ast.Call) -> str | None:
    """``run``'s ``fetch=`` (``NAMED``, ``ONE``, ...), by the constant's name."""
    mode = _keyword(node, "fetch")
    if isinstance(mode, ast.Attribute):
        return mode.attr
    if isinstance(mode, ast.Name):
        return mode.id
    return None if mode is None else "?"


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = [a.arg for a in func.args.posonlyargs + func.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


class _Module:
    """One module's functions, the record classes it imports, and what it builds."""

    def __init__(self, path: Path, statements: set[str], records: set[str]) -> None:
        self.path = path
        self.name = str(path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE) else path)
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.statements = statements
        self.record_names = self._imported_records(records)
        self.records_module = self._imports_records_module()

    def _imported_records(self, records: set[str]) -> set[str]:
        found = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("records"):
                found |= {alias.asname or alias.name for alias in node.names} & records
        return found

    def _imports_records_module(self) -> bool:
        return any(
            isinstance(node, ast.ImportFrom) and any(a.name == "records" for a in node.names)
            for node in ast.walk(self.tree)
        )

    def record_of(self, func: ast.expr) -> str | None:
        """The record class ``func`` names (``QueueStats``, ``records.ExportRun``), or None."""
        if isinstance(func, ast.Name) and func.id in self.record_names:
            return func.id
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "records"
            and self.records_module
        ):
            return func.attr
        return None

    def functions(self) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node


class _Reader:
    """Follows the rows of one function, in source order (a comprehension in a scope of
    its own), and notes every record built from them."""

    def __init__(
        self,
        module: _Module,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        wrappers: dict[str, Wrapper],
        builders: dict[str, Builder],
        as_parameters: bool,
    ) -> None:
        self.module, self.func = module, func
        self.wrappers, self.builders = wrappers, builders
        self.params = _params(func)
        self.consts: dict[str, set[str]] = {}
        self.fetchers: dict[str, bool] = {}  # a local name bound to a fetch method: always named
        self.reads: dict[str, set[str]] = {}  # statement -> columns read by name
        self.builds: list[tuple[str, Held, frozenset[str], str]] = []
        self.positional: list[PositionalRead] = []
        self.fetched_params: dict[int, bool] = {}  # parameter index -> always named
        self.named: set[str] = set()
        self.used: set[str] = set()  # the builders called here on rows followed
        self.record_calls: list[str] = []  # every _record(Record, ...) / Record(**...) here
        env: dict[str, Held] = {}
        if as_parameters:
            env = {
                p: Held(ROW, frozenset({f"{PARAM}{i}"}), True) for i, p in enumerate(self.params)
            }
        for statement in func.body:
            self.visit(statement, env)

    def where(self, node: ast.AST) -> str:
        return f"{self.module.name}:{getattr(node, 'lineno', self.func.lineno)} ({self.func.name})"

    # -- names --------------------------------------------------------------------

    def statement_names(self, node: ast.expr | None) -> frozenset[str]:
        """The statements a name expression can be: constants, a local set from constants
        (``query = "a" if x else "b"``), or this function's parameter."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return frozenset({node.value} & self.module.statements)
        if isinstance(node, ast.Name):
            if node.id in self.consts:
                return frozenset(self.consts[node.id])
            if node.id in self.params:
                return frozenset({f"{PARAM}{self.params.index(node.id)}"})
        return frozenset()

    def constants(self, node: ast.expr) -> set[str] | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value} & self.module.statements or None
        if isinstance(node, ast.IfExp):
            body, orelse = self.constants(node.body), self.constants(node.orelse)
            if body is not None and orelse is not None:
                return body | orelse
        return None

    # -- what an expression holds --------------------------------------------------

    def fetch(self, node: ast.Call, env: dict[str, Held]) -> Held | None:
        """What a fetch call gives (None: no fetch of a known statement)."""
        name = _called(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.fetchers:
            named = self.fetchers[node.func.id] or _is_true(_keyword(node, "named"))
            found = self.statement_names(node.args[0]) if node.args else frozenset()
            self.note_param_fetch(found, named)
            return Held(ROWS, found, named) if found else None
        if name in self.wrappers:
            wrapper = self.wrappers[name]
            arg = node.args[wrapper.index] if len(node.args) > wrapper.index else None
            found = self.statement_names(arg)
            named = wrapper.named or _is_true(_keyword(node, "named"))
            self.note_param_fetch(found, named)
            return Held(ROWS, found, named) if found else None
        if name not in FETCHERS:
            return None
        found = frozenset()
        for arg in node.args[:2]:  # db.run("name", ...) or sqlrun.run(conn, "name", ...)
            found = self.statement_names(arg)
            if found:
                break
        if not found:
            return None
        mode = _fetch_mode(node)
        if name == "run" and mode in ("NOTHING", "ROWCOUNT", "MESSAGES", "?"):
            return None
        named = name in NAMED_FETCHERS or mode == "NAMED"
        self.note_param_fetch(found, named)
        if named:
            self.named |= {n for n in found if not n.startswith(PARAM)}
        kind = ROW if name in ONE_ROW or mode == "ONE" else ROWS
        return Held(kind, found, named)

    def note_param_fetch(self, found: frozenset[str], named: bool) -> None:
        if named:
            self.named |= {n for n in found if not n.startswith(PARAM)}
        for name in found:
            if name.startswith(PARAM):
                self.fetched_params[int(name[len(PARAM) :])] = named

    def held(self, node: ast.expr | None, env: dict[str, Held]) -> Held | None:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Call):
            return self.fetch(node, env)
        if isinstance(node, ast.Subscript):
            inner = self.held(node.value, env)
            if inner is None:
                return None
            index = node.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                self.note_read(inner, index.value)
                return None
            if inner.kind == ROWS:
                return Held(ROW, inner.statements, inner.named)
            if inner.kind == ROW:
                return Held(VALUE, inner.statements, inner.named)
        return None

    def note_read(self, held: Held, column: str) -> None:
        if held.kind == ROW:
            for name in held.statements:
                self.reads.setdefault(name, set()).add(column)

    def bind_each(self, target: ast.expr, held: Held | None, env: dict[str, Held]) -> None:
        """Bind a loop's ``target`` to what iterating over ``held`` gives: a row; unpacked,
        a tuple row's values (by position), or a named fetch's parts (a wrapper's
        ``(alias, rows)`` pairs, whose parts stay rows)."""
        if held is None or held.kind == VALUE:
            self.bind(target, None, env)
        elif isinstance(target, ast.Tuple | ast.List):
            part = Held(ROW if held.named else VALUE, held.statements, held.named)
            for element in target.elts:
                self.bind(element, part, env)
        else:
            self.bind(target, Held(ROW, held.statements, held.named), env)

    def bind(self, target: ast.expr, held: Held | None, env: dict[str, Held]) -> None:
        if isinstance(target, ast.Name):
            if held is None:
                env.pop(target.id, None)
            else:
                env[target.id] = held
        elif isinstance(target, ast.Tuple | ast.List):
            part = held
            if held is not None and held.kind == ROW:
                part = Held(VALUE, held.statements, held.named)  # a, b = row: by position
            elif held is not None and held.kind == ROWS:
                part = Held(ROW, held.statements, held.named)  # [row] = rows
            for element in target.elts:
                self.bind(element, part, env)

    # -- walking ----------------------------------------------------------------------

    def visit(self, node: ast.AST, env: dict[str, Held]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            return  # read as a function of its own
        if isinstance(node, ast.Assign):
            self.visit(node.value, env)
            self.assign(node.targets, node.value, env)
            return
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            self.visit(node.value, env)
            self.assign([node.target], node.value, env)
            return
        if isinstance(node, ast.For | ast.AsyncFor):
            self.visit(node.iter, env)
            self.bind_each(node.target, self.held(node.iter, env), env)
            for statement in itertools.chain(node.body, node.orelse):
                self.visit(statement, env)
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            inner = dict(env)
            for generator in node.generators:
                self.visit(generator.iter, inner)
                self.bind_each(generator.target, self.held(generator.iter, inner), inner)
                for condition in generator.ifs:
                    self.visit(condition, inner)
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for part in parts:
                self.visit(part, inner)
            return
        if isinstance(node, ast.Subscript):
            self.held(node, env)  # notes a column read by name
        if isinstance(node, ast.Call):
            self.call(node, env)
        for child in ast.iter_child_nodes(node):
            self.visit(child, env)

    def assign(self, targets: list[ast.expr], value: ast.expr, env: dict[str, Held]) -> None:
        consts = self.constants(value)
        fetcher = self.fetcher(value)
        for target in targets:
            if isinstance(target, ast.Name) and consts is not None:
                self.consts[target.id] = consts
            if isinstance(target, ast.Name) and fetcher is not None:
                self.fetchers[target.id] = fetcher
            self.bind(target, self.held(value, env), env)

    @staticmethod
    def fetcher(value: ast.expr) -> bool | None:
        """Whether ``value`` is a fetch method (``self._fetch_named if named else
        self._fetch``): True when it always reads by name, None when it is none."""
        options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        attrs = [o.attr for o in options if isinstance(o, ast.Attribute) and o.attr in FETCHERS]
        if not attrs:
            return None
        return all(a in NAMED_FETCHERS for a in attrs)

    def call(self, node: ast.Call, env: dict[str, Held]) -> None:
        name = _called(node)
        self.fetch(node, env)  # notes a parameter run as a statement (a wrapper)
        if name == "_record" and node.args:
            record = self.module.record_of(node.args[0])
            if record is not None:
                self.record_calls.append(self.where(node))
            if record is not None and len(node.args) > 1:
                extras = frozenset(k.arg for k in node.keywords if k.arg)
                self.build(record, self.held(node.args[1], env), extras, node)
            return
        if name in self.builders:
            builder = self.builders[name]
            arg = node.args[builder.index] if len(node.args) > builder.index else None
            held = self.held(arg, env)
            if held is not None:
                self.used.add(name)
                self.builds.append((builder.record, held, builder.extras, self.where(node)))
                for column in builder.read:
                    self.note_read(held, column)
            return
        record = self.module.record_of(node.func)
        if record is not None:
            self.direct(record, node, env)

    def build(self, record: str, held: Held | None, extras: frozenset[str], node: ast.AST) -> None:
        if held is None:
            return
        if held.kind != ROW or not held.named:
            how = "from rows fetched as tuples" if held.kind == ROW else f"from a {held.kind}"
            self.positional.append(
                PositionalRead(record, held.statements, f"_record {how}", self.where(node))
            )
            return
        self.builds.append((record, held, extras, self.where(node)))

    def direct(self, record: str, node: ast.Call, env: dict[str, Held]) -> None:
        """``Record(...)``: by name when given ``**`` of a row's columns; by position when an
        argument is a row, a value taken from one by position, or ``*`` of a row."""
        for keyword in node.keywords:
            if keyword.arg is None:
                rows = [
                    self.held(n, env) for n in ast.walk(keyword.value) if isinstance(n, ast.Name)
                ]
                for held in rows:
                    if held is not None and held.kind == ROW and held.named:
                        self.builds.append((record, held, frozenset(), self.where(node)))
                        return
        values = list(node.args) + [k.value for k in node.keywords if k.arg is not None]
        for value in values:
            starred = isinstance(value, ast.Starred)
            for sub in ast.walk(value.value if starred else value):
                if not isinstance(sub, ast.Name | ast.Subscript):
                    continue
                held = self.held(sub, env)
                if held is None:
                    continue
                if held.kind == VALUE or (held.kind == ROW and (starred or sub is value)):
                    how = f"{ast.unparse(value)} is taken from a row by position"
                    self.positional.append(
                        PositionalRead(record, held.statements, how, self.where(node))
                    )
                    return


def _module_paths() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*.py") if "migrations" not in p.relative_to(PACKAGE).parts
    )


def _modules(
    statements: set[str], records: set[str], paths: list[Path] | None = None
) -> list[_Module]:
    return [_Module(p, statements, records) for p in paths or _module_paths()]


def find(statements: set[str], records: set[str], paths: list[Path] | None = None) -> Found:
    """Every source and every positional read in the package (or in ``paths``)."""
    modules = _modules(statements, records, paths)
    wrappers: dict[str, Wrapper] = {}
    builders: dict[str, Builder] = {}
    for _ in range(3):  # a wrapper or builder may call another
        for module in modules:
            for func in module.functions():
                reader = _Reader(module, func, wrappers, builders, as_parameters=True)
                for index, named in reader.fetched_params.items():
                    if func.name not in FETCHERS:  # those are read as fetches
                        wrappers[func.name] = Wrapper(index, named)
                for record, held, extras, _where in reader.builds:
                    for name in held.statements:
                        if name.startswith(PARAM):
                            index = int(name[len(PARAM) :])
                            read = frozenset(reader.reads.get(name, ()))
                            builders[func.name] = Builder(index, record, extras, read, _where)
    found = Found()
    used: set[str] = set()
    for module in modules:
        for func in module.functions():
            reader = _Reader(module, func, wrappers, builders, as_parameters=False)
            found.positional += reader.positional
            found.named |= reader.named
            used |= reader.used
            followed = {where for *_, where in reader.builds} | {p.where for p in reader.positional}
            if func.name not in builders:
                found.unfollowed += [w for w in reader.record_calls if w not in followed]
            for record, held, extras, where in reader.builds:
                for name in sorted(held.statements):
                    if not name.startswith(PARAM):
                        read = frozenset(reader.reads.get(name, ()))
                        found.sources.append(Source(name, record, extras, read, where))
    found.unfollowed += [b.where for name, b in builders.items() if name not in used]
    return found
