"""The settings that make the logs of a folder one agent (:mod:`oloproof_nb._analysis.inspect_settings`), from
hand-written headers; folders of shards are tested in test_inspect_log.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op


def test_the_settings_left_out_of_the_agent_are_inspect_settings_the_readme_names() -> None:
    """The generation settings shards and retries may differ in are fields of Inspect's own ``GenerateConfig`` (a
    misspelt name would leave its setting counted as the agent's), and README section 10 names each of them; so are
    the ``eval.config`` fields counted as the agent's (``EvalConfig``: a misspelt one would be checked nowhere)."""
    from inspect_ai.log import EvalConfig
    from inspect_ai.model import GenerateConfig

    from oloproof_nb._analysis.inspect_settings import AGENT_LIMITS, OPERATIONAL_SETTINGS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### 10. Inspect AI logs", 1)[1].split("\n## ", 1)[0]
    assert OPERATIONAL_SETTINGS <= set(GenerateConfig.model_fields)
    assert {"temperature", "system_message", "seed"}.isdisjoint(OPERATIONAL_SETTINGS)
    assert all(f"`{name}`" in section for name in OPERATIONAL_SETTINGS), sorted(OPERATIONAL_SETTINGS)
    # the eval.config fields counted as the agent's are Inspect's own too, and the README names them
    # (review and sentinel came after Inspect AI 0.3.263, the oldest release the tests pass with)
    assert set(AGENT_LIMITS) - set(EvalConfig.model_fields) <= {"review", "sentinel"}
    assert all(f"`{name}`" in section for name in AGENT_LIMITS), AGENT_LIMITS


def test_model_args_keep_what_the_model_computes(tmp_path: Path) -> None:
    """Of the model arguments, the port, client timeout, retry delay, streaming, HTTP client and
    default headers are left out, and a device is kept by its kind (``cuda:0`` and ``cuda:1`` one setting, ``cuda`` and
    ``cpu`` two), for the eval's model and a role's; an argument that changes what the model computes (``model_path``,
    ``batch_size``) is still the agent's, refused in one line naming it. A sandbox config is compared by its file's
    name (Inspect writes it relative to the working folder)."""
    from types import SimpleNamespace as NS

    from oloproof_nb._analysis.inspect_settings import (
        OPERATIONAL_MODEL_ARGS,
        agent_settings,
        same_agent,
        task_settings,
    )

    def model(args: dict[str, Any]) -> dict[str, str]:
        roles = {"grader": {"model": "m", "args": args}}
        return agent_settings(NS(eval=NS(model_args=args, model_roles=roles), plan=None))[0]

    placed = model({"device": "cuda:1", "port": 8001, "client_timeout": 30, "retry_delay": 2, "streaming": True,
                    "http_client": "c", "default_headers": {"x-trace": "1"}, "model_path": "m/v1"})
    assert placed == {"eval.model_args.device": '"cuda"', "eval.model_args.model_path": '"m/v1"',
                      "eval.model_roles.grader.model": '"m"', "eval.model_roles.grader.args.device": '"cuda"',
                      "eval.model_roles.grader.args.model_path": '"m/v1"'}
    assert model({"device": "cuda:0", "port": 8000, "model_path": "m/v1"}) == placed
    first, second = tmp_path / "a.eval", tmp_path / "b.eval"
    for other, key in [({"device": "cpu", "model_path": "m/v1"}, "eval.model_args.device"),
                       ({"device": "cuda", "model_path": "m/v2"}, "eval.model_args.model_path"),
                       ({"device": "cuda", "model_path": "m/v1", "batch_size": 8}, "eval.model_args.batch_size")]:
        seen: dict[tuple[str, ...], tuple[dict[str, str], Path]] = {}
        same_agent(seen, ("m",), placed, first)
        with pytest.raises(op.OloproofError, match=r"^" + re.escape(f"{second}: {key} is ") + r".*two agents"):
            same_agent(seen, ("m",), model(other), second)

    def sandbox(config: Any) -> dict[str, str]:
        return task_settings(NS(eval=NS(task_version=0, sandbox=NS(type="docker", config=config))))

    assert sandbox("tasks/compose.yaml") == sandbox("compose.yaml") == sandbox("C:\\t\\compose.yaml") == {
        "eval.task_version": "0", "eval.sandbox.type": '"docker"', "eval.sandbox.config": '"compose.yaml"'}
    assert sandbox("compose-gpu.yaml") != sandbox("compose.yaml")
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### 10. Inspect AI logs", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{name}`" in section for name in OPERATIONAL_MODEL_ARGS | {"device"}), sorted(OPERATIONAL_MODEL_ARGS)


def test_agent_settings_of_a_hand_written_header_are_every_setting_but_how_calls_reach_the_model() -> None:
    """The settings that make a log's agent, read from a header written by hand (the expected
    maps written by hand too, from agent_settings' docstring): the model's generate config, args and roles (a role
    as the eval's own model: no base_url, its config less how calls reach it; a list of role models read item by
    item), the solver given on the command line and its args, the plan's steps with their parameters, its finish,
    and its config. Left out: OPERATIONAL_SETTINGS, None, and empty mappings (``{}`` is ``None``)."""
    from types import SimpleNamespace as NS

    from oloproof_nb._analysis.inspect_settings import agent_settings

    spec = NS(model_generate_config={"temperature": 0.0, "max_connections": 4, "seed": None},
              model_args={"device": "cuda", "extra": {}},
              model_roles={"grader": {"model": "m", "base_url": "http://a", "args": {},
                                      "config": {"temperature": 1.0, "timeout": 30}},
                           "panel": [{"model": "p", "base_url": "http://b", "config": {"max_retries": 2}}]},
              solver="my_solver", solver_args={"k": 2})
    plan = NS(steps=[NS(solver="system_message", params={"template": "be brief"}), NS(solver="generate", params={})],
              finish=NS(solver="self_critique", params={"rounds": 1}), config={"top_p": 0.9, "cache_prompt": True})
    model, solver = agent_settings(NS(eval=spec, plan=plan))
    assert model == {"eval.model_generate_config.temperature": "0.0", "eval.model_args.device": '"cuda"',
                     "eval.model_roles.grader.model": '"m"', "eval.model_roles.grader.config.temperature": "1.0",
                     "eval.model_roles.panel.0.model": '"p"'}
    assert solver == {"eval.solver": '"my_solver"', "eval.solver_args.k": "2",
                      "plan.steps.0.solver": '"system_message"', "plan.steps.0.params.template": '"be brief"',
                      "plan.steps.1.solver": '"generate"', "plan.finish.solver": '"self_critique"',
                      "plan.finish.params.rounds": "1", "plan.config.top_p": "0.9"}


def test_a_setting_only_the_first_log_has_is_a_second_agent(tmp_path: Path) -> None:
    """A setting the first log of a task gives and the second leaves out (a system message on
    half the shards) makes two agents, as a setting the second alone gives does."""
    from oloproof_nb._analysis.inspect_settings import same_agent

    first, second = tmp_path / "a.eval", tmp_path / "b.eval"
    for settings_a, settings_b in [({"plan.config.system_message": '"hi"'}, {}), ({}, {"plan.config.seed": "1"})]:
        seen: dict[tuple[str, ...], tuple[dict[str, str], Path]] = {}
        same_agent(seen, ("m", "t"), settings_a, first)
        with pytest.raises(op.OloproofError, match=r"^" + re.escape(f"{second}: ") + r"plan\.config\.\w+ is .*, but "
                           + re.escape(str(first)) + r" has .*two agents"):
            same_agent(seen, ("m", "t"), settings_b, second)
        same_agent(seen, ("m", "other task"), settings_b, second)  # another task may use another solver


#: Values of the ``eval.config`` fields that decide what a sample's agent may do (Inspect's own ``EvalConfig``: the
#: limits it runs under, the approval policy of its tool calls, the review policy of their results, which may end the
#: sample, and its sentinel monitors and protocols), and of fields that say only how the eval ran.
_AGENT_CONFIG = {"message_limit": 2, "token_limit": 100, "token_limit_type": "total", "turn_limit": 3, "time_limit": 60,
                 "working_limit": 60, "cost_limit": 1.5, "approval": {"approvers": [{"name": "human", "tools": "*"}]},
                 "review": {"reviewers": [{"name": "human", "tools": "*"}]}, "sentinel": {"name": "threshold"}}
_HOW_IT_RAN = {"max_samples": 3, "fail_on_error": True, "log_images": True, "log_buffer": 5, "limit": 5,
               "sample_id": "p1", "retry_on_error": 2}


@pytest.mark.parametrize(("field", "value"), [*_AGENT_CONFIG.items(), *_HOW_IT_RAN.items()])
def test_each_eval_config_field_that_steers_a_sample_is_the_agents(field: str, value: Any) -> None:
    """Each limit, the approval policy, the review policy (a reviewer may terminate the sample after a tool result)
    and the sentinel monitors and protocols set in ``eval.config`` make a setting of the agent (a log whose config
    differs in it is another agent's); a field of how the eval ran makes none. Headers built from Inspect's own
    ``EvalConfig``."""
    from types import SimpleNamespace

    from inspect_ai.log import EvalConfig

    from oloproof_nb._analysis.inspect_settings import agent_settings

    def solver_settings(config: dict[str, Any]) -> dict[str, str]:
        return agent_settings(SimpleNamespace(eval=SimpleNamespace(config=EvalConfig.model_validate(config)),
                                              plan=None))[1]

    if field not in EvalConfig.model_fields:  # review and sentinel came after Inspect AI 0.3.263
        pytest.skip(f"this Inspect AI release records no eval.config.{field}")
    assert solver_settings({}) == {}
    keys = set(solver_settings({field: value}))
    if field in _AGENT_CONFIG:
        assert keys and all(key.startswith(f"eval.config.{field}") for key in keys), keys
    else:
        assert keys == set()
