"""A small agent loop with the three memory layers of seed 2.

1. The conversation: the last few turns, sent to the model as messages (gone with the session).
2. Working memory: task state for this session (`memory.working(session, user_id=...)`),
   a TTL'd key-value store kept out of the long-term index.
3. Long-term memory: every user turn is remembered; before answering, the agent recalls what
   is relevant and puts it in the *system prompt* (`system_prompt(...)`).

Run it:
  .venv/bin/python examples/agent.py
      offline: a scripted model, an in-process Memory under ./.local-example
  AGENT_MEMORY_API_URL=http://127.0.0.1:8000 AGENT_MEMORY_API_KEY=$(cat .local/api_key) \
      .venv/bin/python examples/agent.py
      against `make up`, through MemoryClient
  CHAT_BASE_URL=https://api.openai.com/v1 CHAT_API_KEY=sk-... CHAT_MODEL=gpt-4o-mini .venv/bin/python examples/agent.py
      with a real model (any OpenAI-compatible chat endpoint)
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import httpx

from agent_memory import Memory, MemoryClient, Settings
from agent_memory.prompt import system_prompt

INSTRUCTIONS = "You are a concise travel assistant. Use what you remember about the user."
HISTORY_TURNS = 6


def chat(system: str, messages: list[dict[str, str]]) -> str:
    """One model call: a real OpenAI-compatible endpoint when configured, else a scripted model
    that shows what it was given (so the example runs offline and its output can be checked)."""
    base = os.environ.get("CHAT_BASE_URL")
    if base:
        answer = httpx.post(f"{base.rstrip('/')}/chat/completions", timeout=60,
                            headers={"Authorization": f"Bearer {os.environ.get('CHAT_API_KEY', '')}"},
                            json={"model": os.environ.get("CHAT_MODEL", "gpt-4o-mini"),
                                  "messages": [{"role": "system", "content": system}, *messages]})
        answer.raise_for_status()
        return str(answer.json()["choices"][0]["message"]["content"])
    remembered = [line[2:] for line in system.splitlines() if line.startswith("- [")]
    if not remembered:
        return "Noted."
    return "Keeping in mind: " + "; ".join(remembered)


class Agent:
    def __init__(self, memory: Any, user_id: str) -> None:
        self.memory, self.user_id = memory, user_id

    def session(self) -> Session:
        return Session(self, uuid.uuid4().hex[:12])


class Session:
    def __init__(self, agent: Agent, session_id: str) -> None:
        self.agent, self.session_id = agent, session_id
        self.history: list[dict[str, str]] = []  # layer 1
        self.state = agent.memory.working(session_id, user_id=agent.user_id)  # layer 2

    def ask(self, text: str) -> tuple[str, str]:
        m, user = self.agent.memory, self.agent.user_id
        hits = m.recall(user, text, top_k=5)  # layer 3, read before answering
        system = system_prompt(INSTRUCTIONS, hits, max_tokens=400)
        self.history.append({"role": "user", "content": text})
        reply = chat(system, self.history[-HISTORY_TURNS:])
        self.history.append({"role": "assistant", "content": reply})
        previous = self.history[-3]["content"] if len(self.history) >= 3 else None
        m.remember(user, text, session_id=self.session_id, context=previous)  # layer 3, write
        self.state.set("turns", int(self.state.get("turns", 0)) + 1)
        self.state.set("last_question", text, ttl_s=3600)
        return system, reply


def open_memory() -> Any:
    url = os.environ.get("AGENT_MEMORY_API_URL")
    if url:
        return MemoryClient(url, os.environ.get("AGENT_MEMORY_API_KEY"))
    return Memory(Settings(data_dir=Path(os.environ.get("AGENT_MEMORY_DATA_DIR", ".local-example"))))


def main() -> None:
    memory = open_memory()
    agent = Agent(memory, user_id=os.environ.get("AGENT_USER", "agent-demo"))
    memory.erase_user(agent.user_id)  # start clean

    first = agent.session()
    for text in ["Hi! Just so you know, I'm allergic to peanuts.",
                 "I'm flying to Lisbon next Friday for a conference."]:
        _, reply = first.ask(text)
        print(f"user: {text}\nagent: {reply}\n")
    print(f"working memory of the first session: {first.state.items()}\n")

    later = agent.session()  # a new conversation: no history, empty working memory
    system, reply = later.ask("Can you pack me a snack for the flight?")
    print(f"--- system prompt of the new session ---\n{system}\n---")
    print(f"agent: {reply}")
    print(f"working memory of the new session: {later.state.items()}")


if __name__ == "__main__":
    main()
