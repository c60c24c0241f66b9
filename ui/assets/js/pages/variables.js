// /ui/variables: the variables the token may list, by namespace and
// path; /ui/variables/<path>@<namespace>: one variable's items (hidden
// until shown), edited and deleted with a check-and-set on the index the
// page read, so that a change made elsewhere meanwhile is not overwritten.
import { h, replace, table, when, dl, section, errorBox, toast } from '../dom.js';
import { getJSON, send, watch, ApiError } from '../api.js';

export const varHref = (path, ns) => `/ui/variables/${path.split('/').map(encodeURIComponent).join('/')}@${encodeURIComponent(ns || 'default')}`;

// splitVarParam reads "<path>@<namespace>"; a path may itself hold '@'
// only before the last one.
function splitVarParam(p) {
  const at = p.lastIndexOf('@');
  return at < 0 ? [p, 'default'] : [p.slice(0, at), p.slice(at + 1)];
}

export async function list(root, _params, ctx) {
  ctx.title('Variables');
  const q = ctx.query;
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter variables', onsubmit: (e) => e.preventDefault() },
    h('div', { class: 'field grow' }, h('label', { for: 'v-prefix' }, 'Path prefix'),
      h('input', { id: 'v-prefix', name: 'prefix', type: 'search', placeholder: 'nomad/jobs/', value: q.get('prefix') || '', autocomplete: 'off' })));
  const count = h('p', { class: 'count', 'aria-live': 'polite' });
  const body = h('div', { id: 'vars-table' });
  replace(root, h('div', { class: 'page-head' }, h('h1', {}, 'Variables'),
    h('a', { class: 'button primary', href: '/ui/variables/new' }, 'New variable')), form, count, body);
  let vars = [];
  const draw = () => {
    const prefix = form.elements.prefix.value;
    history.replaceState(null, '', location.pathname + (prefix ? `?prefix=${encodeURIComponent(prefix)}` : ''));
    const rows = vars.filter((v) => v.Path.startsWith(prefix));
    count.textContent = `${rows.length} of ${vars.length} variables`;
    replace(body, table([
      { label: 'Path', cell: (v) => h('a', { href: varHref(v.Path, v.Namespace) }, v.Path) },
      { label: 'Namespace', cell: (v) => v.Namespace },
      { label: 'Locked', cell: (v) => (v.Lock ? 'yes' : 'no') },
      { label: 'Modified', cell: (v) => when(v.ModifyTime) },
    ], rows, { caption: 'Variables', empty: vars.length ? 'No variable matches.' : 'No variables yet, or none this token may list.' }));
  };
  form.addEventListener('input', draw);
  await watch('/v1/vars', { namespace: '*' }, ctx.signal, (data) => {
    vars = (data || []).sort((a, b) => a.Namespace.localeCompare(b.Namespace) || a.Path.localeCompare(b.Path));
    draw();
  }, (err) => replace(body, errorBox(err)));
}

// itemsEditor edits a variable's items as key/value rows.
function itemsEditor(items) {
  const rows = h('div', { class: 'var-items', id: 'var-items' });
  const addRow = (k = '', v = '') => {
    const n = rows.children.length;
    const row = h('div', { class: 'var-item' },
      h('label', { class: 'sr-only', for: `var-key-${n}` }, 'Key'),
      h('input', { id: `var-key-${n}`, class: 'var-key', value: k, placeholder: 'key', autocomplete: 'off', spellcheck: 'false' }),
      h('label', { class: 'sr-only', for: `var-value-${n}` }, 'Value'),
      h('input', { id: `var-value-${n}`, class: 'var-value', type: 'password', value: v, placeholder: 'value', autocomplete: 'off', spellcheck: 'false' }),
      h('button', { type: 'button', class: 'small', onclick: () => row.remove() }, 'Remove'));
    rows.append(row);
  };
  for (const [k, v] of Object.entries(items)) addRow(k, v);
  if (!rows.children.length) addRow();
  const read = () => {
    const out = {};
    for (const row of rows.children) {
      const k = row.querySelector('.var-key').value.trim();
      if (k) out[k] = row.querySelector('.var-value').value;
    }
    return out;
  };
  const reveal = (on) => rows.querySelectorAll('.var-value').forEach((el) => { el.type = on ? 'text' : 'password'; });
  return { el: rows, addRow, read, reveal };
}

export async function page(root, params, ctx) {
  const isNew = params[0] === 'new';
  const [path, ns] = isNew ? ['', ctx.query.get('namespace') || 'default'] : splitVarParam(params[0]);
  ctx.title(isNew ? 'New variable' : `Variable ${path}`);
  const apiPath = (p) => `/v1/var/${p.split('/').map(encodeURIComponent).join('/')}`;
  let current = { Items: {}, ModifyIndex: 0 };
  if (!isNew) {
    try {
      current = await getJSON(apiPath(path), { namespace: ns }, ctx.signal);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        replace(root, h('h1', {}, `Variable ${path} not found`), h('p', {}, `No variable at ${path} in namespace ${ns}. `, h('a', { href: '/ui/variables' }, 'All variables')));
        return;
      }
      throw err;
    }
  }
  const editor = itemsEditor(current.Items || {});
  const pathInput = h('input', { id: 'var-path', value: path, required: true, placeholder: 'nomad/jobs/example', autocomplete: 'off', spellcheck: 'false', readonly: !isNew || undefined });
  const nsInput = h('input', { id: 'var-namespace', value: ns, required: true, autocomplete: 'off', readonly: !isNew || undefined });
  const status = h('div', { id: 'var-status', 'aria-live': 'polite' });
  const show = h('input', { id: 'var-reveal', type: 'checkbox', onchange: (e) => editor.reveal(e.target.checked) });

  const save = async (e) => {
    e.preventDefault();
    const p = pathInput.value.trim();
    const n = nsInput.value.trim() || 'default';
    const items = editor.read();
    try {
      // cas=0 creates only if absent; otherwise the index the page read.
      const saved = await send('PUT', apiPath(p), { Namespace: n, Path: p, Items: items }, { namespace: n, cas: String(current.ModifyIndex || 0) });
      toast(`Variable ${p} saved`, 'ok');
      if (isNew) {
        history.replaceState(null, '', varHref(p, n));
      }
      current = saved || current;
      replace(status, h('p', {}, 'Saved at index ', String(current.ModifyIndex), '.'));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        replace(status, h('div', { class: 'error', role: 'alert' }, 'Someone changed this variable since this page read it. Reload the page to see their change before saving yours.'));
        return;
      }
      replace(status, errorBox(err));
    }
  };
  const remove = async () => {
    try {
      await send('DELETE', apiPath(path), undefined, { namespace: ns, cas: String(current.ModifyIndex) });
      toast(`Variable ${path} deleted`, 'ok');
      history.pushState(null, '', '/ui/variables');
      window.dispatchEvent(new PopStateEvent('popstate'));
    } catch (err) {
      replace(status, err instanceof ApiError && err.status === 409
        ? h('div', { class: 'error', role: 'alert' }, 'Someone changed this variable since this page read it; reload before deleting.')
        : errorBox(err));
    }
  };

  const form = h('form', { id: 'var-form', onsubmit: save, 'aria-label': 'Variable' },
    h('div', { class: 'filters' },
      h('div', { class: 'field grow' }, h('label', { for: 'var-path' }, 'Path'), pathInput),
      h('div', { class: 'field' }, h('label', { for: 'var-namespace' }, 'Namespace'), nsInput)),
    section('Items', editor.el,
      h('p', {}, h('button', { type: 'button', class: 'small', id: 'var-add', onclick: () => editor.addRow() }, 'Add item'), ' ',
        h('span', { class: 'field check' }, show, h('label', { for: 'var-reveal' }, 'Show values')))),
    h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'var-save' }, isNew ? 'Create' : 'Save'), ' ',
      isNew ? null : h('button', { type: 'button', id: 'var-delete', onclick: remove }, 'Delete')));
  replace(root,
    h('p', { class: 'crumbs' }, h('a', { href: '/ui/variables' }, 'Variables'), ' / ', ns),
    h('h1', {}, isNew ? 'New variable' : path),
    isNew ? null : dl([['Namespace', ns], ['Created', when(current.CreateTime)], ['Modified', when(current.ModifyTime)],
      ['Index', String(current.ModifyIndex)], ['Lock', current.Lock ? 'held' : 'none']]),
    form, status);
}
