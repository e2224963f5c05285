"""Adapters for agent frameworks. Each module imports its framework, installed by the extra of
the same name (``pip install 'agent-memory[langgraph]'``); the core never imports them.

- :mod:`.mem0`: a mem0-shaped facade (``from agent_memory.integrations.mem0 import Memory``);
- :mod:`.langgraph`: a LangGraph ``BaseStore`` (``graph.compile(store=...)``);
- :mod:`.langchain`: a LangChain retriever and ``remember``/``recall`` tools;
- :mod:`.openai_agents`: OpenAI Agents SDK function tools and a hook that puts recalled memories
  into the agent's instructions.
"""
