// agent-memory console: one user's whole memory trail through the same authenticated HTTP API
// the agents use (no second data path). Plain JS, no dependencies, nothing loaded from a CDN.
// Every piece of memory text is inserted with textContent, never as HTML.
"use strict";

const $view = document.getElementById("view");
const $status = document.getElementById("status");
const $crumbs = document.getElementById("crumbs");
const $key = document.getElementById("api-key");

$key.value = sessionStorage.getItem("agent-memory-key") || "";
document.getElementById("key-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("agent-memory-key", $key.value.trim());
  route();
});

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") node.addEventListener("click", v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const enc = encodeURIComponent;
const fmt = (x, d = 3) => (typeof x === "number" ? x.toFixed(d) : "");
const day = (iso) => (iso ? iso.replace("T", " ").slice(0, 19) : "");

let flash = null; // a message to show after the next navigation (which clears the status line)

function say(text, ok = false) {
  $status.textContent = text || "";
  $status.className = ok ? "ok" : "";
}

// The page lives at <base>/console/index.html; the API is <base>/v1/... (on AWS <base> is the stage).
const BASE = new URL("../", location.href);

async function api(method, path, body) {
  const headers = { "x-api-key": sessionStorage.getItem("agent-memory-key") || "" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(new URL(path.replace(/^\//, ""), BASE), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const msg = res.status === 403 ? "enter a valid API key above" : data.message || res.statusText;
    throw new Error(`${res.status}: ${msg}`);
  }
  return data;
}

// When a memory expires: never recalled from then on; the daily job erases it.
function expiry(rec) {
  if (!rec.expires_at) return el("span", { class: "muted" }, "never");
  const gone = Date.parse(rec.expires_at) <= Date.now();
  return el("span", { class: gone ? "badge expired" : "expires", title: gone ? "expired: erased by the next daily job" : "expires" },
    `${gone ? "expired " : ""}${day(rec.expires_at)}`);
}

function state(rec) {
  const cold = rec.tier === "cold" ? el("span", { class: "badge cold", title: "out of the index, in S3" }, "cold") : null;
  if (rec.deleted_at) return el("span", {}, el("span", { class: "badge deleted" }, "deleted"), " ", cold);
  if (!rec.is_active) return el("span", {}, el("span", { class: "badge superseded" }, "superseded"), " ", cold);
  return el("span", {}, el("span", { class: "badge active" }, "active"), " ", cold);
}

// Which agent / run a memory belongs to ("shared": every agent of the user sees it).
function scope(rec) {
  const parts = [rec.agent_id ? `agent:${rec.agent_id}` : null, rec.run_id ? `run:${rec.run_id}` : null].filter(Boolean);
  return el("span", { class: `badge scope ${parts.length ? "scoped" : "shared"}` }, parts.join("/") || "shared");
}

function crumbs(...parts) {
  $crumbs.replaceChildren(...parts.flatMap((p, i) => [i ? " / " : "", p]));
}

// ------------------------------------------------------------------------------ pages

async function usersPage() {
  crumbs(el("a", { href: "#/" }, "users"));
  const { users } = await api("GET", "/v1/users");
  $view.replaceChildren(
    el("h1", {}, `Users (${users.length})`),
    el("table", { id: "users" },
      el("tr", {}, el("th", {}, "user"), el("th", {}, "memories (originals in S3)")),
      users.map((u) => el("tr", {},
        el("td", {}, el("a", { href: `#/u/${enc(u.user_id)}` }, u.user_id)),
        el("td", { class: "num" }, u.memories)))));
}

// The filters typed on a user's page (a JSON object, as the API's `filters`), kept across re-renders.
let pageFilters = "";

function parsedFilters() {
  if (!pageFilters.trim()) return undefined;
  try {
    return JSON.parse(pageFilters);
  } catch (err) {
    throw new Error(`filters: not JSON (${err.message})`);
  }
}

async function userPage(user) {
  crumbs(el("a", { href: "#/" }, "users"), el("a", { href: `#/u/${enc(user)}` }, user));
  let q = "include_inactive=true&include_deleted=true&include_expired=true&limit=500";
  const filters = parsedFilters();
  if (filters) q += `&filters=${enc(JSON.stringify(filters))}`;
  let memories;
  try {
    ({ memories } = await api("GET", `/v1/users/${enc(user)}/memories?${q}`));
  } catch (err) {
    pageFilters = ""; // a refused filter (422) must not stick to the page: the next visit shows it whole
    throw err;
  }
  const $query = el("input", { type: "text", id: "recall-query", placeholder: "try a recall…", size: "48" });
  const $agent = el("input", { type: "text", id: "recall-agent", placeholder: "as agent (optional)", size: "16" });
  const $filters = el("input", { type: "text", id: "filters", size: "60",
    placeholder: '{"metadata": {"project": "apollo", "priority": {"gte": 2}}}' });
  $filters.value = pageFilters;
  const $results = el("div", { id: "recall-results" });
  const tryRecall = async () => {
    if (!$query.value.trim()) return;
    const body = { user_id: user, query: $query.value };
    if ($agent.value.trim()) body.agent_id = $agent.value.trim();
    if (filters) body.filters = filters;
    const r = await api("POST", "/v1/recall", body);
    $results.replaceChildren(el("h2", {}, `Recall: ${r.query}`), gateLine(r.gate, "recall-gate"), hitsTable(r.memories),
      el("pre", { id: "recall-context" }, r.context || "(nothing above min_score)"));
  };
  const $form = el("form", { class: "toolbar" }, $query, $agent, el("button", { type: "submit" }, "Recall"),
    el("a", { href: `#/u/${enc(user)}/recalls` }, "recall log"),
    el("button", { class: "danger", id: "erase", type: "button", onclick: () => erase(user) }, "Erase user…"));
  $form.addEventListener("submit", (e) => { e.preventDefault(); tryRecall().catch((err) => say(err.message)); });
  const $filterForm = el("form", { class: "toolbar", id: "filter-form" }, "filters ", $filters,
    el("button", { type: "submit" }, "Apply to timeline and recall"));
  $filterForm.addEventListener("submit", (e) => {
    e.preventDefault();
    try {
      if ($filters.value.trim()) JSON.parse($filters.value);
    } catch (err) {
      say(`filters: not JSON (${err.message})`);
      return;
    }
    pageFilters = $filters.value;
    route().catch((err) => say(err.message));
  });
  $view.replaceChildren(el("h1", {}, `${user}: ${memories.length} memories${filters ? " (filtered)" : ""}`),
    $form, $filterForm, $results, el("h2", {}, "Timeline (newest first)"), timelineTable(user, memories));
}

function timelineTable(user, rows) {
  return el("table", { id: "timeline" },
    el("tr", {}, ["created", "state", "scope", "expires", "type", "memory", "importance", "source", "topic", ""].map((h) => el("th", {}, h))),
    rows.map((r) => el("tr", { "data-id": r.id },
      el("td", {}, day(r.created_at)), el("td", {}, state(r)), el("td", {}, scope(r)), el("td", { class: "expiry" }, expiry(r)),
      el("td", {}, r.memory_type),
      el("td", { class: "content" }, el("a", { href: `#/u/${enc(user)}/m/${enc(r.id)}` }, r.summary)),
      el("td", { class: "num" }, fmt(r.importance, 2)), el("td", {}, r.source),
      el("td", {}, r.topic_id ? el("a", { href: `#/u/${enc(user)}/m/${enc(r.id)}` }, r.topic_id) : ""),
      el("td", {}, r.deleted_at
        ? el("button", { class: "restore", onclick: () => act("POST", `/v1/memories/${enc(r.id)}/restore?user_id=${enc(user)}`, "restored") }, "restore")
        : el("button", { class: "forget", onclick: () => act("DELETE", `/v1/memories/${enc(r.id)}?user_id=${enc(user)}`, "forgotten") }, "forget")))));
}

// The recall gate's decision: did the query ask anything personal, and with what score?
function gateLine(gate, id) {
  if (!gate) return el("div", { class: "muted" }, "gate: off");
  return el("div", { class: "gate", id: id || null },
    el("span", { class: `badge ${gate.decision === "answer" ? "chosen" : "rejected"}` },
      gate.decision === "answer" ? "gate: answer" : "gate: nothing personal asked"),
    ` personal ${fmt(gate.personal, 2)} (threshold ${fmt(gate.threshold, 2)})` +
    (gate.answer_score == null ? "" : `, answer ${fmt(gate.answer_score, 2)} (threshold ${fmt(gate.answer_threshold, 2)})`) +
    `: ${gate.reason}`);
}

// Why this memory exists and what it did to others: the trigger's and the change model's verdicts.
function judgement(original) {
  const p = original.provenance || {};
  const lines = [];
  if (p.trigger) lines.push(`kept by ${p.decided_by || "rules"}: ${p.trigger}`);
  const c = p.change;
  if (c && c.decided_by === "caller") {
    const was = c.was ? `; the ${c.was.decided_by} had said ${c.was.decision}${c.was.memory_id ? ` of ${c.was.memory_id}` : ""}` : "";
    lines.push(`change: ${c.decision}${c.memory_id ? ` of ${c.memory_id}` : ""} (corrected by the caller, ${day(c.at)}${was})`);
  } else if (c) {
    const cut = c.threshold === undefined ? "" : ` >= ${fmt(c.threshold, 2)}`;
    lines.push(`change: ${c.decision} of ${c.memory_id} (${c.decided_by}, score ${fmt(c.score, 2)}${cut})`);
  }
  return lines.length ? el("ul", { id: "judgement" }, lines.map((t) => el("li", {}, t))) : null;
}

// The change detector errs (README, "Judgement"): a wrong duplicate or new version can be undone here.
function undoChange(user, id, original) {
  const c = (original.provenance || {}).change;
  if (!c || !["duplicate", "new_version"].includes(c.decision)) return null;
  return el("button", { id: "undo-change", title: "they are different facts: make this memory stand alone and active",
    onclick: () => act("POST", `/v1/memories/${enc(id)}/correct?user_id=${enc(user)}`, "corrected: unrelated", { decision: "unrelated" }) },
    `not a ${c.decision.replace("_", " ")}: undo`);
}

function hitsTable(hits) {
  return el("table", { class: "hits" },
    el("tr", {}, ["memory", "scope", "score", "similarity", "lexical", "relevance", "decay", "importance", "type", "created"]
      .map((h) => el("th", {}, h))),
    hits.map((h) => el("tr", {},
      el("td", { class: "content" }, h.content), el("td", {}, scope(h)), el("td", { class: "num score" }, fmt(h.score)),
      el("td", { class: "num" }, fmt(h.parts.similarity)), el("td", { class: "num" }, fmt(h.parts.lexical)),
      el("td", { class: "num" }, fmt(h.parts.relevance)), el("td", { class: "num" }, fmt(h.parts.decay)),
      el("td", { class: "num" }, fmt(h.parts.importance_weight)), el("td", { class: "num" }, fmt(h.parts.type_weight)),
      el("td", {}, day(h.created_at)))));
}

async function memoryPage(user, id) {
  crumbs(el("a", { href: "#/" }, "users"), el("a", { href: `#/u/${enc(user)}` }, user), id);
  const m = await api("GET", `/v1/memories/${enc(id)}?user_id=${enc(user)}`);
  const parts = [el("h1", {}, m.original.content),
    el("div", { class: "toolbar" }, state(m.record), scope(m.record), el("span", {}, "expires ", expiry(m.record)),
      [m.record.memory_type, `importance ${fmt(m.record.importance, 2)}`, m.record.source, day(m.record.created_at)]
        .map((t) => el("span", {}, t))),
    judgement(m.original), undoChange(user, id, m.original),
    el("div", { class: "row" },
      el("div", { class: "col" }, el("h2", {}, "Index record"), el("pre", { id: "record" }, JSON.stringify(m.record, null, 2))),
      el("div", { class: "col" }, el("h2", {}, `Original (S3: ${m.record.storage_key})`),
        el("pre", { id: "original" }, JSON.stringify(m.original, null, 2))))];
  if (m.record.topic_id) {
    const { versions } = await api("GET", `/v1/topics/${enc(m.record.topic_id)}/versions?user_id=${enc(user)}`);
    parts.push(el("h2", {}, `Versions of topic "${m.record.topic_id}" (oldest first)`),
      el("table", { id: "versions" },
        el("tr", {}, ["created", "state", "memory", "id"].map((h) => el("th", {}, h))),
        versions.map((v) => el("tr", {}, el("td", {}, day(v.created_at)), el("td", {}, state(v)),
          el("td", { class: "content" }, v.summary),
          el("td", {}, v.id === id ? el("b", {}, v.id) : el("a", { href: `#/u/${enc(user)}/m/${enc(v.id)}` }, v.id))))));
  }
  $view.replaceChildren(...parts.filter(Boolean));
}

async function recallsPage(user) {
  crumbs(el("a", { href: "#/" }, "users"), el("a", { href: `#/u/${enc(user)}` }, user), "recall log");
  const { recalls } = await api("GET", `/v1/users/${enc(user)}/recalls?limit=50`);
  $view.replaceChildren(el("h1", {}, `Recall log of ${user} (${recalls.length}, newest first)`),
    ...recalls.map((r) => el("details", { class: "recall" },
      el("summary", {}, `${day(r.at)} — “${r.query}” — ${r.chosen.length} chosen of ${r.candidates.length} candidates`),
      el("div", { class: "muted" }, `model ${r.model.model}, top_k ${r.top_k}, min_score ${fmt(r.min_score)}, ` +
        `hybrid ${r.hybrid}, embed ${fmt(r.timings_ms.embed, 1)} ms, search ${fmt(r.timings_ms.search, 1)} ms`),
      gateLine(r.gate),
      el("table", {},
        el("tr", {}, ["candidate", "", "score", "similarity", "lexical", "decay", "importance", "type", "why"]
          .map((h) => el("th", {}, h))),
        r.candidates.map((c) => el("tr", {},
          el("td", { class: "content" }, el("a", { href: `#/u/${enc(user)}/m/${enc(c.memory_id)}` }, c.summary)),
          el("td", {}, el("span", { class: `badge ${c.chosen ? "chosen" : "rejected"}` }, c.chosen ? "chosen" : "not chosen")),
          el("td", { class: "num" }, fmt(c.score)), el("td", { class: "num" }, fmt(c.similarity)),
          el("td", { class: "num" }, fmt(c.lexical)), el("td", { class: "num" }, fmt(c.decay)),
          el("td", { class: "num" }, fmt(c.importance_weight)), el("td", { class: "num" }, fmt(c.type_weight)),
          el("td", {}, c.reason)))))));
}

// ---------------------------------------------------------------------------- actions

async function act(method, path, done, body) {
  try {
    await api(method, path, body);
    say(done, true);
    await route(false);
  } catch (err) {
    say(err.message);
  }
}

async function erase(user) {
  if (!confirm(`Erase every memory, index entry, S3 version and recall log of "${user}"? This cannot be undone.`)) return;
  try {
    const r = await api("DELETE", `/v1/users/${enc(user)}`);
    flash = `erased ${user}: ${JSON.stringify(r.erased)}`;
    location.hash = "#/";
  } catch (err) {
    say(err.message);
  }
}

async function route(clear = true) {
  if (!location.hash.startsWith("#/u/")) pageFilters = ""; // filters belong to one user's page
  if (clear) {
    say(flash || "", flash !== null);
    flash = null;
  }
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === "u" && parts[2] === "m") await memoryPage(parts[1], parts[3]);
    else if (parts[0] === "u" && parts[2] === "recalls") await recallsPage(parts[1]);
    else if (parts[0] === "u") await userPage(parts[1]);
    else await usersPage();
  } catch (err) {
    say(err.message);
    $view.replaceChildren();
  }
}

window.addEventListener("hashchange", () => route());
route();
