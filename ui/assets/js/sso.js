// Signing in through an OIDC auth method: the UI begins the login (the
// provider's URL, which the browser goes to) and completes it when the
// provider sends the browser back to /ui/settings/tokens with a state and
// a code. Between the two, the method and the nonce wait in this tab's
// session storage; the nonce proves to the servers that the tab that
// began the login is the one completing it.
import { getJSON, send } from './api.js';

const KEY = 'nomad.oidc';

// redirectURI is where the provider sends the browser back: the auth
// method must list it in AllowedRedirectURIs.
export const redirectURI = () => `${location.origin}/ui/settings/tokens`;

// oidcMethods are the cluster's OIDC auth methods, default first; none
// when ACLs are off or the list cannot be read.
export async function oidcMethods(signal) {
  try {
    const methods = await getJSON('/v1/acl/auth-methods', null, signal);
    return (methods || []).filter((m) => m.Type === 'OIDC').sort((a, b) => (b.Default ? 1 : 0) - (a.Default ? 1 : 0));
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    return [];
  }
}

function newNonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// begin asks for the provider's URL and sends the browser there.
export async function begin(method) {
  const nonce = newNonce();
  const resp = await send('POST', '/v1/acl/oidc/auth-url', { AuthMethodName: method, RedirectURI: redirectURI(), ClientNonce: nonce });
  sessionStorage.setItem(KEY, JSON.stringify({ method, nonce }));
  location.assign(resp.AuthURL);
}

// callback reads the provider's answer from the address, if this page
// load is one, and clears it from the address: {state, code} or {error};
// null when the page was not reached from the provider.
export function callback() {
  const q = new URLSearchParams(location.search);
  if (!q.has('state') && !q.has('error')) return null;
  history.replaceState(null, '', location.pathname);
  if (q.has('error')) return { error: [q.get('error'), q.get('error_description')].filter(Boolean).join(': ') };
  return { state: q.get('state'), code: q.get('code') };
}

// complete trades the provider's code for a Nomad token, with the method
// and nonce the login began with.
export async function complete(cb) {
  const pending = JSON.parse(sessionStorage.getItem(KEY) || 'null');
  sessionStorage.removeItem(KEY);
  if (!pending) throw new Error('No OIDC login was begun in this tab: sign in again.');
  return send('POST', '/v1/acl/oidc/complete-auth', {
    AuthMethodName: pending.method, ClientNonce: pending.nonce, State: cb.state, Code: cb.code, RedirectURI: redirectURI(),
  });
}
