// /ui/nodes and /ui/nodes/<id>: the client nodes, how full each is, and
// the operator's switches (eligibility, drain).
import { h, replace, table, badge, when, dl, section, shortId, nodeHref, errorBox, action, meter, mhz, mib, allocResources, nodeCapacity, liveAlloc } from '../dom.js';
import { getJSON, send, watch } from '../api.js';
import { allocTable } from './job.js';

// usage sums the resources of the live allocations per node.
export function usageByNode(allocs) {
  const m = new Map();
  for (const a of allocs) {
    if (!liveAlloc(a)) continue;
    const u = m.get(a.NodeID) || { cpu: 0, mem: 0, disk: 0, count: 0 };
    const r = allocResources(a);
    u.cpu += r.cpu; u.mem += r.mem; u.disk += r.disk; u.count++;
    m.set(a.NodeID, u);
  }
  return m;
}

// PAGE is how many nodes the list shows at first, and adds at a time.
const PAGE = 100;

function drainText(n) {
  if (n.DrainStrategy) return 'draining';
  return n.Drain ? 'draining' : 'no';
}

export async function list(root, _params, ctx) {
  ctx.title('Nodes');
  const q = ctx.query;
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter nodes', onsubmit: (e) => e.preventDefault() },
    h('div', { class: 'field grow' }, h('label', { for: 'n-search' }, 'Search'),
      h('input', { id: 'n-search', name: 'search', type: 'search', placeholder: 'Name, ID, address or class', value: q.get('search') || '', autocomplete: 'off' })),
    h('div', { class: 'field' }, h('label', { for: 'n-status' }, 'Status'),
      h('select', { id: 'n-status', name: 'status' }, ['', 'ready', 'initializing', 'down', 'disconnected'].map((s) => h('option', { value: s, selected: s === (q.get('status') || '') }, s || 'Any')))),
    h('div', { class: 'field' }, h('label', { for: 'n-elig' }, 'Eligibility'),
      h('select', { id: 'n-elig', name: 'eligibility' }, ['', 'eligible', 'ineligible'].map((s) => h('option', { value: s, selected: s === (q.get('eligibility') || '') }, s || 'Any')))));
  const count = h('p', { class: 'count', 'aria-live': 'polite' });
  const body = h('div');
  replace(root, h('div', { class: 'page-head' }, h('h1', {}, 'Nodes'), h('a', { class: 'button', href: '/ui/topology' }, 'Topology')), form, count, body);
  let nodes = [];
  let usage = new Map();
  // Rows shown: a page at a time. A thousand rows cost the browser over a
  // second to lay out, and no one reads them all: the search and filters
  // find a node, the topology shows the whole cluster.
  let shown = PAGE;
  let lastFilter = '';
  const more = h('div', { class: 'actions more' });
  const draw = () => {
    const f = Object.fromEntries(new FormData(form));
    const sp = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
    history.replaceState(null, '', location.pathname + (sp.toString() ? `?${sp}` : ''));
    const term = (f.search || '').toLowerCase();
    const rows = nodes.filter((n) => (!term || [n.Name, n.ID, n.Address, n.NodeClass].some((x) => (x || '').toLowerCase().includes(term))) &&
      (!f.status || n.Status === f.status) && (!f.eligibility || n.SchedulingEligibility === f.eligibility));
    if (location.search !== lastFilter) { lastFilter = location.search; shown = PAGE; }
    const page = rows.slice(0, shown);
    count.textContent = `${rows.length} of ${nodes.length} nodes${page.length < rows.length ? `, the first ${page.length} shown` : ''}`;
    const left = rows.length - page.length;
    replace(more, left > 0 ? [
      h('button', { type: 'button', id: 'nodes-more', onclick: () => { shown += PAGE; draw(); } }, `Show ${Math.min(PAGE, left)} more`),
      h('button', { type: 'button', id: 'nodes-all', onclick: () => { shown = rows.length; draw(); } }, `Show all ${rows.length}`),
    ] : null);
    replace(body, table([
      { label: 'Node', cell: (n) => h('a', { href: nodeHref(n.ID) }, n.Name) },
      { label: 'ID', cell: (n) => h('code', { title: n.ID }, shortId(n.ID)) },
      { label: 'Status', cell: (n) => badge(n.Status) },
      { label: 'Datacenter', cell: (n) => n.Datacenter },
      { label: 'Pool', cell: (n) => n.NodePool },
      { label: 'Class', cell: (n) => n.NodeClass || '—' },
      { label: 'Eligibility', cell: (n) => badge(n.SchedulingEligibility) },
      { label: 'Drain', cell: (n) => drainText(n) },
      { label: 'Allocs', cell: (n) => usage.get(n.ID)?.count || 0, class: 'num' },
      { label: 'CPU', cell: (n) => meter('CPU', usage.get(n.ID)?.cpu || 0, nodeCapacity(n).cpu, mhz) },
      { label: 'Memory', cell: (n) => meter('Memory', usage.get(n.ID)?.mem || 0, nodeCapacity(n).mem, mib) },
      { label: 'Address', cell: (n) => n.Address },
    ], page, { caption: 'Nodes', empty: nodes.length ? 'No node matches the filters.' : 'No client nodes have registered.' }), more);
  };
  form.addEventListener('input', draw);
  const onErr = (err) => replace(body, errorBox(err));
  // The node list blocks on the nodes; what their allocations reserve
  // (the fill bars) is followed alongside, summed by the servers
  // (/v1/nodes/usage) rather than from every allocation.
  // The first drawing waits for both: a thousand rows are drawn once,
  // not once bare and again with their bars.
  let seen = 0;
  const both = (first) => { seen |= first; if (seen === 3) draw(); };
  watch('/v1/nodes', { resources: 'true' }, ctx.signal, (data) => { nodes = data.sort((a, b) => a.Name.localeCompare(b.Name)); both(1); }, onErr);
  await watch('/v1/nodes/usage', {}, ctx.signal, (data) => { usage = usageFromSummary(data); both(2); }, onErr);
}

// usageFromSummary maps /v1/nodes/usage to the shape of usageByNode.
export function usageFromSummary(list) {
  return new Map(list.map((u) => [u.NodeID, { cpu: u.CPU, mem: u.MemoryMB, disk: u.DiskMB, count: u.AllocCount }]));
}

export async function page(root, params, ctx) {
  const id = params[0];
  const path = `/v1/node/${id}`;
  const head = h('div', { class: 'page-head' });
  const facts = h('div');
  const fill = h('div', { class: 'fill' });
  const controls = h('div');
  const allocsBox = h('div');
  const attrs = h('div');
  const errs = h('div');
  let node = null;
  let allocs = [];
  replace(root, h('p', { class: 'crumbs' }, h('a', { href: '/ui/nodes' }, 'Nodes')), head, errs, facts,
    section('How full', fill), section('Scheduling', controls), section('Allocations', allocsBox), section('Attributes and drivers', attrs));

  const drawUsage = () => {
    const cap = nodeCapacity(node);
    const u = usageByNode(allocs).get(node.ID) || { cpu: 0, mem: 0, disk: 0 };
    replace(fill, meter('CPU', u.cpu, cap.cpu, mhz), meter('Memory', u.mem, cap.mem, mib), meter('Disk', u.disk, cap.disk, mib),
      h('p', { class: 'help' }, 'Reserved by the allocations placed on the node, out of what the node offers (its resources minus what it reserves for itself).'));
    replace(allocsBox, allocTable(allocs, { node: false, job: true }));
  };
  let eligKey = '';
  let drainKey = null;
  const eligBox = h('div');
  const drainBox = h('div');
  replace(controls, eligBox, drainBox);
  const drawNode = () => {
    ctx.title(`Node ${node.Name}`);
    replace(head, h('h1', {}, node.Name, ' ', badge(node.Status)));
    replace(facts, dl([
      ['ID', h('code', {}, node.ID)], ['Datacenter', node.Datacenter], ['Node pool', node.NodePool], ['Class', node.NodeClass || '—'],
      ['Address', node.HTTPAddr || node.Address], ['Version', node.Attributes?.['nomad.version'] || node.Version || '—'],
      ['Eligibility', badge(node.SchedulingEligibility)],
      ['Drain', node.DrainStrategy ? `draining${node.DrainStrategy.ForceDeadline && !node.DrainStrategy.ForceDeadline.startsWith('0001') ? `, deadline ${new Date(node.DrainStrategy.ForceDeadline).toLocaleString()}` : ''}${node.DrainStrategy.IgnoreSystemJobs ? ', system jobs stay' : ''}` : 'no'],
      ['Status description', node.StatusDescription || '—'],
    ]));
    // The two switches are redrawn apart, each when its own state
    // changes, so that toggling one leaves the other's input alone.
    const eligible = node.SchedulingEligibility === 'eligible';
    if (node.SchedulingEligibility !== eligKey) {
      eligKey = node.SchedulingEligibility;
      replace(eligBox, h('div', { class: 'actions' },
        action(eligible ? 'Mark ineligible' : 'Mark eligible', async () => {
          await send('POST', `${path}/eligibility`, { NodeID: id, Eligibility: eligible ? 'ineligible' : 'eligible' });
          return eligible ? 'Node marked ineligible: no new placements' : 'Node marked eligible';
        }, { id: 'toggle-eligibility' })));
    }
    if (!!node.DrainStrategy !== drainKey) {
      drainKey = !!node.DrainStrategy;
      const deadline = h('input', { id: 'drain-deadline', type: 'text', value: '1h', class: 'narrow', 'aria-describedby': 'deadline-help' });
      const ignoreSys = h('input', { id: 'drain-ignore-system', type: 'checkbox' });
      replace(drainBox,
        node.DrainStrategy
          ? h('div', { class: 'actions' }, action('Stop draining', async () => {
            await send('POST', `${path}/drain`, { NodeID: id, DrainSpec: null, MarkEligible: false });
            return 'Drain stopped (the node stays ineligible until marked eligible)';
          }, { id: 'stop-drain' }))
          : h('form', { class: 'filters', onsubmit: async (e) => {
            e.preventDefault();
            const ms = parseDuration(deadline.value);
            if (ms === null) { errs.replaceChildren(errorBox(new Error('deadline: a duration such as 30m, 1h or 0 (no deadline)'))); return; }
            try {
              await send('POST', `${path}/drain`, { NodeID: id, DrainSpec: { Deadline: ms * 1e6, IgnoreSystemJobs: ignoreSys.checked }, MarkEligible: false });
              replace(errs);
            } catch (err) { errs.replaceChildren(errorBox(err)); }
          } },
          h('div', { class: 'field' }, h('label', { for: 'drain-deadline' }, 'Drain deadline'), deadline,
            h('span', { id: 'deadline-help', class: 'help' }, 'Allocations still running then are stopped. 0: no deadline.')),
          h('div', { class: 'field check' }, ignoreSys, h('label', { for: 'drain-ignore-system' }, 'Leave system jobs running')),
          h('div', { class: 'field' }, h('button', { type: 'submit', id: 'drain-node' }, 'Drain node'))));
    }
    const drivers = Object.entries(node.Drivers || {}).sort();
    replace(attrs,
      table([
        { label: 'Driver', cell: ([d]) => d },
        { label: 'Health', cell: ([, i]) => badge(i.Healthy ? 'healthy' : (i.Detected ? 'unhealthy' : 'undetected')) },
        { label: 'Detail', cell: ([, i]) => i.HealthDescription || '' },
      ], drivers, { caption: 'Drivers', empty: 'No drivers.' }),
      h('details', {}, h('summary', {}, `Attributes (${Object.keys(node.Attributes || {}).length})`),
        dl(Object.entries(node.Attributes || {}).sort().map(([k, v]) => [k, v]), 'facts attrs')),
      Object.keys(node.Meta || {}).length ? h('details', {}, h('summary', {}, 'Meta'), dl(Object.entries(node.Meta).sort(), 'facts attrs')) : null);
  };
  // Node and allocations both first, so that nothing shifts under the
  // pointer when the second arrives.
  [node, allocs] = await Promise.all([getJSON(path, {}, ctx.signal), getJSON(`${path}/allocations`, {}, ctx.signal)]);
  allocs.sort((a, b) => b.CreateIndex - a.CreateIndex);
  drawNode();
  drawUsage();
  const onErr = (err) => replace(errs, errorBox(err));
  watch(path, {}, ctx.signal, (n) => { node = n; drawNode(); drawUsage(); }, onErr);
  watch(`${path}/allocations`, {}, ctx.signal, (list) => { allocs = list.sort((a, b) => b.CreateIndex - a.CreateIndex); drawUsage(); }, onErr);
}

// parseDuration reads "90s", "30m", "1h30m" or "0" to milliseconds.
export function parseDuration(s) {
  s = s.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let seen = '';
  for (const m of s.matchAll(re)) {
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]];
    seen += m[0];
  }
  return seen === s && seen ? total : null;
}
