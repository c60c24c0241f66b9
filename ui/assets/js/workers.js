// The scheduler page's workers: every server's, each worker with its
// state and a pause/resume control, and each server's pause of all its
// workers. Nomad's /v1/agent/schedulers answers for the agent asked
// only; ?server_id= and /v1/agent/schedulers/pause (extensions) reach
// any server through this agent, so one page steers them all.
import { h, replace, table, badge, when, shortId, errorBox, action } from './dom.js';
import { getJSON, send } from './api.js';

// serverNames lists the alive servers of the region, this agent's own
// first; without the members list (a token without node read), only
// this agent's.
async function serverNames(self, signal) {
  const mem = await getJSON('/v1/agent/members', {}, signal).catch(() => ({ Members: [] }));
  const names = (mem.Members || []).filter((m) => m.Status === 'alive').map((m) => m.Name).sort();
  return self ? [self, ...names.filter((n) => n !== self)] : names;
}

// pausedBy says who paused a worker: an operator (it alone, or every
// worker), else the leader, which keeps a share of its workers paused.
function pausedBy(w, allPaused) {
  if (w.status !== 'Paused' && w.status !== 'Pausing') return '';
  if (w.operator_paused) return 'by an operator';
  return allPaused ? 'with every worker' : 'by the leader';
}

// domId turns a server name into a piece of an element ID.
const domId = (name) => name.replace(/[^A-Za-z0-9_-]+/g, '-');

// workersView returns the element and a refresh() that reads and
// redraws every server's workers (a server is redrawn only when its
// answer changed, so that a control keeps the focus).
export function workersView(signal) {
  const box = h('div', { id: 'workers' });
  const servers = new Map(); // name -> {el, key}
  let self = null;
  let selfKnown = false;

  // writes counts the pauses sent: a read begun before one is older than
  // its answer and is not drawn over it.
  let writes = 0;
  const pause = async (server, paused, workerID) => {
    writes++;
    const res = await send('PUT', '/v1/agent/schedulers/pause', { paused, worker_id: workerID || '' }, { server_id: server });
    draw(server, res, null);
  };

  const draw = (name, info, err) => {
    let s = servers.get(name);
    if (!s) {
      s = { el: h('article', { class: 'server-workers', 'aria-labelledby': `w-${domId(name)}` }), key: '' };
      servers.set(name, s);
    }
    const key = JSON.stringify([info, err?.message]);
    if (key === s.key) return;
    s.key = key;
    const head = h('h3', { id: `w-${domId(name)}` }, 'Server ', name, name === self ? ' (this agent)' : '');
    if (err) { replace(s.el, head, errorBox(err)); return; }
    const list = info.schedulers || [];
    const allPaused = !!info.paused;
    const count = (st) => list.filter((w) => w.status === st).length;
    // The agent's own server keeps the ID the page has always had.
    const toggleId = name === self ? 'toggle-workers' : `toggle-workers-${domId(name)}`;
    replace(s.el, head,
      h('p', {}, `${list.length} workers: ${count('Started')} taking evaluations, ${count('Paused') + count('Pausing')} paused`,
        allPaused ? [' — ', badge('paused'), ' all, by an operator.'] : '.'),
      table([
        { label: 'Worker', cell: (w) => h('code', { title: w.id }, shortId(w.id)) },
        { label: 'Status', cell: (w) => [badge(w.status), ' ', h('span', { class: 'help' }, pausedBy(w, allPaused))] },
        { label: 'Doing', cell: (w) => w.workload_status },
        { label: 'Schedulers', cell: (w) => (w.enabled_schedulers || []).join(', ') },
        { label: 'Started', cell: (w) => when(w.started) },
        { label: 'Control', cell: (w) => action(w.operator_paused ? 'Resume' : 'Pause', async () => {
          await pause(name, !w.operator_paused, w.id);
          return w.operator_paused ? `Worker ${shortId(w.id)} resumed` : `Worker ${shortId(w.id)} paused: it finishes its evaluation and takes no more`;
        }, { class: w.operator_paused ? 'primary' : '', 'aria-label': `${w.operator_paused ? 'Resume' : 'Pause'} worker ${shortId(w.id)} of ${name}`, 'data-worker': w.id }) },
      ], list, { caption: `Scheduler workers of ${name}`, empty: 'This server runs no scheduler workers.' }),
      h('div', { class: 'actions' }, action(allPaused ? 'Resume workers' : 'Pause workers', async () => {
        await pause(name, !allPaused);
        return allPaused ? `Workers of ${name} resumed` : `Workers of ${name} paused: they finish their current evaluation and take no more`;
      }, { id: toggleId, class: allPaused ? 'primary' : 'danger', 'aria-label': `${allPaused ? 'Resume' : 'Pause'} every worker of ${name}` })));
  };

  const refresh = async () => {
    if (!selfKnown) {
      // A client-only agent has no workers of its own: 400.
      self = (await getJSON('/v1/agent/schedulers', {}, signal).catch(() => null))?.server_id || null;
      selfKnown = true;
    }
    const names = await serverNames(self, signal);
    const before = writes;
    await Promise.all(names.map(async (name) => {
      try {
        const info = await getJSON('/v1/agent/schedulers', { server_id: name }, signal);
        if (writes === before || !servers.has(name)) draw(name, info, null);
      } catch (err) {
        if (signal.aborted) return;
        draw(name, null, err);
      }
    }));
    for (const name of [...servers.keys()]) if (!names.includes(name)) servers.delete(name);
    const els = names.map((n) => servers.get(n)?.el).filter(Boolean);
    if (els.length !== box.children.length || els.some((el, i) => box.children[i] !== el)) {
      replace(box, els.length ? els : h('p', { class: 'empty' }, 'No server is known to this agent.'));
    }
  };
  return { el: box, refresh, self: () => self };
}
