// /ui/allocations/<id>: an allocation's tasks, their states, events and
// restarts, followed live; its logs and the files of its directory.
import { h, replace, table, badge, when, dl, section, shortId, nodeHref, evalHref, jobHref, errorBox, action, bytes, allocResources, mhz, mib } from '../dom.js';
import { get, getJSON, getText, send, watch } from '../api.js';
import { execView } from '../exec.js';

const MAX_LOG = 256 * 1024;

function tasksView(a) {
  const names = Object.keys(a.TaskStates || {}).sort();
  if (!names.length) return h('p', { class: 'empty' }, 'No task has started yet.');
  return names.map((name) => {
    const t = a.TaskStates[name];
    const events = [...(t.Events || [])].reverse();
    return h('article', { class: 'task', 'aria-label': `Task ${name}` },
      h('h3', {}, `Task ${name} `, badge(t.State), t.Failed ? [' ', badge('failed')] : null),
      dl([['Restarts', t.Restarts || 0], ['Last restart', when(t.LastRestart)], ['Started', when(t.StartedAt)], ['Finished', when(t.FinishedAt)]], 'facts inline'),
      table([
        { label: 'Time', cell: (e) => when(e.Time) },
        { label: 'Event', cell: (e) => e.Type },
        { label: 'Message', cell: (e) => e.DisplayMessage || e.Message || '' },
      ], events, { caption: `Events of task ${name}`, empty: 'No events.' }));
  });
}

function logsView(a, signal) {
  const tasks = Object.keys(a.TaskStates || {}).sort();
  if (!tasks.length) return h('p', { class: 'empty' }, 'No logs before a task starts.');
  const taskSel = h('select', { id: 'log-task' }, tasks.map((t) => h('option', { value: t }, t)));
  const typeSel = h('select', { id: 'log-type' }, h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
  const pre = h('pre', { class: 'logs', id: 'log-output', tabindex: '0', 'aria-label': 'Task log' });
  const status = h('span', { class: 'help', 'aria-live': 'polite' });
  let ctl = null;
  // follow streams the log (follow=true, plain text) into pre, keeping
  // its last MAX_LOG bytes.
  const follow = async () => {
    ctl?.abort();
    ctl = new AbortController();
    const mine = ctl;
    signal.addEventListener('abort', () => mine.abort(), { once: true });
    pre.textContent = '';
    status.textContent = 'following…';
    const running = a.ClientStatus === 'running' || a.ClientStatus === 'pending';
    try {
      const params = new URLSearchParams({ task: taskSel.value, type: typeSel.value, plain: 'true', origin: 'start', offset: '0', follow: running ? 'true' : 'false' });
      const resp = await fetch(`/v1/client/fs/logs/${a.ID}?${params}`, { signal: mine.signal });
      if (!resp.ok) throw new Error((await resp.text()) || resp.statusText);
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        let text = pre.textContent + dec.decode(value, { stream: true });
        if (text.length > MAX_LOG) text = text.slice(-MAX_LOG);
        pre.textContent = text;
        if (atBottom) pre.scrollTop = pre.scrollHeight;
      }
      status.textContent = pre.textContent ? 'end of log' : 'empty log';
    } catch (err) {
      if (mine.signal.aborted) return;
      status.textContent = `log unavailable: ${err.message}`;
    }
  };
  taskSel.addEventListener('change', follow);
  typeSel.addEventListener('change', follow);
  follow();
  return h('div', {},
    h('div', { class: 'filters' },
      h('div', { class: 'field' }, h('label', { for: 'log-task' }, 'Task'), taskSel),
      h('div', { class: 'field' }, h('label', { for: 'log-type' }, 'Stream'), typeSel),
      h('div', { class: 'field' }, h('span', { class: 'label-like' }, ' '), h('button', { type: 'button', onclick: follow }, 'Reload')),
      status),
    pre);
}

function filesView(a) {
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Directory' });
  const listing = h('div');
  const content = h('div');
  const open = async (dir) => {
    const parts = dir.split('/').filter(Boolean);
    replace(crumbs, h('button', { type: 'button', class: 'link', onclick: () => open('/') }, 'alloc dir'),
      parts.map((p, i) => [' / ', h('button', { type: 'button', class: 'link', onclick: () => open('/' + parts.slice(0, i + 1).join('/')) }, p)]));
    try {
      const entries = await getJSON(`/v1/client/fs/ls/${a.ID}`, { path: dir });
      entries.sort((x, y) => (y.IsDir - x.IsDir) || x.Name.localeCompare(y.Name));
      replace(listing, table([
        { label: 'Name', cell: (e) => h('button', { type: 'button', class: 'link', onclick: () => (e.IsDir ? open(`${dir.replace(/\/$/, '')}/${e.Name}`) : cat(`${dir.replace(/\/$/, '')}/${e.Name}`, e.Size)) }, e.IsDir ? `${e.Name}/` : e.Name) },
        { label: 'Size', cell: (e) => (e.IsDir ? '—' : bytes(e.Size)), class: 'num' },
        { label: 'Mode', cell: (e) => h('code', {}, e.FileMode) },
        { label: 'Modified', cell: (e) => when(e.ModTime) },
      ], entries, { caption: `Files in ${dir}`, empty: 'Empty directory.' }));
      replace(content);
    } catch (err) {
      replace(listing, errorBox(err));
    }
  };
  const cat = async (file, size) => {
    try {
      const limit = 128 * 1024;
      const text = size > limit
        ? await getText(`/v1/client/fs/readat/${a.ID}`, { path: file, offset: 0, limit })
        : await getText(`/v1/client/fs/cat/${a.ID}`, { path: file });
      replace(content, h('h3', {}, file, size > limit ? ` (first ${bytes(limit)} of ${bytes(size)})` : ''),
        h('pre', { class: 'logs', tabindex: '0', 'aria-label': `Content of ${file}` }, text));
      content.querySelector('h3').setAttribute('tabindex', '-1');
      content.querySelector('h3').focus();
    } catch (err) {
      replace(content, errorBox(err));
    }
  };
  open('/');
  return h('div', {}, crumbs, listing, content);
}

export async function page(root, params, ctx) {
  const id = params[0];
  ctx.title(`Allocation ${shortId(id)}`);
  let { data: a } = await get(`/v1/allocation/${id}`, {}, ctx.signal);
  const head = h('div', { class: 'page-head' });
  const facts = h('div');
  const tasks = h('div');
  const errs = h('div');
  const draw = () => {
    const r = allocResources(a);
    const live = a.ClientStatus === 'running' || a.ClientStatus === 'pending';
    replace(head, h('h1', {}, 'Allocation ', h('code', { title: a.ID }, shortId(a.ID)), ' ', badge(a.ClientStatus)),
      h('div', { class: 'actions' },
        live ? action('Restart', async () => { await send('POST', `/v1/client/allocation/${a.ID}/restart`, { AllTasks: true }); return 'Restarting the tasks'; }, { id: 'restart-alloc' }) : null,
        a.DesiredStatus === 'run' ? action('Stop allocation', async () => { await send('POST', `/v1/allocation/${a.ID}/stop`); return 'Allocation stopping'; }, { class: 'danger', id: 'stop-alloc' }) : null));
    replace(facts, dl([
      ['Name', a.Name], ['Job', h('a', { href: jobHref(a.JobID, a.Namespace) }, a.JobID)], ['Group', a.TaskGroup],
      ['Node', h('a', { href: nodeHref(a.NodeID) }, a.NodeName || shortId(a.NodeID))],
      ['Client status', a.ClientStatus], ['Description', a.ClientDescription], ['Desired', a.DesiredStatus + (a.DesiredDescription ? ` (${a.DesiredDescription})` : '')],
      ['Job version', a.Job?.Version ?? a.JobVersion], ['Evaluation', h('a', { href: evalHref(a.EvalID) }, h('code', {}, shortId(a.EvalID)))],
      ['Resources', `${mhz(r.cpu)} CPU, ${mib(r.mem)} memory, ${mib(r.disk)} disk`],
      ['Created', when(a.CreateTime)], ['Modified', when(a.ModifyTime)],
      a.PreviousAllocation ? ['Previous', h('a', { href: `/ui/allocations/${a.PreviousAllocation}` }, h('code', {}, shortId(a.PreviousAllocation)))] : null,
      a.NextAllocation ? ['Next', h('a', { href: `/ui/allocations/${a.NextAllocation}` }, h('code', {}, shortId(a.NextAllocation)))] : null,
    ]));
    replace(tasks, tasksView(a));
  };
  draw();
  const logs = h('div');
  let logTasks = '';
  // The log view is rebuilt only when the set of tasks changes (a
  // pending allocation's tasks starting), not on every update.
  const drawLogs = () => {
    const key = Object.keys(a.TaskStates || {}).sort().join(',');
    if (key === logTasks && logs.firstChild) return;
    logTasks = key;
    replace(logs, logsView(a, ctx.signal));
  };
  drawLogs();
  // The exec view likewise follows the set of running tasks; a session
  // ends with its view.
  const exec = h('div');
  let execTasks = null;
  let execCtl = null;
  const drawExec = () => {
    const running = Object.entries(a.TaskStates || {}).filter(([, t]) => t.State === 'running').map(([n]) => n).sort();
    const key = running.join(',');
    if (key === execTasks) return;
    execTasks = key;
    execCtl?.abort();
    execCtl = new AbortController();
    const mine = execCtl;
    ctx.signal.addEventListener('abort', () => mine.abort(), { once: true });
    replace(exec, execView(a.ID, running, mine.signal));
  };
  drawExec();
  replace(root, h('p', { class: 'crumbs' }, h('a', { href: '/ui/jobs' }, 'Jobs'), ' / ', h('a', { href: jobHref(a.JobID, a.Namespace) }, a.JobID), ' / allocation'),
    head, errs, facts, section('Tasks', tasks), section('Logs', logs), section('Exec', exec), section('Files', filesView(a)));
  watch(`/v1/allocation/${id}`, {}, ctx.signal, (data) => { a = data; draw(); drawLogs(); drawExec(); replace(errs); }, (err) => replace(errs, errorBox(err)));
}
