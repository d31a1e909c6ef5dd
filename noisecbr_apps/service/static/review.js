// The review page: send a page to POST /review, draw the answer, relabel boxes through the API.
// Untrusted text (paths, texts of the page and of stored cases) is only ever set as textContent.
"use strict";

const state = { data: null, html: "", url: "", selected: null, labels: ["noise", "data", "mixture"] };
const $ = (id) => document.getElementById(id);

function status(message, error = false) {
  $("status").textContent = message;
  $("status").classList.toggle("error", error);
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function token() {
  return $("token").value.trim();
}

async function api(path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token()) headers.Authorization = "Bearer " + token();
  const answer = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  const data = await answer.json().catch(() => ({ detail: answer.statusText }));
  if (!answer.ok) throw new Error(`${answer.status}: ${data.detail || answer.statusText}`);
  return data;
}

async function readPage() {
  const file = $("file").files[0];
  if (file) return new TextDecoder("utf-8").decode(await file.arrayBuffer());
  return $("html").value;
}

async function review(event) {
  event.preventDefault();
  const html = await readPage();
  if (!html.trim()) { status("Choose a page file or paste its HTML.", true); return; }
  state.html = html;
  state.url = $("url").value.trim();
  status("Cleaning…");
  try {
    state.data = await api("/review", { html, url: state.url || null, options: { k: 3 } });
  } catch (error) {
    status(error.message, true);
    return;
  }
  state.selected = null;
  draw();
}

function draw() {
  const data = state.data;
  $("empty").hidden = true;
  $("selected").hidden = true;
  $("frame").srcdoc = data.frame;
  const list = $("decisions");
  list.replaceChildren();
  data.decisions.forEach((decision, index) => {
    const item = element("li");
    item.dataset.index = index;
    item.append(element("span", "", "chip " + decision.label), element("code", decision.path), " ");
    item.append(element("span", `${decision.label} ${formatProbabilities(decision.probabilities)}`));
    if (decision.source === "memory") item.append(" ", element("span", "site memory", "memory"));
    item.addEventListener("click", () => select(index, true));
    list.append(item);
  });
  $("count").textContent = `(${data.decisions.length})`;
  drawQueue(data.queue || []);
  $("text").textContent = data.text;
  const removed = data.decisions.filter((d) => d.label === "noise").length;
  const memory = data.memory_pages ? `; site memory of ${data.memory_pages} labelled page(s)` : "";
  const base = data.casebase ? "" : " (no case base: read-only)";
  status(`${data.decisions.length} decided subtrees, ${removed} removed${memory}${base}.`);
}

// The correction queue: the boxes where one click changes the site's most text, best first.
// An entry selects its box as a click on the box does; one no longer decided is greyed.
function drawQueue(boxes) {
  const list = $("queue");
  list.replaceChildren();
  const byPath = new Map(state.data.decisions.map((decision, index) => [decision.path, index]));
  boxes.forEach((entry) => {
    const item = element("li");
    const pages = entry.recurrence > 1 ? `, markup on ${entry.recurrence} pages` : "";
    item.append(element("span", "", "chip " + entry.decision), element("code", entry.path), " ",
      element("span", `${entry.decision} ${formatProbabilities(entry.probabilities)}, ` +
        `${entry.words} words${pages}`));
    const index = byPath.get(entry.path);
    if (index === undefined) {
      item.classList.add("gone");
    } else {
      item.dataset.index = index;
      item.addEventListener("click", () => select(index, true));
    }
    list.append(item);
  });
  if (!boxes.length) list.append(element("li", "nothing left to correct", "gone"));
  $("queue-count").textContent = `(${boxes.length})`;
  $("queue-panel").hidden = false;
}

async function refreshQueue() {
  const pageId = state.data.stored ? state.data.stored.page_id : null;
  if (pageId === null || pageId === undefined) return;
  const answer = await fetch(`/pages/${pageId}/queue?limit=10`);
  if (answer.ok) drawQueue((await answer.json()).boxes);
}

function formatProbabilities(probabilities) {
  return "(" + probabilities.map((p) => p.toFixed(2)).join(" / ") + ")";
}

function frameDocument() {
  return $("frame").contentDocument;
}

function box(index) {
  return frameDocument().querySelector(`[data-ncbr="${index}"]`);
}

function onFrameLoad() {
  const doc = frameDocument();
  if (!doc || !state.data) return;
  doc.addEventListener("click", (event) => {
    event.preventDefault();
    const target = event.target.closest("[data-ncbr]");
    if (target) select(Number(target.dataset.ncbr), false);
  });
  doc.addEventListener("mouseover", (event) => {
    doc.querySelectorAll(".ncbr-hover").forEach((n) => n.classList.remove("ncbr-hover"));
    const target = event.target.closest("[data-ncbr]");
    if (target) target.classList.add("ncbr-hover");
  });
  doc.addEventListener("submit", (event) => event.preventDefault());
  markCorrections();
}

function storedCase(path) {
  const stored = state.data.stored;
  return stored && stored.cases ? stored.cases[path] : undefined;
}

function markCorrections() {
  state.data.decisions.forEach((decision, index) => {
    const found = storedCase(decision.path);
    const node = box(index);
    if (found && node && found.source === "human") node.dataset.ncbrCorrected = found.label;
  });
}

function select(index, scroll) {
  const decision = state.data.decisions[index];
  state.selected = index;
  frameDocument().querySelectorAll(".ncbr-selected").forEach((n) => n.classList.remove("ncbr-selected"));
  const node = box(index);
  if (node) {
    node.classList.add("ncbr-selected");
    if (scroll) node.scrollIntoView({ block: "center" });
  }
  document.querySelectorAll("#decisions li, #queue li").forEach((li) =>
    li.classList.toggle("active", li.dataset.index !== undefined && Number(li.dataset.index) === index));
  $("selected").hidden = false;
  $("sel-path").textContent = `${decision.path}  <${decision.tag}>`;
  const by = decision.source === "memory"
    ? ` by the site memory (stored cases ${decision.cases.join(", ")})` : " by the model";
  $("sel-decision").textContent = `Decided ${decision.label}${by}; ${decision.text_length} characters of text.`;
  showProbabilities(decision.probabilities);
  showStored(decision);
  showActions(decision);
  showNeighbours(decision);
}

function showProbabilities(probabilities) {
  const out = $("sel-probabilities");
  out.replaceChildren();
  probabilities.forEach((p, i) => {
    const label = state.labels[i] || `class ${i}`;
    const row = element("div");
    const bar = element("span", "", "bar " + label);
    bar.style.width = `${Math.max(2, Math.round(p * 150))}px`;
    row.append(bar, `${label} ${p.toFixed(3)}`);
    out.append(row);
  });
}

function showStored(decision) {
  const found = storedCase(decision.path);
  $("sel-stored").textContent = found
    ? `Stored as case ${found.id}: ${found.label} (${found.source}).`
    : state.data.casebase ? "Not in the case base yet." : "";
}

function showActions(decision) {
  const actions = $("sel-actions");
  actions.replaceChildren(element("span", "Label it: "));
  if (!state.data.casebase) {
    actions.append(element("em", "the server has no case base (start it with --db)"));
    return;
  }
  state.labels.forEach((label) => {
    const button = element("button", label, "relabel");
    button.type = "button";
    button.dataset.label = label;
    button.addEventListener("click", () => relabel(decision, label));
    actions.append(button);
  });
}

function showNeighbours(decision) {
  const list = $("sel-neighbours");
  list.replaceChildren();
  const near = (state.data.neighbours || {})[decision.path] || [];
  if (!near.length) list.append(element("li", state.data.casebase ? "none stored" : "no case base"));
  near.forEach((n) => {
    const kind = n.same_markup ? "same markup, " : "";
    list.append(element("li", `case ${n.case_id}: ${n.label} (${kind}similarity ${n.similarity.toFixed(3)}) ` +
      `${n.site} ${n.path} — ${n.text}`));
  });
}

async function relabel(decision, label) {
  const path = decision.path;
  try {
    const found = storedCase(path);
    let cases;
    if (found) {
      await api(`/cases/${found.id}/label`, { label, note: "review page" });
      cases = { [path]: { id: found.id, label, source: "human" } };
    } else {
      cases = await addLabel(path, label);
    }
    state.data.stored.cases = Object.assign(state.data.stored.cases || {}, cases);
  } catch (error) {
    status(error.message, true);
    return;
  }
  const stored = storedCase(path);
  if (!stored) { status(`${path} selects no element of the stored page`, true); return; }
  const node = box(state.selected);
  if (node) node.dataset.ncbrCorrected = label;
  showStored(decision);
  const next = state.url
    ? "Open another page of the site to see the correction act."
    : "The page has no URL, so no site: give its URL for the correction to act on other pages.";
  status(`Case ${stored.id} labelled ${label} (page ${state.data.stored.page_id}). ${next}`);
  refreshQueue().catch(() => {});
}

async function addLabel(path, label) {
  const labels = { [path]: label };
  let pageId = state.data.stored.page_id;
  if (pageId === null || pageId === undefined) {
    const added = await api("/pages", { html: state.html, url: state.url, labels, source: "review" });
    if (added.page_id !== null) {
      state.data.stored.page_id = added.page_id;
      return added.cases;
    }
    pageId = state.data.stored.page_id = added.duplicate_of;
  }
  return (await api(`/pages/${pageId}/labels`, { labels })).cases;
}

async function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {
    sessionStorage.setItem("noisecbr-token", hash.get("token"));
    history.replaceState(null, "", location.pathname);
  }
  $("token").value = sessionStorage.getItem("noisecbr-token") || "";
  $("token").addEventListener("change", () => sessionStorage.setItem("noisecbr-token", token()));
  $("choose").addEventListener("submit", review);
  $("frame").addEventListener("load", onFrameLoad);
  try {
    const health = await (await fetch("/healthz")).json();
    state.labels = health.labels;
  } catch (error) {
    status("The service does not answer.", true);
  }
  const legend = $("legend");
  state.labels.forEach((label) => {
    const item = element("li");
    item.append(element("span", "", "chip " + label), label);
    legend.append(item);
  });
}

document.addEventListener("DOMContentLoaded", start);
