// The Cost section of the workload page: GPU-hours and cost over the window, cost per hour now
// (per resource and per component), idle GPU cost, and the PromQL behind each number, from
// GET .../cost (wmap serve --prometheus; docs/metrics.md). Nothing when the server has no Prometheus.
import { get } from "./api.js";
import { h } from "./util.js";

/** The cost answer of the workload at `path` (its detail path); a failed request is an answer
 * with an error, never a broken page. Asked again at most every `ttl` ms. */
export function costLoader(path, ttl = 30000) {
  let last = null;
  let at = 0;
  return async () => {
    if (last && Date.now() - at < ttl) return last;
    at = Date.now();
    try {
      last = await get(`${path}/cost`);
    } catch (e) {
      last = { configured: true, error: `${e.status ? `${e.status}: ` : ""}${e.message}`, queries: [], warnings: [], components: [] };
    }
    return last;
  };
}

function number(c, x, digits) {
  if (x !== null && x !== undefined) return x.toFixed(digits);
  return c.error ? "unknown" : "none";
}

/** The section for answer `c` (null: none to show). */
export function costSection(c) {
  if (!c || !c.configured) return null;
  const money = (x) => number(c, x, 2);
  const perResource = Object.entries(c.costPerHourByResource || {}).map(([r, v]) => `${r} ${money(v)}`).join(", ");
  const item = (label, value, sub, id) => h("div", { id }, h("dt", null, label),
    h("dd", null, h("strong", null, value), sub ? h("span", { class: "muted" }, ` ${sub}`) : null));
  const comps = c.components || [];
  return h("section", { "aria-labelledby": "cost-title", id: "cost" },
    h("h2", { id: "cost-title" }, `Cost (last ${c.window || "?"})`),
    h("div", { class: "panel" },
      c.error ? h("p", { class: "error-box", role: "alert", id: "cost-error" }, c.error) : null,
      h("dl", { class: "meta", id: "cost-figures" },
        item("GPU-hours", number(c, c.gpuHours, 1), c.gpusAllocated != null ? `(${c.gpusAllocated} GPUs allocated now)` : "", "cost-gpu-hours"),
        item("Cost", money(c.cost), c.costPerHour != null ? `(now ${money(c.costPerHour)} per hour: ${perResource})` : "", "cost-total"),
        item("Idle GPU cost", `${money(c.idleGpuCostPerHour)} per hour`,
          c.gpuUtilizationPercent != null ? `(GPU utilisation ${c.gpuUtilizationPercent.toFixed(1)}%)` : "", "cost-idle")),
      comps.length ? h("table", { class: "simple", id: "cost-components" },
        h("thead", null, h("tr", null, ["Component", "Instance", "Cost per hour"].map((t, i) => h("th", { scope: "col", class: i === 2 ? "num" : "" }, t)))),
        h("tbody", null, comps.map((x) => h("tr", null, h("td", null, x.component), h("td", null, x.instance || "—"),
          h("td", { class: "num" }, money(x.costPerHour)))))) : null,
      (c.warnings || []).length ? h("ul", { class: "muted", id: "cost-warnings" }, c.warnings.map((w) => h("li", null, w))) : null,
      h("details", { id: "cost-queries", open: true },
        h("summary", null, `Queries (Prometheus ${c.prometheus || ""})`),
        h("ul", null, (c.queries || []).map((q) => h("li", { "data-name": q.name },
          h("span", { class: "muted" }, `${q.name}: `), h("code", { class: "mono" }, q.query)))))));
}
