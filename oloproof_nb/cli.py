"""The ``oloproof`` command: parse, call the library, print; exit 2 with one line on any user error."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ._version import __version__
from .errors import OloproofError, VacuousCheckWarning

if TYPE_CHECKING:
    from ._analysis.run import Run

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line on stderr, exit 2, no usage dump
        self.exit(2, f"oloproof: error: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="oloproof", description="Judge stateful agents by the world they leave behind.")
    p.add_argument("--version", action="version", version=f"oloproof_nb {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    init = sub.add_parser("init", help="copy a bundled example suite")
    init.add_argument("--example", required=True, help="stateful-agent or false-success")
    init.add_argument("dest", nargs="?", help="destination folder (default: ./<example>)")

    run = sub.add_parser("run", help="run a suite; print the gate; exit 0 PASS, 1 BLOCK")
    run.add_argument("suite", help="the suite folder (holds oloproof.yaml)")
    run.add_argument("--out", help="run directory (default: runs/<run_id>/ in the suite folder)")
    run.add_argument("--workers", type=int, default=1, help="system instances run concurrently")
    run.add_argument("--resume", action="store_true", help="finish the interrupted run in --out")
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    gate = sub.add_parser("gate", help="the gate of a stored run; exit 0 PASS, 1 BLOCK")
    gate.add_argument("run_dir", help="a run directory (runs/<run_id>/)")
    gate.add_argument("--release", help="another release.yaml to apply")

    report = sub.add_parser("report", help="write the gate, validity, replay and slice tables with plots; exit 0")
    report.add_argument("run_dir", help="a run directory (runs/<run_id>/)")
    report.add_argument("--out", required=True,
                        help="report.html (standalone, plots embedded) or report.md (plots in <stem>_files/)")
    report.add_argument("--release", help="another release.yaml to apply")

    receipt = sub.add_parser("receipt", help="verify one outcome now; exit 0 verified, 2 otherwise")
    receipt.add_argument("contract", help="CONTRACT.json (its locator is relative to this file)")
    return p


def _cmd_init(args: argparse.Namespace) -> int:
    from .examples import init_example

    target = init_example(args.example, args.dest)
    print(f"wrote the {args.example} suite to {target}/")
    print(f"next: oloproof run {target}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from ._config.suite import load_suite
    from ._display.notebook import run

    if args.resume and not args.out:
        raise OloproofError("--resume needs --out DIR (the directory of the interrupted run)")
    suite = load_suite(args.suite)
    result = run(suite, workers=args.workers, out=args.out, resume=args.resume,
                 progress=False if args.quiet else None)
    print(f"run {result.run_id}: {len(result.records)} cases -> {result.directory}")
    return _print_gate(result)


def _print_gate(result: Run, release: str | None = None) -> int:
    from ._display.markdown import text_table
    from ._display.notebook import gate
    from ._display.theme import fmt_number

    g = gate(result, release=release)
    shown = ["criterion", "n", "passed", "missing", "rate", "ci_low", "ci_high", "method", "threshold", "verdict",
             "reason"]
    rows = [[fmt_number(v) for v in row] for row in g.table[shown].itertuples(index=False, name=None)]
    print(text_table(rows, shown))
    for finding in g.findings:  # read from the run: `oloproof gate RUN_DIR` knows them without the suite
        warnings.warn(VacuousCheckWarning(finding), stacklevel=1)
    print(f"gate: {g.verdict}" + (f" ({g.reason})" if g.reason else ""))
    return 0 if g.verdict == "PASS" else 1


def _cmd_gate(args: argparse.Namespace) -> int:
    from ._display.notebook import load_run

    return _print_gate(load_run(args.run_dir), args.release)


def _cmd_receipt(args: argparse.Namespace) -> int:
    from ._run.observe import verify_contract_file

    receipt = verify_contract_file(Path(args.contract))
    print(json.dumps(receipt.to_json_dict(), indent=2))
    return 0 if receipt.status == "verified" else 2


def _cmd_report(args: argparse.Namespace) -> int:
    """Write the report; exit 0 once written, whatever the gate says (``oloproof gate`` gives the 0/1 exit)."""
    from ._display.notebook import load_run
    from ._display.report import write_report

    path = write_report(load_run(args.run_dir), args.out, release=args.release)
    print(f"wrote {path}")
    return 0


COMMANDS = {"init": _cmd_init, "run": _cmd_run, "gate": _cmd_gate, "receipt": _cmd_receipt, "report": _cmd_report}


def _one_line(text: str) -> str:
    """``text`` with every unprintable character escaped (a newline or a separator inside a key stays one line)."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``oloproof`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    shown: set[str] = set()

    def _warn(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        line = _one_line(str(message))
        if line not in shown:  # a finding warned at load_suite and again by the gate prints once
            shown.add(line)
            label = "vacuous check" if issubclass(category, VacuousCheckWarning) else category.__name__
            print(f"oloproof: warning: {label}: {line}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", VacuousCheckWarning)
            warnings.showwarning = _warn
            return COMMANDS[args.command](args)
    except OloproofError as exc:
        print(f"oloproof: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("oloproof: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
