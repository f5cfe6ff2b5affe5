// Node page (linked from a pod's node): capacity and allocatable, conditions, taints, labels, and
// the pods on the node in namespaces where the user may list pods.
import { get } from "./api.js";
import { h, age } from "./util.js";

export const title = (p) => `Node ${p.name}`;

const RESOURCES = ["nvidia.com/gpu", "cpu", "memory", "pods", "ephemeral-storage"];

export function mount(root, params) {
  let alive = true;
  const body = h("div", { id: "node-detail" }, h("p", { class: "muted" }, "Loading…"));
  root.append(h("p", null, h("a", { href: "#/workloads" }, "← Workloads")), body);

  function render(n) {
    const ready = (n.conditions || []).find((c) => c.type === "Ready");
    const names = [...new Set([...RESOURCES.filter((r) => r in (n.capacity || {})), ...Object.keys(n.capacity || {}).sort()])];
    return [
      h("div", { class: "detail-head" }, h("h1", { id: "node-title" }, `Node ${n.name}`),
        h("span", { class: `chip tone-${ready && ready.status === "True" ? "success" : "error"}`, id: "node-ready" },
          ready && ready.status === "True" ? "Ready" : "NotReady"),
        n.unschedulable ? h("span", { class: "chip tone-warning" }, "SchedulingDisabled") : null),
      h("section", { "aria-labelledby": "n-res" }, h("h2", { id: "n-res" }, "Resources"),
        h("div", { class: "panel" }, h("table", { class: "simple", id: "node-resources" },
          h("thead", null, h("tr", null, ["Resource", "Capacity", "Allocatable"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, names.map((r) => h("tr", { "data-resource": r }, h("td", { class: "mono" }, r),
            h("td", { class: "num" }, n.capacity[r] ?? ""), h("td", { class: "num" }, (n.allocatable || {})[r] ?? ""))))))),
      h("section", { "aria-labelledby": "n-cond" }, h("h2", { id: "n-cond" }, "Conditions"),
        h("div", { class: "panel" }, h("table", { class: "simple", id: "node-conditions" },
          h("thead", null, h("tr", null, ["Type", "Status", "Reason", "Age", "Message"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, (n.conditions || []).map((c) => h("tr", null, h("td", null, c.type), h("td", null, c.status),
            h("td", null, c.reason || ""), h("td", null, c.lastTransitionTime ? age(c.lastTransitionTime) : ""), h("td", null, c.message || ""))))))),
      h("section", { "aria-labelledby": "n-taints" }, h("h2", { id: "n-taints" }, `Taints (${(n.taints || []).length})`),
        (n.taints || []).length ? h("ul", { class: "kv", id: "node-taints" }, n.taints.map((t) => h("li", { class: "mono" }, `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`)))
          : h("p", { class: "muted" }, "none")),
      h("section", { "aria-labelledby": "n-pods" }, h("h2", { id: "n-pods" }, `Pods (${n.pods.length})`),
        h("div", { class: "panel" }, h("table", { class: "simple", id: "node-pods" },
          h("thead", null, h("tr", null, ["Namespace", "Pod", "Status", "Restarts"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, n.pods.length ? n.pods.map((p) => h("tr", { "data-pod": p.name }, h("td", null, p.namespace), h("td", { class: "mono" }, p.name),
            h("td", null, p.status), h("td", { class: "num" }, String(p.restarts))))
            : h("tr", null, h("td", { colspan: 4, class: "muted" }, "No pods you may list."))))),
        n.podsHidden ? h("p", { class: "muted", id: "node-pods-hidden" }, `Pods in ${n.podsHidden} other namespace(s) are not shown: you may not list pods there.`) : null),
      h("section", { "aria-labelledby": "n-labels" }, h("h2", { id: "n-labels" }, "Labels"),
        h("ul", { class: "kv", id: "node-labels" }, Object.entries(n.labels || {}).map(([k, v]) => h("li", null, h("span", { class: "mono key" }, k), "=", h("span", { class: "mono" }, v))))),
    ];
  }

  get(`/nodes/${encodeURIComponent(params.name)}`).then((n) => { if (alive) body.replaceChildren(...render(n)); }, (e) => {
    if (!alive) return;
    body.replaceChildren(h("div", { class: "error-box", role: "alert" },
      h("h1", null, e.status === 404 ? "Node not found" : `Cannot load node ${params.name}`),
      h("p", null, `${e.status ? `${e.status}: ` : ""}${e.message}`)));
  });
  return () => { alive = false; };
}
