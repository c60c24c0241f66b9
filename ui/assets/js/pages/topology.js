// /ui/topology: the whole cluster as one picture. Every node is a box
// with a CPU and a memory bar, each filled by its allocations in their
// job's colour, grouped by datacenter and node pool. Hovering or
// focusing an allocation shows its job.
//
// The allocations come from /v1/nodes/usage?allocs=true: each live
// allocation's ID, job, group, CPU and memory, summed per node by the
// servers, instead of every allocation in full.
import { h, replace, badge, nodeHref, allocHref, errorBox, hue, mhz, mib, nodeCapacity, shortId } from '../dom.js';
import { watch } from '../api.js';

// dims maps a bar to the field of an allocation's share.
const dims = { cpu: 'CPU', mem: 'MemoryMB' };

function segs(allocs, dim, cap, colour) {
  return allocs.map((a) => {
    const pct = cap > 0 ? (a[dims[dim]] / cap) * 100 : 0;
    const label = `${a.JobID} / ${a.TaskGroup} (allocation ${shortId(a.ID)}): ${mhz(a.CPU)} CPU, ${mib(a.MemoryMB)} memory`;
    return h('a', {
      class: 'tseg', href: allocHref(a.ID), 'aria-label': label, 'data-job': a.JobID, 'data-tip': label,
      tabindex: dim === 'cpu' ? '0' : '-1', style: { width: `${pct}%`, backgroundColor: colour(a.JobID) },
    });
  });
}

function nodeBox(n, allocs, colour) {
  const cap = nodeCapacity(n);
  const used = allocs.reduce((s, a) => { s.cpu += a.CPU; s.mem += a.MemoryMB; return s; }, { cpu: 0, mem: 0 });
  const pct = (x, y) => (y > 0 ? Math.round((x / y) * 100) : 0);
  return h('article', { class: `tnode ${n.Status !== 'ready' ? 'down' : ''} ${n.SchedulingEligibility !== 'eligible' ? 'inelig' : ''}`, 'data-node': n.ID, 'aria-label': `Node ${n.Name}` },
    h('header', {}, h('a', { href: nodeHref(n.ID) }, n.Name), ' ', n.Status !== 'ready' ? badge(n.Status) : null,
      n.SchedulingEligibility !== 'eligible' ? badge('ineligible') : null),
    h('div', { class: 'trow' }, h('span', { class: 'tlabel' }, 'CPU'), h('div', { class: 'ttrack' }, segs(allocs, 'cpu', cap.cpu, colour)),
      h('span', { class: 'tpct' }, `${pct(used.cpu, cap.cpu)}%`)),
    h('div', { class: 'trow' }, h('span', { class: 'tlabel' }, 'Mem'), h('div', { class: 'ttrack' }, segs(allocs, 'mem', cap.mem, colour)),
      h('span', { class: 'tpct' }, `${pct(used.mem, cap.mem)}%`)),
    h('footer', {}, `${allocs.length} alloc${allocs.length === 1 ? '' : 's'} · ${mhz(cap.cpu)} · ${mib(cap.mem)}`));
}

export async function page(root, _params, ctx) {
  ctx.title('Topology');
  const summary = h('div', { class: 'tsummary', 'aria-live': 'polite' });
  const legend = h('div', { class: 'legend' });
  const pic = h('div', { id: 'topology' });
  const tip = h('div', { class: 'tip', role: 'tooltip', id: 'topo-tip', hidden: true });
  const errs = h('div');
  replace(root, h('div', { class: 'page-head' }, h('h1', {}, 'Topology')), errs, summary, legend, pic, tip);

  // One tooltip follows the pointer or the keyboard focus.
  const show = (e) => {
    const seg = e.target.closest?.('.tseg');
    if (!seg) { tip.hidden = true; return; }
    tip.textContent = seg.dataset.tip;
    tip.hidden = false;
    const r = seg.getBoundingClientRect();
    tip.style.left = `${Math.max(4, Math.min(window.innerWidth - 280, r.left + window.scrollX))}px`;
    tip.style.top = `${r.bottom + window.scrollY + 6}px`;
    for (const s of pic.querySelectorAll('.tseg.hl')) s.classList.remove('hl');
    for (const s of pic.querySelectorAll(`.tseg[data-job="${CSS.escape(seg.dataset.job)}"]`)) s.classList.add('hl');
  };
  const hide = () => { tip.hidden = true; for (const s of pic.querySelectorAll('.tseg.hl')) s.classList.remove('hl'); };
  pic.addEventListener('mouseover', show);
  pic.addEventListener('focusin', show);
  pic.addEventListener('mouseleave', hide);
  pic.addEventListener('focusout', hide);

  let nodes = [];
  const draw = (usage) => {
    const byNode = new Map(usage.map((u) => [u.NodeID, u.Allocs || []]));
    const tot = { cpu: 0, mem: 0, ucpu: 0, umem: 0, count: 0 };
    for (const n of nodes) { const c = nodeCapacity(n); tot.cpu += c.cpu; tot.mem += c.mem; }
    const jobSet = new Set();
    for (const u of usage) {
      tot.ucpu += u.CPU; tot.umem += u.MemoryMB; tot.count += u.AllocCount;
      for (const a of u.Allocs || []) jobSet.add(a.JobID);
    }
    replace(summary,
      h('span', {}, h('strong', {}, nodes.length), ' nodes'), h('span', {}, h('strong', {}, tot.count), ' running or pending allocations'),
      h('span', {}, 'CPU ', h('strong', {}, `${mhz(tot.ucpu)} / ${mhz(tot.cpu)}`)), h('span', {}, 'Memory ', h('strong', {}, `${mib(tot.umem)} / ${mib(tot.mem)}`)));
    const jobs = [...jobSet].sort();
    // Hues a golden angle apart keep neighbouring jobs distinct; past a
    // dozen jobs the lightness alternates too.
    const hues = new Map(jobs.map((j, i) => [j, `hsl(${Math.round(i * 137.508) % 360} 65% ${i % 2 ? 38 : 48}%)`]));
    const colour = (j) => hues.get(j) || `hsl(${hue(j)} 60% 45%)`;
    replace(legend, jobs.length ? h('ul', { 'aria-label': 'Jobs by colour' }, jobs.map((j) => h('li', {},
      h('span', { class: 'swatch', style: { backgroundColor: colour(j) } }), j))) : null);
    const dcs = new Map();
    for (const n of nodes) {
      if (!dcs.has(n.Datacenter)) dcs.set(n.Datacenter, new Map());
      const pools = dcs.get(n.Datacenter);
      if (!pools.has(n.NodePool)) pools.set(n.NodePool, []);
      pools.get(n.NodePool).push(n);
    }
    if (!nodes.length) { replace(pic, h('p', { class: 'empty' }, 'No client nodes have registered.')); return; }
    replace(pic, [...dcs.keys()].sort().map((dc) => h('section', { class: 'tdc', 'aria-label': `Datacenter ${dc}` },
      h('h2', {}, `Datacenter ${dc}`),
      [...dcs.get(dc).keys()].sort().map((pool) => h('div', { class: 'tpool' },
        h('h3', {}, `Pool ${pool}`),
        h('div', { class: 'tgrid' }, dcs.get(dc).get(pool).sort((a, b) => a.Name.localeCompare(b.Name)).map((n) => nodeBox(n, byNode.get(n.ID) || [], colour))))))));
  };
  const onErr = (err) => replace(errs, errorBox(err));
  // Nodes and their usage are followed apart; once both arrived, either
  // changing redraws.
  let usage = null;
  let haveNodes = false;
  watch('/v1/nodes', { resources: 'true' }, ctx.signal, (d) => { nodes = d; haveNodes = true; if (usage) draw(usage); }, onErr);
  await watch('/v1/nodes/usage', { allocs: 'true' }, ctx.signal, (list) => {
    usage = list;
    if (haveNodes) draw(usage);
    replace(errs);
  }, onErr);
}
