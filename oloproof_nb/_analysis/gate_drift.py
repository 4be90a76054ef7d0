"""What the suite folder holds now that differs from what a run recorded, for the warnings of a gate.

A gate of a run uses the run's records (its stored release settings, validity labels, checks and cases) and warns
when the suite folder's files now say otherwise: release.yaml (:func:`release_drift`, :func:`warn_release_drift`),
a label file (:func:`label_drift`), oloproof.yaml or the case file (:func:`suite_drift`). The suite folder is
:func:`suite_folder`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .._config.cases import iter_cases
from .._config.files import read_yaml
from .._config.imports import file_digest
from .._config.labels import load_labels
from .._config.release import ReleaseConfig, flat_settings, load_release, setting_change
from .._config.suite import RELEASE_FILE
from .._config.suite_config import SUITE_FILE, SuiteConfig, parse_suite_config
from .._core.labels import pair_labels
from ..errors import LabelFileError, OloproofError, warn_at_caller
from .run import Run, stored_pair_labels
from .run_checks import label_difference

__all__ = ["release_drift", "label_drift", "suite_drift", "drift_sentences", "suite_folder", "release_now",
           "warn_release_drift", "release_unreadable"]


def suite_folder(run: Run) -> Path | None:
    """The suite folder whose files a gate of ``run`` compares with what the run recorded (release.yaml, the labels,
    oloproof.yaml and the case file): the one the run folder sits in (``<suite>/runs/<run_id>``: it holds the suite
    file), else the one the run was made from (its manifest's ``root``); None for a run of no suite folder (an
    Inspect AI log).

    A run folder moves with its suite: a suite made at one path and gated at another (another checkout, a CI job's
    workspace, the folder renamed) has its manifest's root pointing where nothing is, or at another copy of the
    suite. Compared with that path, a run made while release.yaml was loosened, gated after the file was put back
    and the folder moved, said ``gate: PASS — exit 0`` without the word it gets where it was made.
    A run folder sitting in a suite of another name (a link or a copy put in its ``runs/``) is another suite's run:
    it is compared with the one it was made from, while that folder holds a suite. Where it holds none, the suite was
    moved and renamed since (or the run copied from another machine): compared with nothing, a run made while
    release.yaml was loosened gated PASS with no word, so it is compared where it sits.
    """
    made = run.suite_root
    if made is None:
        return None
    here = run.directory.parent.parent
    try:
        same = here.resolve() == made.resolve()
    except (OSError, RuntimeError):  # a loop of links where it was made: not this folder (as 3.13 resolves it)
        same = False
    try:
        if same or not (here / SUITE_FILE).is_file():
            return made  # the folder it was made in (as the manifest names it), or a run folder kept outside a suite
    except OSError:  # a folder that cannot be read
        return made
    try:
        name = read_yaml(here / SUITE_FILE).get("name")
    except (OloproofError, OSError):  # a suite file being edited: its files are compared as they can be read
        return here
    if isinstance(name, str) and name != run.suite_name:  # another suite's (linked, copied in), or this one renamed
        try:
            return made if (made / SUITE_FILE).is_file() else here  # where it was made holds no suite: moved too
        except OSError:
            return here
    return here


#: How two release settings differ in the settings that matter (stored, now; None: the defaults): one line each.
SettingChanges = Callable[[ReleaseConfig | None, ReleaseConfig | None], list[str]]


def release_now(run: Run) -> tuple[Path, ReleaseConfig | None] | None:
    """The suite folder's release.yaml (:func:`suite_folder`) and its settings now (None: there is none); None when
    there is nothing to compare with: no suite folder, a run made with settings whose file is gone or no file (a
    run folder copied out of its suite whose suite moved, a folder in its place), a file that cannot be read (an
    edit in progress is no setting)."""
    root = suite_folder(run)
    if root is None:
        return None
    path = root / RELEASE_FILE
    if run.release is not None and not path.is_file():
        return None  # a run made with none is compared with a file that appeared since
    try:
        return path, (load_release(path) if path.is_file() else None)
    except (OloproofError, OSError):
        return None


def release_unreadable(run: Run) -> str:
    """Why the suite folder's release.yaml cannot be read now (one line naming it, as :func:`load_release` refuses
    it), or ``""``: none is there, it reads, or the run has no suite folder.

    The stored settings decide a gate of the run either way; a file that reads and differs is named by
    :func:`warn_release_drift`, and one that does not read was passed over without a word (a
    threshold tightened with a typo in the key, or a duplicate key, read as a change the gate had taken)."""
    root = suite_folder(run)
    if root is None or not os.path.lexists(root / RELEASE_FILE):
        return ""
    try:
        load_release(root / RELEASE_FILE)
    except OloproofError as exc:
        return str(exc)
    except OSError as exc:
        return f"{root / RELEASE_FILE}: {exc.strerror or exc}"
    return ""


def release_drift(run: Run) -> str:
    """How the suite folder's release.yaml now differs from the settings stored with ``run`` (which a gate of the
    run uses unless given ``release=``), e.g. ``criteria.answer_matches 0.6 → 0.95``; empty when they agree, or
    when the run has no suite folder or its file cannot be read (an edit in progress is no setting).

    A user who tightened release.yaml and gated the stored run again was told PASS on the thresholds replaced.
    Pooled runs were made with one release.yaml (``op.load_runs`` refuses others): their settings are compared
    with the file in the first run's suite folder.
    """
    return _drift(run, release_now(run))


def warn_release_drift(run: Run, found: tuple[Path, ReleaseConfig | None] | None, uses: str,
                       changes: SettingChanges | None = None) -> str:
    """Warn (UserWarning, at the caller's line) when the suite folder's release.yaml (``found``, as
    :func:`release_now` read it) now differs from the settings stored with ``run``, which decide: the first
    differing settings, as ``changes(stored, now)`` lists those that matter (default: every setting), then ``uses``
    (what decides, and how to use the file instead). Returns the warning's text, empty when none was given (a
    report of the gate writes it beside the verdict: :attr:`Gate.drift`)."""
    drift = _drift(run, found, changes or _setting_changes)
    if not drift or found is None:
        return ""
    said = f"{found[0]} differs from the release settings run {run.run_id} was made with ({drift}); {uses}"
    warn_at_caller(said)
    return said


def _setting_changes(was: ReleaseConfig | None, now: ReleaseConfig | None) -> list[str]:
    """Every setting ``now`` gives otherwise than ``was`` (None: the defaults), one :func:`setting_change` each, in
    the order of their keys."""
    before, after = flat_settings(was), flat_settings(now)
    return [setting_change(k, before.get(k), after.get(k)) for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)]


def _drift(run: Run, found: tuple[Path, ReleaseConfig | None] | None,
           changes: SettingChanges = _setting_changes) -> str:
    """:func:`release_drift` of ``run`` given the suite folder's release.yaml as :func:`release_now` read it, with
    the settings ``changes`` lists."""
    if found is None:
        return ""
    listed = changes(run.release, found[1])
    return ", ".join(listed[:3]) + (f" and {len(listed) - 3} more" if len(listed) > 3 else "")


def label_drift(run: Run) -> list[tuple[Path, str]]:
    """The label files of the suite folder whose judgements now differ from the validity labels stored with ``run``,
    each with how (:func:`~.run_checks.label_difference`: ``transform injected: ord-018~injected is labeled
    otherwise``); empty when every pair keeps its label (a reworded note, one more judgement that changes no majority),
    or when the run has no suite folder or a file is gone or no regular file (moved, replaced). A file that is there but
    refused now (a labeler's second judgement of a pair added since, text that is not UTF-8, more than
    :data:`~oloproof_nb._config.labels.MAX_LABEL_BYTES`) is named as one that cannot be read now: the next run of
    the suite stops on it.

    The run's labels decide which copies its verdicts leave out and whether a transform is checked, as its stored
    release.yaml decides the thresholds (:func:`release_drift`): a copy labeled invalid when the run was made and
    corrected to valid since stayed out of the gate, its failing row with it, without a word. The suite folder is
    :func:`suite_folder`'s.
    """
    root = suite_folder(run)
    if root is None:
        return []
    out = []
    stored = stored_pair_labels(run)  # the Run's, worked out once
    for transform in run.config.metamorphic.transforms:
        path = root / transform.validity_labels
        if not path.is_file():
            continue  # gone, or no regular file (moved, replaced): nothing to compare with
        try:
            now = load_labels(path, None, transform.name)
        except LabelFileError as exc:
            # there, and refused now: a labeler's second judgement of a pair added, or saved in another encoding
            # (UTF-16 from an editor was skipped as if gone, as every refusal without a line was)
            where = f"line {exc.line}: " if exc.line is not None else ""
            out.append((path, f"it cannot be read now: {where}{exc.message}"))
            continue
        except (OloproofError, OSError):
            continue
        change = label_difference({transform.name: stored.get(transform.name, {})},
                                  {transform.name: pair_labels(now)}, ("in the run", "in the file now"))
        if change:
            out.append((path, change))
    return out


def suite_drift(run: Run) -> list[tuple[Path, str]]:
    """The files of the suite folder that now ask for other judgements than ``run`` recorded, each with how: its
    ``oloproof.yaml`` (``criterion other_order_untouched configured otherwise``, ``tool_errors``) and the case file
    it ran (``1 case(s) edited (first 'ord-001')``); empty when both are as the run used them (a file whose bytes
    changed but not what it says, a comment or the order of its lines, is no difference), or when the run has no
    suite folder or a file cannot be read (moved, an edit in progress, a named pipe put there).

    The run's verdicts were judged on the cases and by the checks it was made with, as its stored release.yaml
    decides the thresholds (:func:`release_drift`): every expected answer edited since, a check tightened or a
    failing case added, the gate of the run kept its PASS without a word. The system's own code is not compared:
    that needs importing it, and the run records one fingerprint of all of its files, not each file. The suite
    folder is :func:`suite_folder`'s.
    """
    root = suite_folder(run)
    if root is None:
        return []

    def config_change(path: Path) -> str:
        return _config_change(run.config, parse_suite_config(read_yaml(path), path))

    def cases_change(path: Path) -> str:
        return _cases_change(run, path)

    out = []
    for name, change_of in ((SUITE_FILE, config_change), (run.config.cases, cases_change)):
        path = root / name
        try:  # the same bytes say the same: the file is read again only when they differ
            change = "" if file_digest(path) == run.manifest.digests.get(name) else change_of(path)
        except (OloproofError, OSError):
            continue
        if change:
            out.append((path, change))
    return out


#: Keys of oloproof.yaml that decide no verdict: the suite's name, the slice tables a report shows, how workers run.
_NO_VERDICT = frozenset({"name", "slices", "isolation"})


def drift_sentences(run: Run, made: str, suite_tail: str, labels_tail: str) -> list[str]:
    """One sentence per file of ``run``'s suite folder that now asks for other judgements than the run recorded
    (:func:`suite_drift`, then :func:`label_drift`): ``<file> differs from the one <made> was made with (<change>);
    <suite_tail>``, and for a label file ``… the validity labels <made> was made with …; <labels_tail>``.

    ``made`` names the run as the reader knows it (``run <id>``, ``the candidate run <id>``); the tails say what the
    caller (the gate, a comparison) judged by and how to judge by the files as they are now.
    """
    return ([f"{path} differs from the one {made} was made with ({change}); {suite_tail}"
             for path, change in suite_drift(run)]
            + [f"{path} differs from the validity labels {made} was made with ({change}); {labels_tail}"
               for path, change in label_drift(run)])


def _config_change(was: SuiteConfig, now: SuiteConfig) -> str:
    """How ``now`` (oloproof.yaml as it is) differs from ``was`` (a run's), in words: each criterion added, removed
    or configured otherwise, then each other key that differs but those of :data:`_NO_VERDICT`; the first three,
    and how many more."""
    mine = {ev.name: ev.settings() for ev in was.evaluators}
    theirs = {ev.name: ev.settings() for ev in now.evaluators}
    changes = [f"criterion {name} " + ("added" if name not in mine else "removed" if name not in theirs
                                       else "configured otherwise")
               for name in [*mine, *(n for n in theirs if n not in mine)] if mine.get(name) != theirs.get(name)]
    a, b = (config.model_dump(exclude={"evaluators", *_NO_VERDICT}) for config in (was, now))
    changes += [key for key in a if a[key] != b.get(key)]
    return ", ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3 else "")


def _cases_change(run: Run, path: Path) -> str:
    """How the case file at ``path`` differs from the source cases ``run`` ran (their ids, digests and clusters), in
    words: ``1 case(s) added (first 'ord-025'), 1 case(s) edited (first 'ord-001')``; "" when it holds the same."""
    cases = run.cases
    ran = cases[cases["transform"].isna()]
    mine = dict(zip(ran["case_id"].astype(str), zip(ran["digest"].astype(str), ran["cluster"].astype(str),
                                                    strict=True), strict=True))
    theirs = {case.id: (case.digest, case.cluster) for _, case in iter_cases(path)}
    both = [c for c in mine if c in theirs]
    # an unfinished run has not reached every case yet: those it has not recorded are no cases added since
    added = [c for c in theirs if c not in mine] if run.finished else []
    found = {"added": added, "removed": [c for c in mine if c not in theirs],
             "edited": [c for c in both if mine[c][0] != theirs[c][0]],
             "moved to another cluster": [c for c in both if mine[c][0] == theirs[c][0] and mine[c][1] != theirs[c][1]]}
    return ", ".join(f"{len(ids)} case(s) {what} (first {min(ids)!r})" for what, ids in found.items() if ids)
