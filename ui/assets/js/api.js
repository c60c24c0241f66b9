// The HTTP API as the UI uses it: JSON reads with their Raft index,
// writes, and blocking-query loops that follow a path while a page shows.
import { secret } from './token.js';

export class ApiError extends Error {
  constructor(status, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
  }
}

function headers(extra) {
  const h = { ...extra };
  const token = secret();
  if (token) h['X-Nomad-Token'] = token;
  return h;
}

function withParams(path, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v);
  }
  return url.pathname + url.search;
}

async function check(resp) {
  if (!resp.ok) {
    const text = (await resp.text()).trim();
    throw new ApiError(resp.status, text || resp.statusText);
  }
  return resp;
}

// get returns {data, index} of a JSON read.
export async function get(path, params, signal) {
  const resp = await check(await fetch(withParams(path, params), { headers: headers(), signal }));
  const index = Number(resp.headers.get('X-Nomad-Index') || 0);
  return { data: await resp.json(), index };
}

// getJSON returns only the data of a read.
export async function getJSON(path, params, signal) {
  return (await get(path, params, signal)).data;
}

// getText reads a plain-text answer (files, logs).
export async function getText(path, params, signal) {
  const resp = await check(await fetch(withParams(path, params), { headers: headers(), signal }));
  return resp.text();
}

// send writes (PUT, POST, DELETE) and returns the decoded answer, if any.
export async function send(method, path, body, params) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const resp = await check(await fetch(withParams(path, params), init));
  const text = await resp.text();
  return text ? JSON.parse(text) : null;
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// watch calls onData with each new result of path, following it with
// blocking queries (?index=N&wait=) until signal aborts. Errors go to
// onError and the loop retries after a pause.
export async function watch(path, params, signal, onData, onError) {
  let index = 0;
  while (!signal.aborted) {
    try {
      const q = index ? { ...params, index, wait: '30s' } : params;
      const res = await get(path, q, signal);
      if (signal.aborted) return;
      // An index going backwards (a restored snapshot) restarts the loop.
      if (res.index !== index || index === 0) {
        index = res.index < index ? 0 : res.index;
        await onData(res.data, res.index);
      }
      if (!res.index) await pause(5000, signal); // an endpoint without indexes: poll
    } catch (err) {
      if (signal.aborted || err.name === 'AbortError') return;
      onError?.(err);
      index = 0;
      await pause(3000, signal);
    }
  }
}

// poll calls fn every ms milliseconds until signal aborts, for
// endpoints that do not block (the agent's own state).
export async function poll(ms, signal, fn, onError) {
  while (!signal.aborted) {
    try {
      await fn();
    } catch (err) {
      if (signal.aborted || err.name === 'AbortError') return;
      onError?.(err);
    }
    await pause(ms, signal);
  }
}
