// The exec terminal of the allocation page: a command run in one of
// the allocation's tasks over a websocket to
// /v1/client/allocation/<id>/exec, with the frames of Nomad's API (JSON
// text messages, data in base64), drawn by xterm.js (vendored, see
// assets/vendor/xterm/README.md). The terminal code loads only when an
// operator opens a session.
import { h, replace } from './dom.js';
import { secret } from './token.js';

const HEARTBEAT_MS = 10000;

const enc = new TextEncoder();

// b64 encodes bytes (or a string, as UTF-8) for a frame.
export function b64(data) {
  const bytes = typeof data === 'string' ? enc.encode(data) : data;
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

// unb64 decodes a frame's data to bytes.
export function unb64(s) {
  const bin = atob(s || '');
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// execURL is the websocket address of a session. With a token the
// agent expects it in the first frame (ws_handshake), since a browser
// cannot set headers on a websocket and a secret must not go in a URL.
export function execURL(allocID, task, command, tty, withToken) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const q = new URLSearchParams({ task, command: JSON.stringify(command), tty: String(tty) });
  if (withToken) q.set('ws_handshake', 'true');
  return `${proto}//${location.host}/v1/client/allocation/${encodeURIComponent(allocID)}/exec?${q}`;
}

// splitCommand reads a command line into words: spaces separate them,
// quotes ('' or "") keep spaces inside one.
export function splitCommand(line) {
  const words = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

let xtermModules = null;
// loadXterm imports the terminal and its stylesheet once.
function loadXterm() {
  if (!xtermModules) {
    const link = h('link', { rel: 'stylesheet', href: '/ui/assets/vendor/xterm/xterm.css' });
    document.head.append(link);
    xtermModules = Promise.all([import('../vendor/xterm/xterm.mjs'), import('../vendor/xterm/addon-fit.mjs')]);
  }
  return xtermModules;
}

// execView is the exec section of an allocation: a task picker, a
// command (default /bin/sh), Connect, the terminal and the outcome.
// tasks are the names of the tasks that run; signal ends the session
// when the page goes.
export function execView(allocID, tasks, signal) {
  if (!tasks.length) return h('p', { class: 'empty' }, 'No task is running: a command runs only in a running task.');
  const taskSel = h('select', { id: 'exec-task' }, tasks.map((t) => h('option', { value: t }, t)));
  const cmd = h('input', { id: 'exec-command', type: 'text', value: '/bin/sh', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'exec-help' });
  const status = h('p', { id: 'exec-status', class: 'help', 'aria-live': 'polite' }, 'Not connected.');
  const screen = h('div', { id: 'exec-terminal', class: 'exec-terminal', hidden: true });
  const connect = h('button', { type: 'submit', id: 'exec-connect', class: 'primary' }, 'Connect');
  const stop = h('button', { type: 'button', id: 'exec-disconnect', hidden: true }, 'Disconnect');
  let session = null;

  const end = () => { session?.close(); session = null; connect.hidden = false; stop.hidden = true; };
  stop.addEventListener('click', end);
  signal.addEventListener('abort', end, { once: true });

  const form = h('form', { class: 'filters exec-form', onsubmit: async (e) => {
    e.preventDefault();
    end();
    const command = splitCommand(cmd.value);
    if (!command.length) { status.textContent = 'command: give the program to run, for example /bin/sh'; return; }
    status.textContent = 'Connecting…';
    connect.hidden = true;
    stop.hidden = false;
    screen.hidden = false;
    try {
      session = await openSession(allocID, taskSel.value, command, screen, status, () => { connect.hidden = false; stop.hidden = true; });
    } catch (err) {
      status.textContent = `Could not start the terminal: ${err.message}`;
      connect.hidden = false;
      stop.hidden = true;
    }
  } },
  h('div', { class: 'field' }, h('label', { for: 'exec-task' }, 'Task'), taskSel),
  h('div', { class: 'field grow' }, h('label', { for: 'exec-command' }, 'Command'), cmd,
    h('span', { id: 'exec-help', class: 'help' }, 'Runs in the task, as its user, with a terminal. Quotes group words.')),
  h('div', { class: 'field' }, h('span', { class: 'label-like' }, ' '), h('div', { class: 'actions' }, connect, stop)));
  return h('div', {}, form, status, screen);
}

// mirrorStyles applies the <style> elements xterm.js writes inside root
// (its colours and cell sizes), which the UI's Content-Security-Policy
// keeps from applying (no inline styles), as constructed stylesheets,
// which it allows; it follows their changes. The returned function
// removes them.
function mirrorStyles(root) {
  const mine = new Map(); // style element -> { sheet, text }
  const sync = () => {
    for (const el of root.querySelectorAll('style')) {
      let m = mine.get(el);
      if (!m) { m = { sheet: new CSSStyleSheet(), text: null }; mine.set(el, m); }
      if (m.text !== el.textContent) { m.text = el.textContent; m.sheet.replaceSync(m.text); }
    }
    const ours = new Set([...mine.values()].map((m) => m.sheet));
    document.adoptedStyleSheets = [...document.adoptedStyleSheets.filter((x) => !ours.has(x)), ...ours];
  };
  const obs = new MutationObserver(sync);
  obs.observe(root, { subtree: true, childList: true, characterData: true });
  sync();
  return () => {
    obs.disconnect();
    const ours = new Set([...mine.values()].map((m) => m.sheet));
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((x) => !ours.has(x));
  };
}

let unmirror = null;

// openSession starts the terminal and the websocket; it returns the
// session with close(). ended runs once when the session ends.
async function openSession(allocID, task, command, screen, status, ended) {
  const [{ Terminal }, { FitAddon }] = await loadXterm();
  unmirror?.();
  replace(screen);
  unmirror = mirrorStyles(screen);
  const term = new Terminal({ convertEol: false, cursorBlink: true, fontSize: 14, scrollback: 5000,
    theme: { background: '#0f1318', foreground: '#d6dde5', cursor: '#d6dde5' },
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(screen);
  fit.fit();
  const token = secret();
  const ws = new WebSocket(execURL(allocID, task, command, true, !!token));
  let exited = false;
  let beat = 0;
  const sendFrame = (f) => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(f)); };
  const sendSize = () => sendFrame({ tty_size: { height: term.rows, width: term.cols } });
  const onResize = () => { fit.fit(); };
  term.onResize(sendSize);
  term.onData((d) => sendFrame({ stdin: { data: b64(d) } }));
  term.onBinary((d) => sendFrame({ stdin: { data: btoa(d) } }));
  window.addEventListener('resize', onResize);

  let done = false;
  const finish = (text) => {
    if (done) return;
    done = true;
    clearInterval(beat);
    window.removeEventListener('resize', onResize);
    status.textContent = text;
    term.options.disableStdin = true;
    term.options.cursorBlink = false;
    ended();
  };
  ws.addEventListener('open', () => {
    if (token) ws.send(JSON.stringify({ version: 1, auth_token: token }));
    sendSize();
    beat = setInterval(() => sendFrame({}), HEARTBEAT_MS);
    status.textContent = `Connected to task ${task}: ${command.join(' ')}`;
    term.focus();
  });
  ws.addEventListener('message', (e) => {
    let f;
    try { f = JSON.parse(e.data); } catch { return; }
    if (f.stdout?.data) term.write(unb64(f.stdout.data));
    if (f.stderr?.data) term.write(unb64(f.stderr.data));
    if (f.exited) {
      exited = true;
      const code = f.result?.exit_code ?? 0;
      finish(`Exited with code ${code}.`);
    }
  });
  ws.addEventListener('close', (e) => {
    if (exited) return;
    finish(e.code === 1000 || e.code === 1005 ? 'Disconnected.' : `Ended: ${e.reason || `connection closed (${e.code})`}.`);
  });
  return {
    close() {
      if (ws.readyState === WebSocket.OPEN) sendFrame({ stdin: { close: true } });
      ws.close();
      finish('Disconnected.');
    },
  };
}
