"""The ``oloproof`` commands (init, run, gate, report, compare, receipt): each parses nothing, calls the library and
prints, and returns its exit code."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .._run.locate import shell_word
from ..errors import InternalError, OloproofError, RunDirError, cut_middle, terminal_text
from .output import (
    COMPARE_PLAIN,
    compare_json,
    compare_why,
    for_people_on_stderr,
    gate_code,
    gate_json,
    print_case_errors,
    print_gate,
    print_json,
    print_json_text,
    print_wrapped,
    say,
)
from .parser import EMPTY_PATH
from .process import StopOnSignals, Stopped, ended_how, in_flight, resume_hint, run_finished, run_in_child

if TYPE_CHECKING:
    from .._analysis.run import Run
    from .._display.compare import Comparison


def _run_dir(given: str, doing: str, logs: bool = False) -> str:
    """``given``, or the latest run of the suite folder ``given`` (stderr says so: ``oloproof: {doing} the latest
    run of the suite: …``). A folder that is none of what the command reads (a run directory, a suite folder, and
    with ``logs`` Inspect AI logs) is refused in one line naming each, and so is a path that does not exist; Inspect AI
    logs given without ``logs`` (``oloproof compare``) are refused saying how Python compares them."""
    from .._analysis.inspect_files import is_inspect_log, is_inspect_source
    from .._config.files import dangling_link, file_above, folder_problem, not_home
    from .._run.locate import is_suite_folder, latest_run_dir, runs_hint
    from .._run.store import MANIFEST

    if not is_suite_folder(given):
        path, shown = Path(given), not_home(given)  # named as given: ./~/runs is not the home folder's runs
        wanted = "a run directory, a suite folder or Inspect AI logs" if logs else "a run directory or a suite folder"
        problem = folder_problem(path)
        if problem is not None:
            raise RunDirError(f"{shown}: {problem}; give {wanted} you can read")
        if not path.exists():  # a typo: say what may be given here, not only what a run directory holds
            above = file_above(path)  # notes.txt/r1: the user sees notes.txt there
            why = dangling_link(path) or (f"nothing can be there: {above}" if above else "no such file or folder")
            raise RunDirError(f"{shown}: {why}; give {wanted}")
        if path.is_file() and not is_inspect_source(path) and is_suite_folder(path.parent):  # demo/oloproof.yaml
            raise RunDirError(f"{shown}: is a file of the suite in {not_home(path.parent)}; give {wanted} "
                              f"({not_home(path.parent)} gives "
                              "the suite's latest run)")
        # oloproof compare: logs are compared in Python. A .json file is named a log only when it reads as one: a
        # run's manifest.json (given for its folder) or any other .json is what a run directory is not, as before
        if not logs and is_inspect_source(path) and (path.is_dir() or path.suffix == ".eval" or is_inspect_log(path)):
            raise RunDirError(f"{shown}: Inspect AI logs, which oloproof compare does not read; compare them in "
                              "Python, op.compare(op.from_inspect(BASE), op.from_inspect(CANDIDATE)), or give a run "
                              "directory or a suite folder")
        # lexists: a manifest.json that is a dangling link is a run that cannot be read, which loading it names
        if path.is_dir() and not os.path.lexists(path / MANIFEST) and not (logs and is_inspect_source(path)):
            kinds = (f"a run directory (no {MANIFEST}), a suite folder (no oloproof.yaml) or Inspect AI logs" if logs
                     else f"a run directory (no {MANIFEST}) or a suite folder (no oloproof.yaml)")
            raise RunDirError(f"{shown}: not {kinds}{runs_hint(path)}")
        return given
    latest = not_home(latest_run_dir(given))
    say(terminal_text(f"oloproof: {doing} the latest run of the suite: {latest}"))  # a reader gone keeps the code
    return latest


def _load(args: argparse.Namespace, doing: str) -> Run:
    """The run at ``args.run_dir``: a run directory, Inspect AI logs (--cluster, --state-key, --pass-threshold), or a
    suite folder's latest run (``args.run_dir`` becomes it; stderr says so: ``oloproof: {doing} the latest …``)."""
    from .._analysis.inspect_files import is_inspect_source
    from .._display.notebook import from_inspect, load_run

    if is_inspect_source(Path(args.run_dir)):
        return from_inspect(Path(args.run_dir), cluster=args.cluster, state_key=args.state_key,
                            pass_threshold=args.pass_threshold)
    if (args.cluster, args.state_key, args.pass_threshold) != (None, None, None):
        # a run folder's python checks read their scores when the suite runs: "for Inspect AI logs only" left a user
        # with a reward check and no word of where its threshold goes
        yaml_hint = ("; a python check's scores pass at its pass_threshold: in oloproof.yaml, read when the suite "
                     "runs (set it there and run the suite again)") if args.pass_threshold is not None else ""
        raise OloproofError(f"{args.run_dir}: --cluster, --state-key and --pass-threshold apply to Inspect AI logs "
                            f"only; this is not one{yaml_hint}")
    args.run_dir = _run_dir(args.run_dir, doing, logs=True)
    path = Path(args.run_dir)
    if args.release is not None or getattr(args, "baseline", None):
        # checked before load_run, which may build a columnar copy: an error writes nothing
        from .._analysis.baseline import check_baseline_config
        from .._analysis.gate import resolve_release
        from .._analysis.run import Run
        from .._run.baseline import BASELINE_DIR

        unopened = Run.unopened(path)
        if args.release is not None:
            resolve_release(unopened, args.release)
        if getattr(args, "baseline", None):
            check_baseline_config(unopened, Run.unopened(args.baseline, BASELINE_DIR))
    return load_run(path)


def _cmd_init(args: argparse.Namespace) -> int:
    from ..examples import init_example

    target = init_example(args.example, args.dest, force=args.force)
    print(terminal_text(f"wrote the {args.example} suite to {target}/"))  # a line break in the name: one line
    print(terminal_text(f"next: oloproof run {shell_word(target)}"))  # a command to copy: `dir with space`, `-x`
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .._display.notebook import load_run, progress_bar, stderr_is_tty
    from .._display.terminal import plain_terminal, run_size, terminal_width, uncached_note

    if Path(args.suite).is_file():
        folder = Path(args.suite).parent
        raise OloproofError(f"{args.suite}: is a file; oloproof run wants a suite folder, the folder holding "
                            f"oloproof.yaml (e.g. oloproof run {shell_word(folder)})")
    if args.resume and not args.out:
        from .._run.locate import latest_hint

        raise OloproofError("--resume needs --out DIR (the directory of the interrupted run)"
                            + latest_hint(args.suite, flag=True))
    if args.workers < 1:
        raise OloproofError(f"--workers {args.workers}: must be at least 1")
    from .._config.suite_config import MAX_EPOCHS

    if args.epochs is not None and not 1 <= args.epochs <= MAX_EPOCHS:
        raise OloproofError(f"--epochs {args.epochs}: must be 1 to {MAX_EPOCHS:,} (as epochs: in oloproof.yaml)")
    already = _finished_journal(Path(args.out)) if args.resume else None  # its size, when it had finished
    update, close = progress_bar(Path(args.suite).name) if not args.quiet and stderr_is_tty() else (None, None)
    params = {"suite": args.suite, "out": args.out, "workers": args.workers, "resume": args.resume,
              "cache": not args.no_cache, "isolation": args.isolation, "fsync": args.fsync,
              "progress": update is not None, "baseline": args.baseline,
              "epochs": args.epochs}
    try:
        final, directory, exitcode, pid = run_in_child(args, params, update)
    finally:
        if close is not None:
            close()
        plain_terminal()  # whatever the system printed, the lines below are shown as written
    # the run finished and its do-nothing baseline was running: "the run stopped before it finished" was untrue
    stopped = "the do-nothing baseline" if args.baseline and run_finished(directory) else "the run"
    if final is None:
        raise OloproofError(f"{stopped} stopped before it finished: the process running the system "
                            f"{ended_how(exitcode)}" + in_flight(directory, exitcode, pid=pid)
                            + resume_hint(args, directory))
    if final[0] == "interrupted" and len(final) > 1:  # not the user's Ctrl-C (read as one: a silent second try)
        raise OloproofError(f"{stopped} stopped before it finished: the process running the system was {final[1]} "
                            "(this command got none)" + in_flight(directory, exitcode, final[1], pid)
                            + resume_hint(args, directory))
    if final[0] in ("interrupted", "stopped"):  # the user's Ctrl-C, or a SIGTERM or SIGHUP this command got
        by = f" by {final[1]}" if final[0] == "stopped" else ""
        say("oloproof: interrupted" + by + resume_hint(args, directory))  # exit 2, as every stop: never 130 or 143
        return 2
    if final[0] in ("error", "internal"):
        message = str(final[1]) + (resume_hint(args, directory) if final[2] else "")
        raise InternalError(message) if final[0] == "internal" else OloproofError(message)
    result = load_run(Path(final[1]))
    if not result.finished:
        raise OloproofError(f"{result.directory}: the run did not finish" + resume_hint(args, result.directory))
    live, cached, unscored = result.replay_tally()
    if already is not None and already == _finished_journal(Path(args.out)):  # left as it was: say so
        print(terminal_text(f"{args.out}: the run had already finished; nothing to resume (its gate follows)"))
    print(terminal_text(f"run {result.run_id}: {run_size(result)}")  # a run id --resume read from a manifest
          + (f"; replay runs (control + faulted): {live} live, {cached} from the cache" if live or cached else ""))
    if unscored:  # a line of its own: the run line fits 100 columns
        print(f"  ({unscored} of the replay runs replay copies no criterion scores)")
    uncached = uncached_note(result, live, cached)
    if uncached:  # a second run all live says why, where it can tell (no `version`: never cached)
        print_wrapped(f"({uncached})", terminal_width(), indent="  ")
    print(terminal_text(f"  -> {result.directory}"))  # its own line: the table above the exit line fits 100 columns
    print_case_errors(result)
    idle = None
    if len(final) > 2 and final[2] is not None:  # ("done", directory, baseline directory)
        idle = load_run(Path(final[2]))
        print(f"baseline {idle.run_id}: {run_size(idle)} with a do-nothing agent")
        print(f"  -> {idle.directory}")
    return gate_code(print_gate(result, wide=args.wide, baseline=idle))


def _finished_journal(directory: Path) -> int | None:
    """The size of the case journal of a run in ``directory`` that had finished (its manifest says so); None for
    anything else. Unchanged after ``--resume``, nothing was resumed (a finished run that lost records is)."""
    from .._run.store import CASES, read_manifest

    try:
        return (directory / CASES).stat().st_size if read_manifest(directory).finished_at is not None else None
    except (OloproofError, OSError, ValueError):
        return None


def _cmd_gate(args: argparse.Namespace) -> int:
    """The gate of a stored run; an unfinished run is never a release decision (exit 2). With ``--json`` what it
    prints for people goes to stderr and stdout holds one JSON object (:func:`~.output.gate_json`)."""
    from .._display.notebook import load_run

    with for_people_on_stderr(args.json):
        result = _whole(_load(args, "gating"), args.run_dir)
        print_case_errors(result)
        idle = load_run(args.baseline) if args.baseline else None
        g = print_gate(result, args.release, wide=args.wide, baseline=idle)
    if args.json:
        print_json(gate_json(g, result.run_id))
    return gate_code(g)


def _whole(run: Run, given: str) -> Run:
    """``run``, unless it has no release decision (it did not finish, or it lost case runs): exit 2 then."""
    from .._analysis.gate import no_decision
    from .._analysis.inspect_log import is_inspect_run

    why = no_decision(run)
    if not why:
        return run
    from .._run.lock import RunLock

    text = f"{given}: {why.split(': ', 1)[1]}"
    if not run.finished and not is_inspect_run(run):
        holder = RunLock.holder(run.directory)
        if holder is not None:  # it is running now: --resume would be refused
            text += f"; it is still running ({holder}): wait until it has finished"
        elif _finished_journal(run.directory) is not None:  # it finished after it was read: a resume runs nothing
            text += "; it finished while it was being read: run the command again"
        else:
            root = run.manifest.suite_config.root or "SUITE"
            text += f"; finish it with: oloproof run {shell_word(root)} --out {shell_word(given)} --resume"
    raise OloproofError(text)


def _cmd_compare(args: argparse.Namespace) -> int:
    """Two stored runs compared; exit 0 only on NO_REGRESSION (an unfinished run is an error, exit 2). With
    ``--json`` what it prints for people goes to stderr and stdout holds one JSON object
    (:func:`~.output.compare_json`)."""
    with for_people_on_stderr(args.json):
        cmp, code, why = _print_comparison(args)
    if args.json:
        print_json(compare_json(cmp, code, why))
    return code


def _print_comparison(args: argparse.Namespace) -> tuple[Comparison, int, str]:
    """Compare the two runs of ``args`` and print the comparison for people; returns it, the exit code and why
    (what the exit line says after ``exit N:``)."""
    from .._analysis.compare import compare_release
    from .._analysis.gate_settings import PAIRED_CLUSTERED, approximate_once, weaker_count
    from .._analysis.run import Run
    from .._config.files import yaml_number
    from .._display.compare import compare
    from .._display.notebook import load_run
    from .._display.terminal import compare_table_text, reason_lines, terminal_width
    from .._display.theme import fmt_level

    # a suite folder stands for its latest run, as for gate and report
    args.base_run, args.candidate_run = _run_dir(args.base_run, "base:"), _run_dir(args.candidate_run, "candidate:")
    if Path(args.base_run).resolve() == Path(args.candidate_run).resolve():
        raise OloproofError(f"{args.base_run}: the base and the candidate are the same run; compare two runs")
    # before load_run, which may build a run's columnar copy: a --release error writes nothing
    compare_release(Run.unopened(args.base_run), Run.unopened(args.candidate_run), args.release)
    base = _whole(load_run(args.base_run), args.base_run)
    candidate = _whole(load_run(args.candidate_run), args.candidate_run)
    cmp = compare(base, candidate, release=args.release)
    print(terminal_text(f"base {base.run_id} -> candidate {candidate.run_id}"))  # run ids read from manifests
    epochs = max(cmp.base.epochs, cmp.candidate.epochs)  # a row is a case run: 40 cases of 3 epochs pair 120
    paired = f"{cmp.n_paired} paired case runs ({epochs} epochs a case)" if epochs > 1 else \
        f"{cmp.n_paired} paired cases"
    print(f"{paired}; diff = candidate - base with its {fmt_level(cmp.release.confidence)} "
          f"interval; margin {yaml_number(cmp.margin)}")
    width = terminal_width()
    reasons, approximate = approximate_once(cmp.table["reason"], args.release, candidate.release is not None,
                                            "--release to compare these runs", "the candidate run", PAIRED_CLUSTERED)
    table = cmp.table.assign(reason=reasons)  # the key to set: said once, below
    print(compare_table_text(table, width))
    for line in reason_lines(table, width, plain=COMPARE_PLAIN):  # as the gate prints its reasons
        print(line)
    if approximate:  # one key fixes it: say which, once
        print_wrapped(approximate, width)
    for note in cmp.notes:  # notes name criteria and copies
        print_wrapped(f"note: {note}", width)
    if len(cmp.flips):
        print(f"flipped (p->f, f->p): {len(cmp.flips)} rows in {cmp.flips['case_id'].nunique()} cases; "
              "in Python: op.compare(base, cand).flips, .panel(case_id)")
    code = 0 if cmp.verdict == "NO_REGRESSION" else 1
    weaker = len(cmp.relaxed) if code == 0 else 0  # named in the first note above
    why = compare_why(cmp.verdict, table, cmp.reason)
    print(f"compare: {cmp.verdict}" + (f" ({cmp.reason})" if cmp.reason else "") + f" — exit {code}: " + why
          + (f", by {weaker_count(weaker, cmp.weaker_than)}" if weaker else "")
          + (f"; the candidate's suite folder has changed since its run ({len(cmp.drift)} file(s): see the "
             f"note{'s' if len(cmp.drift) > 1 else ''} above)" if cmp.drift else ""))
    return cmp, code, why


def _cmd_receipt(args: argparse.Namespace) -> int:
    """Exit 0 verified, 2 otherwise; stderr names the receipt's status, or says ``contract error``."""
    from .._run.observe import verify_contract_file
    from ..errors import ContractFileError, DigestKeyError

    try:
        if not args.contract:  # an unset `$CONTRACT`: a contract error, as a hook reading --json expects one
            raise ContractFileError(f"argument contract: {EMPTY_PATH}")
        with StopOnSignals(interrupt=True, every=True):  # SIGQUIT, SIGUSR1, SIGALRM, ... too
            receipt = verify_contract_file(args.contract)  # as given: "./~/c.json" names a folder '~' on purpose
    except KeyboardInterrupt as exc:  # a hook blocks on 2 only: never 130 or death by a signal (Stopped too)
        name = exc.args[0] if isinstance(exc, Stopped) else "SIGINT"
        if args.json:
            print_json_text(json.dumps({"error": "interrupted", "message": f"stopped by {name}"}))
        say(f"oloproof: not verified: stopped by {name} (the validator it ran was stopped too)")
        return 2
    except (ContractFileError, DigestKeyError) as exc:
        # a contract file error names the file already; a missing key names the variable, so name the file too
        message = str(exc) if isinstance(exc, ContractFileError) else f"{args.contract}: {exc}"
        # cut after its escapes; --json says it as stderr does, as every other --json error does: a file name that
        # is not UTF-8 was a lone surrogate's escape (\udce9), which a strict JSON parser refuses
        message = cut_middle(terminal_text(message))
        if args.json:
            print_json_text(json.dumps({"error": "contract error", "message": message}))
        say(f"oloproof: error: contract error: {message}")
        return 2
    body = receipt.to_json_dict()
    if args.json:
        print_json_text(json.dumps({"receipt": body}))
    else:
        print(json.dumps(body, indent=2))
    if receipt.status != "verified":
        reason = terminal_text(str(receipt.reason or "not verified"))
        # cut as every message is: a reason names the validator's program as the contract wrote it, and when it is
        # not run (this process ignores SIGCHLD) nothing bounds that name
        say("oloproof: " + cut_middle(reason if reason.startswith(receipt.status + ":") else
                                      f"{receipt.status}: {reason}"))
        return 2
    if receipt.expected_sha256 is None and receipt.validator is None:  # as the gate's outcome_content_unchecked
        say("oloproof: warning: outcome_content_unchecked: the contract has no expected_sha256 and no validator, "
             "so any file at its locator was verified, an empty one included")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    """Write the report, then exit on its gate as every command does: 0 PASS, 1 BLOCK (the report of a regressed or
    unfinished run is written all the same), 2 an error. A CI step that only writes the report cannot pass a
    release the report says BLOCK."""
    from .._display.notebook import load_run
    from .._display.report import report_and_gate, report_path
    from .._display.terminal import exit_line

    report_path(args.out)  # before any run folder is opened (opening one may build its columnar copy)
    result = _load(args, "reporting on")  # checks --release and --baseline before it opens either run
    idle = load_run(args.baseline) if args.baseline else None
    path, g = report_and_gate(result, args.out, release=args.release, baseline=idle)
    print(terminal_text(f"wrote {path}"))
    print(exit_line(g))  # the last line: why the command exits as it does
    return 0 if g.verdict == "PASS" else 1


COMMANDS = {"init": _cmd_init, "run": _cmd_run, "gate": _cmd_gate, "receipt": _cmd_receipt, "report": _cmd_report,
            "compare": _cmd_compare}
