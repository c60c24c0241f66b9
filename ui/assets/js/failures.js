// Placement failures: why the scheduler could not place a task group,
// from an evaluation's (or a plan's) FailedTGAllocs metrics.
import { h, table, nodeHref } from './dom.js';

// lacked lists what a node lacked: "200 MHz CPU, 512 MB memory".
function lacked(c) {
  return [c.CPU > 0 ? `${c.CPU} MHz CPU` : '', c.MemoryMB > 0 ? `${c.MemoryMB} MB memory` : '', c.DiskMB > 0 ? `${c.DiskMB} MB disk` : '']
    .filter(Boolean).join(', ');
}

// closest shows the nodes that came closest to taking the placement.
function closest(list) {
  if (!(list || []).length) return null;
  return h('div', { class: 'why closest' }, h('h4', {}, 'Nodes that came closest'),
    h('ul', {}, list.map((c) => h('li', {}, h('a', { href: nodeHref(c.NodeID) }, c.NodeName || c.NodeID.slice(0, 8)), ` lacked ${lacked(c)}`))));
}

function counts(title, m, what) {
  const rows = Object.entries(m || {}).sort((a, b) => b[1] - a[1]);
  if (!rows.length) return null;
  return h('div', { class: 'why' }, h('h4', {}, title),
    h('ul', {}, rows.map(([k, n]) => h('li', {}, h('code', {}, k), ` — ${n} ${what}${n === 1 ? '' : 's'}`))));
}

// reasonText is the one-line summary of one group's failure.
export function reasonText(m) {
  const parts = [];
  const dims = Object.entries(m.DimensionExhausted || {});
  if (dims.length) parts.push(`resources exhausted: ${dims.map(([d, n]) => `${d} on ${n} node${n === 1 ? '' : 's'}`).join(', ')}`);
  const cons = Object.entries(m.ConstraintFiltered || {});
  if (cons.length) parts.push(`constraint not met: ${cons.map(([c, n]) => `${c} (${n})`).join(', ')}`);
  if (m.NodesEvaluated === 0 && !cons.length) {
    const avail = Object.values(m.NodesAvailable || {}).reduce((s, n) => s + n, 0);
    parts.push(avail ? 'no node was evaluated' : 'no node is available in the job\'s datacenters and pool');
  }
  const quota = m.QuotaExhausted || [];
  if (quota.length) parts.push(`quota exhausted: ${quota.join(', ')}`);
  return parts.join('; ') || 'no node could take it';
}

// failures renders FailedTGAllocs: for each group, how many allocations
// were not placed and why, from the scheduler's metrics.
export function failures(failed) {
  const groups = Object.entries(failed || {});
  if (!groups.length) return null;
  return h('div', { class: 'failures' }, groups.map(([tg, m]) => {
    const unplaced = (m.CoalescedFailures || 0) + 1;
    return h('article', { class: 'failure', 'aria-label': `Placement failure of group ${tg}` },
      h('h3', {}, `Group “${tg}”: ${unplaced} allocation${unplaced === 1 ? '' : 's'} not placed`),
      h('p', { class: 'reason' }, reasonText(m)),
      table([
        { label: 'Nodes in pool', cell: (x) => x.NodesInPool ?? '—', class: 'num' },
        { label: 'Evaluated', cell: (x) => x.NodesEvaluated, class: 'num' },
        { label: 'Filtered', cell: (x) => x.NodesFiltered, class: 'num' },
        { label: 'Exhausted', cell: (x) => x.NodesExhausted, class: 'num' },
        { label: 'Available by datacenter', cell: (x) => Object.entries(x.NodesAvailable || {}).map(([dc, n]) => `${dc}: ${n}`).join(', ') || '—' },
      ], [m], { rowHeader: false, caption: `Node counts for group ${tg}` }),
      closest(m.ClosestNodes),
      counts('Exhausted dimension', m.DimensionExhausted, 'node'),
      counts('Filtered by constraint', m.ConstraintFiltered, 'node'),
      counts('Filtered by class', m.ClassFiltered, 'node'),
      counts('Exhausted by class', m.ClassExhausted, 'node'),
      (m.QuotaExhausted || []).length ? h('p', {}, 'Quota exhausted: ', m.QuotaExhausted.join(', ')) : null);
  }));
}
