// Job diffs (plan previews, version history) as nested lists.
import { h } from './dom.js';

function fieldLine(f) {
  const mark = { Added: '+', Deleted: '-', Edited: '~' }[f.Type] || ' ';
  let v = '';
  if (f.Type === 'Edited') v = `${JSON.stringify(f.Old)} → ${JSON.stringify(f.New)}`;
  else if (f.Type === 'Added') v = JSON.stringify(f.New);
  else if (f.Type === 'Deleted') v = JSON.stringify(f.Old);
  return h('li', { class: `d-${(f.Type || 'none').toLowerCase()}` },
    h('span', { class: 'mark', 'aria-hidden': 'true' }, mark), h('span', { class: 'sr-only' }, `${f.Type}: `),
    h('code', {}, f.Name), ' ', v,
    (f.Annotations || []).length ? h('span', { class: 'note' }, ` (${f.Annotations.join(', ')})`) : null);
}

function objectNode(o, kind) {
  if (!o || o.Type === 'None') return null;
  const fields = (o.Fields || []).filter((f) => f.Type !== 'None').map(fieldLine);
  const objs = (o.Objects || []).map((x) => objectNode(x, '')).filter(Boolean);
  const tasks = (o.Tasks || []).map((t) => objectNode(t, 'Task ')).filter(Boolean);
  const updates = o.Updates ? Object.entries(o.Updates).map(([k, n]) => `${n} ${k}`).join(', ') : '';
  return h('li', { class: `d-${(o.Type || '').toLowerCase()}` },
    h('span', { class: 'mark', 'aria-hidden': 'true' }, { Added: '+', Deleted: '-', Edited: '~' }[o.Type] || ' '),
    h('span', { class: 'sr-only' }, `${o.Type}: `),
    h('strong', {}, `${kind}${o.Name || o.ID || ''}`), updates ? h('span', { class: 'note' }, ` (${updates})`) : null,
    (fields.length || objs.length || tasks.length) ? h('ul', {}, fields, objs, tasks) : null);
}

// diffView renders a job diff, or says that nothing changes.
export function diffView(diff) {
  if (!diff || diff.Type === 'None') return h('p', { class: 'empty' }, 'No change to the job.');
  const top = [
    ...(diff.Fields || []).filter((f) => f.Type !== 'None').map(fieldLine),
    ...(diff.Objects || []).map((o) => objectNode(o, '')).filter(Boolean),
    ...(diff.TaskGroups || []).map((g) => objectNode(g, 'Group ')).filter(Boolean),
  ];
  return h('ul', { class: 'diff' }, h('li', { class: `d-${(diff.Type || '').toLowerCase()}` },
    h('strong', {}, `${diff.Type} job ${diff.ID}`), top.length ? h('ul', {}, top) : null));
}
