// /ui/servers: the Raft peers, the leader and the gossip members.
import { h, replace, table, badge, section, errorBox } from '../dom.js';
import { getJSON, poll } from '../api.js';

export async function page(root, _params, ctx) {
  ctx.title('Servers');
  const raft = h('div');
  const members = h('div');
  const errs = h('div');
  replace(root, h('div', { class: 'page-head' }, h('h1', {}, 'Servers')), errs, section('Raft peers', raft), section('Members', members));
  const refresh = async () => {
    const [cfg, leader, mem] = await Promise.all([
      getJSON('/v1/operator/raft/configuration', {}, ctx.signal),
      getJSON('/v1/status/leader', {}, ctx.signal).catch(() => ''),
      getJSON('/v1/agent/members', {}, ctx.signal).catch(() => ({ Members: [] })),
    ]);
    replace(raft, h('p', {}, 'Leader: ', h('strong', { id: 'leader' }, leader || 'none')),
      table([
        { label: 'Server', cell: (s) => s.Node },
        { label: 'Raft ID', cell: (s) => h('code', {}, s.ID) },
        { label: 'Address', cell: (s) => s.Address },
        { label: 'Role', cell: (s) => badge(s.Leader ? 'leader' : 'follower') },
        { label: 'Voter', cell: (s) => (s.Voter ? 'yes' : 'no') },
        { label: 'Raft protocol', cell: (s) => s.RaftProtocol },
      ], cfg.Servers || [], { caption: 'Raft peers' }));
    replace(members, table([
      { label: 'Name', cell: (m) => m.Name },
      { label: 'Address', cell: (m) => `${m.Addr}:${m.Port}` },
      { label: 'Status', cell: (m) => badge(m.Status) },
      { label: 'Datacenter', cell: (m) => m.Tags?.dc || '—' },
      { label: 'Region', cell: (m) => m.Tags?.region || '—' },
      { label: 'Build', cell: (m) => m.Tags?.build || '—' },
    ], (mem.Members || []).sort((a, b) => a.Name.localeCompare(b.Name)), { caption: 'Members', empty: 'This agent knows no server members (a client-only agent).' }));
    replace(errs);
  };
  await refresh();
  poll(5000, ctx.signal, refresh, (err) => replace(errs, errorBox(err)));
}
