// Workload page: header, vitals tiles, why this phase, component graph, pods (linked to their
// nodes), conditions, events, resources table, cost (with a Prometheus), unattributed pods,
// labels/annotations and YAML.
import { get, request, stream } from "./api.js";
import { h, chips, attentionChip, cpuText, memText, age, eventAge, toYaml, debounce } from "./util.js";
import { renderGraph } from "./graph.js";
import { costLoader, costSection } from "./cost.js";

export const title = (p) => `${p.name} (${p.type})`;

// Why a pod is not ready: the scheduler's message, else each container that is not running
// with its reason and last termination (an OOMKilled behind a CrashLoopBackOff), else the reason.
export function podWhy(p) {
  if (p.message) return p.message;
  const stuck = (p.containers || []).filter((c) => !c.ready && c.state !== "running");
  if (stuck.length) {
    return stuck.map((c) => {
      const last = c.lastTerminationReason ? ` (last: ${c.lastTerminationReason}${c.lastExitCode != null ? `, exit ${c.lastExitCode}` : ""})` : "";
      return `${c.name}: ${c.reason || c.state || "not started"}${last}`;
    }).join("; ");
  }
  return p.reason || "";
}

/** The API path of a workload; a cluster-scoped one (page namespace "_") has no namespace segment. */
function detailPath(p) {
  const enc = encodeURIComponent;
  const tail = `/workloads/${enc(p.type)}/${enc(p.name)}`;
  return isClusterScoped(p) ? tail : `/namespaces/${enc(p.namespace)}${tail}`;
}

const isClusterScoped = (p) => !p.namespace || p.namespace === "_";

/** Depth-first flattening: [{comp, depth, path}] for every component row. */
function walk(components, depth = 0, path = [], out = []) {
  for (const c of components || []) {
    const p = [...path, c.name];
    out.push({ c, depth, path: p });
    walk(c.children, depth + 1, p, out);
  }
  return out;
}

const sub = (a, b) => ({
  gpus: (a.gpus || 0) - (b.gpus || 0),
  cpuMillis: (a.cpuMillis || 0) - (b.cpuMillis || 0),
  memoryBytes: (a.memoryBytes || 0) - (b.memoryBytes || 0),
});
const sumRes = (list) => list.reduce((acc, r) => ({
  gpus: acc.gpus + (r.gpus || 0), cpuMillis: acc.cpuMillis + (r.cpuMillis || 0), memoryBytes: acc.memoryBytes + (r.memoryBytes || 0),
}), { gpus: 0, cpuMillis: 0, memoryBytes: 0 });

/** COMPONENT REPLICAS GPU CPU MEMORY rows as `wmap describe` prints them (own share of each row,
 * grouping rows that add nothing of their own skipped) plus TOTAL. */
export function resourceRows(view) {
  const rows = [];
  let replicas = 0;
  for (const { c, depth } of walk(view.components)) {
    const kids = c.children || [];
    const ownDesired = (c.replicas?.desired || 0) - kids.reduce((s, k) => s + (k.replicas?.desired || 0), 0);
    const own = sub(c.resources || {}, sumRes(kids.map((k) => k.resources || {})));
    const skip = kids.length && !(c.pods || []).length && !own.gpus && !own.cpuMillis && !own.memoryBytes && ownDesired === 0;
    if (skip) continue;
    rows.push({ name: c.name, depth, replicas: ownDesired, res: own });
    replicas += ownDesired;
  }
  rows.push({ name: "TOTAL", depth: 0, replicas, res: view.resources || {}, total: true });
  return rows;
}

function tile(label, value, subText, id) {
  return h("div", { class: "tile panel", id }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), subText ? h("div", { class: "sub" }, subText) : null);
}

const nodeLink = (node) => (node ? h("a", { href: `#/node/${encodeURIComponent(node)}`, class: "node-link" }, node) : "<none>");

/** Why the workload is in its phase: the status rule behind each phase (wmap explain's words)
 * and the components short of ready pods, with the pods holding them. */
function whySection(v) {
  const reasons = v.phaseReasons || [];
  const waiting = v.waitingOn || [];
  if (!reasons.length && !waiting.length) return null;
  return h("section", { "aria-labelledby": "why-title", id: "why" }, h("h2", { id: "why-title" }, "Why this phase"),
    h("div", { class: "panel why" },
      reasons.length ? h("ul", { class: "reasons", id: "phase-reasons" }, reasons.map((r) => h("li", { "data-phase": r.phase },
        chips([r.phase]), " ", h("span", { class: "muted" }, `${r.component} rule: `), h("code", null, r.rule)))) : null,
      waiting.length ? h("div", { id: "waiting-on" }, h("h3", null, "Waiting on"), waiting.map((w) => h("div", { class: "holdup", "data-component": w.component },
        h("p", null, h("strong", null, w.component), `: ${w.ready}/${w.desired} ready`, w.missingPods ? `, ${w.missingPods} not created` : ""),
        w.pods.length ? h("ul", null, w.pods.map((p) => h("li", { "data-pod": p.name }, h("span", { class: "mono" }, p.name), " ",
          h("strong", null, p.status), p.message ? ` — ${p.message}` : ""))) : null,
        w.morePods ? h("p", { class: "muted" }, `… and ${w.morePods} more not ready`) : null))) : null));
}

function conditionsSection(v) {
  const conds = v.conditions || [];
  return h("section", { "aria-labelledby": "c-title" }, h("h2", { id: "c-title" }, `Conditions (${conds.length})`),
    conds.length ? h("div", { class: "panel" }, h("table", { class: "simple", id: "conditions-table" },
      h("thead", null, h("tr", null, ["Type", "Status", "Reason", "Age", "Message"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, conds.map((c) => h("tr", { "data-type": c.type },
        h("td", null, c.type), h("td", null, c.status), h("td", null, c.reason || ""),
        h("td", { title: c.lastTransitionTime || "" }, c.lastTransitionTime ? age(c.lastTransitionTime) : ""),
        h("td", null, c.message || ""))))))
      : h("p", { class: "muted" }, "The workload reports no conditions."));
}

function eventsSection(v) {
  const events = v.events;
  const body = events === null || events === undefined
    ? h("p", { class: "muted" }, "Events are not shown: the user may not list events in this namespace.")
    : events.length ? h("div", { class: "panel" }, h("table", { class: "simple", id: "events-table" },
      h("thead", null, h("tr", null, ["Type", "Reason", "Age", "From", "Object", "Message"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, [...events].reverse().map((e) => h("tr", { class: e.type === "Warning" ? "warning" : "" },
        h("td", null, e.type), h("td", null, e.reason), h("td", { title: e.lastTimestamp || "" }, eventAge(e)),
        h("td", null, e.source), h("td", { class: "mono" }, e.object), h("td", null, e.message))))))
      : h("p", { class: "muted" }, "No events.");
  return h("section", { "aria-labelledby": "e-title" }, h("h2", { id: "e-title" }, `Events (${events ? events.length : 0})`), body);
}

function keyValues(id, map) {
  const entries = Object.entries(map || {});
  return entries.length
    ? h("ul", { class: "kv", id }, entries.map(([k, val]) => h("li", null, h("span", { class: "mono key" }, k), "=", h("span", { class: "mono" }, val))))
    : h("p", { class: "muted", id }, "none");
}

/** Labels and annotations, then the YAML of the workload and of its definition (read when opened). */
function metadataSection(manifest, v) {
  const meta = (manifest && manifest.metadata) || {};
  const yamlBox = (id, label, load) => {
    const pre = h("pre", { class: "yaml", id: `${id}-text` }, "Loading…");
    const details = h("details", { id, ontoggle: async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "1";
      try { pre.textContent = toYaml(await load()); } catch (e) { pre.textContent = `${e.status ? `${e.status}: ` : ""}${e.message}`; }
    } }, h("summary", null, label), pre);
    return details;
  };
  return h("section", { "aria-labelledby": "m-title" }, h("h2", { id: "m-title" }, "Labels, annotations and YAML"),
    h("div", { class: "panel meta-panel" },
      h("h3", null, "Labels"), keyValues("labels-list", meta.labels),
      h("h3", null, "Annotations"), keyValues("annotations-list", meta.annotations),
      yamlBox("yaml-workload", `${v.kind} YAML`, async () => manifest),
      yamlBox("yaml-definition", `Definition YAML (${v.definition})`, async () => (await get(`/workload-types/${encodeURIComponent(v.definition)}`)).karta)));
}

function podRows(view) {
  const out = [];
  for (const { c, path } of walk(view.components)) {
    for (const p of c.pods || []) out.push({ p, component: path.join(" / ") });
  }
  return out;
}

export function mount(root, params) {
  let stop = null;
  let alive = true;
  const body = h("div", { id: "workload-detail" }, h("p", { class: "muted" }, "Loading…"));
  root.append(h("p", null, h("a", { href: "#/workloads" }, "← Workloads")), body);

  let writes = null; // {enabled, suspendable} once known
  const loadCost = costLoader(detailPath(params));
  let cost = null; // the Cost section's answer, once the server gave it
  async function permissions() {
    const [who, type] = await Promise.allSettled([get("/whoami"), get(`/workload-types/${encodeURIComponent(params.type)}`)]);
    writes = {
      enabled: who.status === "fulfilled" && !!who.value.writesEnabled,
      user: who.status === "fulfilled" ? who.value.username : "",
      suspendable: type.status === "fulfilled" ? type.value.suspendable !== false : true,
      scalable: type.status === "fulfilled" ? (type.value.scalable || []) : [],
      components: type.status === "fulfilled" ? (type.value.components || []) : [],
    };
  }
  async function load() {
    let view;
    let manifest;
    try {
      if (!writes) await permissions();
      [view, manifest] = await Promise.all([get(detailPath(params)), get(`${detailPath(params)}/manifest`).catch(() => null)]);
    } catch (e) {
      if (!alive) return;
      body.replaceChildren(h("div", { class: "error-box", role: "alert" },
        h("h1", null, e.status === 404 ? "Workload not found" : `Cannot load ${params.type} ${params.name}`),
        h("p", null, `${e.status ? `${e.status}: ` : ""}${e.message}`)));
      return;
    }
    if (!alive) return;
    body.replaceChildren(...render(view, manifest));
    const fresh = await loadCost(); // after the page: a slow Prometheus never holds it back
    if (!alive || fresh === cost) return;
    cost = fresh;
    const section = costSection(cost);
    const old = document.getElementById("cost");
    if (old && section) old.replaceWith(section);
    else if (old) old.remove();
    else if (section) document.getElementById("resources-section")?.after(section);
  }

  async function act(verb, button, body) {
    button.disabled = true;
    try {
      await request("POST", `${detailPath(params)}/${verb}`, body ? { body } : undefined);
      await load();
    } catch (e) {
      button.disabled = false;
      const box = document.getElementById("action-error");
      if (box) { box.hidden = false; box.textContent = `${verb} failed: ${e.status ? `${e.status} ` : ""}${e.message}`; }
    }
  }

  // Scale: a component with a count (replicasPath or minReplicasPath) and the new count, in the
  // units the Components and Resources sections show (pods); the server inverts the definition's
  // count expression and says why when it cannot.
  function scaleForm(v, why) {
    // One choice per scalable component, or per instance of a component with several (a JobSet's
    // replicated jobs): instance rows are the children that are not components of the type.
    const rows = new Map(walk(v.components).map(({ c }) => [c.name, c]));
    const choices = [];
    for (const name of writes.scalable) {
      const row = rows.get(name);
      if (!row) continue;
      const instances = (row.children || []).filter((k) => !writes.components.includes(k.name));
      if (instances.length > 1) {
        for (const k of instances) choices.push({ label: `${name}/${k.name}`, component: name, instance: k.name, count: k.replicas?.desired, siblings: instances });
      } else {
        choices.push({ label: name, component: name, count: row.replicas?.desired });
      }
    }
    if (!choices.length) return null;
    const select = h("select", { id: "scale-component", "aria-label": "Component to scale", disabled: !!why },
      choices.map((c, i) => h("option", { value: String(i) }, `${c.label} (${c.count ?? "?"})`)));
    const input = h("input", { id: "scale-replicas", type: "number", min: "0", step: "1", "aria-label": "New count",
      value: String(choices[0].count ?? 1), disabled: !!why });
    select.onchange = () => { input.value = String(choices[Number(select.value)].count ?? 1); };
    const body = () => {
      const c = choices[Number(select.value)];
      const n = Number(input.value);
      if (!c.instance) return { component: c.component, replicas: n };
      const replicas = Object.fromEntries(c.siblings.map((k) => [k.name, k.name === c.instance ? n : (k.replicas?.desired ?? 0)]));
      return { component: c.component, replicas };
    };
    const go = h("button", { type: "button", id: "btn-scale", disabled: !!why, title: why || null,
      onclick: (e) => act("scale", e.target, body()) }, "Scale");
    return h("span", { class: "scale" }, select, input, go);
  }

  function render(v, manifest) {
    const suspended = (v.phases || []).some((p) => p === "Suspended" || p === "Suspending");
    const why = !writes.suspendable ? "This type's definition has no suspend actions"
      : !writes.enabled ? "The server runs without --enable-writes" : "";
    const pods = podRows(v);
    const desired = (v.components || []).reduce((s, c) => s + (c.replicas?.desired || 0), 0);
    const ready = v.pods ? v.pods.ready : pods.filter((x) => x.p.ready).length;
    const r = v.resources || {};
    const header = h("section", { "aria-labelledby": "wl-title" },
      h("div", { class: "error-box", id: "action-error", role: "alert", hidden: true }),
      h("div", { class: "detail-head" },
        h("h1", { id: "wl-title" }, `${v.kind}/${v.name}`),
        chips(v.phases),
        attentionChip(v, () => document.getElementById("why")?.scrollIntoView()),
        h("div", { class: "actions" },
          h("button", { type: "button", id: "btn-suspend", disabled: suspended || !!why, title: why || null, onclick: (e) => act("suspend", e.target) }, "Suspend"),
          h("button", { type: "button", id: "btn-resume", disabled: !suspended || !!why, title: why || null, onclick: (e) => act("resume", e.target) }, "Resume"),
          scaleForm(v, writes.enabled ? "" : "The server runs without --enable-writes"))),
      h("dl", { class: "meta" },
        h("div", null, h("dt", null, "Kind"), h("dd", null, `${v.kind} (${v.apiVersion})`)),
        h("div", null, h("dt", null, "Namespace"), h("dd", null, v.namespace || "—")),
        h("div", null, h("dt", null, "Definition"), h("dd", null, h("a", { href: `#/definitions?q=${encodeURIComponent(v.definition)}` }, v.definition), ` (${v.origin})`)),
        h("div", null, h("dt", null, "Age"), h("dd", { title: v.createdAt || "" }, age(v.createdAt)))));

    const tiles = h("section", { class: "tiles", "aria-label": "Vitals" },
      tile("GPUs", String(r.gpus || 0), "requested", "tile-gpus"),
      tile("Pods ready", `${ready}/${desired}`, v.pods ? `${v.pods.total} pods found` : "", "tile-pods"),
      tile("CPU", cpuText(r.cpuMillis || 0), "requested", "tile-cpu"),
      tile("Memory", memText(r.memoryBytes || 0), "requested", "tile-memory"));

    const graph = h("section", { "aria-labelledby": "g-title" }, h("h2", { id: "g-title" }, "Components"),
      h("div", { class: "graph panel" }, renderGraph(v)));

    const podTable = h("table", { class: "simple", id: "pods-table" },
      h("thead", null, h("tr", null, ["Pod", "Component", "Status", "Ready", "Restarts", "Why", "Node", "GPUs"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, pods.length ? pods.map(({ p, component }) => h("tr", { "data-pod": p.name },
        h("td", { class: "mono" }, p.name), h("td", null, component), h("td", null, p.status || p.phase),
        h("td", null, p.ready ? "yes" : "no"), h("td", { class: "num" }, String(p.restarts || 0)),
        h("td", null, podWhy(p)), h("td", null, nodeLink(p.node)),
        h("td", { class: "num" }, String(p.resources?.gpus || 0))))
        : h("tr", null, h("td", { colspan: 8, class: "muted" }, "No pods."))));

    const resTable = h("table", { class: "simple", id: "resources-table" },
      h("thead", null, h("tr", null, ["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"].map((t, i) => h("th", { scope: "col", class: i ? "num" : "" }, t)))),
      h("tbody", null, resourceRows(v).map((row) => h("tr", { class: row.total ? "total" : "" },
        h("td", { style: `padding-left:${10 + row.depth * 16}px` }, row.name),
        h("td", { class: "num" }, String(row.replicas)),
        h("td", { class: "num" }, String(row.res.gpus || 0)),
        h("td", { class: "num" }, cpuText(row.res.cpuMillis || 0)),
        h("td", { class: "num" }, memText(row.res.memoryBytes || 0))))));

    const un = v.unattributed || [];
    const unSection = h("section", { "aria-labelledby": "u-title" }, h("h2", { id: "u-title" }, `Unattributed pods (${un.length})`),
      un.length ? h("div", { class: "panel" }, h("table", { class: "simple", id: "unattributed-table" },
        h("thead", null, h("tr", null, ["Pod", "Phase", "Node", "Reason"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", null, un.map((u) => h("tr", null, h("td", { class: "mono" }, u.name), h("td", null, u.phase || ""), h("td", null, nodeLink(u.node)), h("td", null, u.reason))))))
        : h("p", { class: "muted" }, "Every pod is attributed to a component."));

    return [header, tiles, whySection(v), graph,
      h("section", { "aria-labelledby": "p-title" }, h("h2", { id: "p-title" }, `Pods (${pods.length})`), h("div", { class: "panel" }, podTable)),
      conditionsSection(v),
      eventsSection(v),
      h("section", { "aria-labelledby": "r-title", id: "resources-section" }, h("h2", { id: "r-title" }, "Resources"), h("div", { class: "panel" }, resTable)),
      costSection(cost),
      unSection,
      metadataSection(manifest, v)].filter(Boolean);
  }

  load();
  // Re-read the detail when the stream reports a change to this workload.
  const refresh = debounce(load, 300);
  let synced = false;
  const clusterScoped = isClusterScoped(params);
  stop = stream("/watch/workloads", { namespace: clusterScoped ? "" : params.namespace, type: params.type }, (msg) => {
    if (msg.event === "synced") { synced = true; return; }
    const o = msg.data && msg.data.object;
    if (synced && o && o.name === params.name && (clusterScoped ? !o.namespace : true)) refresh();
  }, (s) => { if (s === "retry") synced = false; });
  return () => { alive = false; if (stop) stop(); };
}
