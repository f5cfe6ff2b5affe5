// Small shared helpers: DOM building, phases, Kubernetes quantities, ages.

/** Phase chips are shown most severe first (upstream Headlamp design, spec 3.4). */
export const PHASE_ORDER = [
  "Failed", "Degraded", "Suspending", "Resuming", "Suspended",
  "Initializing", "Running", "Completed", "Undefined",
];
const PHASE_TONE = {
  Failed: "error", Degraded: "warning", Suspending: "warning", Resuming: "info",
  Suspended: "secondary", Initializing: "secondary", Running: "success",
  Completed: "info", Undefined: "grey",
};
export const phaseRank = (p) => {
  const i = PHASE_ORDER.indexOf(p);
  return i < 0 ? PHASE_ORDER.length : i;
};
export const sortPhases = (phases) => [...new Set(phases || [])].sort((a, b) => phaseRank(a) - phaseRank(b));
export const phaseTone = (p) => PHASE_TONE[p] || "grey";

/** Create an element: h("a", {href: "#", class: "x"}, "text", child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}
function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function chips(phases) {
  const box = h("span", { class: "chips" });
  for (const p of sortPhases(phases && phases.length ? phases : ["Undefined"])) {
    box.append(h("span", { class: `chip tone-${phaseTone(p)}`, "data-phase": p }, p));
  }
  return box;
}

/** Phases that already say a workload is not healthy: no extra chip needed beside them. */
const UNHEALTHY = new Set(["Failed", "Degraded"]);
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * What a Running workload's phase chip does not show: pods short of ready (a pod in
 * CrashLoopBackOff while the controller still says Running). From the detail's `waitingOn`
 * (the pods holding each component, as `wmap describe` lists them) or, in a list row, from the
 * ready/desired counts. A warning chip (a button running `onclick`, when given), or null when
 * there is nothing to say.
 */
export function attentionChip(v, onclick) {
  const phases = v.phases || [];
  if (v.primaryPhase !== "Running" || phases.some((p) => UNHEALTHY.has(p))) return null;
  let text = "", title = "";
  if (v.waitingOn) {
    const statuses = new Map();
    let missing = 0, more = 0;
    for (const w of v.waitingOn) {
      for (const p of w.pods || []) statuses.set(p.status, (statuses.get(p.status) || 0) + 1);
      missing += w.missingPods || 0;
      more += w.morePods || 0;
    }
    const held = [...statuses.values()].reduce((a, b) => a + b, 0) + more;
    if (!held && !missing) return null;
    if (statuses.size === 1 && !more && !missing) {
      const [[status, n]] = statuses;
      text = `${plural(n, "pod")} ${status}`;
    } else {
      text = held ? `${plural(held, "pod")} not ready` : `${plural(missing, "pod")} not created`;
    }
    title = [...[...statuses].map(([s, n]) => `${n} ${s}`), more ? `${more} more not ready` : "",
      missing ? `${missing} not created` : ""].filter(Boolean).join(", ");
  } else {
    const ct = componentTotals(v);
    if (ct.ready === null || ct.ready >= ct.desired) return null;
    text = `${ct.desired - ct.ready} not ready`;
    title = `${ct.ready} of ${ct.desired} pods ready`;
  }
  const attrs = { class: "chip tone-warning attention", "data-attention": "", title };
  return onclick ? h("button", { ...attrs, type: "button", onclick }, text) : h("span", attrs, text);
}

export function cpuText(millis) {
  if (!millis) return "0";
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

const BIN = [["Ei", 2 ** 60], ["Pi", 2 ** 50], ["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]];
const DEC = [["E", 1e18], ["P", 1e15], ["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3]];
/** Bytes as a Kubernetes quantity when exact (16Gi, 70M), else a rounded binary value. */
export function memText(bytes) {
  if (!bytes) return "0";
  for (const [u, n] of BIN) if (bytes >= n && bytes % n === 0) return `${bytes / n}${u}`;
  for (const [u, n] of DEC) if (bytes >= n && bytes % n === 0) return `${bytes / n}${u}`;
  for (const [u, n] of BIN) if (bytes >= n) return `${(bytes / n).toFixed(1)}${u}`;
  return String(bytes);
}

/** kubectl-style short age (45s, 5m, 3h, 2d). */
export function age(created, now = Date.now()) {
  if (!created) return "<unknown>";
  const t = Date.parse(created);
  if (Number.isNaN(t)) return "<unknown>";
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 180) return `${m}m`;
  const hrs = Math.floor(s / 3600);
  if (hrs < 48) return `${hrs}h`;
  const d = Math.floor(s / 86400);
  return d < 730 ? `${d}d` : `${Math.floor(d / 365)}y`;
}

/** Sum of ready/desired over a row's component summaries (ready null = pods not listed). */
export function componentTotals(view) {
  let ready = 0, desired = 0, known = false;
  for (const c of view.components || []) {
    desired += c.desired || 0;
    if (c.ready !== null && c.ready !== undefined) { ready += c.ready; known = true; }
  }
  if (!known && view.pods) { ready = view.pods.ready; known = true; }
  return { ready: known ? ready : null, desired };
}

export function gvkOf(view) {
  const [group, version] = view.apiVersion.includes("/") ? view.apiVersion.split("/") : ["", view.apiVersion];
  return { group, version, kind: view.kind };
}

export function workloadKey(v) {
  return `${v.apiVersion}|${v.kind}|${v.namespace || ""}|${v.name}`;
}

export function debounce(fn, ms) {
  let t;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}

/** kubectl describe's event AGE: "5m", or "2m (x7 over 10m)" for a repeated event. */
export function eventAge(e, now = Date.now()) {
  return e.count > 1 ? `${age(e.lastTimestamp, now)} (x${e.count} over ${age(e.firstTimestamp, now)})` : age(e.firstTimestamp, now);
}

// YAML scalars that would read back as something else unquoted (YAML 1.1 and 1.2 words, numbers).
const YAML_WORDS = /^(true|false|yes|no|on|off|y|n|null|~)$/i;
const YAML_NUMBER = /^[-+]?(\.?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|\.inf|\.nan|0x[0-9a-fA-F]+|0o[0-7]+)$/i;
const YAML_PLAIN = /^[A-Za-z0-9_./][A-Za-z0-9_./@%+=:,() -]*$/;

function yamlScalar(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean" || typeof v === "number") return String(v);
  const s = String(v);
  // A leading digit, sign or dot is quoted: numbers, timestamps and YAML 1.1 sexagesimals
  // ("1:20") would otherwise read back as something other than a string.
  const plain = s !== "" && YAML_PLAIN.test(s) && !/^[0-9+\-.]/.test(s) && !YAML_WORDS.test(s) && !YAML_NUMBER.test(s)
    && !s.endsWith(" ") && !s.includes(": ") && !s.endsWith(":") && !s.includes(" #");
  return plain ? s : JSON.stringify(s); // a JSON string is a valid double-quoted YAML scalar
}

/** A JSON value as block YAML (what `kubectl get -o yaml` shows; keys in the object's order). */
export function toYaml(value, indent = "") {
  const isObj = (x) => x !== null && typeof x === "object";
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return value.map((item) => {
      if (isObj(item) && Object.keys(item).length) {
        const inner = toYaml(item, `${indent}  `);
        return `${indent}- ${inner.slice(indent.length + 2)}`;
      }
      return `${indent}- ${isObj(item) ? (Array.isArray(item) ? "[]" : "{}") : yamlScalar(item)}`;
    }).join("\n");
  }
  if (isObj(value)) {
    const keys = Object.keys(value);
    if (!keys.length) return "{}";
    return keys.map((k) => {
      const v = value[k];
      const key = yamlScalar(k);
      if (isObj(v) && (Array.isArray(v) ? v.length : Object.keys(v).length)) {
        return Array.isArray(v) ? `${indent}${key}:\n${toYaml(v, indent)}` : `${indent}${key}:\n${toYaml(v, `${indent}  `)}`;
      }
      return `${indent}${key}: ${isObj(v) ? (Array.isArray(v) ? "[]" : "{}") : yamlScalar(v)}`;
    }).join("\n");
  }
  return `${indent}${yamlScalar(value)}`;
}
