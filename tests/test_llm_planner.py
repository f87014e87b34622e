"""The optional LLM planner, driven by a scripted fake chat model."""

from __future__ import annotations

from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from graphs.llm_planner import LLMPlanner

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


class Recording(FakeMessagesListChatModel):
    """Answers from a script and keeps every prompt it was shown."""

    prompts: list = []

    def invoke(self, messages, *a, **kw):  # noqa: ANN001, ANN002, ANN003
        self.prompts.append(messages)
        return super().invoke(messages, *a, **kw)


def test_a_scripted_model_steers_the_run_and_it_still_reaches_the_expected_verdicts(make_investigator, reference_run):
    model = Recording(responses=[AIMessage(content='{"choice": 1, "why": "first gap"}')] * 40, prompts=[])
    planner = LLMPlanner(model=model)
    r = make_investigator(planner=planner).start(REFERENCE).report
    _inv, base, _out = reference_run
    assert {c.id: c.verdict for c in r.claims} == {c.id: c.verdict for c in base.report.claims}
    assert planner.log and all(e["fallback"] in (None, "single") for e in planner.log)


def test_the_model_never_sees_source_text(make_investigator):
    model = Recording(responses=[AIMessage(content='{"choice": 2}')] * 40, prompts=[])
    make_investigator(planner=LLMPlanner(model=model)).start(REFERENCE)
    shown = "\n".join(m.content for p in model.prompts for m in p)
    assert model.prompts
    for fragment in ("In 2.4.0 the default", "Ignore previous instructions", "CANARY", "timed out after 2000 ms"):
        assert fragment not in shown


def test_an_unusable_answer_or_a_spent_token_budget_falls_back_to_the_deterministic_choice(make_investigator):
    model = Recording(responses=[AIMessage(content="let me think about it... no idea")] * 40, prompts=[])
    planner = LLMPlanner(model=model, token_budget=10_000)
    r = make_investigator(planner=planner).start(REFERENCE).report
    assert r.stop.kind == "evidence_ready"
    assert any(e["fallback"] == "unusable answer" for e in planner.log)
    spent = LLMPlanner(model=Recording(responses=[AIMessage(content='{"choice": 1}')] * 40, prompts=[]), token_budget=0)
    make_investigator(workspace=Path(make_investigator().settings.workspace).parent / "b", planner=spent).start(REFERENCE)
    assert all(e["fallback"] in ("budget", "single") for e in spent.log)
