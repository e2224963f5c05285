"""Moving from mem0: change one import, keep the script.

    from mem0 import Memory                            # before
    from agent_memory.integrations.mem0 import Memory  # after

Everything below is a mem0 (2.x) script as written for mem0. Existing mem0 memories come over
with ``agent-memory import dump.json --from mem0`` (a dump of ``m.get_all(...)``, saved as JSON).

Run: .venv/bin/python examples/mem0_migration.py   (no extra needed; offline)
"""

from __future__ import annotations

from pathlib import Path

from agent_memory.integrations.mem0 import Memory

m = Memory.from_config({"agent_memory": {"data_dir": Path(".local-example")}})
m.delete_all(user_id="mem0-user")  # start clean

added = m.add([{"role": "user", "content": "I'm vegetarian and allergic to nuts"}], user_id="mem0-user",
              metadata={"category": "diet"}, infer=False)
memory_id = added["results"][0]["id"]
m.add("I'm planning a trip to Japan in April", user_id="mem0-user", agent_id="travel", infer=False)

for item in m.search("what can I eat?", filters={"user_id": "mem0-user"}, top_k=2)["results"]:
    print(f"{item['score']:.2f}  {item['memory']}")
m.update(memory_id, text="I'm vegan and allergic to nuts")
print(m.get(memory_id)["memory"])  # type: ignore[index]
print([(h["event"], h["new_memory"]) for h in m.history(memory_id)])
print([i["memory"] for i in m.get_all(filters={"user_id": "mem0-user", "agent_id": "travel"})["results"]])
