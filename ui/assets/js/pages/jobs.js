// /ui/jobs: every job of every namespace, with filters and a search,
// followed live with a blocking query on /v1/jobs.
import { h, replace, table, badge, when, jobHref, errorBox } from '../dom.js';
import { watch, getJSON } from '../api.js';

const STATUSES = ['pending', 'running', 'dead'];
const TYPES = ['service', 'batch', 'system', 'sysbatch'];

// groupCounts sums a job summary's allocation counts over its groups.
export function summaryCounts(summary) {
  const c = { Queued: 0, Starting: 0, Running: 0, Failed: 0, Complete: 0, Lost: 0, Unknown: 0 };
  for (const g of Object.values(summary?.Summary || {})) {
    for (const k of Object.keys(c)) c[k] += g[k] || 0;
  }
  return c;
}

// allocBar draws a job's allocations by state as one stacked bar with a
// text equivalent.
export function allocBar(counts) {
  const order = ['Running', 'Starting', 'Queued', 'Failed', 'Lost', 'Complete'];
  const total = order.reduce((s, k) => s + counts[k], 0);
  const text = order.filter((k) => counts[k]).map((k) => `${counts[k]} ${k.toLowerCase()}`).join(', ') || 'no allocations';
  return h('span', { class: 'allocbar-wrap' },
    h('span', { class: 'allocbar', 'aria-hidden': 'true' },
      order.filter((k) => counts[k]).map((k) => h('span', { class: `seg seg-${k.toLowerCase()}`, style: { flexGrow: String(counts[k] / (total || 1)) } }))),
    h('span', { class: 'allocbar-text' }, text));
}

function select(label, name, options, value) {
  const id = `f-${name}`;
  return h('div', { class: 'field' },
    h('label', { for: id }, label),
    h('select', { id, name }, h('option', { value: '' }, 'Any'),
      options.map((o) => h('option', { value: o, selected: o === value }, o))));
}

export async function list(root, _params, ctx) {
  ctx.title('Jobs');
  const q = ctx.query;
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter jobs', onsubmit: (e) => e.preventDefault() },
    h('div', { class: 'field grow' }, h('label', { for: 'f-search' }, 'Search'),
      h('input', { id: 'f-search', name: 'search', type: 'search', placeholder: 'Job ID or name', value: q.get('search') || '', autocomplete: 'off' })),
    select('Status', 'status', STATUSES, q.get('status')),
    select('Type', 'type', TYPES, q.get('type')),
    h('div', { class: 'field', id: 'ns-field' }),
    h('div', { class: 'field', id: 'pool-field' }));
  const count = h('p', { class: 'count', 'aria-live': 'polite' });
  const body = h('div', { id: 'jobs-table' });
  replace(root,
    h('div', { class: 'page-head' }, h('h1', {}, 'Jobs'), h('a', { class: 'button primary', href: '/ui/jobs/run' }, 'Run a job')),
    form, count, body);

  let jobs = [];
  const draw = () => {
    const f = Object.fromEntries(new FormData(form));
    // Keep the filters in the address so that a filtered view can be shared.
    const sp = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
    const url = location.pathname + (sp.toString() ? `?${sp}` : '');
    if (url !== location.pathname + location.search) history.replaceState(null, '', url);
    const term = (f.search || '').toLowerCase();
    const rows = jobs.filter((j) =>
      (!term || j.ID.toLowerCase().includes(term) || (j.Name || '').toLowerCase().includes(term)) &&
      (!f.status || j.Status === f.status) && (!f.type || j.Type === f.type) &&
      (!f.namespace || j.Namespace === f.namespace) && (!f.pool || j.NodePool === f.pool));
    count.textContent = `${rows.length} of ${jobs.length} jobs`;
    replace(body, table([
      { label: 'Job', cell: (j) => h('a', { href: jobHref(j.ID, j.Namespace) }, j.ID) },
      { label: 'Status', cell: (j) => badge(j.Stop && j.Status !== 'dead' ? 'stopping' : j.Status) },
      { label: 'Type', cell: (j) => j.Type + (j.Periodic ? ' (periodic)' : '') + (j.ParameterizedJob ? ' (parameterized)' : '') },
      { label: 'Namespace', cell: (j) => j.Namespace },
      { label: 'Node pool', cell: (j) => j.NodePool || 'default' },
      { label: 'Priority', cell: (j) => j.Priority, class: 'num' },
      { label: 'Allocations', cell: (j) => allocBar(summaryCounts(j.JobSummary)) },
      { label: 'Submitted', cell: (j) => when(j.SubmitTime) },
    ], rows, { caption: 'Jobs', empty: jobs.length ? 'No job matches the filters.' : 'No jobs yet. Run one with the button above or `nomad job run`.' }));
  };
  form.addEventListener('input', draw);
  // The namespace and pool choices come from the jobs; they are rebuilt
  // only when they change, so that a focused select keeps its focus.
  const setSelect = (fieldId, label, name, opts) => {
    const field = form.querySelector(`#${fieldId}`);
    const key = opts.join('\n');
    if (field.dataset.key === key) return;
    field.dataset.key = key;
    const current = form.elements[name]?.value || q.get(name);
    replace(field, ...select(label, name, opts, current).childNodes);
  };

  // Every namespace the token may see is a choice, with or without jobs;
  // a token that may not list them still gets the jobs' namespaces.
  let namespaces = [];
  getJSON('/v1/namespaces', {}, ctx.signal).then((list) => {
    namespaces = (list || []).map((n) => n.Name);
    setSelect('ns-field', 'Namespace', 'namespace', [...new Set([...namespaces, ...jobs.map((j) => j.Namespace)])].sort());
  }).catch(() => {});

  await watch('/v1/jobs', { namespace: '*', meta: 'true' }, ctx.signal, (data) => {
    jobs = data.sort((a, b) => a.ID.localeCompare(b.ID));
    setSelect('ns-field', 'Namespace', 'namespace', [...new Set([...namespaces, ...jobs.map((j) => j.Namespace)])].sort());
    setSelect('pool-field', 'Node pool', 'pool', [...new Set(jobs.map((j) => j.NodePool || 'default'))].sort());
    draw();
  }, (err) => replace(body, errorBox(err)));
}
