// /ui/jobs/<id>@<namespace>: one job, its groups, allocations,
// evaluations (with placement failures), deployments and versions,
// followed live; stop, start, scale and revert.
import { h, replace, table, badge, when, dl, section, shortId, allocHref, nodeHref, evalHref, errorBox, action } from '../dom.js';
import { get, getJSON, send, watch, poll } from '../api.js';
import { failures } from '../failures.js';
import { diffView } from '../diff.js';

// splitJobParam reads "<id>@<namespace>" (the CLI's form) or "<id>".
export function splitJobParam(p) {
  const at = p.lastIndexOf('@');
  if (at > 0) return [p.slice(0, at), p.slice(at + 1) || 'default'];
  return [p, 'default'];
}

export function allocTable(allocs, opts = {}) {
  return table([
    { label: 'Allocation', cell: (a) => h('a', { href: allocHref(a.ID), title: a.ID }, h('code', {}, shortId(a.ID))) },
    { label: 'Name', cell: (a) => a.Name },
    opts.job ? { label: 'Job', cell: (a) => h('a', { href: `/ui/jobs/${encodeURIComponent(a.JobID)}@${encodeURIComponent(a.Namespace)}` }, a.JobID) } : null,
    opts.node === false ? null : { label: 'Node', cell: (a) => h('a', { href: nodeHref(a.NodeID) }, a.NodeName || shortId(a.NodeID)) },
    { label: 'Status', cell: (a) => badge(a.ClientStatus) },
    { label: 'Desired', cell: (a) => a.DesiredStatus },
    { label: 'Version', cell: (a) => a.JobVersion ?? a.Job?.Version ?? '—', class: 'num' },
    { label: 'Restarts', cell: (a) => Object.values(a.TaskStates || {}).reduce((s, t) => s + (t.Restarts || 0), 0), class: 'num' },
    { label: 'Created', cell: (a) => when(a.CreateTime) },
  ].filter(Boolean), allocs, { caption: 'Allocations', empty: 'No allocations.' });
}

export function evalTable(evals, opts = {}) {
  return table([
    { label: 'Evaluation', cell: (e) => h('a', { href: evalHref(e.ID), title: e.ID }, h('code', {}, shortId(e.ID))) },
    opts.job ? { label: 'Job', cell: (e) => h('a', { href: `/ui/jobs/${encodeURIComponent(e.JobID)}@${encodeURIComponent(e.Namespace)}` }, e.JobID) } : null,
    { label: 'Triggered by', cell: (e) => e.TriggeredBy },
    { label: 'Type', cell: (e) => e.Type },
    { label: 'Priority', cell: (e) => e.Priority, class: 'num' },
    { label: 'Status', cell: (e) => badge(e.Status) },
    { label: 'Placement', cell: (e) => {
      const n = Object.keys(e.FailedTGAllocs || {}).length;
      return n ? h('span', { class: 'warn-text' }, `${n} group${n === 1 ? '' : 's'} failed`) : (e.BlockedEval ? 'blocked eval waiting' : '—');
    } },
    { label: 'Created', cell: (e) => when(e.CreateTime) },
  ].filter(Boolean), evals, { caption: 'Evaluations', empty: 'No evaluations.' });
}

function groupsTable(job, allocs, summary, onScale) {
  const rows = (job.TaskGroups || []).map((g) => {
    const mine = allocs.filter((a) => a.TaskGroup === g.Name && a.JobVersion !== undefined);
    const s = summary?.Summary?.[g.Name] || {};
    return {
      g, s,
      placed: mine.filter((a) => a.DesiredStatus === 'run' && !['complete', 'failed', 'lost'].includes(a.ClientStatus)).length,
    };
  });
  const scalable = job.Type === 'service' || job.Type === 'batch';
  return table([
    { label: 'Group', cell: (r) => r.g.Name },
    { label: 'Desired', cell: (r) => (job.Stop ? 0 : r.g.Count), class: 'num' },
    { label: 'Placed', cell: (r) => r.placed, class: 'num' },
    { label: 'Running', cell: (r) => r.s.Running || 0, class: 'num' },
    { label: 'Starting', cell: (r) => r.s.Starting || 0, class: 'num' },
    { label: 'Queued', cell: (r) => r.s.Queued || 0, class: 'num' },
    { label: 'Failed', cell: (r) => r.s.Failed || 0, class: 'num' },
    { label: 'Complete', cell: (r) => r.s.Complete || 0, class: 'num' },
    { label: 'Lost', cell: (r) => r.s.Lost || 0, class: 'num' },
    { label: 'Tasks', cell: (r) => (r.g.Tasks || []).map((t) => `${t.Name} (${t.Driver}, ${t.Resources?.CPU ?? '?'} MHz, ${t.Resources?.MemoryMB ?? '?'} MiB)`).join('; ') },
    scalable ? { label: 'Scale', cell: (r) => {
      const id = `scale-${r.g.Name}`;
      const input = h('input', { id, type: 'number', min: 0, value: r.g.Count, class: 'narrow', 'data-group': r.g.Name });
      return h('span', { class: 'inline-form' }, h('label', { for: id, class: 'sr-only' }, `Count of group ${r.g.Name}`), input,
        action('Scale', () => onScale(r.g.Name, Number(input.value)), { class: 'small', 'aria-label': `Scale group ${r.g.Name}` }));
    } } : null,
  ].filter(Boolean), rows, { caption: 'Task groups' });
}

function deploymentActions(d, after) {
  if (d.Status !== 'running' && d.Status !== 'paused') return '—';
  const canaries = Object.values(d.TaskGroups || {}).some((g) => g.DesiredCanaries > 0 && !g.Promoted);
  return h('span', { class: 'inline-form' },
    canaries ? action('Promote', async () => {
      await send('POST', `/v1/deployment/promote/${d.ID}`, { DeploymentID: d.ID, All: true });
      after();
      return 'Deployment promoted';
    }, { class: 'small primary' }) : null,
    action('Fail', async () => {
      await send('POST', `/v1/deployment/fail/${d.ID}`, { DeploymentID: d.ID });
      after();
      return 'Deployment failed';
    }, { class: 'small danger', 'aria-label': `Fail deployment ${shortId(d.ID)}` }));
}

function deploymentsTable(deps, after) {
  return table([
    { label: 'Deployment', cell: (d) => h('code', { title: d.ID }, shortId(d.ID)) },
    { label: 'Version', cell: (d) => d.JobVersion, class: 'num' },
    { label: 'Status', cell: (d) => badge(d.Status) },
    { label: 'Description', cell: (d) => d.StatusDescription },
    { label: 'Groups (healthy / placed / desired)', cell: (d) => Object.entries(d.TaskGroups || {})
      .map(([g, s]) => `${g}: ${s.HealthyAllocs} / ${s.PlacedAllocs} / ${s.DesiredTotal}${s.DesiredCanaries ? ` (${s.DesiredCanaries} canaries${s.Promoted ? ', promoted' : ''})` : ''}`).join('; ') },
    { label: 'Actions', cell: (d) => deploymentActions(d, after) },
  ], deps, { caption: 'Deployments', empty: 'No deployments.' });
}

function versionsList(versions, diffs, onRevert) {
  if (!versions.length) return h('p', { class: 'empty' }, 'No versions.');
  return h('ol', { class: 'versions', reversed: true }, versions.map((v, i) => h('li', {},
    h('details', { open: i === 0 && diffs && diffs[0] ? true : undefined },
      h('summary', {}, h('strong', {}, `Version ${v.Version}`), ' ', v.Stable ? badge('stable') : null,
        v.VersionTag?.Name ? [' ', h('span', { class: 'tag', title: v.VersionTag.Description || '' }, v.VersionTag.Name)] : null,
        ' submitted ', when(v.SubmitTime), v.Stop ? ' (stopped)' : ''),
      diffs && diffs[i] ? diffView(diffs[i]) : h('p', { class: 'empty' }, 'First version.')),
    // Outside the details, so that it shows while they are closed.
    i > 0 ? action(`Revert to version ${v.Version}`, () => onRevert(v.Version),
      { class: 'small', id: `revert-${v.Version}` }) : null)));
}

export async function page(root, params, ctx) {
  const [id, ns] = splitJobParam(params[0]);
  const q = { namespace: ns };
  const path = `/v1/job/${encodeURIComponent(id)}`;
  ctx.title(`Job ${id}`);
  const head = h('div', { class: 'page-head' });
  const facts = h('div');
  const body = h('div');
  const errs = h('div');
  replace(root, h('p', { class: 'crumbs' }, h('a', { href: '/ui/jobs' }, 'Jobs'), ' / ', ns), head, errs, facts, body);

  let job = null;
  const register = async (j) => {
    const res = await send('PUT', path, { Job: j }, q);
    return res;
  };
  const stopJob = async () => {
    await send('DELETE', path, undefined, q);
    refresh();
    return `Job ${id} stopped`;
  };
  const startJob = async () => {
    const j = await getJSON(path, q);
    j.Stop = false;
    await register(j);
    refresh();
    return `Job ${id} started`;
  };
  // Scaling goes through the job's scale endpoint, as `nomad job scale`:
  // the server checks the group, records a scaling event and writes the
  // new version with its evaluation.
  const scale = async (group, count) => {
    if (!Number.isInteger(count) || count < 0) throw new Error('the count must be a whole number, 0 or more');
    await send('POST', `${path}/scale`, {
      Count: count, Target: { Job: id, Group: group }, Message: 'scaled from the web UI',
    }, q);
    refresh();
    return `Group ${group} scaled to ${count}`;
  };
  // Reverting registers an earlier version again as a new one; the
  // current version is checked so that two people reverting at once do
  // not both succeed.
  const revert = async (version) => {
    await send('POST', `${path}/revert`, {
      JobID: id, JobVersion: version, EnforcePriorVersion: job ? job.Version : undefined,
    }, q);
    refresh();
    return `Job ${id} reverted to version ${version}`;
  };

  let headKey = '';
  const drawHead = () => {
    const stopped = job.Stop;
    // Redrawn only when what it shows changes, so that an open
    // confirmation survives the live updates.
    const key = JSON.stringify([job.Stop, job.Status, job.Version, job.ModifyIndex]);
    if (key === headKey) return;
    headKey = key;
    const confirmBox = h('span', { class: 'confirm', hidden: true, role: 'group', 'aria-label': 'Confirm stopping the job',
      onkeydown: (e) => { if (e.key === 'Escape') { confirmBox.hidden = true; stopBtn.focus(); } } },
      h('span', {}, `Stop every allocation of ${id}?`),
      action('Yes, stop the job', async () => { confirmBox.hidden = true; return stopJob(); }, { class: 'danger', id: 'stop-confirm' }),
      h('button', { type: 'button', onclick: () => { confirmBox.hidden = true; stopBtn.focus(); } }, 'Cancel'));
    const stopBtn = h('button', { type: 'button', class: 'danger', id: 'stop-job', onclick: () => { confirmBox.hidden = false; confirmBox.querySelector('#stop-confirm').focus(); } }, 'Stop job');
    replace(head, h('h1', {}, id, ' ', badge(stopped && job.Status !== 'dead' ? 'stopping' : job.Status)),
      h('div', { class: 'actions' },
        stopped ? action('Start job', startJob, { class: 'primary', id: 'start-job' }) : [stopBtn, confirmBox]));
    replace(facts, dl([
      ['Type', job.Type], ['Namespace', job.Namespace], ['Node pool', job.NodePool || 'default'],
      ['Datacenters', (job.Datacenters || []).join(', ')], ['Priority', job.Priority], ['Version', job.Version],
      ['Submitted', when(job.SubmitTime)], job.ParentID ? ['Parent', h('a', { href: `/ui/jobs/${encodeURIComponent(job.ParentID)}@${encodeURIComponent(ns)}` }, job.ParentID)] : null,
      job.StatusDescription ? ['Status description', job.StatusDescription] : null,
    ]));
  };

  let pending = false;
  let busy = false;
  let lastKey = '';
  const refresh = async () => {
    if (busy) { pending = true; return; }
    busy = true;
    try {
      do {
        pending = false;
        const [jr, allocs, summary, evals, deps, versions] = await Promise.all([
          get(path, q, ctx.signal),
          getJSON(`${path}/allocations`, { ...q, all: 'true' }, ctx.signal),
          getJSON(`${path}/summary`, q, ctx.signal),
          getJSON(`${path}/evaluations`, q, ctx.signal),
          getJSON(`${path}/deployments`, { ...q, all: 'true' }, ctx.signal),
          getJSON(`${path}/versions`, { ...q, diffs: 'true' }, ctx.signal),
        ]);
        if (ctx.signal.aborted) return;
        // The watches wake together at first and on timeouts: an
        // unchanged answer leaves the page (and the user's input) alone.
        const key = JSON.stringify([jr.data, allocs, summary, evals, deps, versions]);
        if (key === lastKey) continue;
        lastKey = key;
        job = jr.data;
        allocs.sort((a, b) => b.CreateIndex - a.CreateIndex);
        evals.sort((a, b) => b.CreateIndex - a.CreateIndex);
        drawHead();
        // The newest evaluation's placement failures (and an outstanding
        // blocked evaluation's) tell why desired allocations are missing.
        const latest = evals.find((e) => Object.keys(e.FailedTGAllocs || {}).length);
        const blocked = evals.filter((e) => e.Status === 'blocked');
        const showFail = latest && !job.Stop && (blocked.length || evals[0] === latest);
        const focused = document.activeElement?.closest?.('#job-body') ? document.activeElement.id : null;
        // Counts being typed into the scale fields survive the redraw.
        const edited = [...body.querySelectorAll('input[data-group]')].filter((i) => i.value !== i.defaultValue).map((i) => [i.id, i.value]);
        replace(body, h('div', { id: 'job-body' },
          section('Task groups', groupsTable(job, allocs, summary, scale)),
          showFail ? section('Placement failures',
            h('p', {}, 'From evaluation ', h('a', { href: evalHref(latest.ID) }, h('code', {}, shortId(latest.ID))), ' ', when(latest.CreateTime),
              blocked.length ? [', ', h('a', { href: evalHref(blocked[0].ID) }, 'a blocked evaluation'), ' waits for resources to free up.'] : '.'),
            failures(latest.FailedTGAllocs)) : null,
          section('Allocations', allocTable(allocs)),
          section('Evaluations', evalTable(evals)),
          section('Deployments', deploymentsTable(deps, () => refresh())),
          section('Versions', versionsList(versions.Versions || [], versions.Diffs, revert)),
        ));
        for (const [eid, v] of edited) { const el = document.getElementById(eid); if (el) el.value = v; }
        if (focused) document.getElementById(focused)?.focus();
        replace(errs);
      } while (pending && !ctx.signal.aborted);
    } catch (err) {
      if (err.status === 404) {
        replace(root, h('h1', {}, `Job ${id} not found`), h('p', {}, `No job ${id} in namespace ${ns}. `, h('a', { href: '/ui/jobs' }, 'All jobs')));
        return;
      }
      if (!ctx.signal.aborted) replace(errs, errorBox(err));
    } finally {
      busy = false;
    }
  };

  await refresh();
  if (!job) return;
  // Follow the job and its allocations; either changing redraws the
  // page (evaluations change with one or the other). Two blocking
  // queries at most: a browser holds only six connections to the agent.
  watch(path, q, ctx.signal, () => refresh());
  watch(`${path}/allocations`, { ...q, all: 'true' }, ctx.signal, () => refresh());
  // Deployments promoted or failed elsewhere change neither: a slow
  // refresh catches them (it redraws only if something changed).
  poll(15000, ctx.signal, refresh);
}
