// Other types page: custom resource types the cluster serves that no definition covers, read
// generically (GET /other-types, GET /generic/{resource}): the phase by kstatus's rules, the pods
// their owner chains reach and the requests of those pods. Every row says it is a generic reading.
import { get } from "./api.js";
import { h, chips, cpuText, memText, age } from "./util.js";

export const title = () => "Other types";

export function mount(root, params) {
  let alive = true;
  const typeSel = h("select", { id: "o-type" }, h("option", { value: "" }, "Choose a type…"));
  const nsInput = h("input", { id: "o-namespace", type: "text", placeholder: "all namespaces", value: params.namespace || "", size: 16 });
  const note = h("p", { class: "muted", id: "o-note" },
    "Types without a Karta definition, read generically: the phase follows kstatus's rules (Ready, Reconciling, Stalled, ",
    "generation not yet observed, deletion) and the pods are those the object's owner chain reaches. ",
    h("a", { href: "#/definitions" }, "Register a definition"), " for roles, replicas and gangs (", h("code", null, "wmap generate"), " drafts one).");
  const body = h("div", { id: "o-body" });
  root.append(h("h1", null, "Other types"), note,
    h("form", { class: "filters", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "o-type" }, "Type", typeSel), h("label", { for: "o-namespace" }, "Namespace", nsInput)),
    body);

  function render(res) {
    const rows = res.items || [];
    if (!rows.length) return [h("p", { class: "muted", id: "o-empty" }, `No ${res.resource} here.`)];
    return [h("div", { class: "panel" }, h("table", { class: "simple", id: "generic-table" },
      h("thead", null, h("tr", null, ["Name", "Namespace", "Phase", "kstatus", "Pods ready", "GPUs", "CPU", "Memory", "Age"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, rows.map((v) => h("tr", { "data-name": v.name, "data-origin": v.origin },
        h("td", null, v.name), h("td", null, v.namespace || "—"), h("td", null, chips(v.phases)),
        h("td", { title: v.kstatus.message }, `${v.kstatus.status}: ${v.kstatus.message}`),
        h("td", { class: "num" }, v.pods ? `${v.pods.ready}/${v.pods.total}` : "?"),
        h("td", { class: "num" }, String(v.resources.gpus || 0)),
        h("td", { class: "num" }, cpuText(v.resources.cpuMillis || 0)),
        h("td", { class: "num" }, memText(v.resources.memoryBytes || 0)),
        h("td", { class: "num", title: v.createdAt || "" }, age(v.createdAt)))))))];
  }

  async function load() {
    if (!typeSel.value) { body.replaceChildren(); return; }
    body.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    try {
      const res = await get(`/generic/${encodeURIComponent(typeSel.value)}`, { params: { namespace: nsInput.value.trim() } });
      if (alive) body.replaceChildren(...render(res));
    } catch (e) {
      if (alive) body.replaceChildren(h("div", { class: "error-box", role: "alert" }, `${e.status ? `${e.status}: ` : ""}${e.message}`));
    }
  }

  get("/other-types").then((res) => {
    if (!alive) return;
    for (const t of res.items || []) typeSel.append(h("option", { value: `${t.resource}.${t.group}` }, `${t.kind} (${t.group}/${t.version})`));
    if (params.type) typeSel.value = params.type;
    load();
  }, (e) => { if (alive) body.replaceChildren(h("div", { class: "error-box", role: "alert" }, `${e.status ? `${e.status}: ` : ""}${e.message}`)); });
  typeSel.addEventListener("change", load);
  nsInput.addEventListener("change", load);
  return () => { alive = false; };
}
