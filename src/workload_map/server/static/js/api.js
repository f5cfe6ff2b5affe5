// The API client: bearer token from sessionStorage, JSON errors, paginated lists, and the SSE
// stream read with fetch (EventSource cannot send an Authorization header).

const TOKEN_KEY = "wmap.token";
export const BASE = "/api/v1";

export const getToken = () => sessionStorage.getItem(TOKEN_KEY) || "";
export const setToken = (t) => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY));

export class ApiError extends Error {
  constructor(status, body, url) {
    const msg = (body && (body.message || body.detail || body.error)) || `HTTP ${status}`;
    super(typeof msg === "string" ? msg : JSON.stringify(msg));
    this.status = status;
    this.body = body;
    this.url = url;
  }
  get isAuth() { return this.status === 401 || this.status === 403; }
}

function headers(extra) {
  const out = { Accept: "application/json", ...extra };
  const t = getToken();
  if (t) out.Authorization = `Bearer ${t}`;
  return out;
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.set(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

export async function request(method, path, { params, body, signal } = {}) {
  const url = `${BASE}${path}${query(params)}`;
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}), signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(url, init);
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { message: text }; }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data, url);
    window.dispatchEvent(new CustomEvent("wmap:api-error", { detail: err }));
    throw err;
  }
  return data;
}
export const get = (path, opts) => request("GET", path, opts);

/** Every page of a list endpoint (limit/continue), calling onPage(items, meta) as they come. */
export async function listAll(path, params, { pageSize = 500, signal, onPage } = {}) {
  const items = [];
  let cont;
  let meta = {};
  do {
    const page = await get(path, { params: { ...params, limit: pageSize, continue: cont }, signal });
    const got = page.items || [];
    items.push(...got);
    meta = page;
    cont = page.continue || (page.metadata && page.metadata.continue) || undefined;
    if (onPage) onPage(got, page);
  } while (cont);
  return { items, meta };
}

/**
 * Follow an SSE endpoint; onEvent({event, data}) per message. Reconnects with backoff until
 * the returned stop() is called. onState("open"|"retry"|"error", err) reports the connection.
 */
export function stream(path, params, onEvent, onState = () => {}) {
  let ctrl = new AbortController();
  let stopped = false;
  let delay = 1000;
  let lastId = "";
  async function run() {
    while (!stopped) {
      try {
        const h = headers({ Accept: "text/event-stream" });
        if (lastId) h["Last-Event-ID"] = lastId;
        const res = await fetch(`${BASE}${path}${query(params)}`, { headers: h, signal: ctrl.signal });
        if (!res.ok) {
          let body = null;
          try { body = await res.json(); } catch { /* not JSON */ }
          const err = new ApiError(res.status, body, path);
          onState("error", err);
          if (err.isAuth) return;
          throw err;
        }
        onState("open");
        delay = 1000;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut).replace(/^\r?\n\r?\n/, "");
            const msg = parseBlock(block);
            if (msg.id) lastId = msg.id;
            if (msg.data !== undefined) onEvent(msg);
          }
        }
      } catch (e) {
        if (stopped || e.name === "AbortError") return;
      }
      if (stopped) return;
      onState("retry");
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 15000);
      ctrl = new AbortController();
    }
  }
  run();
  return () => { stopped = true; ctrl.abort(); };
}

function parseBlock(block) {
  const msg = { event: "message" };
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (!line || line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") msg.event = value;
    else if (field === "id") msg.id = value;
  }
  if (data.length) {
    const text = data.join("\n");
    try { msg.data = JSON.parse(text); } catch { msg.data = text; }
  }
  return msg;
}
