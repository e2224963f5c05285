"""The README's in-process example: versions, forget and erase, in Chinese and English.

Run: .venv/bin/python examples/quickstart.py   (no server needed; data under ./.local-example)
"""

from datetime import UTC, datetime, timedelta
from pathlib import Path

from agent_memory import Memory, Settings

m = Memory(Settings(data_dir=Path(".local-example")))
u = "demo-user"
m.erase_user(u)  # start clean

m.remember(user_id=u, content="我对花生过敏", memory_type="fact", importance=0.9)
m.remember(user_id=u, content="我在字节跳动工作", topic_id="employer",
           created_at=datetime.now(UTC) - timedelta(days=90))
m.remember(user_id=u, content="我换工作了，现在在阿里巴巴", topic_id="employer")  # supersedes the old one
[coffee] = m.remember(user_id=u, content="I take my coffee black, no sugar", memory_type="preference")

for hit in m.recall(user_id=u, query="点餐时要注意什么"):
    print(f"{hit.score:.3f}  {hit.content}")

for v in m.versions("employer", user_id=u):
    print("active" if v.is_active else "superseded", v.summary)

print(m.recall(user_id=u, query="我在哪里上班？").context)  # only the current employer

m.forget(coffee)  # soft delete: kept in history, never recalled again
assert coffee not in [h.memory_id for h in m.recall(user_id=u, query="how do I take my coffee?")]

print(m.erase_user(u))  # {'index_entries': 4, 'object_versions': 4, 'recall_logs': 3}
print(m.erase_user(u))  # nothing left: all zeros
