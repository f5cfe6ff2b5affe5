// Router (hash based), token dialog and the API error banner.
import { BASE, getToken, setToken } from "./api.js";
import { h } from "./util.js";
import * as workloads from "./workloads.js";
import * as workload from "./workload.js";
import * as definitions from "./definitions.js";
import * as node from "./node.js";
import * as other from "./other.js";

const main = document.getElementById("main");
const banner = document.getElementById("banner");
const dialog = document.getElementById("token-dialog");
let cleanup = null;

export function parseRoute(hash = location.hash) {
  const raw = hash.replace(/^#\/?/, "");
  const [path, qs] = raw.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = Object.fromEntries(new URLSearchParams(qs || ""));
  if (parts[0] === "definitions") return { page: "definitions", params };
  if (parts[0] === "other") return { page: "other", params };
  if (parts[0] === "node" && parts.length >= 2) return { page: "node", params: { ...params, name: parts[1] } };
  if (parts[0] === "workload" && parts.length >= 4) {
    const [, namespace, type, name] = parts;
    return { page: "workload", params: { ...params, namespace, type, name } };
  }
  return { page: "workloads", params };
}

function route() {
  const { page, params } = parseRoute();
  if (cleanup) { try { cleanup(); } catch { /* page already gone */ } }
  cleanup = null;
  hideBanner();
  for (const a of document.querySelectorAll("[data-nav]")) {
    const on = a.dataset.nav === page || ((page === "workload" || page === "node") && a.dataset.nav === "workloads");
    if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  main.replaceChildren();
  const mod = { definitions, workload, node, other }[page] || workloads;
  cleanup = mod.mount(main, params) || null;
  document.title = `${mod.title ? mod.title(params) : page} · Workload Map`;
}

function authState() {
  const el = document.getElementById("auth-state");
  el.textContent = getToken() ? "token set" : "no token";
  el.dataset.local = "";
  document.getElementById("auth-button").textContent = getToken() ? "Change token" : "Set token";
  if (!getToken()) {
    // `wmap serve --local` answers without a token, as the kubeconfig's user.
    fetch(`${BASE}/whoami`, { headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((who) => {
        if (who && who.local && !getToken()) {
          el.textContent = `${who.username} (local)`;
          el.dataset.local = "1";
          document.getElementById("auth-button").textContent = "Use a token";
        }
      })
      .catch(() => {});
  }
}

export function openTokenDialog() {
  const input = document.getElementById("token-input");
  input.value = getToken();
  if (!dialog.open) dialog.showModal();
  input.focus();
}

dialog.addEventListener("close", () => {
  const v = dialog.returnValue;
  if (v === "save") setToken(document.getElementById("token-input").value.trim());
  else if (v === "clear") setToken("");
  else return;
  authState();
  route();
});

function hideBanner() { banner.hidden = true; banner.replaceChildren(); }
function showBanner(...content) { banner.replaceChildren(...content); banner.hidden = false; }

window.addEventListener("wmap:api-error", (ev) => {
  const err = ev.detail;
  if (err.status === 401) {
    showBanner(
      h("strong", null, "401 Unauthorized: "),
      getToken() ? "the server did not accept this bearer token. " : "the API needs a bearer token. ",
      h("span", { class: "detail" }, err.message),
      h("button", { type: "button", onclick: openTokenDialog }, getToken() ? "Change token" : "Enter token"),
    );
    banner.dataset.status = "401";
  } else if (err.status === 403) {
    showBanner(
      h("strong", null, "403 Forbidden: "),
      "the token's user may not do this. ",
      h("span", { class: "detail" }, err.message),
      h("button", { type: "button", onclick: openTokenDialog }, "Change token"),
    );
    banner.dataset.status = "403";
  }
});

document.getElementById("auth-button").addEventListener("click", openTokenDialog);
window.addEventListener("hashchange", route);
authState();
route();
