// /ui/scheduler: the scheduler at work. Every server's workers with
// their state and pause/resume controls (one worker or all), the
// cluster's eval broker switch, and the evaluations waiting (pending,
// blocked).
import { h, replace, table, badge, when, dl, section, shortId, evalHref, jobHref, errorBox, action } from '../dom.js';
import { get, getJSON, send, poll, watch } from '../api.js';
import { workersView } from '../workers.js';

export async function page(root, _params, ctx) {
  ctx.title('Scheduler');
  const broker = h('div');
  const queues = h('div', { class: 'queues' });
  const workers = h('div');
  const pool = h('div');
  const queue = h('div');
  const byType = h('div', { id: 'by-type' });
  const errs = h('div');
  replace(root, h('div', { class: 'page-head' }, h('h1', {}, 'Scheduler')),
    h('p', { class: 'help' }, 'Every change becomes an evaluation; the leader\'s eval broker hands evaluations to scheduler workers on every server; each worker plans placements and the leader\'s plan applier commits them.'),
    errs,
    section('Eval broker', broker, queues, byType),
    section('Workers', workers),
    section('Evaluations waiting', queue));

  // Broker: the cluster-wide scheduler configuration (in Raft).
  let brokerKey = '';
  const drawBroker = (cfg) => {
    const key = JSON.stringify(cfg);
    if (key === brokerKey) return;
    brokerKey = key;
    const paused = cfg.PauseEvalBroker;
    replace(broker,
      h('p', { id: 'broker-state' }, 'The eval broker is ', badge(paused ? 'paused' : 'running', 'big'),
        paused ? ' — no evaluation is handed to a worker until it is resumed; new evaluations wait as pending.' : ' — evaluations flow to the workers.'),
      h('div', { class: 'actions' }, action(paused ? 'Resume the broker' : 'Pause the broker', async () => {
        const next = { ...cfg, PauseEvalBroker: !paused };
        const res = await send('PUT', '/v1/operator/scheduler/configuration', next, { cas: cfg.ModifyIndex });
        if (res && res.Updated === false) throw new Error('the configuration changed meanwhile; try again');
        await refreshBroker();
        return paused ? 'Eval broker resumed' : 'Eval broker paused';
      }, { id: 'toggle-broker', class: paused ? 'primary' : 'danger' })),
      dl([
        ['Algorithm', cfg.SchedulerAlgorithm],
        ['Preemption', Object.entries(cfg.PreemptionConfig || {}).filter(([, v]) => v).map(([k]) => k.replace(/SchedulerEnabled$/, '').toLowerCase()).join(', ') || 'off'],
        ['Memory oversubscription', cfg.MemoryOversubscriptionEnabled ? 'on' : 'off'],
        ['Job registration', cfg.RejectJobRegistration ? 'rejected' : 'accepted'],
        ['Modify index', cfg.ModifyIndex],
      ]));
  };
  const refreshBroker = async () => {
    const res = await getJSON('/v1/operator/scheduler/configuration', {}, ctx.signal);
    drawBroker(res.SchedulerConfig);
  };

  // Workers: every server's (workers.js), and this agent's pool size.
  const wv = workersView(ctx.signal);
  replace(workers, wv.el, pool);
  let poolKey = '';
  const drawPool = (cfg) => {
    const key = JSON.stringify(cfg);
    if (key === poolKey) return;
    poolKey = key;
    const n = h('input', { id: 'num-schedulers', type: 'number', min: 0, value: cfg.num_schedulers, class: 'narrow' });
    replace(pool,
      h('form', { class: 'inline-form', onsubmit: async (e) => {
        e.preventDefault();
        try {
          await send('PUT', '/v1/agent/schedulers/config', { num_schedulers: Number(n.value), enabled_schedulers: cfg.enabled_schedulers });
          await Promise.all([refreshPool(), wv.refresh()]);
          replace(errs);
        } catch (err) { replace(errs, errorBox(err)); }
      } }, h('label', { for: 'num-schedulers' }, `Workers of this agent's server (${cfg.server_id}), running `, h('code', {}, (cfg.enabled_schedulers || []).join(', '))), n, h('button', { type: 'submit' }, 'Set')),
      h('p', { class: 'help' }, 'Pauses and sizes apply until the server restarts. The leader also keeps some of its own workers paused, to leave CPU to Raft and the plan applier; those show as paused without "by an operator".'));
  };
  const refreshPool = async () => drawPool(await getJSON('/v1/agent/schedulers/config', {}, ctx.signal));

  // Per scheduler type: the broker's ready and unacknowledged gauges
  // (leader's metrics) beside the pending, blocked and failed evaluations
  // of the state, so a queue that builds up for one kind of job shows.
  const TYPES = ['service', 'batch', 'system', 'sysbatch', '_core'];
  let lastGauges = [];
  let lastEvals = [];
  const drawByType = () => {
    // The broker reports a type once it has held one of its evaluations;
    // on the leader (which reports totals) an unreported type has none.
    const leader = lastGauges.some((g) => g.Name.endsWith('.nomad.broker.total_ready'));
    const gauge = (t, what) => lastGauges.find((g) => g.Name.endsWith(`.nomad.broker.${t}.${what}`))?.Value ?? (leader ? 0 : undefined);
    const count = (t, status) => lastEvals.filter((e) => e.Type === t && e.Status === status).length;
    const rows = TYPES.map((t) => ({ t, ready: gauge(t, 'ready'), unacked: gauge(t, 'unacked'),
      pending: count(t, 'pending'), blocked: count(t, 'blocked'), failed: count(t, 'failed') }))
      .filter((r) => r.t !== '_core' || r.ready || r.unacked || r.pending || r.blocked || r.failed);
    replace(byType, h('h3', {}, 'By scheduler type'), table([
      { label: 'Scheduler', cell: (r) => h('code', {}, r.t) },
      { label: 'Ready', cell: (r) => r.ready ?? '—' },
      { label: 'Being scheduled', cell: (r) => r.unacked ?? '—' },
      { label: 'Pending', cell: (r) => r.pending },
      { label: 'Blocked', cell: (r) => r.blocked },
      { label: 'Failed', cell: (r) => r.failed },
    ], rows, { caption: 'Evaluations by scheduler type' }));
  };

  const drawQueue = (evals) => {
    lastEvals = evals;
    drawByType();
    const waiting = evals.filter((e) => e.Status === 'pending' || e.Status === 'blocked');
    const by = (s) => evals.filter((e) => e.Status === s).length;
    replace(queue,
      h('p', {}, h('strong', {}, by('pending')), ' pending, ', h('strong', {}, by('blocked')), ' blocked (waiting for resources), ',
        h('strong', {}, by('complete')), ' complete, ', h('strong', {}, by('failed')), ' failed. ', h('a', { href: '/ui/evaluations' }, 'All evaluations')),
      table([
        { label: 'Evaluation', cell: (e) => h('a', { href: evalHref(e.ID) }, h('code', {}, shortId(e.ID))) },
        { label: 'Job', cell: (e) => h('a', { href: jobHref(e.JobID, e.Namespace) }, e.JobID) },
        { label: 'Status', cell: (e) => badge(e.Status) },
        { label: 'Triggered by', cell: (e) => e.TriggeredBy },
        { label: 'Why', cell: (e) => e.StatusDescription || (e.WaitUntil && !String(e.WaitUntil).startsWith('0001') ? `wait until ${new Date(e.WaitUntil).toLocaleString()}` : '—') },
        { label: 'Created', cell: (e) => when(e.CreateTime) },
      ], waiting.sort((a, b) => b.CreateIndex - a.CreateIndex), { caption: 'Evaluations waiting', empty: 'No evaluation is waiting.' }));
  };

  // The broker's and plan queue's gauges, from the agent's metrics (the
  // leader's are the ones that move: the broker lives there).
  const GAUGES = [
    ['broker.total_ready', 'ready', 'evaluations waiting for a worker'],
    ['broker.total_unacked', 'being scheduled', 'handed to a worker, not yet acknowledged'],
    ['broker.total_pending', 'pending', 'behind another evaluation of the same job'],
    ['broker.total_waiting', 'delayed', 'waiting for their wait time'],
    ['blocked_evals.total_blocked', 'blocked', 'waiting for resources'],
    ['plan.queue_depth', 'plans queued', 'waiting for the plan applier'],
  ];
  const refreshQueues = async () => {
    const m = await getJSON('/v1/metrics', {}, ctx.signal);
    const gauges = m.Gauges || [];
    lastGauges = gauges;
    drawByType();
    const value = (suffix) => gauges.find((g) => g.Name.endsWith(`.nomad.${suffix}`))?.Value;
    if (!GAUGES.some(([k]) => value(k) !== undefined)) { replace(queues); return; }
    replace(queues, h('h3', {}, 'Queues now'),
      h('ul', { class: 'stats' }, GAUGES.map(([k, label, help]) => h('li', { title: help },
        h('strong', {}, value(k) ?? '—'), h('span', {}, label)))),
      h('p', { class: 'help' }, 'From this agent\'s metrics, every few seconds; the broker and the plan queue live on the leader.'));
  };

  const onErr = (err) => replace(errs, errorBox(err));
  // A client-only agent has no pool of its own (400): no size form.
  await Promise.all([refreshBroker(), wv.refresh(), refreshPool().catch(() => replace(pool))]).catch(() => {});
  watch('/v1/operator/scheduler/configuration', {}, ctx.signal, (res) => drawBroker(res.SchedulerConfig), onErr);
  watch('/v1/evaluations', { namespace: '*' }, ctx.signal, drawQueue, onErr);
  // The workers answer no blocking query: poll them.
  poll(2000, ctx.signal, wv.refresh, () => {});
  poll(2000, ctx.signal, refreshQueues, () => replace(queues));
}
