"""The pairing of two runs' cases for :func:`~.compare.compare`: case runs paired by (case id, case digest) and
epoch, their clusters merged where the candidate joins the base's, and the paired verdict rows and flips.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import OloproofError
from .columns import TEXT, Column, FrameSpec
from .run import Run

__all__ = ["UNPAIRED", "PAIRED_VERDICTS", "FLIPS", "CLUSTERS_JOINED", "pair_cases", "epochs_of",
           "same_epochs_per_case", "joined_clusters", "pair_rows", "flips"]

#: The overall reason when the candidate's case file joins clusters of the base run (the digest leaves them out).
CLUSTERS_JOINED = "clusters_changed"

UNPAIRED = FrameSpec("unpaired", (
    Column("case_id", TEXT, "The case."),
    Column("reason", TEXT, "``only_in_base``, ``only_in_candidate`` or ``digest_changed``."),
    Column("base_digest", TEXT, "Its digest in the base run (missing when absent)."),
    Column("candidate_digest", TEXT, "Its digest in the candidate run (missing when absent)."),
), documented=4)

PAIRED_VERDICTS = FrameSpec("paired_verdicts", (
    Column("case_id", TEXT, "The case."),
    Column("cluster", TEXT, "Its cluster (the base run's; clusters joined by the candidate's are merged)."),
    Column("criterion", TEXT, "The criterion."),
    Column("base", TEXT, "The base run's verdict: ``pass``, ``fail`` or ``missing``."),
    Column("candidate", TEXT, "The candidate run's verdict."),
    Column("base_reason", TEXT, "Why, in the base run."),
    Column("candidate_reason", TEXT, "Why, in the candidate run."),
), documented=7)

FLIPS = FrameSpec("flips", (
    Column("case_id", TEXT, "The case."),
    Column("cluster", TEXT, "Its cluster."),
    Column("criterion", TEXT, "The criterion."),
    Column("change", TEXT, "``pass_to_fail`` or ``fail_to_pass`` (missing counts as not passed)."),
    Column("base", TEXT, "The base run's verdict."),
    Column("candidate", TEXT, "The candidate run's verdict."),
    Column("base_reason", TEXT, "Why, in the base run."),
    Column("candidate_reason", TEXT, "Why, in the candidate run."),
), documented=8)


def _keys(base: pd.DataFrame, candidate: pd.DataFrame) -> list[str]:
    """The columns naming one case run: the case id, and its epoch when both runs have epochs."""
    return ["case_id"] + (["epoch"] if "epoch" in base.columns and "epoch" in candidate.columns else [])


def _one_row_per_case(cases: pd.DataFrame, keys: list[str], run: Run, side: str) -> None:
    twice = cases[cases.duplicated(keys, keep=False)]
    if len(twice):
        raise OloproofError(f"compare: case {twice['case_id'].iloc[0]!r} is in the {side} run {run.run_id} more "
                            "than once (a pooled run?); compare one run on each side: for several tries of each "
                            "case, run each version once with the epochs (oloproof run SUITE --epochs K), whose case "
                            "runs are paired epoch by epoch")


def epochs_of(run: Run, side: str) -> int:
    """The epochs each case of ``run`` ran: its own, or the one count shared by every run of a pooled run.

    A pooled run's ``epochs`` is the sum over its runs, but its rows keep each run's epoch numbers (1..k): two
    runs of 1 epoch holding different cases are a pooled run of "2 epochs" whose every case has epoch 1 only.
    Compared with a run of 2 epochs it paired epoch 1 and left the candidate's epoch 2 unseen, so the epochs
    that must match are the runs' own.
    """
    own = sorted({r.manifest.epochs for r in run.runs})
    if len(own) > 1:
        raise OloproofError(f"compare: the {side} run {run.run_id} pools runs made with different epochs "
                            f"({', '.join(map(str, own))}); each case run is paired with the same epoch of the other "
                            "run, so compare runs made with the same epochs")
    return own[0]


def same_epochs_per_case(base: pd.DataFrame, candidate: pd.DataFrame) -> None:
    """Refuse a case in both runs whose epochs differ: a run's ``epochs`` is its largest, and Inspect AI tasks
    pooled into one run keep each its own (base: a task of 1 epoch and one of 3; candidate: the other way round),
    so the run-level check passed and the epochs one side lacked were left out (the candidate's failing epochs
    2 and 3 of every case: NO_REGRESSION, where its own gate said FAIL). :func:`~.compare.compare` asks it of finished
    runs only: a run still being written lacks the later epochs of the case in flight, which are then unpaired."""
    eb = base.groupby("case_id", sort=False)["epoch"].agg(lambda e: tuple(sorted(e)))
    ec = candidate.groupby("case_id", sort=False)["epoch"].agg(lambda e: tuple(sorted(e)))
    both = eb.index.intersection(ec.index)
    differ = both[(eb[both] != ec[both]).to_numpy()]
    if len(differ):
        cid = differ[0]
        raise OloproofError(f"compare: case {cid!r} ran epochs {_epoch_list(eb[cid])} in the base run and "
                            f"{_epoch_list(ec[cid])} in the candidate ({len(differ)} such case(s)); each case run is "
                            "paired with the same epoch of the other run, so compare runs whose cases ran the same "
                            "epochs")


def _epoch_list(epochs: tuple[int, ...]) -> str:
    return f"{epochs[0]}–{epochs[-1]}" if len(epochs) > 2 and list(epochs) == list(range(epochs[0], epochs[-1] + 1)) \
        else ", ".join(map(str, epochs))


def _merged_clusters(base: pd.Series, candidate: pd.Series) -> np.ndarray:
    """Each paired case's cluster: the base cluster, with clusters the candidate joins merged (connected parts)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    b = ["b:" + str(v) for v in base]
    c = ["c:" + str(v) for v in candidate]
    for x, y in set(zip(b, c, strict=True)):
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)
    label: dict[str, str] = {}
    for x in sorted(set(b)):  # a merged cluster is named after its first base cluster
        label.setdefault(find(x), x[2:])
    return np.array([label[find(x)] for x in b], dtype=object)


def pair_cases(base: Run, candidate: Run) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(paired cases with their cluster, the unpaired frame, the key columns)."""
    bc, cc = base.cases, candidate.cases
    keys = _keys(bc, cc)
    _one_row_per_case(bc, keys, base, "base")
    _one_row_per_case(cc, keys, candidate, "candidate")
    merged = bc[[*keys, "digest", "cluster"]].merge(cc[[*keys, "digest", "cluster"]], on=keys, how="outer",
                                                    suffixes=("_base", "_candidate"), indicator=True, sort=False)
    side = merged["_merge"].astype(str)
    same = (side == "both") & (merged["digest_base"] == merged["digest_candidate"])
    reason = np.select([side == "left_only", side == "right_only"], ["only_in_base", "only_in_candidate"],
                       "digest_changed")
    out = merged[~same.to_numpy()]
    unpaired = UNPAIRED.from_columns({"case_id": list(out["case_id"]), "reason": list(reason[~same.to_numpy()]),
                                      "base_digest": list(out["digest_base"]),
                                      "candidate_digest": list(out["digest_candidate"])})
    paired = merged[same.to_numpy()]
    paired = pd.DataFrame({**{k: paired[k].to_numpy() for k in keys},
                           "cluster": _merged_clusters(paired["cluster_base"], paired["cluster_candidate"]),
                           "base_cluster": paired["cluster_base"].astype(str).to_numpy()})
    return paired, unpaired, keys


def joined_clusters(paired: pd.DataFrame) -> str:
    """What :data:`CLUSTERS_JOINED` says when the candidate's clusters join clusters of the base run (``""`` when
    they join none): how many, and the first cluster made of several.

    The case digest leaves the cluster out, so a candidate's case file may group the paired cases otherwise. A
    split is undone by the merge (a cluster never splits), but a join narrows the interval too: the paired
    interval splits each cluster's *net* change into a loss and a gain, so a lost case and a gained case put into
    one cluster cancel (100 singletons, 15 lost and 10 gained, margin 0.12: each gained case joined to a lost
    one's cluster moved ci_low from −0.147 to −0.117, NO_REGRESSION)."""
    bases = paired.groupby("cluster", sort=True)["base_cluster"].unique()
    joined = bases[bases.map(len) > 1]
    if joined.empty:
        return ""
    first = sorted(joined.iloc[0])
    shown = ", ".join(first[:3]) + (" …" if len(first) > 3 else "")
    return (f"{CLUSTERS_JOINED}: the candidate's case file puts paired cases of {int(joined.map(len).sum())} "
            f"clusters of the base run into {len(joined)} (first: {shown}); a loss and a gain in one cluster cancel, "
            "so the joined clusters' interval may be narrower than the base's clusters give: compare runs whose "
            "cases have the same clusters")


def pair_rows(base: Run, candidate: Run, paired: pd.DataFrame, keys: list[str],
              criteria: list[str]) -> tuple[pd.DataFrame, dict[str, int], dict[str, int], dict[str, int], pd.DataFrame]:
    """The paired verdict rows (``case_id, cluster, criterion, base, candidate, …``), the rows judged
    one-sidedly and, of those, the candidate's rows that do not pass and the base run's rows that pass, per
    criterion; and the base run's rows that do not pass and have no candidate row, as paired rows the candidate
    does not pass either (``candidate`` ``fail``: a tie), in the columns of the paired rows.

    Left out, such a row takes a tie out of the difference, which raises it where gains outnumber losses (a
    candidate that stopped calling a tool in a case whose fault replay the base failed: 5 rows lost and 14
    gained of 20 gave ci_low −0.0525, and of 19 −0.0474, NO_REGRESSION at margin 0.05); :func:`~.compare.compare`
    lets a NO_REGRESSION stand only when it holds with them counted as ties too."""
    cols = [*keys, "criterion", "verdict", "reason"]
    bv = base.verdicts[cols][base.verdicts["criterion"].isin(criteria)]
    cv = candidate.verdicts[cols][candidate.verdicts["criterion"].isin(criteria)]
    both = bv.merge(cv, on=[*keys, "criterion"], how="outer", suffixes=("_b", "_c"), indicator=True, sort=False)
    both = both.merge(paired, on=keys, how="inner", sort=False)  # rows of paired cases only
    lone = both[both["_merge"].astype(str) != "both"]
    one_sided = lone["criterion"].value_counts().to_dict()
    failed = lone[(lone["_merge"].astype(str) == "right_only") & (lone["verdict_c"] != "pass")]
    new_failures = failed["criterion"].value_counts().to_dict()
    base_only = lone["_merge"].astype(str) == "left_only"
    lost = lone[base_only & (lone["verdict_b"] == "pass")]
    lost_passes = lost["criterion"].value_counts().to_dict()
    ties = lone[base_only & (lone["verdict_b"] != "pass")]
    ties = ties.assign(verdict_c="fail", reason_c="no row in the candidate, counted as not passed")
    order = {c: i for i, c in enumerate(criteria)}

    def framed(rows: pd.DataFrame) -> pd.DataFrame:
        rows = rows.assign(_o=rows["criterion"].map(order)).sort_values("_o", kind="stable")
        frame = PAIRED_VERDICTS.from_columns({
            "case_id": list(rows["case_id"]), "cluster": list(rows["cluster"]), "criterion": list(rows["criterion"]),
            "base": list(rows["verdict_b"]), "candidate": list(rows["verdict_c"]),
            "base_reason": list(rows["reason_b"]), "candidate_reason": list(rows["reason_c"])})
        if len(keys) > 1:  # epochs: keep them beside the case id
            for extra in reversed(keys[1:]):
                frame.insert(1, extra, rows[extra].to_numpy())
        return frame

    return (framed(both[both["_merge"].astype(str) == "both"]), {str(k): int(v) for k, v in one_sided.items()},
            {str(k): int(v) for k, v in new_failures.items()}, {str(k): int(v) for k, v in lost_passes.items()},
            framed(ties))


def flips(rows: pd.DataFrame) -> pd.DataFrame:
    """The paired rows that pass in one run only, with ``change`` (pass_to_fail or fail_to_pass)."""
    flipped = rows[((rows["base"] == "pass") != (rows["candidate"] == "pass")).to_numpy()]
    change = np.where((flipped["base"] == "pass").to_numpy(), "pass_to_fail", "fail_to_pass")
    out = FLIPS.from_columns({**{c: list(flipped[c]) for c in FLIPS.names if c != "change"},
                              "change": list(change)})
    if "epoch" in rows.columns:
        out.insert(1, "epoch", flipped["epoch"].to_numpy())
    return out
