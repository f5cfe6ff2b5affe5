// Workloads page: every workload the token may list, in one virtually scrolled table.
//
// Rows are loaded page by page from GET /workloads (limit/continue) into memory; type, namespace
// and label selector are sent to the server (list and watch), phase and text search filter in the
// browser, sorting is in the browser. Only the rows in view (plus a margin) are in the DOM, so
// 2,000+ workloads stay fast. The SSE stream then updates rows in place.
import { get, listAll, stream } from "./api.js";
import { h, chips, attentionChip, PHASE_ORDER, phaseRank, sortPhases, cpuText, memText, age, componentTotals, workloadKey, debounce } from "./util.js";

export const title = () => "Workloads";

const COLUMNS = [
  { key: "name", label: "Name", width: "20%" },
  { key: "kind", label: "Kind", width: "10%" },
  { key: "namespace", label: "Namespace", width: "15%" },
  { key: "phase", label: "Phase", width: "18%" },
  { key: "components", label: "Ready / desired", width: "9%", num: true },
  { key: "gpus", label: "GPUs", width: "6%", num: true },
  { key: "cpu", label: "CPU", width: "7%", num: true },
  { key: "memory", label: "Memory", width: "8%", num: true },
  { key: "age", label: "Age", width: "6%", num: true },
];

const worst = (v) => Math.min(...sortPhases(v.phases).map(phaseRank), PHASE_ORDER.length);
const str = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const SORTERS = {
  name: (a, b) => str(a.name, b.name),
  kind: (a, b) => str(a.kind, b.kind),
  namespace: (a, b) => str(a.namespace || "", b.namespace || ""),
  phase: (a, b) => worst(a) - worst(b),
  components: (a, b) => {
    const x = componentTotals(a), y = componentTotals(b);
    const rx = x.desired ? (x.ready ?? 0) / x.desired : 1, ry = y.desired ? (y.ready ?? 0) / y.desired : 1;
    return rx - ry || x.desired - y.desired;
  },
  gpus: (a, b) => (a.resources?.gpus || 0) - (b.resources?.gpus || 0),
  cpu: (a, b) => (a.resources?.cpuMillis || 0) - (b.resources?.cpuMillis || 0),
  memory: (a, b) => (a.resources?.memoryBytes || 0) - (b.resources?.memoryBytes || 0),
  age: (a, b) => str(b.createdAt || "", a.createdAt || ""),
};

/** The detail route: namespace, type token (the definition's name: one per GVK) and name. */
export function workloadHref(v) {
  const enc = encodeURIComponent;
  return `#/workload/${enc(v.namespace || "_")}/${enc(v.definition)}/${enc(v.name)}`;
}

export function mount(root, params) {
  const state = {
    rows: new Map(),
    shown: [],
    sort: { key: params.sort || "phase", dir: params.dir === "desc" ? -1 : 1 },
    server: { type: params.type || "", namespace: params.namespace || "", labelSelector: params.labelSelector || "" },
    phase: params.phase || "",
    q: params.q || "",
    error: "",
    kindChars: 0,
    namespaces: null, // every namespace, when the user may list them
    rowHeight: 35,
    loading: true,
    dirty: new Set(),
  };
  const stats = { rows: 0, shown: 0, loadMs: 0, renders: 0, lastRenderMs: 0, events: 0 };
  window.wmapWorkloads = stats;
  let listAbort = new AbortController();
  let stopStream = null;
  let frame = 0;
  let pending = 0;
  let cache = new Map(); // key -> {v, tr}: rows in the DOM are reused while their data is unchanged

  // ---- filters
  const typeSel = h("select", { id: "f-type", name: "type" }, h("option", { value: "" }, "All types"));
  const nsInput = h("input", { id: "f-namespace", type: "text", placeholder: "all namespaces", list: "ns-list", value: state.server.namespace, size: 16 });
  const nsList = h("datalist", { id: "ns-list" });
  const phaseSel = h("select", { id: "f-phase" }, h("option", { value: "" }, "Any phase"), PHASE_ORDER.map((p) => h("option", { value: p }, p)));
  phaseSel.value = state.phase;
  const labelInput = h("input", { id: "f-labels", type: "text", placeholder: "app=train,tier!=web", value: state.server.labelSelector, size: 20, spellcheck: "false" });
  const search = h("input", { id: "f-search", type: "search", placeholder: "name, kind, namespace…", value: state.q });
  const count = h("span", { id: "wl-count", "aria-live": "polite" });
  const live = h("span", { class: "live", id: "wl-live", "data-state": "idle" }, "live updates off");
  const filters = h("form", { class: "filters", role: "search", "aria-label": "Filter workloads", onsubmit: (e) => e.preventDefault() },
    h("label", { for: "f-type" }, "Type", typeSel),
    h("label", { for: "f-namespace" }, "Namespace", nsInput), nsList,
    h("label", { for: "f-phase" }, "Phase", phaseSel),
    h("label", { for: "f-labels" }, "Label selector", labelInput),
    h("label", { for: "f-search" }, "Search", search),
  );

  // ---- table
  const headRow = h("tr", null);
  for (const c of COLUMNS) {
    const th = h("th", { scope: "col", class: c.num ? "num" : "", style: `width:${c.width}`, "data-col": c.key },
      h("button", { type: "button", class: "sort", onclick: () => setSort(c.key) }, c.label));
    headRow.append(th);
  }
  const tbody = h("tbody", null);
  const table = h("table", { id: "workloads-table", "aria-label": "Workloads", "aria-rowcount": 1 }, h("thead", null, headRow), tbody);
  const scroller = h("div", { class: "scroller panel", id: "wl-scroller" }, table);
  const message = h("div", { class: "empty", id: "wl-message", hidden: true });

  root.append(
    h("h1", null, "Workloads"),
    filters,
    h("div", { class: "status-line" }, count, live),
    scroller,
    message,
  );

  // ---- sorting / filtering
  function setSort(key) {
    if (state.sort.key === key) state.sort.dir = -state.sort.dir;
    else state.sort = { key, dir: 1 };
    syncUrl();
    recompute();
  }
  function matches(v) {
    if (state.phase && !(v.phases || ["Undefined"]).includes(state.phase)) return false;
    if (state.q) {
      const q = state.q.toLowerCase();
      const hay = `${v.name} ${v.kind} ${v.namespace || ""} ${v.definition || ""}`.toLowerCase();
      if (!q.split(/\s+/).every((w) => hay.includes(w))) return false;
    }
    return true;
  }
  function recompute() {
    const cmp = SORTERS[state.sort.key] || SORTERS.name;
    const dir = state.sort.dir;
    state.shown = [...state.rows.values()].filter(matches).sort((a, b) => dir * cmp(a, b) || str(a.name, b.name) || str(a.namespace || "", b.namespace || ""));
    for (const th of headRow.children) {
      th.setAttribute("aria-sort", th.dataset.col === state.sort.key ? (dir > 0 ? "ascending" : "descending") : "none");
    }
    schedule();
  }
  function syncUrl() {
    const q = new URLSearchParams();
    const put = (k, v) => v && q.set(k, v);
    put("type", state.server.type); put("namespace", state.server.namespace);
    put("labelSelector", state.server.labelSelector); put("phase", state.phase); put("q", state.q);
    if (state.sort.key !== "phase") put("sort", state.sort.key);
    if (state.sort.dir < 0) put("dir", "desc");
    const s = q.toString();
    history.replaceState(null, "", `#/workloads${s ? `?${s}` : ""}`);
  }

  // ---- virtual rendering
  function schedule() {
    if (!frame) frame = requestAnimationFrame(render);
  }
  function render() {
    frame = 0;
    const t0 = performance.now();
    const n = state.shown.length;
    const rh = state.rowHeight;
    const top = scroller.scrollTop;
    const view = scroller.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / rh) - 10);
    const last = Math.min(n, Math.ceil((top + view) / rh) + 10);
    const want = [topSpacer];
    const keep = new Map();
    for (let i = first; i < last; i++) {
      const v = state.shown[i];
      const key = workloadKey(v);
      const old = cache.get(key);
      let tr;
      if (old && old.v === v && !state.dirty.has(key)) {
        tr = old.tr;
        tr.setAttribute("aria-rowindex", String(i + 2));
      } else {
        tr = rowEl(v, i);
      }
      keep.set(key, { v, tr });
      want.push(tr);
    }
    want.push(bottomSpacer);
    cache = keep;
    setSpacer(topSpacer, first * rh);
    setSpacer(bottomSpacer, (n - last) * rh);
    // Patch the DOM without moving rows that stay (a focused link in a row keeps its focus).
    const wanted = new Set(want);
    for (const el of [...tbody.children]) if (!wanted.has(el)) el.remove();
    want.forEach((el, i) => {
      if (tbody.children[i] !== el) tbody.insertBefore(el, tbody.children[i] || null);
    });
    state.dirty.clear();
    table.setAttribute("aria-rowcount", String(n + 1));
    if (n && tbody.querySelector("tr[data-key]")) {
      const real = tbody.querySelector("tr[data-key]").getBoundingClientRect().height;
      if (real > 0 && Math.abs(real - rh) > 0.5) { state.rowHeight = real; schedule(); }
    }
    const total = state.rows.size;
    count.textContent = state.loading
      ? `Loading… ${total} workloads`
      : n === total ? `${total} workloads` : `${n} of ${total} workloads shown`;
    if (state.error) {
      // An error (401, 403, unreachable API) is the answer: never "No workloads found." over it.
      message.hidden = false;
      message.className = "error-box";
      message.textContent = state.error;
    } else {
      message.hidden = !!n || state.loading;
      message.className = "empty";
      message.textContent = total ? "No workload matches these filters." : "No workloads found.";
    }
    fitKindColumn();
    stats.rows = total; stats.shown = n; stats.renders++; stats.domRows = last - first;
    stats.lastRenderMs = performance.now() - t0;
    root.dataset.total = String(total);
    root.dataset.shown = String(n);
  }
  function spacerRow() {
    return h("tr", { class: "spacer", "aria-hidden": "true" }, h("td", { colspan: COLUMNS.length }));
  }
  function setSpacer(tr, px) {
    tr.hidden = px <= 0;
    tr.firstChild.style.height = `${px}px`;
  }
  const topSpacer = spacerRow();
  const bottomSpacer = spacerRow();
  function rowEl(v, i) {
    const key = workloadKey(v);
    const ct = componentTotals(v);
    const compTitle = (v.components || []).map((c) => `${c.name}: ${c.ready ?? "?"}/${c.desired}`).join("\n");
    const r = v.resources || {};
    const tr = h("tr", { "data-key": key, "aria-rowindex": i + 2, "data-phase": v.primaryPhase || "" },
      h("td", { title: v.name }, h("a", { href: workloadHref(v) }, v.name)),
      h("td", { title: `${v.kind} (${v.apiVersion})`, class: "kind" }, v.kind),
      h("td", { title: v.namespace || "" }, v.namespace || "—"),
      h("td", null, chips(v.phases), attentionChip(v, null)),
      h("td", { class: "num", title: compTitle }, `${ct.ready ?? "–"}/${ct.desired}`),
      h("td", { class: "num" }, String(r.gpus || 0)),
      h("td", { class: "num" }, cpuText(r.cpuMillis || 0)),
      h("td", { class: "num" }, memText(r.memoryBytes || 0)),
      h("td", { class: "num", title: v.createdAt || "" }, age(v.createdAt)),
    );
    if (state.dirty.has(key)) tr.classList.add("flash");
    return tr;
  }
  scroller.addEventListener("scroll", schedule, { passive: true });
  window.addEventListener("resize", schedule);

  // ---- data
  function remember(v) {
    state.rows.set(workloadKey(v), v);
  }
  // Kind names are never cut off: the Kind column is as wide as the longest kind listed.
  function fitKindColumn() {
    let longest = 4;
    for (const v of state.rows.values()) if (v.kind && v.kind.length > longest) longest = v.kind.length;
    if (longest === state.kindChars) return;
    state.kindChars = longest;
    const th = headRow.querySelector('[data-col="kind"]');
    if (th) th.style.width = `calc(${longest}ch + 28px)`;
  }
  // The namespace picker: every namespace when the user may list them (GET /namespaces), else
  // the namespaces of the workloads the user could list.
  async function loadNamespaces() {
    try {
      const res = await get("/namespaces");
      if (res.source === "cluster") state.namespaces = res.items;
    } catch { /* fall back to the rows' namespaces */ }
    fillNamespaces();
  }
  function fillNamespaces() {
    const names = state.namespaces || [...new Set([...state.rows.values()].map((v) => v.namespace).filter(Boolean))].sort();
    nsList.replaceChildren(...names.map((n) => h("option", { value: n })));
    nsList.dataset.source = state.namespaces ? "cluster" : "workloads";
  }
  async function loadTypes() {
    try {
      const res = await get("/workload-types");
      const served = h("optgroup", { label: "Served by the cluster" });
      const other = h("optgroup", { label: "Not served" });
      const items = [...(res.items || [])].sort((a, b) => str(a.kind || a.name, b.kind || b.name));
      for (const t of items) {
        const where = t.group ? `${t.group}/${t.version}` : t.version || "";
        (t.served ? served : other).append(h("option", { value: t.name }, `${t.kind || t.name}${where ? ` (${where})` : ""}`));
      }
      typeSel.append(served, other);
      typeSel.value = state.server.type;
    } catch { /* the table still works without the type list */ }
  }
  async function load() {
    if (stopStream) { stopStream(); stopStream = null; }
    listAbort.abort();
    listAbort = new AbortController();
    state.rows.clear();
    state.loading = true;
    state.error = "";
    recompute();
    const t0 = performance.now();
    try {
      await listAll("/workloads", serverParams(), {
        signal: listAbort.signal,
        onPage: (items) => { items.forEach(remember); recompute(); },
      });
    } catch (e) {
      if (e.name === "AbortError") return;
      state.loading = false;
      showError(e);
      return;
    }
    state.loading = false;
    stats.loadMs = performance.now() - t0;
    fillNamespaces();
    recompute();
    watch();
  }
  function serverParams() {
    return { type: state.server.type, namespace: state.server.namespace, labelSelector: state.server.labelSelector };
  }
  function showError(e) {
    state.error = `${e.status ? `${e.status}: ` : ""}${e.message}`;
    recompute();
    count.textContent = "";
  }
  function watch() {
    // The stream starts with an `added` event per workload, then `synced`: rows the list had but
    // the snapshot did not are gone by then.
    let snapshot = new Set();
    let synced = false;
    stopStream = stream("/watch/workloads", serverParams(), (msg) => {
      if (msg.event === "synced" || (msg.data && msg.data.type === "synced")) {
        for (const key of [...state.rows.keys()]) if (!snapshot.has(key)) state.rows.delete(key);
        synced = true;
        snapshot = null;
        recompute();
        return;
      }
      const key = onEvent(msg, synced);
      if (!synced && key) snapshot.add(key);
    }, (s, err) => {
      live.dataset.state = s;
      if (s === "retry") { synced = false; snapshot = new Set(); }
      live.textContent = s === "open" ? "live" : s === "retry" ? "reconnecting…" : `live updates failed${err ? `: ${err.status}` : ""}`;
    });
  }
  function onEvent(msg, synced) {
    const d = msg.data;
    if (!d || typeof d !== "object") return null;
    const type = String(d.type || msg.event || "").toLowerCase();
    const obj = d.object;
    if (!obj || !obj.name) return null;
    stats.events++;
    const key = workloadKey(obj);
    if (type === "deleted") state.rows.delete(key);
    else {
      const before = state.rows.get(key);
      state.rows.set(key, obj);
      if (synced || (before && before.resourceVersion !== obj.resourceVersion)) state.dirty.add(key);
    }
    recomputeSoon();
    return key;
  }
  function recomputeSoon() {
    if (!pending) pending = requestAnimationFrame(() => { pending = 0; recompute(); });
  }

  // ---- wiring
  const reloadServer = () => {
    state.server = { type: typeSel.value, namespace: nsInput.value.trim(), labelSelector: labelInput.value.trim() };
    syncUrl();
    load();
  };
  typeSel.addEventListener("change", reloadServer);
  nsInput.addEventListener("change", reloadServer);
  labelInput.addEventListener("change", reloadServer);
  phaseSel.addEventListener("change", () => { state.phase = phaseSel.value; syncUrl(); recompute(); });
  search.addEventListener("input", debounce(() => { state.q = search.value.trim(); syncUrl(); recompute(); }, 120));

  loadTypes();
  loadNamespaces();
  load();
  return () => {
    listAbort.abort();
    if (stopStream) stopStream();
    if (frame) cancelAnimationFrame(frame);
    if (pending) cancelAnimationFrame(pending);
    window.removeEventListener("resize", schedule);
  };
}
