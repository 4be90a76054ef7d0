"""Writes a real Inspect AI eval log with the mockllm model (run as a script, in its own process).

``python tests/_inspect_task.py LOG_DIR JSON_DIR``: a refund-desk task with a tool, two scorers
(``match``: C/I on the answer; ``world_refunded``: 1.0/0.0 from the world in the sample store), two
epochs, and a solver that keeps the world in the store under ``world``. The model is a deterministic
policy of the conversation, so the verdicts are known by hand:

========  =========================================  ===========  ================  =====================
sample    what the agent does                        match        world_refunded    steps (tool calls)
========  =========================================  ===========  ================  =====================
s1        refunds ord-001, says "refunded"           C, C         1, 1              3 (1), 3 (1)
s2        refunds ord-999 (not in the world: an      C, C         0, 0              3 (1), 3 (1)
          error result), says "refunded"
3         epoch 1 as s1; epoch 2 says "refunded"     C, C         1, 0              3 (1), 1 (0)
          without calling the tool (false success)
s4        the tool raises: the sample errors         none         none              -
========  =========================================  ===========  ================  =====================

Metadata ``topic``: s1, s2 billing; 3, s4 shipping. The eval runs with ``fail_on_error=False``, so
the log finishes (status ``success``) with s4's two epochs errored. The same log is also written as
``.json`` into JSON_DIR.

``python tests/_inspect_task.py --tagged LOG_DIR``: an ``eval_set`` (so LOG_DIR also holds Inspect's
``logs.json`` and ``eval-set.json``) of a task of six samples ``t0`` … ``t5`` (metadata ``topic``: A for
t0-t2, B for t3-t5) over three epochs, whose solver rewrites its metadata each epoch (``topic`` becomes
``A/1``, ``A/2`` …, and ``tag`` the epoch), as a solver may: the log's sample metadata is the final
state's, the dataset's is in the sample's ``sample_init`` event. Scorer ``tagged_ok``: C, except t5 (I in
every epoch).

``python tests/_inspect_task.py --values LOG_DIR``: a task whose scorer ``given`` returns each sample's
``metadata["value"]`` as the score value (``VALUES``: letter codes in other cases and with spaces, the
words, numbers and numeric strings), with Inspect's ``accuracy`` metric.

``python tests/_inspect_task.py --graders LOG_DIR``: into LOG_DIR/graders, a task of five samples (``GRADES``:
C, P, I, C, P) scored by one scorer function twice, ``graded()`` and ``graded(lenient=True)`` (P passes only
the lenient one), with ``accuracy``: Inspect scores them as ``graded`` and ``graded1``. Into LOG_DIR/tasks, two
tasks ``task_a`` and ``task_b`` of one eval whose samples have no ids (Inspect numbers each task's 1, 2, 3).
Into LOG_DIR/retry, an eval whose sample ``r2`` raised (status ``error``) and its ``eval_retry`` (``success``),
side by side as Inspect leaves them. Into LOG_DIR/retried, ``retried``, a task of those four samples run with
``retry_on_error=1``, whose sample ``r2`` raises on its first attempt only (Inspect runs it again and keeps the
error in the sample's ``error_retries``). Into LOG_DIR/dicts, a task of five samples over two epochs (``CHECKS``) with
two dict-valued scorers, ``checks`` (``{"correct": "C"/"I", "safe": 1/0}``, ``metrics={"correct": [accuracy()],
"safe": [accuracy()]}``) and ``audit`` (``{"correct": ..., "polite": True/False}``, ``metrics=[{"*":
[accuracy()]}]``: the key ``correct`` is in both), beside the plain scorer ``graded()`` (``GRADES``).

``python tests/_inspect_task.py --subset LOG_DIR``: a task of twenty samples (``PICKED``: the last three fail) run
on a selection of them (:func:`subset`).

``python tests/_inspect_task.py --source LOG_DIR``: two tasks whose dataset is an Inspect ``SampleSource``
(:func:`source`), which add samples and epochs as they run, beyond the header's ``dataset.sample_ids`` and ``epochs``.

``python tests/_inspect_task.py --settings LOG_DIR``: that task run as two shards that differ in one setting
(:func:`settings`): ``temperature``, the model's generation config, ``max_connections``, a role's model, a sample limit
(``message_limit``), how the eval ran (``max_samples``, log settings), the task's version or sandbox, or the device and
port of the model (model arguments); and two tasks of their own versions and sandboxes.
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

from inspect_ai import Task, eval_retry, eval_set, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageSystem, ChatMessageTool, GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, match, mean, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import tool
from inspect_ai.util import store


@tool
def issue_refund():  # type: ignore[no-untyped-def]
    async def execute(order_id: str) -> dict[str, object]:
        """Refund an order.

        Args:
            order_id: the order to refund.
        """
        if order_id == "ord-004":
            raise RuntimeError("refund service down")
        world = store().get("world")
        if order_id not in world["orders"]:
            return {"ok": False, "error": "no such order"}
        world["orders"][order_id]["status"] = "refunded"
        store().set("world", world)
        return {"ok": True}

    return execute


@solver
def load_world():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set("world", copy.deepcopy(state.metadata["initial_state"]))
        state.messages.insert(0, ChatMessageSystem(content=f"epoch: {state.epoch}"))
        return state

    return solve


def _policy(messages: list) -> ModelOutput:  # type: ignore[type-arg]
    if isinstance(messages[-1], ChatMessageTool):
        return ModelOutput.from_content("mockllm/model", "refunded")
    epoch = int(re.search(r"epoch: (\d+)", messages[0].text).group(1))  # type: ignore[union-attr]
    order = re.search(r"ord-\d+", messages[-1].text).group(0)  # type: ignore[union-attr]
    if order == "ord-003" and epoch == 2:
        return ModelOutput.from_content("mockllm/model", "refunded")
    if order == "ord-002":
        order = "ord-999"
    return ModelOutput.for_tool_call("mockllm/model", "issue_refund", {"order_id": order})


def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
    out = _policy(messages)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
    return out


@scorer(metrics=[mean()])
def world_refunded():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        world = state.store.get("world")
        ok = world["orders"].get(state.metadata["order_id"], {}).get("status") == "refunded"
        return Score(value=1.0 if ok else 0.0, explanation="the world")

    return score


def _sample(sid: str | int, n: int, topic: str) -> Sample:
    order = f"ord-00{n}"
    return Sample(id=sid, input=f"Please refund order {order}.", target="refunded",
                  metadata={"topic": topic, "order_id": order,
                            "initial_state": {"orders": {order: {"status": "delivered"}}}})


def main(log_dir: str, json_dir: str) -> None:
    samples = [_sample("s1", 1, "billing"), _sample("s2", 2, "billing"), _sample(3, 3, "shipping"),
               _sample("s4", 4, "shipping")]
    task = Task(dataset=samples, solver=[load_world(), use_tools([issue_refund()]), generate()],
                scorer=[match(), world_refunded()], epochs=2, name="refund_desk")
    logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=policy), log_dir=log_dir,
                        display="none", fail_on_error=False, max_samples=8)
    log = read_eval_log(logs[0].location)
    Path(json_dir).mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(Path(json_dir) / "refund_desk.json"), format="json")
    print(logs[0].location, logs[0].status)


@solver
def tag_metadata():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.metadata["topic"] = f"{state.metadata['topic']}/{state.epoch}"
        state.metadata["tag"] = state.epoch
        return state

    return solve


@scorer(metrics=[mean()])
def tagged_ok():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="I" if state.sample_id == "t5" else "C")

    return score


def plain_policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
    out = ModelOutput.from_content("mockllm/model", "ok")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def tagged(log_dir: str) -> None:
    samples = [Sample(id=f"t{i}", input=f"Question {i}.", target="ok", metadata={"topic": "AB"[i // 3]})
               for i in range(6)]
    task = Task(dataset=samples, solver=[tag_metadata(), generate()], scorer=tagged_ok(), epochs=3,
                name="tagged")
    done, logs = eval_set(task, log_dir=log_dir, model=get_model("mockllm/model", custom_outputs=plain_policy),
                          display="none", max_samples=8)
    print(logs[0].location, done)


#: Score values of the ``--values`` task, one sample each (``v0`` …).
VALUES: list[object] = ["C", "c", " C", "C ", "I", "i", "P", "N", "yes", "Yes", "TRUE", " yes", "no", "False",
                        1.0, 0.5, 1, True, False, "1.0", "0", 7, 2.5, -1]


@scorer(metrics=[accuracy()])
def given():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=state.metadata["value"])

    return score


def values(log_dir: str) -> None:
    samples = [Sample(id=f"v{i}", input=f"Question {i}.", target="ok", metadata={"value": value})
               for i, value in enumerate(VALUES)]
    task = Task(dataset=samples, solver=generate(), scorer=given(), name="values")
    logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=plain_policy), log_dir=log_dir,
                        display="none", max_samples=8)
    print(logs[0].location, logs[0].status)


#: The grade behind each sample of the ``--graders`` task: ``graded`` passes C, ``graded(lenient=True)`` C and P.
GRADES = ["C", "P", "I", "C", "P"]


@scorer(metrics=[accuracy()])
def graded(lenient: bool = False):  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        grade = state.metadata["grade"]
        return Score(value="C" if grade == "C" or (lenient and grade == "P") else "I")

    return score


#: The dict-valued scores of the ``--graders`` dicts task, per sample (``d0`` …) and epoch: (correct, safe, polite).
CHECKS: list[list[tuple[str, int, bool]]] = [
    [("C", 1, True), ("C", 1, True)],
    [("C", 1, True), ("I", 0, False)],
    [("I", 1, True), ("I", 1, True)],
    [("C", 0, False), ("C", 1, True)],
    [("I", 0, True), ("C", 1, True)],
]


def _checked(state: TaskState) -> tuple[str, int, bool]:
    return CHECKS[int(str(state.sample_id)[1:])][state.epoch - 1]


@scorer(metrics={"correct": [accuracy()], "safe": [accuracy()]})
def checks():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        correct, safe, _ = _checked(state)
        return Score(value={"correct": correct, "safe": safe})

    return score


@scorer(metrics=[{"*": [accuracy()]}])
def audit():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        correct, _, polite = _checked(state)
        return Score(value={"correct": correct, "polite": polite})

    return score


@solver
def raise_while(flag: str):  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == "r2" and Path(flag).exists():
            raise RuntimeError("transient")
        return state

    return solve


@solver
def raise_once(flag: str):  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == "r2" and Path(flag).exists():
            Path(flag).unlink()  # the next attempt of r2 goes through
            raise RuntimeError("transient")
        return state

    return solve


@task
def flaky(flag: str) -> Task:
    """Sample r2 raises while the file ``flag`` exists (no model call, so eval_retry needs no model outputs)."""
    samples = [Sample(id=f"r{i}", input=f"Question {i}.", target="ok", metadata={"grade": "C"}) for i in range(4)]
    return Task(dataset=samples, solver=raise_while(flag), scorer=graded(), name="flaky")


def graders(log_dir: str) -> None:
    model = get_model("mockllm/model", custom_outputs=plain_policy)
    samples = [Sample(id=f"g{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
               for i, grade in enumerate(GRADES)]
    task_ = Task(dataset=samples, solver=generate(), scorer=[graded(), graded(lenient=True)], name="graders")
    inspect_eval(task_, model=model, log_dir=f"{log_dir}/graders", display="none", max_samples=8)
    two = [Task(dataset=[Sample(input=f"Question {i}.", target="ok", metadata={"grade": grade})
                         for i, grade in enumerate(grades)], solver=generate(), scorer=graded(), name=name)
           for name, grades in (("task_a", "CCI"), ("task_b", "IIC"))]
    inspect_eval(two, model=model, log_dir=f"{log_dir}/tasks", display="none", max_samples=8)
    flag = Path(log_dir) / "raise"
    flag.write_text("r2 raises while this file exists", encoding="utf-8")
    first = inspect_eval(flaky(str(flag)), model=model, log_dir=f"{log_dir}/retry", display="none")
    flag.unlink()
    again = eval_retry(first[0], log_dir=f"{log_dir}/retry", display="none")
    flag.write_text("r2 raises once while this file exists", encoding="utf-8")
    samples = [Sample(id=f"r{i}", input=f"Question {i}.", target="ok", metadata={"grade": "C"}) for i in range(4)]
    inspect_eval(Task(dataset=samples, solver=raise_once(str(flag)), scorer=graded(), name="retried"), model=model,
                 log_dir=f"{log_dir}/retried", display="none", retry_on_error=1)
    checked = [Sample(id=f"d{i}", input=f"Question {i}.", target="ok", metadata={"grade": GRADES[i]})
               for i in range(len(CHECKS))]
    inspect_eval(Task(dataset=checked, solver=generate(), scorer=[checks(), audit(), graded()], epochs=2,
                      name="dicts"), model=model, log_dir=f"{log_dir}/dicts", display="none", max_samples=8)
    print(first[0].status, again[0].status)


#: The grades of the ``--subset`` task's twenty samples (``p0`` …): the last three fail.
PICKED = ["C"] * 17 + ["I"] * 3

#: The grades of the ``--subset`` task ``split``'s smaller dataset (``h0`` …), run on its first two.
SPLIT = "CCII"


def subset(log_dir: str) -> None:
    """Into LOG_DIR/picked, the ``--subset`` task run on the 17 samples that pass (``sample_id=``); into
    LOG_DIR/first, run on its first 12 (``limit=12``); into LOG_DIR/shards, run twice, on ``limit=(0, 10)`` and
    ``limit=(10, 20)`` (together every sample); into LOG_DIR/splits, a task named ``split`` (as a task argument may
    pick its dataset) run on all of one dataset of six samples that pass and on the first 2 of another of four
    (``SPLIT``: the last two, never run, fail)."""
    model = get_model("mockllm/model", custom_outputs=plain_policy)

    def picked() -> Task:
        return Task(dataset=[Sample(id=f"p{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                             for i, grade in enumerate(PICKED)], solver=generate(), scorer=graded(), name="picked")

    inspect_eval(picked(), model=model, log_dir=f"{log_dir}/picked", display="none", max_samples=8,
                 sample_id=[f"p{i}" for i in range(17)])
    inspect_eval(picked(), model=model, log_dir=f"{log_dir}/first", display="none", max_samples=8, limit=12)
    for shard in ((0, 10), (10, 20)):
        inspect_eval(picked(), model=model, log_dir=f"{log_dir}/shards", display="none", max_samples=8, limit=shard)
    for prefix, grades, limit in (("t", "C" * 6, None), ("h", SPLIT, 2)):
        split = Task(dataset=[Sample(id=f"{prefix}{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                              for i, grade in enumerate(grades)], solver=generate(), scorer=graded(), name="split")
        inspect_eval(split, model=model, log_dir=f"{log_dir}/splits", display="none", max_samples=8, limit=limit)


#: The (sample, epoch) runs the ``--source`` tasks' scorer ``listed`` fails (I); every other run passes (C).
SOURCE_FAILS = {("f1", 1), ("f2", 1), ("b1", 1), ("b2", 1), ("b2", 2)}


@scorer(metrics=[accuracy()])
def listed():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="I" if (str(state.sample_id), state.epoch) in SOURCE_FAILS else "C")

    return score


def source(log_dir: str) -> None:
    """Into LOG_DIR/added, task ``added``: a ``SampleSource`` seeded with ``a0`` … ``a3`` (its header's
    ``dataset.sample_ids``) whose ``a0``, once complete, adds ``f0`` … ``f3`` (f1 and f2 fail): 8 samples, 6 pass.
    Into LOG_DIR/epochs, task ``epochs``: seeded with ``b0`` … ``b3`` (one epoch), a sample that fails runs again as
    its next epoch (``enqueue_sample(..., epoch=e + 1)``), at most to epoch 3: b1 fails then passes, b2 fails twice
    then passes; 7 runs, 4 pass. Into LOG_DIR/limited, task ``added`` again run with ``limit=4``: Inspect drops the
    samples ``a0`` adds past the limit, and its header reads as a whole run of the seed (4 runs, all pass)."""
    from inspect_ai import SampleSource, enqueue_sample

    model = get_model("mockllm/model", custom_outputs=plain_policy)

    def one(sid: str) -> Sample:
        return Sample(id=sid, input=f"Question {sid}.", target="ok")

    async def follow_up(done: object) -> list[Sample] | None:
        return [one(f"f{i}") for i in range(4)] if getattr(done, "id", None) == "a0" else None

    async def again(done: object) -> None:
        epoch, scores = int(getattr(done, "epoch", 1)), getattr(done, "scores", None) or {}
        if scores["listed"].value == "I" and epoch < 3:
            enqueue_sample(one(str(getattr(done, "id", ""))), epoch=epoch + 1)

    for folder, name, seed, complete, limit in (("added", "added", "a", follow_up, None),
                                                ("epochs", "epochs", "b", again, None),
                                                ("limited", "added", "a", follow_up, 4)):
        dataset = SampleSource.from_samples([one(f"{seed}{i}") for i in range(4)], sample_complete=complete)
        inspect_eval(Task(dataset=dataset, solver=generate(), scorer=listed(), name=name), model=model,
                     log_dir=f"{log_dir}/{folder}", display="none", max_samples=1, limit=limit)


def settings(log_dir: str) -> None:
    """The ``--subset`` task run as two shards (``limit=(0, 10)``, ``limit=(10, 20)``) with different settings: into
    LOG_DIR/temperature, ``temperature=0`` and ``temperature=1`` (an eval argument: the header's ``plan.config``); into
    LOG_DIR/model_config, a model made with ``GenerateConfig(temperature=0)`` and one with ``temperature=1`` and a
    ``system_message`` (the header's ``eval.model_generate_config``); into LOG_DIR/connections, ``max_connections=2``
    and ``max_connections=4`` (how calls reach the model, not the agent); into LOG_DIR/roles, a ``grader`` role's model
    with ``max_connections=2`` and base URL ``http://one:1``, then ``4`` and ``http://two:2`` (not the agent); into
    LOG_DIR/role_temperature, a ``grader`` role's model at ``temperature=0`` and at ``1`` (the agent); into
    LOG_DIR/limits, ``message_limit=50`` and ``message_limit=2`` (the limits a sample runs under: the agent); into
    LOG_DIR/eval_config, shards that differ in ``max_samples``, ``fail_on_error`` and the log settings (how the eval
    ran, not the agent); into LOG_DIR/version, the task at ``version=1`` and at ``version=2`` (two tasks); into
    LOG_DIR/sandbox, the task with a ``local`` sandbox and with none (two worlds); into LOG_DIR/device, a model made
    with ``device="cuda:0", port=8000`` and one with ``device="cuda:1", port=8001`` (where the model runs, not the
    agent); into LOG_DIR/two_tasks, every sample of task ``picked`` at ``version=1`` with a ``local`` sandbox and of
    task ``other`` at ``version=2`` with none (two tasks, each of one version and sandbox)."""
    def picked(version: int = 0, sandbox: str | None = None, name: str = "picked") -> Task:  # ids p0, o0: by name
        return Task(dataset=[Sample(id=f"{name[0]}{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                             for i, grade in enumerate(PICKED)], solver=generate(), scorer=graded(), name=name,
                    version=version, sandbox=sandbox)

    model = get_model("mockllm/model", custom_outputs=plain_policy)
    shards = ((0, 10), (10, 20))
    for shard, temperature in zip(shards, (0.0, 1.0), strict=True):
        inspect_eval(picked(), model=model, log_dir=f"{log_dir}/temperature", display="none", max_samples=8,
                     limit=shard, temperature=temperature)
    for shard, config in zip(shards, (GenerateConfig(temperature=0.0),
                                      GenerateConfig(temperature=1.0, system_message="Answer briefly.")), strict=True):
        inspect_eval(picked(), model=get_model("mockllm/model", config=config, custom_outputs=plain_policy),
                     log_dir=f"{log_dir}/model_config", display="none", max_samples=8, limit=shard)
    for shard, connections in zip(shards, (2, 4), strict=True):
        inspect_eval(picked(), model=model, log_dir=f"{log_dir}/connections", display="none", max_samples=8,
                     limit=shard, max_connections=connections)
    for shard, connections, url in zip(shards, (2, 4), ("http://one:1", "http://two:2"), strict=True):
        grader = get_model("mockllm/model", config=GenerateConfig(max_connections=connections), base_url=url,
                           custom_outputs=plain_policy, memoize=False)
        inspect_eval(picked(), model=model, model_roles={"grader": grader}, log_dir=f"{log_dir}/roles",
                     display="none", max_samples=8, limit=shard)
    for shard, temperature in zip(shards, (0.0, 1.0), strict=True):
        grader = get_model("mockllm/model", config=GenerateConfig(temperature=temperature),
                           custom_outputs=plain_policy, memoize=False)
        inspect_eval(picked(), model=model, model_roles={"grader": grader}, log_dir=f"{log_dir}/role_temperature",
                     display="none", max_samples=8, limit=shard)
    for shard, messages in zip(shards, (50, 2), strict=True):
        inspect_eval(picked(), model=model, log_dir=f"{log_dir}/limits", display="none", max_samples=8, limit=shard,
                     message_limit=messages)
    for shard, ran in zip(shards, ({"max_samples": 2, "fail_on_error": True, "log_images": True, "log_buffer": 5},
                                   {"max_samples": 8, "fail_on_error": False, "log_images": False}), strict=True):
        inspect_eval(picked(), model=model, log_dir=f"{log_dir}/eval_config", display="none", limit=shard, **ran)
    for shard, version in zip(shards, (1, 2), strict=True):
        inspect_eval(picked(version=version), model=model, log_dir=f"{log_dir}/version", display="none", max_samples=8,
                     limit=shard)
    for shard, sandbox in zip(shards, ("local", None), strict=True):
        inspect_eval(picked(sandbox=sandbox), model=model, log_dir=f"{log_dir}/sandbox", display="none",
                     max_samples=8, limit=shard)
    for shard, device, port in zip(shards, ("cuda:0", "cuda:1"), (8000, 8001), strict=True):
        placed = get_model("mockllm/model", custom_outputs=plain_policy, device=device, port=port, memoize=False)
        inspect_eval(picked(), model=placed, log_dir=f"{log_dir}/device", display="none", max_samples=8, limit=shard)
    for name, version, sandbox in (("picked", 1, "local"), ("other", 2, None)):
        inspect_eval(picked(version, sandbox, name), model=model, log_dir=f"{log_dir}/two_tasks", display="none",
                     max_samples=8)


if __name__ == "__main__":
    if sys.argv[1] == "--source":
        source(sys.argv[2])
    elif sys.argv[1] == "--subset":
        subset(sys.argv[2])
    elif sys.argv[1] == "--settings":
        settings(sys.argv[2])
    elif sys.argv[1] == "--graders":
        graders(sys.argv[2])
    elif sys.argv[1] == "--tagged":
        tagged(sys.argv[2])
    elif sys.argv[1] == "--values":
        values(sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
