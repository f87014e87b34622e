"""An optional LLM planner: a chat model chooses the next gap among the deterministic candidates.

The model never sees source text. It is shown the question, each claim's verdict and missing
observations, and a numbered list of the candidate actions the deterministic planner derived
from the case; it answers with a number. So an instruction inside a document cannot reach
it, and it can only reorder actions the case structure allows. Anything unusable in the
answer (no number, out of range, over the token budget) falls back to the deterministic
first choice, and the fallback is recorded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from graphs.knowledge import Knowledge
from graphs.planner import DeterministicPlanner
from graphs.rules import Trace
from state.case import Case
from state.claims import ClaimDecision
from state.evidence import Gap

SYSTEM = ("You plan the next step of an incident investigation. Choose the ONE candidate action most likely "
          "to decide an open claim. Answer with JSON only: {\"choice\": <number>, \"why\": \"<one sentence>\"}.")


@dataclass
class LLMPlanner:
    model: BaseChatModel
    token_budget: int | None = None
    """Tokens (prompt + answer) this planner may spend; afterwards it plans deterministically."""
    max_candidates: int = 8
    fallback: DeterministicPlanner = field(default_factory=DeterministicPlanner)
    tokens_used: int = 0
    log: list[dict] = field(default_factory=list)
    """One entry per call: candidates offered, the answer, the choice and whether it fell back."""

    def prompt(self, case: Case, decisions: dict[str, ClaimDecision], candidates: list[Gap]) -> list:
        claims = "\n".join(f"- {c.id} ({c.kind}): {decisions[c.id].verdict if c.id in decisions else 'open'}"
                           + (f"; missing: {'; '.join(decisions[c.id].missing)}" if c.id in decisions and decisions[c.id].missing else "")
                           for c in case.required_claims)
        options = "\n".join(f"{i}. {g.action} for {g.claim_id}: {g.reason}" for i, g in enumerate(candidates, 1))
        return [SystemMessage(SYSTEM),
                HumanMessage(f"Question: {case.question}\nSubject: {case.subject}\nClaims:\n{claims}\n\n"
                             f"Candidate actions:\n{options}")]

    def next_gap(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, t: Trace,
                 done: set[str]) -> Gap | None:
        candidates: list[Gap] = []
        for gap in self.fallback.gaps(case, decisions, k, t):
            if gap.fingerprint not in done and gap.fingerprint not in {c.fingerprint for c in candidates}:
                candidates.append(gap)
            if len(candidates) >= self.max_candidates:
                break
        if not candidates:
            return None
        if len(candidates) == 1 or (self.token_budget is not None and self.tokens_used >= self.token_budget):
            self.log.append({"offered": len(candidates), "choice": 1, "fallback": "budget" if len(candidates) > 1 else "single"})
            return candidates[0]
        messages = self.prompt(case, decisions, candidates)
        answer = self.model.invoke(messages)
        text = answer.content if isinstance(answer.content, str) else json.dumps(answer.content)
        usage = getattr(answer, "usage_metadata", None) or {}
        self.tokens_used += int(usage.get("total_tokens") or (sum(len(m.content) for m in messages) + len(text)) // 4)
        choice = _parse_choice(text)
        ok = choice is not None and 1 <= choice <= len(candidates)
        self.log.append({"offered": len(candidates), "answer": text[:200], "choice": choice if ok else 1,
                         "fallback": None if ok else "unusable answer"})
        return candidates[choice - 1] if ok else candidates[0]


def _parse_choice(text: str) -> int | None:
    try:
        data = json.loads(text[text.index("{"): text.rindex("}") + 1])
        return int(data["choice"])
    except (ValueError, KeyError, TypeError):
        m = re.search(r"\b(\d{1,2})\b", text)
        return int(m.group(1)) if m else None


def openai_compatible(base_url: str, model: str, api_key: str | None = None) -> BaseChatModel:
    """A chat model for any OpenAI-compatible endpoint (needs the optional `langchain-openai`)."""
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:  # pragma: no cover - depends on an optional extra
        raise ImportError("the LLM planner needs `pip install -e '.[llm]'` (langchain-openai)") from exc
    return ChatOpenAI(base_url=base_url, model=model, api_key=api_key or "not-needed", temperature=0)
