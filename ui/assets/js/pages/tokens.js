// /ui/settings/tokens: sign in with an ACL token (its secret ID), or
// through one of the cluster's OIDC auth methods; see what the token is,
// sign out. The secret is checked with /v1/acl/token/self before it is
// kept; a wrong one is refused with the server's answer. The OIDC
// provider sends the browser back here to complete its login (sso.js).
import { h, replace, dl, errorBox, when } from '../dom.js';
import { getJSON } from '../api.js';
import { secret, signIn, signOut } from '../token.js';
import * as sso from '../sso.js';

// whoAmI asks the agent which token a secret is ("" for the anonymous
// one). It passes the secret explicitly: the stored one may be another.
async function whoAmI(secretID, signal) {
  const headers = secretID ? { 'X-Nomad-Token': secretID } : {};
  const resp = await fetch('/v1/acl/token/self', { headers, signal });
  const text = await resp.text();
  if (!resp.ok) {
    const err = new Error(text.trim() || resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return JSON.parse(text);
}

function tokenDetails(tok) {
  const names = (list, key) => (list || []).map((x) => (typeof x === 'string' ? x : x[key])).join(', ') || '—';
  return dl([
    ['Name', tok.Name || '—'],
    ['Type', tok.Type],
    ['Accessor ID', h('code', {}, tok.AccessorID)],
    ['Policies', tok.Type === 'management' ? 'all (management token)' : names(tok.Policies)],
    ['Roles', names(tok.Roles, 'Name')],
    ['Global', tok.Global ? 'yes' : 'no'],
    ['Expires', tok.ExpirationTime ? when(tok.ExpirationTime) : 'never'],
  ]);
}

export async function page(root, _params, ctx) {
  ctx.title('ACL token');
  const status = h('div', { id: 'token-status', 'aria-live': 'polite' });
  const input = h('input', { id: 'token-secret', name: 'secret', type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'Secret ID', required: true });
  const form = h('form', { class: 'filters', id: 'token-form', 'aria-label': 'Sign in with a token' },
    h('div', { class: 'field grow' }, h('label', { for: 'token-secret' }, 'Secret ID'), input),
    h('div', { class: 'field' }, h('button', { type: 'submit', class: 'primary', id: 'token-sign-in' }, 'Sign in')));
  const out = h('button', { type: 'button', id: 'token-sign-out' }, 'Sign out');
  const methods = h('div', { id: 'token-sso', class: 'actions' });
  replace(root, h('h1', {}, 'ACL token'),
    h('p', {}, 'With ACLs enabled, the UI sends this token with every request. It is kept in this browser only.'),
    status, form, methods);

  const show = async () => {
    try {
      const tok = await whoAmI(secret(), ctx.signal);
      if (tok.AccessorID === 'acls-disabled') {
        replace(status, h('p', { class: 'note' }, 'ACLs are disabled on this cluster: every request is allowed and no token is needed.'));
        return;
      }
      if (!secret()) {
        replace(status, h('p', {}, 'Not signed in: requests use the anonymous token.'));
        return;
      }
      replace(status, h('p', {}, 'Signed in as ', h('strong', {}, tok.Name || tok.AccessorID), '.'), tokenDetails(tok), out);
    } catch (err) {
      if (err.name === 'AbortError') return;
      // A stored token that no longer works: say so, keep the form.
      replace(status, errorBox(err), secret() ? out : null);
    }
  };
  out.addEventListener('click', () => { signOut(); show(); });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const value = input.value.trim();
    if (!value) return;
    try {
      const tok = await whoAmI(value, ctx.signal);
      signIn(value);
      input.value = '';
      replace(status, h('p', {}, 'Signed in as ', h('strong', {}, tok.Name || tok.AccessorID), '.'), tokenDetails(tok), out);
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(status, errorBox(err));
    }
  });
  const signedIn = (tok) => {
    signIn(tok.SecretID);
    replace(status, h('p', {}, 'Signed in as ', h('strong', {}, tok.Name || tok.AccessorID), '.'), tokenDetails(tok), out);
  };
  const cb = sso.callback();
  if (cb && cb.error) {
    replace(status, errorBox(new Error(`The OIDC provider refused the login: ${cb.error}`)));
  } else if (cb) {
    replace(status, h('p', {}, 'Completing the login…'));
    try {
      signedIn(await sso.complete(cb));
    } catch (err) {
      replace(status, errorBox(err));
    }
  } else {
    await show();
  }

  // A button per OIDC auth method; the provider brings the browser back.
  for (const m of await sso.oidcMethods(ctx.signal)) {
    const button = h('button', { type: 'button', class: 'sso-sign-in', 'data-method': m.Name }, `Sign in with ${m.Name}`);
    button.addEventListener('click', async () => {
      try {
        await sso.begin(m.Name);
      } catch (err) {
        replace(status, errorBox(err));
      }
    });
    methods.append(button);
  }
}

// label is the header's text for the current token.
export async function label() {
  if (!secret()) return 'Sign in';
  try {
    const tok = await getJSON('/v1/acl/token/self');
    return tok.Name || 'Signed in';
  } catch {
    return 'Token not valid';
  }
}
