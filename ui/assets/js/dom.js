// Small helpers to build DOM nodes and format the API's values.

// h builds an element: h('a', {href, class, onclick}, children...).
// Children may be strings, numbers, nodes, arrays, null or false.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k === 'value' && tag !== 'input') el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// replace swaps the children of el.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const shortId = (id) => (id || '').slice(0, 8);

// jobHref links a job with its namespace, as Nomad's CLI prints it.
export function jobHref(id, ns) {
  return `/ui/jobs/${encodeURIComponent(id)}@${encodeURIComponent(ns || 'default')}`;
}
export const allocHref = (id) => `/ui/allocations/${id}`;
export const nodeHref = (id) => `/ui/nodes/${id}`;
export const evalHref = (id) => `/ui/evaluations/${id}`;

// badge shows a status; its class gives the colour, its text the meaning.
export function badge(status, extra) {
  const s = String(status || 'unknown');
  return h('span', { class: `badge st-${s.toLowerCase().replace(/[^a-z]+/g, '-')}${extra ? ' ' + extra : ''}` }, s);
}

// Times in the API are nanoseconds since the epoch (or RFC 3339 strings).
export function toDate(t) {
  if (!t) return null;
  if (typeof t === 'string') return new Date(t);
  return new Date(t / 1e6);
}

export function ago(t) {
  const d = toDate(t);
  if (!d || isNaN(d) || d.getTime() <= 0) return '—';
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

// when renders a relative time with the exact one as its tooltip.
export function when(t) {
  const d = toDate(t);
  if (!d || isNaN(d) || d.getTime() <= 0) return '—';
  return h('time', { datetime: d.toISOString(), title: d.toLocaleString() }, ago(t));
}

export function mib(n) {
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 ? 1 : 0)} GiB`;
  return `${n} MiB`;
}
export function mhz(n) {
  if (n >= 1000) return `${(n / 1000).toFixed(1)} GHz`;
  return `${n} MHz`;
}
export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

// table renders rows under columns [{label, cell(row), class}].
export function table(columns, rows, opts = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, opts.empty || 'Nothing here.');
  return h('div', { class: 'table-wrap' },
    h('table', { class: opts.class },
      opts.caption ? h('caption', { class: 'sr-only' }, opts.caption) : null,
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class }, c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', opts.rowAttrs ? opts.rowAttrs(r) : {},
        columns.map((c, i) => (i === 0 && opts.rowHeader !== false)
          ? h('th', { scope: 'row', class: c.class }, c.cell(r))
          : h('td', { class: c.class }, c.cell(r))))))));
}

// meter is a labelled fill bar: used of total, in a unit.
export function meter(label, used, total, fmt) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  const level = pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low';
  return h('div', { class: 'meter' },
    h('span', { class: 'meter-label' }, label),
    h('span', { class: `meter-track ${level}`, role: 'meter', 'aria-label': label,
      'aria-valuemin': 0, 'aria-valuemax': total, 'aria-valuenow': used,
      'aria-valuetext': `${fmt(used)} of ${fmt(total)}` },
      h('span', { class: 'meter-fill', style: { width: `${pct}%` } })),
    h('span', { class: 'meter-value' }, `${fmt(used)} / ${fmt(total)}`));
}

// dl renders [term, description] pairs.
export function dl(pairs, cls) {
  return h('dl', { class: cls || 'facts' }, pairs.filter(Boolean).map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v ?? '—'))));
}

let toastTimer;
// toast announces the outcome of an action (read by screen readers).
export function toast(message, kind) {
  const el = document.getElementById('toast');
  el.className = `show ${kind || ''}`;
  el.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.className = ''; }, 5000);
}

// errorBox renders a failed request.
// A 403 is most often a missing or narrow token: it links to sign-in.
export function errorBox(err) {
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, err.status ? `Error ${err.status}: ` : 'Error: '), err.message,
    err.status === 403 && location.pathname !== '/ui/settings/tokens'
      ? [' ', h('a', { href: '/ui/settings/tokens', class: 'sign-in' }, 'Sign in with an ACL token')] : null);
}

// action wraps a button's async work: disabled while it runs, a toast
// with the outcome.
export function action(label, fn, attrs = {}) {
  const btn = h('button', { type: 'button', ...attrs }, label);
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      const msg = await fn();
      if (msg) toast(msg, 'ok');
    } catch (err) {
      toast(`${label} failed: ${err.message}`, 'bad');
    } finally {
      btn.disabled = false;
    }
  });
  return btn;
}

// hue gives a stable colour for a name (a job in the topology).
export function hue(name) {
  let x = 0;
  for (const c of name) x = (x * 31 + c.charCodeAt(0)) >>> 0;
  return x % 360;
}

// Resources of an allocation (stub or full), summed over its tasks.
export function allocResources(a) {
  const r = { cpu: 0, mem: 0, disk: 0 };
  const ar = a.AllocatedResources;
  if (ar) {
    for (const t of Object.values(ar.Tasks || {})) {
      r.cpu += t.Cpu?.CpuShares || 0;
      r.mem += t.Memory?.MemoryMB || 0;
    }
    r.disk += ar.Shared?.DiskMB || 0;
  }
  return r;
}

// nodeCapacity is what a node offers to allocations (minus reserved).
export function nodeCapacity(n) {
  const nr = n.NodeResources || {};
  const rr = n.ReservedResources || {};
  return {
    cpu: (nr.Cpu?.CpuShares || 0) - (rr.Cpu?.CpuShares || 0),
    mem: (nr.Memory?.MemoryMB || 0) - (rr.Memory?.MemoryMB || 0),
    disk: (nr.Disk?.DiskMB || 0) - (rr.Disk?.DiskMB || 0),
  };
}

// liveAlloc: an allocation that holds its node's resources.
export const liveAlloc = (a) => a.DesiredStatus === 'run' && (a.ClientStatus === 'pending' || a.ClientStatus === 'running');

export function section(title, ...children) {
  const id = 's-' + title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), children);
}
