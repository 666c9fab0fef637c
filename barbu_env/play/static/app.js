// The Barbu web table: talks JSON to barbu-serve (barbu_env/play/server.py). No external assets.
"use strict";

const $ = (sel) => document.querySelector(sel);
const SUITS = { S: ["♠", false], H: ["♥", true], D: ["♦", true], C: ["♣", false] };
const params = new URLSearchParams(location.search);
const DELAY = params.has("delay") ? Number(params.get("delay")) : 350; // ms between shown moves

let game = null; // {id, players, seat}
let lastView = null;

function setState(state) { document.body.dataset.state = state; }

async function api(method, url, body) {
  const res = await fetch(url, {
    method, headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json();
  if (!res.ok) throw Object.assign(new Error(data.error || res.statusText), { data });
  return data;
}

function cardEl(card, tag = "span") {
  const el = document.createElement(tag);
  const [sym, red] = SUITS[card[1]];
  el.className = "card" + (red ? " red" : "");
  el.textContent = card[0].replace("T", "10") + sym;
  el.dataset.card = card;
  return el;
}

function positions(n) {
  return n === 3 ? ["south", "west", "east"]
    : n === 5 ? ["south", "west", "northwest", "northeast", "east"]
    : ["south", "west", "north", "east"];
}

function seatLabel(s, players, seat) {
  return s === seat ? "You (P" + s + ")" : "P" + s + " " + players[s];
}

const RELATIVE = ["left", "across", "right"]; // R1.3: seat + 1, + 2, + 3

function actionLabel(name, seat, n) {
  if (name.startsWith("declare:")) return "Declare " + name.slice(8).replace(":", " ");
  if (name === "double:none") return "No double";
  if (name.startsWith("double:")) {
    // four seats name targets left/across/right (R1.3), three or five name offsets, "double:+1+3" (R12.2)
    const offset = (r) => (RELATIVE.includes(r) ? 1 + RELATIVE.indexOf(r) : Number(r));
    return "Double " + name.slice(7).split("+").filter((r) => r).map((r) => (RELATIVE.includes(r) ? r : "+" + r)
      + " (P" + (seat + offset(r)) % n + ")").join(" + ");
  }
  if (name === "pass") return "Pass";
  return name[0].replace("T", "10") + SUITS[name[1]][0]; // a card
}

function infoText(view, players, seat) {
  const parts = view.king ? ["Barbu King (lowest total wins)"] : [];
  if (view.match) parts.push("Deal " + (view.match.deal_no + 1) + "/" + view.match.num_deals);
  parts.push("Contract: " + (view.contract || "to be declared"));
  parts.push("Declarer: " + seatLabel(view.declarer, players, seat));
  if (view.doubles.length) parts.push("Doubles: " + view.doubles.map(([s, t]) => "P" + s + "→P" + t).join(" "));
  return parts.join(" · ");
}

// seat: the human's seat (-1 in a replay); bottom: the seat drawn at the bottom of the table
function drawSeats(container, view, players, seat, hands, bottom = seat) {
  container.innerHTML = "";
  const pos = positions(view.players);
  for (let s = 0; s < view.players; s++) {
    const rel = (s - bottom + view.players) % view.players;
    const el = document.createElement("div");
    el.className = "seat pos-" + pos[rel] + (s === view.to_move ? " on-move" : "");
    el.dataset.seat = s;
    const total = view.match ? " · total " + view.match.totals[s] : "";
    el.innerHTML = '<div class="name"></div><div class="counts"></div>';
    el.querySelector(".name").textContent = seatLabel(s, players, seat) + (s === view.declarer ? " · declarer" : "");
    el.querySelector(".counts").textContent =
      view.hand_sizes[s] + " cards · " + view.tricks_won[s] + " tricks · " + view.points[s] + " pts" + total;
    if (hands) {
      const h = document.createElement("div");
      hands[s].forEach((c) => h.appendChild(cardEl(c)));
      el.appendChild(h);
    }
    container.appendChild(el);
  }
}

function drawTrick(container, view, bottom) {
  container.innerHTML = "";
  const pos = positions(view.players);
  const cards = view.trick.length ? view.trick : view.last_trick ? view.last_trick.cards : []; // a full trick stays shown
  for (const [s, c] of cards) {
    const el = cardEl(c);
    el.classList.add("tc-" + pos[(s - bottom + view.players) % view.players]);
    container.appendChild(el);
  }
}

function drawLayout(container, view) {
  const runs = view.layout.filter(Boolean);
  container.innerHTML = "";
  runs.forEach(([lo, hi]) => {
    const row = document.createElement("div");
    row.appendChild(cardEl(lo));
    if (hi !== lo) { row.append(" … "); row.appendChild(cardEl(hi)); }
    container.appendChild(row);
  });
}

function scoreTable(rows, players, seat, totals) {
  const t = document.createElement("table");
  t.className = "scores";
  let head = "<tr><th>deal</th><th>contract</th>";
  for (let s = 0; s < players.length; s++) head += "<th>" + seatLabel(s, players, seat) + "</th>";
  t.innerHTML = head + "</tr>";
  rows.forEach((r, k) => {
    const tr = document.createElement("tr");
    tr.innerHTML = "<td>" + (k + 1) + "</td><td>" + r.contract + "</td>" + r.scores.map((v) => "<td>" + v + "</td>").join("");
    t.appendChild(tr);
  });
  if (totals) {
    const tr = document.createElement("tr");
    tr.className = "totals";
    tr.innerHTML = "<th>total</th><td></td>" + totals.map((v, s) => '<th data-seat="' + s + '" data-total="' + v + '">' + v + "</th>").join("");
    t.appendChild(tr);
  }
  return t;
}

// ---------------------------------------------------------------- the table
function drawTable(view, interactive) {
  lastView = view;
  const { players, seat } = game;
  $("#info").textContent = infoText(view, players, seat);
  drawSeats($("#seats"), view, players, seat, null);
  drawTrick($("#trick"), view, seat);
  drawLayout($("#layout"), view);
  const legal = interactive ? view.legal : [];
  const hand = $("#hand");
  hand.innerHTML = "";
  view.hand.forEach((c) => {
    const b = cardEl(c, "button");
    b.disabled = !legal.includes(c);
    if (!b.disabled) { b.classList.add("legal"); b.onclick = () => play(c); }
    hand.appendChild(b);
  });
  const actions = $("#actions");
  actions.innerHTML = "";
  legal.filter((a) => a.length !== 2).forEach((a) => {
    const b = document.createElement("button");
    b.textContent = actionLabel(a, seat, view.players);
    b.dataset.action = a;
    b.onclick = () => play(a);
    actions.appendChild(b);
  });
  const result = $("#result");
  result.innerHTML = "";
  if (view.scores) {
    const p = document.createElement("p");
    p.innerHTML = "<b>Deal scores (" + view.contract + "):</b> ";
    view.scores.forEach((v, s) => {
      const span = document.createElement("span");
      span.className = "deal-score";
      span.dataset.seat = s;
      span.dataset.score = v;
      span.textContent = seatLabel(s, players, seat) + " " + (v > 0 ? "+" : "") + v + "  ";
      p.appendChild(span);
    });
    result.appendChild(p);
  }
  const list = $("#deal-list");
  list.innerHTML = "";
  if (view.match && view.match.deals.length) list.appendChild(scoreTable(view.match.deals, players, seat, view.match.totals));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function show(events, final, over) {
  setState("busy");
  for (const e of events) {
    $("#message").textContent = seatLabel(e.seat, game.players, game.seat) + ": " + actionLabel(e.action, e.seat, e.view.players);
    drawTable(e.view, false);
    if (DELAY) await sleep(e.view.scores ? DELAY * 3 : DELAY);
  }
  drawTable(final, !over);
  if (over) {
    const winners = final.match && final.match.winners;
    $("#message").textContent = winners ? "Match over · winner(s): " + winners.map((s) => seatLabel(s, game.players, game.seat)).join(", ") : "Deal over";
    $("#replay-this").hidden = false;
    setState("over");
  } else {
    $("#message").textContent = "Your move";
    setState("human");
  }
}

async function play(action) {
  if (document.body.dataset.state !== "human") return;
  setState("busy");
  try {
    const r = await api("POST", "/api/games/" + game.id + "/move", { action });
    await show(r.events, r.view, r.over);
  } catch (e) {
    $("#message").textContent = e.message;
    setState("human");
  }
}

async function start(ev) {
  ev.preventDefault();
  const f = new FormData($("#setup-form"));
  const body = { mode: f.get("mode"), rules: f.get("rules"), seat: Number(f.get("seat")), declarer: Number(f.get("declarer")),
    agents: [...document.querySelectorAll("#agent-selects select")].map((s) => s.value) };
  if (f.get("contract")) body.contract = f.get("contract");
  if (f.get("seed") !== "") body.seed = Number(f.get("seed"));
  $("#setup-error").textContent = "";
  setState("busy");
  try {
    const r = await api("POST", "/api/games", body);
    game = { id: r.id, players: r.players, seat: body.seat };
    $("#setup").hidden = true;
    $("#table").hidden = false;
    $("#replay-this").hidden = true;
    await show(r.events, r.view, r.over);
  } catch (e) {
    $("#setup-error").textContent = e.message;
    setState("setup");
  }
}

// ---------------------------------------------------------------- replay
let frames = [];
let frameNo = 0;
let replayPlayers = null;

function drawFrame() {
  const f = frames[frameNo];
  const v = f.view;
  const players = replayPlayers || v.hands.map((_, s) => "P" + s);
  const who = f.step < 0 ? "start of deal " + (f.deal_no + 1) : "P" + f.seat + " " + actionLabel(f.action, f.seat, v.players);
  $("#position").textContent = "step " + frameNo + "/" + (frames.length - 1) + " · " + who;
  $("#replay-info").textContent = infoText({ ...v, match: null }, players, -1) + " · deal " + (f.deal_no + 1);
  const bottom = Math.max(0, players.indexOf("human"));
  drawSeats($("#replay-hands"), v, players, -1, v.hands, bottom);
  drawTrick($("#replay-trick"), v, bottom);
  drawLayout($("#replay-layout"), v);
  const done = [];
  for (let k = 0; k <= frameNo; k++) if (frames[k].view.scores && (k + 1 === frames.length || frames[k + 1].deal_no !== frames[k].deal_no)) done.push({ contract: frames[k].view.contract, scores: frames[k].view.scores });
  const box = $("#replay-scores");
  box.innerHTML = "";
  box.appendChild(scoreTable(done, players, -1, f.totals));
  document.body.dataset.frame = frameNo;
}

function go(n) { frameNo = Math.max(0, Math.min(frames.length - 1, n)); drawFrame(); }

function trickStep(dir) {
  // to the next (previous) frame that ends a trick or a deal
  let k = frameNo + dir;
  const ends = (f) => f.step >= 0 && (f.view.trick.length === 0 || f.view.scores);
  while (k > 0 && k < frames.length - 1 && !ends(frames[k])) k += dir;
  go(k);
}

function openReplay(payload) {
  frames = payload.frames;
  replayPlayers = payload.players;
  $("#viewer").hidden = false;
  $("#replay-error").textContent = "";
  go(0);
}

async function refreshRecords() {
  const r = await api("GET", "/api/records");
  const sel = $("#record-list");
  sel.innerHTML = "";
  r.records.forEach((n) => { const o = document.createElement("option"); o.textContent = n; sel.appendChild(o); });
}

async function openSaved(name) {
  try { openReplay(await api("GET", "/api/records/" + encodeURIComponent(name))); }
  catch (e) { $("#replay-error").textContent = e.message; }
}

function showTab(which) {
  $("#tab-play").classList.toggle("active", which === "play");
  $("#tab-replay").classList.toggle("active", which === "replay");
  $("#replay").hidden = which !== "replay";
  if (which === "replay") { $("#setup").hidden = true; $("#table").hidden = true; refreshRecords(); }
  else if (game) $("#table").hidden = false;
  else $("#setup").hidden = false;
}

async function init() {
  const opts = await api("GET", "/api/options");
  const rules = document.querySelector("select[name=rules]");
  opts.rules.forEach((r) => { const o = document.createElement("option"); o.textContent = r; o.selected = r === "classic"; rules.appendChild(o); });
  const box = $("#agent-selects");
  for (let i = 0; i < 3; i++) {
    const s = document.createElement("select");
    opts.agents.forEach((a) => { const o = document.createElement("option"); o.textContent = a; o.selected = a === "heuristic"; s.appendChild(o); });
    box.appendChild(s);
  }
  $("#setup-form").onsubmit = start;
  $("#new-game").onclick = () => { game = null; $("#table").hidden = true; $("#setup").hidden = false; setState("setup"); };
  $("#replay-this").onclick = async () => { showTab("replay"); await openSaved(game.id + ".json"); };
  $("#tab-play").onclick = () => showTab("play");
  $("#tab-replay").onclick = () => showTab("replay");
  $("#open-record").onclick = () => openSaved($("#record-list").value);
  $("#record-file").onchange = async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    try { openReplay(await api("POST", "/api/replay?name=" + encodeURIComponent(file.name), JSON.parse(await file.text()))); }
    catch (e) { $("#replay-error").textContent = file.name + ": " + e.message; }
  };
  $("#first").onclick = () => go(0);
  $("#last").onclick = () => go(frames.length - 1);
  $("#prev").onclick = () => go(frameNo - 1);
  $("#next").onclick = () => go(frameNo + 1);
  $("#prev-trick").onclick = () => trickStep(-1);
  $("#next-trick").onclick = () => trickStep(1);
  setState("setup");
}

init();
