// The app: a client-side router over the pages, one page at a time. A
// page is an async function (root, params, ctx) that fills root and
// follows its data until ctx.signal aborts (the user went elsewhere).
import { h, replace, errorBox } from './dom.js';
import { getJSON } from './api.js';
import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as run from './pages/run.js';
import * as alloc from './pages/alloc.js';
import * as nodes from './pages/nodes.js';
import * as topology from './pages/topology.js';
import * as scheduler from './pages/scheduler.js';
import * as evals from './pages/evals.js';
import * as servers from './pages/servers.js';
import * as tokens from './pages/tokens.js';
import * as variables from './pages/variables.js';

const routes = [
  [/^\/ui\/?$/, null, () => navigate('/ui/jobs', true)],
  [/^\/ui\/jobs\/?$/, 'jobs', jobs.list],
  [/^\/ui\/jobs\/run\/?$/, 'jobs', run.page],
  [/^\/ui\/jobs\/(.+?)\/?$/, 'jobs', job.page],
  [/^\/ui\/allocations\/([^/]+)\/?$/, 'jobs', alloc.page],
  [/^\/ui\/nodes\/?$/, 'nodes', nodes.list],
  [/^\/ui\/nodes\/([^/]+)\/?$/, 'nodes', nodes.page],
  // Nomad's UI calls client nodes "clients"; its CLI prints these links.
  [/^\/ui\/clients\/?$/, 'nodes', nodes.list],
  [/^\/ui\/clients\/([^/]+)\/?$/, 'nodes', nodes.page],
  [/^\/ui\/topology\/?$/, 'topology', topology.page],
  [/^\/ui\/scheduler\/?$/, 'scheduler', scheduler.page],
  [/^\/ui\/evaluations\/?$/, 'evaluations', evals.list],
  [/^\/ui\/evaluations\/([^/]+)\/?$/, 'evaluations', evals.page],
  [/^\/ui\/servers\/?$/, 'servers', servers.page],
  [/^\/ui\/settings\/tokens\/?$/, 'tokens', tokens.page],
  [/^\/ui\/variables\/?$/, 'variables', variables.list],
  [/^\/ui\/variables\/(.+?)\/?$/, 'variables', variables.page],
];

let current = null;

export function navigate(path, replaceState) {
  if (replaceState) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

async function render() {
  current?.abort();
  const ctl = new AbortController();
  current = ctl;
  const main = document.getElementById('main');
  const path = location.pathname;
  const match = routes.find(([re]) => re.test(path));
  for (const a of document.querySelectorAll('header a[data-section]')) {
    if (match && a.dataset.section === match[1]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  replace(main, h('p', { class: 'loading' }, 'Loading…'));
  if (!match) {
    document.title = 'Not found · Nomad';
    replace(main, h('h1', { tabindex: '-1' }, 'Page not found'),
      h('p', {}, 'No page at ', h('code', {}, path), '. ', h('a', { href: '/ui/jobs' }, 'Go to the jobs.')));
    main.querySelector('h1').focus();
    return;
  }
  const params = path.match(match[0]).slice(1).map(decodeURIComponent);
  const ctx = {
    signal: ctl.signal,
    title(t) { document.title = `${t} · Nomad`; },
    query: new URLSearchParams(location.search),
  };
  try {
    await match[2](main, params, ctx);
  } catch (err) {
    if (ctl.signal.aborted || err.name === 'AbortError') return;
    replace(main, h('h1', { tabindex: '-1' }, 'Could not load this page'), errorBox(err));
  }
  // Move focus to the new page's heading so that keyboard and screen
  // reader users start there after a navigation.
  if (!ctl.signal.aborted && navigated) {
    const h1 = main.querySelector('h1');
    if (h1) { h1.setAttribute('tabindex', '-1'); h1.focus({ preventScroll: true }); }
  }
  navigated = true;
}
let navigated = false;

// Same-origin links under /ui/ are routed here, not reloaded.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || url.pathname.startsWith('/ui/assets/')) return;
  e.preventDefault();
  if (url.pathname + url.search === location.pathname + location.search) return;
  history.pushState(null, '', url.pathname + url.search + url.hash);
  render();
});
window.addEventListener('popstate', render);
// Leaving the UI (reload, another site) ends the page's blocking queries
// and streams at once: a browser keeps at most six connections to the
// agent, and held ones would stall whatever loads next.
window.addEventListener('pagehide', () => current?.abort());

async function agentInfo() {
  try {
    const self = await getJSON('/v1/agent/self');
    const m = self.member || {};
    const el = document.getElementById('agent-info');
    el.textContent = `${m.Name || ''} · ${self.config?.Region || m.Tags?.region || ''} · v${self.config?.Version?.Version || m.Tags?.build || ''}`;
  } catch { /* the header line is optional */ }
}

// The header's token link names the signed-in token; it follows
// sign-in and sign-out here and in other tabs.
async function tokenLink() {
  const el = document.getElementById('token-link');
  if (el) el.textContent = await tokens.label();
}
window.addEventListener('nomad-token', tokenLink);
window.addEventListener('storage', (e) => { if (e.key === 'nomad.token') { tokenLink(); render(); } });

agentInfo();
tokenLink();
render();
