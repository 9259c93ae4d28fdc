/* trustsim viewer: a static single-page app. Data files are scripts calling TS.put(key, data), loaded on demand
   (a page opened from file:// may load scripts but not fetch JSON). Routes live in location.hash. */
"use strict";

const TS = (window.TS = {
  cache: new Map(),
  waiting: new Map(),
  put(key, data) {
    this.cache.set(key, data);
    const resolve = this.waiting.get(key);
    if (resolve) { this.waiting.delete(key); resolve(data); }
  },
});

function load(key, rel) {
  if (TS.cache.has(key)) return Promise.resolve(TS.cache.get(key));
  return new Promise((resolve, reject) => {
    TS.waiting.set(key, resolve);
    const s = document.createElement("script");
    s.src = "data/" + rel;
    s.onerror = () => { TS.waiting.delete(key); reject(new Error("missing data file " + rel)); };
    s.onload = () => s.remove();
    document.head.appendChild(s);
  });
}

const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const app = () => document.getElementById("app");
const crumbs = (html) => { document.getElementById("crumbs").innerHTML = html; };
const fmt = (v, digits = 3) => v === null || v === undefined ? "—" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(digits) : esc(v);
const pct = (v) => v === null || v === undefined ? "—" : (100 * v).toFixed(1) + "%";
const runData = (key) => load("run/" + key, "r/" + key + "/run.js");
const enc = encodeURIComponent;

let keyHandler = null;
document.addEventListener("keydown", (e) => {
  if (keyHandler && !(e.target instanceof HTMLInputElement)) keyHandler(e);
});

/* ---------------------------------------------------------------- a decision's request and raw response */
/* A model's decision carries its request-store key; the requests of one unit (game, scenario, match, session)
   are one data file, loaded when the first of them is opened. */
function requestCell(run, unit, req, answered) {
  const row = run.row;
  if (req) return `<button class="req" data-run="${esc(row.key)}" data-unit="${esc(unit)}" data-req="${esc(req)}" title="the exact request sent and the raw response, from the request store">request ▸</button>`;
  if (row.source === "reference") return `<span class="muted no-req" title="${esc(run.requests?.note ?? "")}">not in the study's logs</span>`;
  if (!answered || !((row.calls_sent || 0) + (row.cache_hits || 0))) return `<span class="muted no-req">scripted: no request</span>`;
  return `<span class="muted no-req" title="this run's events hold no request key for this answer: it was recorded before trustsim wrote them">no request recorded</span>`;
}

function messageContent(texts, content) {
  if (typeof content === "number") return texts[content];
  return typeof content === "string" ? content : JSON.stringify(content, null, 2);
}

function requestPanel(run, entry, req) {
  const info = run.requests || {};
  if (entry === undefined || entry === null) {
    const why = info.store ? `This request (key ${esc(req.slice(0, 12))}…) is not in the request store ${esc(info.store)}: it was pruned, or the run used another store (build with <code>--store PATH</code>).` : esc(info.note || "no request store was read for this run");
    return `<div class="request missing"><p><strong>Request not available.</strong> ${why}</p></div>`;
  }
  const e = entry, texts = e.texts;
  const msgs = e.messages.map((m, i) => `<div class="msg"><div class="role">${i + 1}. ${esc(m.role)}</div><pre>${esc(messageContent(texts, m.content))}</pre></div>`).join("");
  const when = e.created ? new Date(e.created * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—";
  return `<div class="request"><h4>Request <span class="muted">${esc(e.model)} · ${esc(e.purpose)} · sample ${esc(e.sample)} · key ${esc(req.slice(0, 12))}…${e.api_base ? " · " + esc(e.api_base) : ""}</span></h4>
    <details class="params"><summary>generation settings</summary><pre>${esc(JSON.stringify(e.params, null, 2))}</pre></details>
    <div class="messages">${msgs}</div>
    <h4>Raw response <span class="muted">${fmt(e.prompt_tokens)} prompt + ${fmt(e.completion_tokens)} completion tokens · ${fmt(e.latency_s, 2)} s · $${fmt(e.cost_usd, 6)} · stored ${esc(when)}</span></h4>
    <pre class="response">${esc(e.response)}</pre><p class="muted">from ${esc(info.store)}</p></div>`;
}

async function toggleRequest(btn) {
  const host = btn.closest("tr") || btn.parentElement;
  for (let open = host.nextElementSibling; open && open.classList.contains("req-panel"); open = open.nextElementSibling) {
    if (open.dataset.req === btn.dataset.req) { open.remove(); btn.textContent = "request ▸"; return; }
  }
  const { run: runKey, unit, req } = btn.dataset;
  const [run, data] = await Promise.all([runData(runKey), load(`req/${runKey}/${unit}`, `r/${runKey}/q/${unit}.js`).catch(() => ({ texts: [], entries: {} }))]);
  const entry = data.entries[req];
  const html = requestPanel(run, entry ? { ...entry, texts: data.texts } : entry, req);
  let panel;
  if (host.tagName === "TR") {
    panel = document.createElement("tr");
    panel.innerHTML = `<td colspan="${host.children.length}">${html}</td>`;
  } else {
    panel = document.createElement(host.tagName === "LI" ? "li" : "div");
    panel.innerHTML = html;
  }
  panel.className = "req-panel";
  panel.dataset.req = req;
  host.after(panel);
  btn.textContent = "request ▾";
}

document.addEventListener("click", (e) => {
  const btn = e.target instanceof Element ? e.target.closest("button.req") : null;
  if (btn) { e.preventDefault(); toggleRequest(btn).catch((err) => { btn.after(Object.assign(document.createElement("span"), { className: "badge invalid", textContent: err.message })); }); }
});

/* ---------------------------------------------------------------- index */
const COLUMNS = [
  ["date", "started (UTC)"], ["run_id", "run id"], ["family", "game"], ["experiment", "experiment"], ["model", "model"], ["agent", "agent"], ["prompt", "prompt"],
  ["memory", "memory"], ["schedule", "schedule"], ["seed", "seed"], ["status", "status"], ["games", "games"],
  ["decisions", "decisions"], ["invalid_share", "invalid"], ["calls_sent", "LLM sent"], ["cache_hits", "cached"],
  ["tokens", "tokens"], ["cost_usd", "cost $"], ["sweep", "sweep"],
];
const indexState = { sort: "date", dir: -1, filters: {} };  // newest first

async function renderIndex() {
  keyHandler = null;
  crumbs("");
  const index = await load("index", "index.js");
  const head = COLUMNS.map(([k, label]) => `<th class="sortable" data-sort="${k}">${esc(label)}${indexState.sort === k ? (indexState.dir > 0 ? " ▲" : " ▼") : ""}</th>`).join("");
  const filters = COLUMNS.map(([k]) => `<th><input data-filter="${k}" placeholder="filter" value="${esc(indexState.filters[k] || "")}"></th>`).join("");
  const reports = index.reports.length
    ? `<h2>Analysis reports</h2><ul>${index.reports.map((r) => `<li><a href="${esc(r.href)}">${esc(r.path)}</a> <span class="muted">(${r.figures.length} figures)</span></li>`).join("")}</ul>`
    : "";
  app().innerHTML = `<h1>Runs <span class="muted" id="run-count"></span></h1>
    <table id="runs"><thead><tr>${head}</tr><tr class="filters">${filters}</tr></thead><tbody></tbody></table>${reports}`;
  const draw = () => {
    const rows = index.runs.filter((r) => COLUMNS.every(([k]) => {
      const f = (indexState.filters[k] || "").trim().toLowerCase();
      return !f || String(r[k] ?? "").toLowerCase().includes(f);
    }));
    const k = indexState.sort;
    rows.sort((a, b) => {
      const x = a[k], y = b[k];
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * indexState.dir;
    });
    document.getElementById("run-count").textContent = `(${rows.length} of ${index.runs.length})`;
    document.querySelector("#runs tbody").innerHTML = rows.map((r) => `<tr class="${esc(r.status)}" data-key="${esc(r.key)}">${COLUMNS.map(([c]) => {
      if (c === "experiment") return `<td><a href="#/run/${esc(r.key)}">${esc(r.experiment ?? r.key)}</a>${r.source === "reference" ? ' <span class="chip">reference log</span>' : ""}</td>`;
      if (c === "status") return `<td>${esc(r.status)}${r.failure ? `<br><span class="muted">${esc(r.failure)}</span>` : ""}</td>`;
      if (c === "invalid_share") return `<td>${pct(r[c])}</td>`;
      if (c === "run_id") return `<td class="run-id">${esc(r[c] ?? "")}</td>`;
      if (c === "date") return `<td class="date">${fmt(r[c])}</td>`;
      return `<td>${fmt(r[c])}</td>`;
    }).join("")}</tr>`).join("");
  };
  draw();
  app().querySelectorAll("th.sortable").forEach((th) => th.addEventListener("click", () => {
    const k = th.dataset.sort;
    indexState.dir = indexState.sort === k ? -indexState.dir : 1;
    indexState.sort = k;
    renderIndex();
  }));
  app().querySelectorAll("input[data-filter]").forEach((input) => input.addEventListener("input", () => {
    indexState.filters[input.dataset.filter] = input.value;
    draw();
  }));
}

/* ---------------------------------------------------------------- run page */
function runHeader(row) {
  const bits = ["family", "model", "agent", "prompt", "memory", "schedule", "seed", "status"].filter((k) => row[k] !== null && row[k] !== undefined)
    .map((k) => `<span class="chip">${k}: ${esc(row[k])}</span>`).join("");
  return `<h1>${esc(row.experiment ?? row.key)}</h1><p>${bits}</p>${row.failure ? `<p class="badge invalid">failed: ${esc(row.failure)}</p>` : ""}
    <p class="muted">${esc(row.path)} · games ${fmt(row.games)} · decisions ${fmt(row.decisions)} · invalid ${pct(row.invalid_share)}
    · LLM sent ${fmt(row.calls_sent)} / cached ${fmt(row.cache_hits)} · tokens ${fmt(row.tokens)} · cost $${fmt(row.cost_usd, 4)}</p>`;
}

const SEARCH_HELP = `Search matches whole words, case-insensitively: <code>D wrong</code> finds decisions whose reasoning has the word “D” and the word “wrong” (not every “d” inside a word); <code>"was wrong"</code> in quotes is a phrase, its words in that order. Every word and phrase must appear.`;

function searchBox(key, query = "") {
  return `<form class="search" id="search-form"><input id="search-input" placeholder='search reasoning: whole words or "a phrase", e.g. D wrong' value="${esc(query)}"><button>Search</button></form><p class="legend" id="search-help">${SEARCH_HELP}</p>`;
}

/* The search rule: the query's terms are its bare words and its "quoted phrases" (an unclosed quote runs to the
   end); a term matches where it stands as whole words (no letter, digit or _ right before or after it; a
   phrase's words separated by any white space), ignoring case; a text matches when every term does. */
const WORD_CHAR = "[\\p{L}\\p{N}_]";

function searchTerms(query) {
  return [...String(query).matchAll(/"([^"]*)"?|(\S+)/g)].map((m) => (m[1] ?? m[2]).trim()).filter(Boolean);
}

function termSource(term) {
  return term.split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+");
}

function termRegex(terms) {
  return new RegExp(`(?<!${WORD_CHAR})(?:${terms.map(termSource).join("|")})(?!${WORD_CHAR})`, "giu");
}

function searchMatcher(query) {
  const terms = searchTerms(query);
  const each = terms.map((t) => termRegex([t]));
  const any = terms.length ? termRegex(terms) : null;
  return {
    terms,
    test: (text) => terms.length > 0 && each.every((re) => { re.lastIndex = 0; return re.test(text); }),
    mark: (text) => {
      if (!any) return esc(text);
      let out = "", last = 0;
      for (const m of String(text).matchAll(any)) {
        out += esc(text.slice(last, m.index)) + `<mark>${esc(m[0])}</mark>`;
        last = m.index + m[0].length;
      }
      return out + esc(text.slice(last));
    },
  };
}
TS.searchMatcher = searchMatcher;  // the rule, for tests

function bindSearch(key) {
  const form = document.getElementById("search-form");
  if (form) form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/search/${key}/${enc(document.getElementById("search-input").value.trim())}`;
  });
}

function strip(key, games, current) {
  return `<div class="strip">${games.map((g) => {
    const share = g.verifications ? g.partner_verifications / g.verifications : null;
    const h = Math.min(100, 8 * g.verifications);
    return `<a href="#/game/${key}/${enc(g.session)}/${enc(g.game)}/1" class="${g.d_correct ? "" : "dwrong"} ${current === g.game ? "current" : ""}"
      title="game ${esc(g.game)}: ${esc(g.verifications)} verifications, partner share ${share === null ? "—" : share.toFixed(2)}, ${esc(g.outcome)}${g.d_correct ? "" : " (D wrong)"}">
      <span>${esc(g.verifications)}</span><span class="bar" style="height:${Number(h) || 0}%"></span><span>${esc(g.game)}</span></a>`;
  }).join("")}</div>`;
}

const STRIP_LEGEND = `<p class="legend">Bars: verifications per game (seats A–C); hover for the partner share. Yellow: games where partner D's answer was wrong.</p>`;

async function renderRun(key, page = 0) {
  keyHandler = null;
  const run = await runData(key);
  const row = run.row;
  crumbs(` › <a href="#/run/${key}">${esc(row.experiment ?? key)}</a>`);
  let body = runHeader(row);
  if (run.error) body += `<p class="badge invalid">${esc(run.error)}</p>`;
  if (run.games) {
    body += searchBox(key) + STRIP_LEGEND;
    const sessions = new Map();
    for (const g of run.games) { if (!sessions.has(g.session)) sessions.set(g.session, []); sessions.get(g.session).push(g); }
    const all = [...sessions.entries()];
    const per = 50, pages = Math.ceil(all.length / per);
    body += all.slice(page * per, page * per + per).map(([s, games]) => {
      const v = games.reduce((a, g) => a + g.verifications, 0), p = games.reduce((a, g) => a + g.partner_verifications, 0);
      return `<h3>Session ${esc(s)} <span class="muted">· ${games.length} games · ${(v / games.length).toFixed(2)} verifications/game · partner share ${v ? (p / v).toFixed(3) : "—"}</span></h3>${strip(key, games, null)}`;
    }).join("");
    if (pages > 1) body += `<p class="pager">sessions page ${page + 1} of ${pages} ${page > 0 ? `<a href="#/run/${key}/${page - 1}">previous</a>` : ""} ${page + 1 < pages ? `<a href="#/run/${key}/${page + 1}">next</a>` : ""}</p>`;
  }
  if (run.scenarios) {
    body += searchBox(key) + `<table id="scenarios"><thead><tr><th>scenario</th><th>category</th><th>process</th><th>pair</th><th>stages</th><th>all optimal</th><th>cost</th></tr></thead><tbody>${run.scenarios.map((s, i) =>
      `<tr><td><a href="#/scenario/${key}/${i}">${esc(s.item)}</a></td><td>${esc(s.category)}</td><td>${esc(s.process)}</td><td>${esc(s.pair ?? "")}</td><td>${esc(s.stages)}</td><td>${esc(s.all_optimal)}</td><td>${fmt(s.total_cost)}</td></tr>`).join("")}</tbody></table>`;
  }
  if (run.matches) {
    body += `<table id="matches"><thead><tr><th>match</th><th>player A</th><th>player B</th><th>rounds</th><th>payoffs</th><th>cooperation A / B</th></tr></thead><tbody>${run.matches.map((m) =>
      `<tr><td><a href="#/match/${key}/${enc(m.match)}">${esc(m.match)}</a></td><td>${esc(m.player_a)} <span class="muted">${esc(m.model_a)}</span></td><td>${esc(m.player_b)} <span class="muted">${esc(m.model_b)}</span></td><td>${fmt(m.rounds)}</td><td>${fmt(m.payoff_a)} / ${fmt(m.payoff_b)}</td><td>${fmt(m.coop_a)} / ${fmt(m.coop_b)}</td></tr>`).join("")}</tbody></table>`;
  }
  if (run.sessions) {
    body += `<table id="tg-sessions"><thead><tr><th>session</th><th>pairs</th><th>exchanges</th></tr></thead><tbody>${run.sessions.map((s) =>
      `<tr><td><a href="#/tg/${key}/${enc(s.session)}">session ${esc(s.session)}</a></td><td>${esc(s.pairs)}</td><td>${esc(s.exchanges)}</td></tr>`).join("")}</tbody></table>`;
  }
  if (run.tables) {  // a game that declares a table page (analysis.view.family_pages.table_page)
    body += run.tables.map((t) => `<h3>${esc(t.name)}.csv <span class="muted">· ${esc(t.total)} rows${t.total > t.rows.length ? `, the first ${t.rows.length} shown` : ""}</span></h3><table class="run-table" data-table="${esc(t.name)}"><thead><tr>${t.columns.map((c) => `<th>${esc(c)}</th>`).join("")}</tr></thead><tbody>${t.rows.map((r) =>
      `<tr>${r.map((v) => `<td>${typeof v === "number" ? fmt(v) : esc(v ?? "")}</td>`).join("")}</tr>`).join("")}</tbody></table>`).join("");
  }
  app().innerHTML = body;
  bindSearch(key);
}

/* ---------------------------------------------------------------- escape-room game replay */
function capsuleChips(caps, end) {
  return (caps || []).map((c) => {
    const mark = end && c.right !== undefined && c.right !== null ? (c.right ? " right" : " wrong") : "";
    const sign = end && c.right !== undefined && c.right !== null ? (c.right ? " ✓" : " ✗") : "";
    return `<span class="chip capsule${mark}" data-label="${esc(c.label)}">${esc(c.label)} <span class="muted">[${esc(c.endorsers.join(", "))}]</span>${sign}</span>`;
  }).join("");
}

function capsuleTable(game, capsules, end) {
  return `<table id="capsules"><thead><tr><th>puzzle</th><th>owner</th><th>capsules [endorsers]${end ? " · right?" : ""}</th></tr></thead><tbody>${game.puzzles.map((p) =>
    `<tr data-slot="${esc(p.slot)}"><td>${esc(p.slot)} <span class="muted">${esc(p.text ?? "")}${end && p.answer !== null ? " = " + esc(p.answer) : ""}</span>${Number(p.slot.slice(1)) === game.partner_puzzle ? ' <span class="chip">partner</span>' : ""}</td><td>${esc(p.owner)}</td><td>${capsuleChips(capsules[p.slot], end)}</td></tr>`).join("")}</tbody></table>`;
}

function confidence(conf) {
  if (!conf) return "";
  return Object.entries(conf).map(([q, p]) => `<span class="chip">Q${esc(String(q).replace(/^Q/, ""))}: ${fmt(p, 2)}</span>`).join("");
}

function decisionRows(decisions, run, unit) {
  return decisions.map((d) => {
    const invalid = d.valid === false;
    const raw = invalid && d.raw ? `<pre class="raw">${esc(d.raw)}</pre>` : "";
    return `<tr class="decision ${invalid ? "invalid" : ""}" data-seat="${esc(d.seat)}"><td>${esc(d.seat)}</td>
      <td>${esc(d.action ?? "—")}${invalid ? ` <span class="badge invalid">INVALID${d.invalid_reason ? ": " + esc(d.invalid_reason) : ""}</span>` : ""}</td>
      <td>${esc(d.resolved ?? "")}</td><td>${confidence(d.confidence)}</td><td class="reasoning">${esc(d.reasoning ?? "")}${raw}</td>
      <td>${requestCell(run, unit, d.request, d.raw)}</td></tr>`;
  }).join("");
}

/* A model's answer outside the decisions (game.verifier=llm, game.own_answer=llm): what it answered, and its
   request one click away as a decision's. */
function answered(call) {
  if (!("answer" in call)) return "";
  return call.answer === null ? " · answered nothing usable" : ` · answered ${esc(call.answer)}`;
}

function roundEvents(rnd, run, unit) {
  const items = [];
  for (const v of rnd.verifications) {
    const what = v.created === null || v.created === undefined ? `verified Q${v.puzzle}` : v.created ? `verified Q${v.puzzle}: no capsule matched, opened ${v.capsule}` : v.already ? `verified Q${v.puzzle}: already endorsed ${v.capsule}` : `verified Q${v.puzzle}: agreed with ${v.capsule}`;
    const req = v.request || v.raw ? ` ${requestCell(run, unit, v.request, v.raw)}` : "";
    items.push(`<li class="verification" data-seat="${esc(v.seat)}">${esc(v.seat)} ${esc(what)} (−1 coin)${answered(v)}${req}</li>`);
  }
  if (rnd.volunteer) {
    const pw = rnd.volunteer.password ? Object.entries(rnd.volunteer.password).map(([q, l]) => `Q${String(q).replace(/^Q/, "")}→${l}`).join(", ") : "";
    items.push(`<li>Volunteers: ${esc((rnd.volunteer.volunteers || []).join(", "))}; chosen ${esc(rnd.volunteer.chosen)}${pw ? "; password " + esc(pw) : ""}: <strong>${rnd.volunteer.correct ? "correct" : "wrong"}</strong></li>`);
  }
  for (const d of rnd.deaths) items.push(`<li class="death">${esc(d.seat)} died (${esc(d.cause)})</li>`);
  if (!items.length) items.push(`<li class="muted">no verification, volunteer or death</li>`);
  const ann = rnd.announcement ? `<pre>${esc(rnd.announcement)}</pre>` : "";
  return `<ul class="events">${items.join("")}</ul>${ann}`;
}

/* Before round 1 (game.own_answer=llm): each model seat solved its own puzzle; the answer is sealed in its capsule. */
function ownAnswers(game, run, unit) {
  const calls = game.own_answers || [];
  if (!calls.length) return "";
  const truth = Object.fromEntries((game.puzzles || []).map((p) => [p.slot, p.answer]));
  const rows = calls.map((c) => {
    const right = c.answer !== null && c.answer === truth[`Q${c.puzzle}`];
    return `<li class="own-answer" data-seat="${esc(c.seat)}">${esc(c.seat)} solved Q${esc(c.puzzle)}${answered(c)} <span class="badge ${right ? "dright" : "dwrong"}">${right ? "right" : "wrong"}</span> ${requestCell(run, unit, c.request, c.raw)}</li>`;
  }).join("");
  return `<h3>Own answers <span class="muted">(sealed in each seat's capsule before round 1)</span></h3><ul class="events own-answers">${rows}</ul>`;
}

/* After the game (reflection memory): each seat's reflection, carried into its next game. */
function reflections(game, run, unit) {
  const calls = game.reflections || [];
  if (!calls.length) return "";
  const rows = calls.map((c) => `<li class="reflection" data-seat="${esc(c.seat)}"><strong>${esc(c.seat)}</strong> ${requestCell(run, unit, c.request, c.raw)}<pre class="raw">${esc(c.raw ?? "")}</pre></li>`).join("");
  return `<h3>Reflections <span class="muted">(written after the game, carried into the next)</span></h3><ul class="events reflections">${rows}</ul>`;
}

async function renderGame(key, session, gameNo, roundArg) {
  const [run, game] = await Promise.all([runData(key), load(`game/${key}/${session}/${gameNo}`, `r/${key}/g/${session}-${gameNo}.js`)]);
  const games = run.games.filter((g) => String(g.session) === String(session));
  const n = game.rounds.length;
  const end = roundArg === "end" || Number(roundArg) > n;
  const r = end ? n + 1 : Math.max(1, Number(roundArg) || 1);
  const unit = `${session}-${gameNo}`;
  crumbs(` › <a href="#/run/${key}">${esc(run.row.experiment ?? key)}</a> › session ${esc(session)} › game ${esc(gameNo)}`);
  const dbadge = game.d_correct ? '<span class="badge dright">D correct</span>' : '<span class="badge dwrong">D wrong (partner failure game)</span>';
  let body = `<h1>Game ${esc(gameNo)} ${dbadge}</h1>${strip(key, games, Number(gameNo))}${STRIP_LEGEND}
    <div class="round-nav"><button id="prev">◀</button><strong id="round-title">${end ? "End of game" : `Round ${r} of ${n}`}</strong><button id="next">▶</button>
    <span class="muted"><span class="kbd">←</span> <span class="kbd">→</span> rounds · <span class="kbd">[</span> <span class="kbd">]</span> games</span></div>`;
  if (end) {
    const e = game.end;
    body += `<p id="outcome"><strong>Outcome: ${esc(e.outcome)}</strong>${e.escape_round ? ` in round ${e.escape_round}` : ""} · survivors ${esc((e.survivors || []).join(", ") || "none")}</p>
      <p>coins ${Object.entries(e.coins || {}).map(([s, c]) => `<span class="chip">${esc(s)}: ${esc(c)}</span>`).join("")} · scores ${Object.entries(e.scores || {}).map(([s, c]) => `<span class="chip">${esc(s)}: ${esc(c)}</span>`).join("")}</p>
      <h3>Capsules after the game (✓ right, ✗ wrong)</h3>${capsuleTable(game, e.capsules || {}, true)}${reflections(game, run, unit)}`;
  } else {
    const rnd = game.rounds[r - 1];
    body += `<p>alive ${rnd.alive.map((s) => `<span class="chip">${esc(s)}: ${esc(rnd.coins[s] ?? "?")} coins</span>`).join("")}</p>
      ${r === 1 ? ownAnswers(game, run, unit) : ""}
      <div class="grid2"><div><h3>Capsules seen this round</h3>${capsuleTable(game, rnd.capsules, false)}<h3>What happened</h3>${roundEvents(rnd, run, unit)}</div>
      <div><h3>Decisions</h3><table id="decisions"><thead><tr><th>seat</th><th>action</th><th>resolved</th><th>stated confidence</th><th>reasoning</th><th>request</th></tr></thead><tbody>${decisionRows(rnd.decisions, run, unit)}</tbody></table></div></div>`;
  }
  app().innerHTML = body;
  const idx = games.findIndex((g) => Number(g.game) === Number(gameNo));
  // read the round from the address at key time: a fast second key press must not reuse a stale round
  const here = () => {
    const p = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    if (p[0] !== "game" || p[1] !== key || p[2] !== String(session) || p[3] !== String(gameNo)) return null;
    return p[4] === "end" ? n + 1 : Math.max(1, Number(p[4]) || 1);
  };
  const go = (delta) => {
    const now = here();
    if (now === null) return;  // another game is being opened
    const next = now + delta;
    if (next >= 1 && next <= n + 1) location.hash = `#/game/${key}/${session}/${gameNo}/${next > n ? "end" : next}`;
    else if (delta > 0 && idx + 1 < games.length) location.hash = `#/game/${key}/${session}/${games[idx + 1].game}/1`;
    else if (delta < 0 && idx > 0) location.hash = `#/game/${key}/${session}/${games[idx - 1].game}/end`;
  };
  const jump = (delta) => { const g = games[idx + delta]; if (g) location.hash = `#/game/${key}/${session}/${g.game}/1`; };
  document.getElementById("prev").onclick = () => go(-1);
  document.getElementById("next").onclick = () => go(1);
  keyHandler = (e) => {
    if (e.key === "ArrowRight") { e.preventDefault(); go(1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); go(-1); }
    else if (e.key === "]") jump(1);
    else if (e.key === "[") jump(-1);
  };
}

/* ---------------------------------------------------------------- search */
async function renderSearch(key, query) {
  keyHandler = null;
  const [run, entries] = await Promise.all([runData(key), load("search/" + key, `r/${key}/search.js`)]);
  crumbs(` › <a href="#/run/${key}">${esc(run.row.experiment ?? key)}</a> › search`);
  const matcher = searchMatcher(query);
  const hits = entries.filter((e) => matcher.test(String(e[e.length - 1])));
  const mark = (text) => matcher.mark(String(text));
  const link = (e) => e.length === 5 ? `#/game/${key}/${e[0]}/${e[1]}/${e[2]}` : `#/scenario/${key}/${run.scenarios.findIndex((s) => s.item === e[0])}`;
  const label = (e) => e.length === 5 ? `session ${e[0]} · game ${e[1]} · round ${e[2]} · seat ${esc(e[3])}` : `${esc(e[0])} · stage ${e[1]}`;
  app().innerHTML = `${searchBox(key, query)}<h2 id="search-count">${hits.length} decision(s) match “${esc(query)}”</h2>
    <ol id="search-results">${hits.slice(0, 500).map((e) => `<li><a href="${link(e)}">${label(e)}</a><div class="reasoning">${mark(e[e.length - 1])}</div></li>`).join("")}</ol>
    ${hits.length > 500 ? '<p class="muted">first 500 shown</p>' : ""}`;
  bindSearch(key);
}

/* ---------------------------------------------------------------- reliance */
async function renderScenario(key, i) {
  keyHandler = null;
  const [run, scenarios] = await Promise.all([runData(key), load("scenarios/" + key, `r/${key}/scenarios.js`)]);
  const s = scenarios[Number(i)];
  crumbs(` › <a href="#/run/${key}">${esc(run.row.experiment ?? key)}</a> › ${esc(s.item)}`);
  const stages = s.stages.map((st) => {
    const q = Object.entries(st.q_values || {});
    const best = q.length ? Math.min(...q.map(([, v]) => v)) : null;
    const qrows = q.map(([a, v]) => `<tr class="${a === st.action ? "q-chosen" : ""} ${v === best ? "q-best" : ""}"><td>${esc(a)}</td><td>${fmt(v, 4)}</td><td>${v === best ? "optimal" : ""}${a === st.action ? " · chosen" : ""}</td></tr>`).join("");
    const invalid = st.valid === false;
    return `<section class="stage" data-stage="${esc(st.stage)}"><h3>Stage ${esc(st.stage)}</h3>
      <p>evidence so far: <code>${esc(st.history || "(none)")}</code>${st.observation ? ` · then observed <code>${esc(st.observation)}</code>` : ""}</p>
      <p>choice: <strong>${esc(st.action)}</strong>${invalid ? ` <span class="badge invalid">INVALID${st.invalid_reason ? ": " + esc(st.invalid_reason) : ""}</span>` : ""} · regret ${fmt(st.regret, 4)} · stated confidence ${fmt(st.confidence, 3)}${st.p_exact !== null && st.p_exact !== undefined ? ` (exact posterior ${fmt(st.p_exact, 3)})` : ""}</p>
      <table class="qvalues"><thead><tr><th>action</th><th>Q* (expected cost)</th><th></th></tr></thead><tbody>${qrows}</tbody></table>
      ${st.reasoning ? `<p class="reasoning">${esc(st.reasoning)}</p>` : ""}${invalid && st.raw ? `<pre>${esc(st.raw)}</pre>` : ""}
      <p class="req-line">${requestCell(run, `scenario-${i}`, st.request, st.raw)}</p></section>`;
  }).join("");
  app().innerHTML = `<h1>${esc(s.item)}</h1><p><span class="chip">${esc(s.category ?? "")}</span><span class="chip">${esc(s.process ?? "")}</span> V* at the root ${fmt(s.v_star_root)} · total cost ${fmt(s.total_cost)}</p>${stages}`;
}

/* ---------------------------------------------------------------- arena */
async function renderMatch(key, match) {
  keyHandler = null;
  const [run, grid] = await Promise.all([runData(key), load(`match/${key}/${match}`, `r/${key}/m/${match}.js`)]);
  const m = run.matches.find((x) => String(x.match) === String(match)) || {};
  crumbs(` › <a href="#/run/${key}">${esc(run.row.experiment ?? key)}</a> › match ${esc(match)}`);
  const cells = (seat) => grid.rounds.map((r) => { const c = r.seats[seat]; return `<span class="cell ${c ? esc(c.move) : "none"}" title="round ${esc(r.round)}: ${c ? esc(c.move) : "—"}"></span>`; }).join("");
  const rows = grid.rounds.map((r) => {
    const a = r.seats.A || {}, b = r.seats.B || {};
    const one = (c) => `<td>${esc(c.move ?? "—")}${c.valid === false ? ' <span class="badge invalid">INVALID</span>' : ""}</td><td>${fmt(c.p, 2)} → ${esc(c.opponent_move ?? "—")}</td>`;
    return `<tr><td>${esc(r.round)}</td>${one(a)}${one(b)}<td class="reasoning">${esc(a.reasoning ?? "")}</td><td class="reasoning">${esc(b.reasoning ?? "")}</td>
      <td>A ${requestCell(run, `match-${match}`, a.request, a.raw)}<br>B ${requestCell(run, `match-${match}`, b.request, b.raw)}</td></tr>`;
  }).join("");
  app().innerHTML = `<h1>Match ${esc(match)}</h1><p>A: ${esc(m.player_a)} (${esc(m.model_a)}) · B: ${esc(m.player_b)} (${esc(m.model_b)}) · payoffs ${fmt(m.payoff_a)} / ${fmt(m.payoff_b)}</p>
    <div id="move-grid"><div>A ${cells("A")}</div><div>B ${cells("B")}</div></div><p class="legend">green C = cooperate, red D = defect</p>
    <table id="moves"><thead><tr><th>round</th><th>A move</th><th>A: P(B cooperates) → B did</th><th>B move</th><th>B: P(A cooperates) → A did</th><th>A reasoning</th><th>B reasoning</th><th>requests</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/* ---------------------------------------------------------------- trust game */
async function renderTrustGame(key, session) {
  keyHandler = null;
  const [run, rows] = await Promise.all([runData(key), load(`tg/${key}/${session}`, `r/${key}/tg/${session}.js`)]);
  crumbs(` › <a href="#/run/${key}">${esc(run.row.experiment ?? key)}</a> › session ${esc(session)}`);
  const byPair = new Map();
  for (const x of rows) { if (!byPair.has(x.pair)) byPair.set(x.pair, []); byPair.get(x.pair).push(x); }
  app().innerHTML = `<h1>Trust game · session ${esc(session)}</h1>${[...byPair.entries()].map(([pair, xs]) => `<h3>pair ${esc(pair)} <span class="muted">${esc(xs[0].trustor)} → ${esc(xs[0].trustee)} · E ${esc(xs[0].endowment)} · k ${esc(xs[0].multiplier)}</span></h3>
    <table class="exchanges"><thead><tr><th>round</th><th>sent</th><th>received</th><th>returned</th><th>return ratio</th><th>payoffs trustor / trustee</th><th>expected back</th><th>valid</th><th>requests</th></tr></thead><tbody>${xs.map((x) =>
      `<tr class="${x.valid === false ? "invalid" : ""}"><td>${esc(x.round)}</td><td>${esc(x.sent)}</td><td>${esc(x.received)}</td><td>${esc(x.returned)}</td><td>${fmt(x.return_ratio, 2)}</td><td>${esc(x.trustor_payoff)} / ${esc(x.trustee_payoff)}</td><td>${fmt(x.expected_return, 1)}</td><td>${x.valid === false ? `INVALID ${esc(x.sent_invalid_reason || x.returned_invalid_reason || "")}${x.sent_raw ? `<pre>${esc(x.sent_raw)}</pre>` : ""}${x.returned_raw ? `<pre>${esc(x.returned_raw)}</pre>` : ""}` : "yes"}</td>
      <td>send ${requestCell(run, `tg-${session}`, x.sent_request, x.sent_by_model)}<br>return ${requestCell(run, `tg-${session}`, x.returned_request, x.returned_by_model)}</td></tr>`).join("")}</tbody></table>`).join("")}`;
}

/* ---------------------------------------------------------------- router */
async function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (!parts[0]) await renderIndex();
    else if (parts[0] === "run") await renderRun(parts[1], Number(parts[2] || 0));
    else if (parts[0] === "game") await renderGame(parts[1], parts[2], parts[3], parts[4] || "1");
    else if (parts[0] === "search") await renderSearch(parts[1], parts.slice(2).join("/"));
    else if (parts[0] === "scenario") await renderScenario(parts[1], parts[2]);
    else if (parts[0] === "match") await renderMatch(parts[1], parts[2]);
    else if (parts[0] === "tg") await renderTrustGame(parts[1], parts[2]);
    else await renderIndex();
  } catch (err) {
    app().innerHTML = `<p class="badge invalid">${esc(err.message)}</p><p><a href="#/">back to all runs</a></p>`;
  }
}

window.addEventListener("hashchange", route);
route();
