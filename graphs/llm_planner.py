"""An optional LLM planner: a chat model chooses the next gap among the deterministic candidates.

The model never sees source text. It is shown the question, each claim's verdict and missing
observations, and a numbered list of the candidate actions the deterministic planner derived
from the case; it answers with a number. So an instruction inside a document cannot reach
it, and it can only reorder actions the case structure allows.

Every step falls back to the deterministic first choice when the model cannot be used, and
says why (`PlanChoice.fallback`): one candidate only (`single`), the token budget spent
(`budget`), an answer with no usable number (`unusable answer`), a failed call (`endpoint`:
connection refused, timeout, an HTTP error, a body that is not JSON; the error is named), or,
after `max_failures` failures in a row, the endpoint is not asked again in this process
(`endpoint unavailable`). A failing endpoint therefore never stops a run; it makes it a
deterministic run, step by step, and the report counts and names each fallback.

Install: `pip install -e '.[llm]'` (langchain-openai); any OpenAI-compatible endpoint works.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from graphs.rulebook.knowledge import Knowledge
from graphs.planner import DeterministicPlanner
from graphs.rulebook.path import Trace
from state.case import Case
from state.claims import ClaimDecision
from state.errors import ConfigError
from state.evidence import Gap
from state.steps import PlanChoice, PlanStep

SYSTEM = ("You plan the next step of an incident investigation. Choose the ONE candidate action most likely "
          "to decide an open claim. Answer with JSON only: {\"choice\": <number>, \"why\": \"<one sentence>\"}.")
DEFAULT_TIMEOUT = 30.0
"""Seconds one call to the endpoint may take (connect + answer) before this step falls back."""
_SECRET = re.compile(r"(sk-|Bearer\s+)[A-Za-z0-9_\-.*]{4,}")


@dataclass
class LLMPlanner:
    model: BaseChatModel
    token_budget: int | None = None
    """Tokens (prompt + answer) this planner may spend; afterwards it plans deterministically."""
    max_candidates: int = 8
    max_failures: int = 3
    """Failed calls in a row after which the endpoint is not asked again in this run (until a resume)."""
    endpoint: str | None = None
    """The OpenAI-compatible base URL, when built by `openai_compatible` (recorded on the run)."""
    model_name: str = ""
    timeout: float | None = None
    fallback: DeterministicPlanner = field(default_factory=DeterministicPlanner)
    tokens_used: int = 0
    failures: int = 0
    """Consecutive failed calls."""
    log: list[dict] = field(default_factory=list)
    """One entry per planned step (a `PlanChoice` as a dict)."""
    last_choice: PlanChoice | None = None
    """How the last call chose (recorded with the plan step)."""

    kind = "llm"

    def __post_init__(self) -> None:
        if not self.model_name:
            self.model_name = str(getattr(self.model, "model_name", None) or getattr(self.model, "model", None)
                                  or type(self.model).__name__)

    def settings(self) -> dict[str, Any]:
        """What a resume needs to rebuild this planner; never the API key."""
        return {"endpoint": self.endpoint, "model": self.model_name, "token_budget": self.token_budget,
                "timeout": self.timeout, "max_failures": self.max_failures}

    def restore(self, steps: list[PlanStep]) -> None:
        """Set up for a run (new or resumed): the tokens its earlier plan steps spent count against
        the budget, and the endpoint is asked again."""
        self.tokens_used = sum(s.choice.tokens for s in steps if s.choice is not None)
        self.failures = 0

    def prompt(self, case: Case, decisions: dict[str, ClaimDecision], candidates: list[Gap]) -> list:
        claims = "\n".join(f"- {c.id} ({c.kind}): {decisions[c.id].verdict if c.id in decisions else 'open'}"
                           + (f"; missing: {'; '.join(decisions[c.id].missing)}" if c.id in decisions and decisions[c.id].missing else "")
                           for c in case.required_claims)
        options = "\n".join(f"{i}. {g.action} for {g.claim_id}: {g.reason}" for i, g in enumerate(candidates, 1))
        return [SystemMessage(SYSTEM),
                HumanMessage(f"Question: {case.question}\nSubject: {case.subject}\nClaims:\n{claims}\n\n"
                             f"Candidate actions:\n{options}")]

    def _chose(self, **fields: Any) -> PlanChoice:
        choice = PlanChoice(model=self.model_name, **fields)
        self.last_choice = choice
        self.log.append(choice.model_dump())
        return choice

    def next_gap(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, t: Trace,
                 done: set[str]) -> Gap | None:
        candidates: list[Gap] = []
        for gap in self.fallback.gaps(case, decisions, k, t):
            if gap.fingerprint not in done and gap.fingerprint not in {c.fingerprint for c in candidates}:
                candidates.append(gap)
            if len(candidates) >= self.max_candidates:
                break
        self.last_choice = None
        if not candidates:
            return None
        n = len(candidates)
        if n == 1:
            self._chose(offered=n, fallback="single")
            return candidates[0]
        if self.token_budget is not None and self.tokens_used >= self.token_budget:
            self._chose(offered=n, fallback="budget")
            return candidates[0]
        if self.failures >= self.max_failures:
            self._chose(offered=n, fallback="endpoint unavailable",
                        error=f"{self.failures} failed calls in a row; not asked again until a resume")
            return candidates[0]
        messages = self.prompt(case, decisions, candidates)
        try:
            answer = self.model.invoke(messages)
            text = answer.content if isinstance(answer.content, str) else json.dumps(answer.content)
        except Exception as exc:  # noqa: BLE001 - refused, timed out, HTTP error, undecodable body: plan deterministically
            self.failures += 1
            self._chose(offered=n, fallback="endpoint", error=_named(exc))
            return candidates[0]
        self.failures = 0
        usage = getattr(answer, "usage_metadata", None) or {}
        reported = int(usage.get("total_tokens") or 0)
        tokens = reported or (sum(len(str(m.content)) for m in messages) + len(text)) // 4
        self.tokens_used += tokens
        choice, why = _parse_choice(text)
        ok = choice is not None and 1 <= choice <= n
        self._chose(offered=n, choice=choice if ok else 1, fallback=None if ok else "unusable answer",
                    why=why[:200] if ok else "", error="" if ok else f"answer: {text[:120]!r}",
                    tokens=tokens, tokens_estimated=not reported)
        return candidates[choice - 1] if ok else candidates[0]


def _named(exc: BaseException) -> str:
    """`Type: message` of a failed call, one line, short, secrets masked."""
    msg = " ".join(str(exc).split())[:160]
    cause = exc.__cause__ or exc.__context__
    if not msg and cause is not None:
        msg = f"{type(cause).__name__}: {' '.join(str(cause).split())[:120]}"
    return _SECRET.sub(r"\1***", f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__)


def _parse_choice(text: str) -> tuple[int | None, str]:
    try:
        data = json.loads(text[text.index("{"): text.rindex("}") + 1])
        return int(data["choice"]), str(data.get("why") or "")
    except (ValueError, KeyError, TypeError):
        m = re.search(r"\b(\d{1,2})\b", text)
        return (int(m.group(1)) if m else None), ""


def openai_compatible(base_url: str, model: str, api_key: str | None = None, *,
                      timeout: float = DEFAULT_TIMEOUT, max_retries: int = 1) -> BaseChatModel:
    """A chat model for any OpenAI-compatible endpoint (needs the optional `langchain-openai`).

    `timeout` bounds each call and `max_retries` its retries, so an endpoint that hangs or
    refuses costs a step seconds, not minutes (the step then plans deterministically)."""
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise ConfigError("--planner llm needs langchain-openai: install it with `pip install -e '.[llm]'`") from exc
    return ChatOpenAI(base_url=base_url, model=model, api_key=api_key or "not-needed", temperature=0,
                      timeout=timeout, max_retries=max_retries)


def llm_planner(endpoint: str, model: str, api_key: str | None = None, *, token_budget: int | None = None,
                timeout: float | None = None, max_failures: int = 3) -> LLMPlanner:
    """The LLM planner over an OpenAI-compatible endpoint (what `run --planner llm` uses)."""
    t = timeout if timeout is not None else DEFAULT_TIMEOUT
    return LLMPlanner(model=openai_compatible(endpoint, model, api_key, timeout=t), token_budget=token_budget,
                      endpoint=endpoint, model_name=model, timeout=t, max_failures=max_failures)


def rebuild(settings: dict[str, Any], api_key: str | None, run_id: str) -> LLMPlanner:
    """The planner a run was started with, from its run row (the key comes from the environment)."""
    if not settings.get("endpoint") or not settings.get("model"):
        raise ConfigError(f"run {run_id!r} was planned by a chat model given in code (no endpoint recorded): "
                          "resume it through the API with Investigator(planner=LLMPlanner(...))")
    return llm_planner(settings["endpoint"], settings["model"], api_key, token_budget=settings.get("token_budget"),
                       timeout=settings.get("timeout"), max_failures=int(settings.get("max_failures") or 3))
