// Definitions page: the merged set of Karta definitions (catalog + cluster), whether each is valid
// (with its findings), where it comes from, and whether the cluster serves its kind.
import { get } from "./api.js";
import { h } from "./util.js";

export const title = () => "Definitions";

function findingsList(findings) {
  if (!findings || !findings.length) return null;
  return h("ul", { class: "def-findings" }, findings.map((f) =>
    h("li", null, h("span", { class: `badge ${f.severity === "error" ? "bad" : "warn"}` }, f.code), " ",
      f.message, f.field ? h("span", { class: "muted field" }, ` (${f.field})`) : null)));
}

function table(id, label, items) {
  return h("div", { class: "panel" }, h("table", { class: "simple", id, "aria-label": label },
    h("thead", null, h("tr", null, ["Name", "Kind", "Group/version", "Origin", "Validation", "Served", "Components"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", null, items.length ? items.map((t) => h("tr", { "data-name": t.name, "data-served": String(!!t.served), "data-origin": t.origin },
      h("td", { class: "mono def-name" }, t.name),
      h("td", null, t.kind || "—"),
      h("td", null, t.group ? `${t.group}/${t.version}` : t.version || "—"),
      h("td", null, h("span", { class: `badge${t.origin === "cluster" ? " ok" : ""}` }, t.origin)),
      h("td", { class: "validation" },
        h("span", { class: `badge ${t.valid ? "ok" : "bad"}` }, t.valid ? (t.findings?.length ? "valid, with warnings" : "valid") : "invalid"),
        findingsList(t.findings)),
      h("td", null, t.served ? "served" : (t.servedVersions?.length ? `not served (cluster has ${t.servedVersions.join(", ")})` : "not served")),
      h("td", null, (t.components || []).join(", "))))
      : h("tr", null, h("td", { colspan: 7, class: "muted" }, "None.")))));
}

export function mount(root, params) {
  let alive = true;
  const search = h("input", { id: "d-search", type: "search", placeholder: "name or kind…", value: params.q || "" });
  const body = h("div", { id: "definitions" }, h("p", { class: "muted" }, "Loading…"));
  root.append(h("h1", null, "Definitions"),
    h("form", { class: "filters", role: "search", onsubmit: (e) => e.preventDefault() }, h("label", { for: "d-search" }, "Search", search)),
    body);
  let data = null;

  function draw() {
    const q = search.value.trim().toLowerCase();
    const items = (data.items || []).filter((t) => !q || `${t.name} ${t.kind} ${t.group}`.toLowerCase().includes(q));
    const served = items.filter((t) => t.served);
    const notServed = items.filter((t) => !t.served);
    const cluster = items.filter((t) => t.origin === "cluster").length;
    const invalid = items.filter((t) => !t.valid).length;
    body.replaceChildren(...[
      h("p", { id: "d-summary" }, `${items.length} definitions (${items.length - cluster} catalog, ${cluster} cluster); `,
        `${served.length} cover kinds the cluster serves, ${notServed.length} cover kinds it does not serve`,
        invalid ? `; ${invalid} invalid` : ""),
      (data.warnings || []).length ? h("div", { class: "note", role: "status", id: "d-warnings" }, data.warnings.join("; ")) : null,
      h("h2", null, `Covered and served (${served.length})`),
      table("defs-served", "Definitions whose kind the cluster serves", served),
      h("h2", null, `Covered but not served (${notServed.length})`),
      table("defs-unserved", "Definitions whose kind the cluster does not serve", notServed)].filter(Boolean));
  }

  get("/workload-types").then((res) => {
    if (!alive) return;
    data = res;
    draw();
  }, (e) => {
    if (!alive) return;
    body.replaceChildren(h("div", { class: "error-box", role: "alert" }, `${e.status ? `${e.status}: ` : ""}${e.message}`));
  });
  search.addEventListener("input", () => data && draw());
  return () => { alive = false; };
}
