"""``wmap``: the root command, lazy subcommand loading and the top-level error handler.

Streams: data on stdout; warnings (``warning: ...``, printed after the output), errors
(``error: ...``) and notices on stderr. Never a traceback unless ``--debug`` (or
``WMAP_DEBUG=1``) is given. Exit codes: ``workload_map.cli.exit_codes``.

Import discipline: this module imports only click and light project modules. Subcommand modules
are imported when their command runs (``LazyGroup``), and ``--help`` lists them from the
``COMMANDS`` table without importing them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import click

from workload_map import __version__, messages
from workload_map.cli import exit_codes
from workload_map.cli.common import connection_options, output_option

if TYPE_CHECKING:
    from workload_map.model.loader import FieldValidation
    from workload_map.quarantine import Quarantine

#: A one-shot command never retries a quarantined definition.
CLI_QUARANTINE_PERIOD = 24 * 3600.0

PROG = "wmap"

# name -> (module, one-line help). The module must define ``command`` (a click.Command).
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": (
        "workload_map.cli.commands.validate",
        "Check Karta definition files offline (FILE, directory or -).",
    ),
    "get": ("workload_map.cli.commands.get", "List workloads with phase, components and GPUs."),
    "describe": (
        "workload_map.cli.commands.describe",
        "Show one workload as a tree of components and pods (or a manifest with -f).",
    ),
    "group": (
        "workload_map.cli.commands.group",
        "Show the gang object a pod joins (KAI's PodGroup by default).",
    ),
    "gang": ("workload_map.cli.commands.gang", "Show every gang object of a workload for a scheduler."),
    "requirements": (
        "workload_map.cli.commands.requirements",
        "Placement needs of a manifest; --fit checks kube contexts.",
    ),
    "completion": ("workload_map.cli.commands.completion", "Print a shell completion script."),
    "exporter": ("workload_map.cli.commands.exporter", "Serve Prometheus metrics about workloads."),
    "crd": ("workload_map.cli.commands.crd", "Print the Karta CRD (kartas.run.ai)."),
    "operator": ("workload_map.cli.commands.operator", "Run the Karta operator and admission webhooks."),
    "lint": ("workload_map.cli.commands.lint", "Check definitions (and objects) against CRD schemas."),
    "definitions": (
        "workload_map.cli.commands.definitions",
        "List the Karta definitions in use, or print one (NAME).",
    ),
    "explain": ("workload_map.cli.commands.explain", "Explain one definition in words (KIND or NAME)."),
    "generate": (
        "workload_map.cli.commands.generate",
        "Draft a Karta definition from a CRD (file or cluster).",
    ),
    "test": ("workload_map.cli.commands.test", "Run a definition against cases with expected results."),
    "record": ("workload_map.cli.commands.record", "Record a live workload's states for wmap test."),
    "serve": ("workload_map.cli.commands.serve", "Serve the Workload Map REST API (and web UI)."),
    "set": (
        "workload_map.cli.commands.set",
        "Set image, resources, env, scheduler... in every pod template.",
    ),
    "label": ("workload_map.cli.commands.label", "Update labels of workloads or of their pod templates."),
    "annotate": (
        "workload_map.cli.commands.annotate",
        "Update annotations of workloads or of their pod templates.",
    ),
    "scale": ("workload_map.cli.commands.scale", "Set a component's replica count through its definition."),
    "suspend": ("workload_map.cli.commands.suspend", "Suspend workloads through their definition."),
    "resume": ("workload_map.cli.commands.resume", "Resume workloads through their definition."),
    "policy": ("workload_map.cli.commands.policy", "Preview WorkloadPolicy changes on manifests."),
    "interpret": (
        "workload_map.cli.commands.interpret",
        "Answer a Karmada interpreter operation for a manifest (offline).",
    ),
    "karmada": (
        "workload_map.cli.commands.karmada",
        "Karmada resource interpreter: webhook and its configuration.",
    ),
    "export": (
        "workload_map.cli.commands.export",
        "Compile definitions for another engine (karmada, argocd).",
    ),
}


@dataclass
class State:
    """Per-run state shared by the root and its subcommands (``ctx.obj``)."""

    debug: bool = False
    config: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: kubectl connection flags given (ConnectionOptions field -> value), root and command merged.
    conn: dict[str, Any] = field(default_factory=dict)
    #: ``--definitions`` paths, in order.
    definitions: list[str] = field(default_factory=list)
    #: ``-o`` as given (``None``: config file, environment or ``table`` decide).
    output: str | None = None
    #: ``--prometheus`` and ``--cost-window`` as given (cli/cost.py; ``None``: not given).
    prometheus: str | None = None
    cost_window: str | None = None
    #: ``--validate``: how unknown fields and repeated keys of definition files are reported
    #: (``strict`` errors, ``warn`` warnings, ``ignore`` dropped), as kubectl's flag.
    field_validation: FieldValidation = "strict"

    #: Definitions that exceeded the expression limits too often in this run (see quarantine()).
    _quarantine: Any = None
    #: Definitions whose quarantine was already reported (one warning each, not one per workload).
    refused: set[str] = field(default_factory=set)

    def warn(self, message: str) -> None:
        """Queue a warning; it is printed on stderr after the command's output."""
        self.warnings.append(message)

    def quarantine(self) -> Quarantine:
        """This run's quarantine: after 3 limit failures in a row a definition's other workloads are
        listed as not evaluated instead of each costing a full evaluation deadline."""
        if self._quarantine is None:
            from workload_map.quarantine import Quarantine

            self._quarantine = Quarantine(threshold=3, period=CLI_QUARANTINE_PERIOD)
        return cast("Quarantine", self._quarantine)


def get_state() -> State:
    ctx = click.get_current_context()
    state = ctx.find_object(State)
    if state is None:  # a command invoked on its own (tests)
        state = ctx.ensure_object(State)
    return state


def _distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def suggestions(name: str, candidates: Sequence[str]) -> list[str]:
    """Commands within edit distance 2 of ``name``, or starting with it (as Cobra suggests)."""
    return [c for c in candidates if _distance(name.lower(), c) <= 2 or (name and c.startswith(name.lower()))]


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when invoked."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            import importlib

            module = importlib.import_module(self.lazy[cmd_name][0])
            command: click.Command = module.command
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.lazy[name][1]) for name in sorted(self.lazy)]
        for name in super().list_commands(ctx):
            cmd = super().get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str()))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if name not in self.list_commands(ctx) and not name.startswith("-"):
            text = messages.no_such_command(name)
            close = suggestions(name, self.list_commands(ctx))
            if close:
                text += "\n\n" + messages.did_you_mean(close)
            raise click.UsageError(text, ctx)
        return super().resolve_command(ctx, args)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(__version__)
        ctx.exit(0)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    name=PROG,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version and exit.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@connection_options
@output_option()
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Workload Map: see any Kubernetes workload's structure, status and gang rules through its
    Karta definition."""
    state = ctx.ensure_object(State)
    state.debug = state.debug or debug
    state.kubeconfig = state.conn.get("kubeconfig")
    state.context = state.conn.get("context")
    state.namespace = state.conn.get("namespace")
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)


def _err(text: str) -> None:
    """One message on stderr; names and messages in it may come from a cluster or a definition,
    so its control characters are escaped (line breaks kept: usage texts span lines)."""
    from workload_map.cli.terminal import echo

    echo(text, err=True)


def _flush_warnings(state: State, failure: BaseException | None = None) -> None:
    from workload_map.errors import ConnectionFailedError, caused_by

    unreachable = failure is not None and caused_by(failure, ConnectionFailedError)
    for w in state.warnings:
        if unreachable and "cannot reach the Kubernetes API server" in w:
            continue  # the error says the same: one line, as kubectl prints it
        _err(f"warning: {w}")
    state.warnings.clear()


def _bare_validate(args: list[str]) -> list[str]:
    """``--validate`` without a value means ``--validate=strict`` and never takes the next argument
    (kubectl's flag has a no-option default); click would take it, so it is spelled out here."""
    end = args.index("--") if "--" in args else len(args)
    return [("--validate=strict" if a == "--validate" and i < end else a) for i, a in enumerate(args)]


def run(argv: Sequence[str] | None = None) -> int:
    """Run ``wmap`` with ``argv`` and return the exit code (``main`` exits with it)."""
    args = _bare_validate(list(sys.argv[1:] if argv is None else argv))
    # Installed as a kubectl plugin, usage lines read "kubectl wmap ...".
    prog = "kubectl wmap" if argv is None and os.path.basename(sys.argv[0]).startswith("kubectl-") else PROG
    state = State(debug="--debug" in args or os.environ.get("WMAP_DEBUG", "") not in ("", "0"))
    try:
        try:
            result = cli.main(args=args, prog_name=prog, standalone_mode=False, obj=state)
        except BaseException as exc:
            _flush_warnings(state, exc)
            raise
        _flush_warnings(state)
        return result if isinstance(result, int) else exit_codes.OK
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        _err("error: aborted")
        return exit_codes.ERROR
    except click.UsageError as exc:
        if exc.ctx is not None:
            _err(exc.ctx.get_usage())
        _err(f"error: {exc.format_message()}")
        path = exc.ctx.command_path if exc.ctx is not None else PROG
        _err(messages.see_help(path))
        return exit_codes.USAGE
    except click.ClickException as exc:
        _err(f"error: {exc.format_message()}")
        return exc.exit_code
    except KeyboardInterrupt:
        _err("error: interrupted")
        return 130
    except BrokenPipeError:
        # stdout closed early (``wmap ... | head``): not an error worth a message.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return exit_codes.ERROR
    except Exception as exc:
        from workload_map.errors import WorkloadMapError

        if isinstance(exc, WorkloadMapError):
            for text in getattr(exc, "messages", None) or (str(exc),):
                _err(f"error: {text}")
            if state.debug:
                traceback.print_exc()
            return exit_codes.for_exception(exc)
        if state.debug:
            traceback.print_exc()
        _err(f"error: {messages.internal_error(f'{type(exc).__name__}: {exc}')}")
        return exit_codes.ERROR
    finally:
        _stop_exec_plugins()


def _stop_exec_plugins() -> None:
    """Exec credential plugins still running (wmap was interrupted, or another thread failed) end
    with wmap. Only when the client was used: ``--help`` stays free of it."""
    auth = sys.modules.get("workload_map.cluster.auth")
    if auth is not None:
        auth.stop_exec_plugins()


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like an error, so that ``finally`` blocks (exec plugins) run."""
    raise SystemExit(128 + signum)


def main() -> None:
    """Console-script entry point (``wmap``, ``kubectl-wmap``)."""
    import signal

    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    sys.exit(run())


if __name__ == "__main__":
    # ``python -m workload_map.cli.main``: run the module as imported, not this ``__main__`` copy,
    # whose State class the commands (which import workload_map.cli.main) would not find.
    from workload_map.cli import main as imported

    imported.main()
