// The component tree as a left-to-right layered graph (SVG). Layer = depth in the tree; leaves
// take consecutive rows and a parent sits midway between its first and last child.

const NS = "http://www.w3.org/2000/svg";
const W = 210, H = 70, GX = 60, GY = 14, PAD = 10, MAX_CHILDREN = 40;

function svg(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}
const clip = (s, n = 28) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Build the node tree: {label, kind, replicas, resources, nodes, children, role}. */
export function graphModel(view) {
  const conv = (c) => {
    const kids = c.children || [];
    const shown = kids.slice(0, MAX_CHILDREN).map(conv);
    if (kids.length > MAX_CHILDREN) {
      shown.push({ name: `+${kids.length - MAX_CHILDREN} more`, more: true, children: [] });
    }
    return { ...c, children: shown };
  };
  return {
    name: view.name,
    kind: view.kind,
    root: true,
    replicas: null,
    resources: view.resources,
    children: (view.components || []).map(conv),
  };
}

export function layout(tree) {
  const nodes = [];
  const edges = [];
  let row = 0;
  let maxDepth = 0;
  const place = (n, depth, parent) => {
    maxDepth = Math.max(maxDepth, depth);
    const me = { n, depth, x: PAD + depth * (W + GX), y: 0 };
    nodes.push(me);
    if (parent) edges.push([parent, me]);
    if (!n.children || !n.children.length) {
      me.y = PAD + row * (H + GY);
      row++;
    } else {
      const kids = n.children.map((c) => place(c, depth + 1, me));
      me.y = (kids[0].y + kids[kids.length - 1].y) / 2;
    }
    return me;
  };
  place(tree, 0, null);
  return { nodes, edges, width: PAD * 2 + (maxDepth + 1) * W + maxDepth * GX, height: PAD * 2 + Math.max(1, row) * (H + GY) - GY };
}

function health(n) {
  if (n.root || n.more || !n.replicas) return "";
  const { desired, ready } = n.replicas;
  if (!desired) return "";
  if (ready >= desired) return "ok";
  return ready === 0 ? "down" : "partial";
}

export function renderGraph(view) {
  const model = graphModel(view);
  const { nodes, edges, width, height } = layout(model);
  const root = svg("svg", {
    width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `Component graph of ${view.kind} ${view.name}: ${nodes.length - 1} components and instances`,
    id: "component-graph",
  });
  for (const [a, b] of edges) {
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    root.append(svg("path", { class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}` }));
  }
  for (const p of nodes) {
    const n = p.n;
    const cls = ["node", n.root ? "root" : "", health(n)].filter(Boolean).join(" ");
    const g = svg("g", { class: cls, transform: `translate(${p.x},${p.y})`, "data-name": n.name, "data-depth": p.depth });
    const lines = [];
    if (n.root) {
      lines.push(n.kind);
      lines.push(`GPU ${n.resources?.gpus || 0} total`);
    } else if (!n.more) {
      const r = n.replicas || { ready: 0, desired: 0 };
      const pod = (n.pods && n.pods[0]) ? n.pods[0].resources?.gpus || 0 : null;
      lines.push(`${n.kind ? n.kind : n.children?.length ? "group" : "instance"} · ${r.ready}/${r.desired} ready`);
      const gpus = n.resources?.gpus || 0;
      const perPod = r.desired && gpus ? gpus / r.desired : pod;
      const nodesText = n.nodes && n.nodes.length ? ` · ${n.nodes.length} node${n.nodes.length > 1 ? "s" : ""}` : "";
      lines.push(`GPU ${gpus}${perPod ? ` (${Number.isInteger(perPod) ? perPod : perPod.toFixed(1)}/pod)` : ""}${nodesText}`);
    }
    const tip = [n.root ? `${n.kind} ${n.name}` : n.name, ...lines, ...(n.nodes || []).slice(0, 8)].join("\n");
    g.append(svg("title", {}, tip));
    g.append(svg("rect", { width: W, height: H, rx: 6 }));
    g.append(svg("text", { class: "title", x: 10, y: 20 }, clip(n.name)));
    lines.forEach((l, i) => g.append(svg("text", { class: "line", x: 10, y: 38 + i * 16 }, clip(l, 34))));
    root.append(g);
  }
  return root;
}
