// The ACL token the UI sends with every request: kept in this browser's
// local storage (as Nomad's UI does), never in a URL or a log. Pages and
// the header learn of a change through the 'nomad-token' event.

const KEY = 'nomad.token';

export function secret() {
  return localStorage.getItem(KEY) || '';
}

// signIn stores a secret that was checked against /v1/acl/token/self.
export function signIn(secretID) {
  localStorage.setItem(KEY, secretID);
  window.dispatchEvent(new Event('nomad-token'));
}

export function signOut() {
  localStorage.removeItem(KEY);
  window.dispatchEvent(new Event('nomad-token'));
}
