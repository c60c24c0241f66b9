// /ui/evaluations and /ui/evaluations/<id>: what the scheduler was asked
// to do and what came of it, placement failures first.
import { h, replace, table, badge, when, dl, section, shortId, evalHref, jobHref, nodeHref, errorBox } from '../dom.js';
import { get, getJSON, watch } from '../api.js';
import { failures } from '../failures.js';
import { evalTable, allocTable } from './job.js';

export async function list(root, _params, ctx) {
  ctx.title('Evaluations');
  const q = ctx.query;
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter evaluations', onsubmit: (e) => e.preventDefault() },
    h('div', { class: 'field grow' }, h('label', { for: 'e-search' }, 'Search'),
      h('input', { id: 'e-search', name: 'search', type: 'search', placeholder: 'Job or evaluation ID', value: q.get('search') || '', autocomplete: 'off' })),
    h('div', { class: 'field' }, h('label', { for: 'e-status' }, 'Status'),
      h('select', { id: 'e-status', name: 'status' }, ['', 'pending', 'blocked', 'complete', 'failed', 'canceled'].map((s) => h('option', { value: s, selected: s === (q.get('status') || '') }, s || 'Any')))),
    h('div', { class: 'field check' }, h('input', { id: 'e-failed', name: 'failed', type: 'checkbox', checked: q.get('failed') === 'on' }),
      h('label', { for: 'e-failed' }, 'Only with placement failures')));
  const count = h('p', { class: 'count', 'aria-live': 'polite' });
  const body = h('div');
  replace(root, h('div', { class: 'page-head' }, h('h1', {}, 'Evaluations')), form, count, body);
  let evals = [];
  const draw = () => {
    const f = Object.fromEntries(new FormData(form));
    const sp = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
    history.replaceState(null, '', location.pathname + (sp.toString() ? `?${sp}` : ''));
    const term = (f.search || '').toLowerCase();
    const rows = evals.filter((e) => (!term || e.JobID.toLowerCase().includes(term) || e.ID.startsWith(term)) &&
      (!f.status || e.Status === f.status) && (!f.failed || Object.keys(e.FailedTGAllocs || {}).length));
    count.textContent = `${rows.length} of ${evals.length} evaluations`;
    replace(body, evalTable(rows.slice(0, 500), { job: true }));
  };
  form.addEventListener('input', draw);
  await watch('/v1/evaluations', { namespace: '*' }, ctx.signal, (data) => { evals = data.sort((a, b) => b.CreateIndex - a.CreateIndex); draw(); }, (err) => replace(body, errorBox(err)));
}

// timelineView shows the leader's record of the evaluation's life, each
// stage with the time since the first.
function timelineView(tl) {
  const events = tl?.Events || [];
  if (!events.length) {
    return h('p', { class: 'empty' }, 'The leader holds no timeline for this evaluation: it was handled by an earlier leader, or long enough ago to be forgotten.');
  }
  const first = new Date(events[0].Time).getTime();
  return table([
    { label: 'Stage', cell: (ev) => ev.Stage },
    { label: 'After', cell: (ev) => `+${Math.max(0, new Date(ev.Time).getTime() - first)} ms`, class: 'num' },
    { label: 'At', cell: (ev) => new Date(ev.Time).toLocaleTimeString() },
    { label: 'Detail', cell: (ev) => ev.Detail || '—' },
  ], events, { caption: 'Timeline', class: 'timeline' });
}

export async function page(root, params, ctx) {
  const id = params[0];
  ctx.title(`Evaluation ${shortId(id)}`);
  const body = h('div');
  replace(root, h('p', { class: 'crumbs' }, h('a', { href: '/ui/evaluations' }, 'Evaluations')), body);
  const link = (eid) => (eid ? h('a', { href: evalHref(eid) }, h('code', {}, shortId(eid))) : '—');
  await watch(`/v1/evaluation/${id}`, { related: 'true' }, ctx.signal, async (e) => {
    const allocs = await getJSON(`/v1/evaluation/${id}/allocations`, {}, ctx.signal).catch(() => []);
    const timeline = await getJSON(`/v1/evaluation/${id}/timeline`, { namespace: e.Namespace }, ctx.signal).catch(() => null);
    const nFailed = Object.keys(e.FailedTGAllocs || {}).length;
    replace(body,
      h('div', { class: 'page-head' }, h('h1', {}, 'Evaluation ', h('code', { title: e.ID }, shortId(e.ID)), ' ', badge(e.Status))),
      dl([
        ['Job', h('a', { href: jobHref(e.JobID, e.Namespace) }, e.JobID)], ['Namespace', e.Namespace], ['Type', e.Type], ['Priority', e.Priority],
        ['Triggered by', e.TriggeredBy], e.NodeID ? ['Node', h('a', { href: nodeHref(e.NodeID) }, shortId(e.NodeID))] : null,
        ['Status description', e.StatusDescription || '—'],
        ['Previous evaluation', link(e.PreviousEval)], ['Next evaluation', link(e.NextEval)], ['Blocked evaluation', link(e.BlockedEval)],
        e.QueuedAllocations ? ['Queued allocations', Object.entries(e.QueuedAllocations).map(([g, n]) => `${g}: ${n}`).join(', ') || '—'] : null,
        ['Created', when(e.CreateTime)], ['Modified', when(e.ModifyTime)],
      ]),
      section('Placement failures', nFailed ? failures(e.FailedTGAllocs)
        : h('p', { class: 'empty' }, e.Status === 'blocked' ? 'This evaluation waits for resources: it is retried when a node changes or allocations stop.' : 'Every allocation this evaluation wanted was placed.')),
      e.Status === 'blocked' ? h('p', { class: 'help' }, 'A blocked evaluation holds the placements that failed; the leader unblocks it when the cluster can take them.') : null,
      section('Timeline', timelineView(timeline)),
      section('Allocations placed', allocTable(allocs)),
      (e.RelatedEvals || []).length ? section('Related evaluations', evalTable(e.RelatedEvals, { job: true })) : null);
  }, (err) => replace(body, errorBox(err)));
}
