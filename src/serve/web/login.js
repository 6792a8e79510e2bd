// SPDX-License-Identifier: MIT
// login.js: signing in with the token from the address's fragment, the
// form, or the cookie of an earlier sign-in; signed out when the server
// stops taking it.

import { $, show, storageGet, storageSet } from './util.js';
import { state } from './state.js';
import { api } from './api.js';
import { closeStreams } from './streams.js';
import { loadList, openDashboard } from './list.js';
import { route } from './router.js';

const TOKEN_KEY = 'baton.token';

export async function start() {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromUrl = params.get('token');
  if (fromUrl !== null) {
    // out of the address bar (and so of history and bookmarks) at once
    params.delete('token');
    const rest = params.toString();
    history.replaceState(null, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
    storageSet(sessionStorage, TOKEN_KEY, fromUrl.trim() || null);
  }
  state.token = storageGet(sessionStorage, TOKEN_KEY);
  if (state.token) {
    if (await login()) enter();
    return;
  }
  // no token here, but the cookie of an earlier sign-in may still hold
  try {
    await api('GET', '/v1/coders', undefined, { quiet: true });
    enter();
  } catch {
    showLogin('');
  }
}

async function login() {
  try {
    await api('POST', '/v1/login', undefined, { quiet: true });
    return true;
  } catch (e) {
    if (e.status === 401) {
      state.token = null;
      storageSet(sessionStorage, TOKEN_KEY, null);
      showLogin('The server did not accept this token.');
    } else {
      showLogin(`Cannot sign in: ${e.message}.`);
    }
    return false;
  }
}

function showLogin(message) {
  closeStreams();
  show($('app'), false);
  show($('login'), true);
  $('login-error').textContent = message;
  show($('login-error'), !!message);
  $('login-token').focus();
}

export function signedOut() {
  state.token = null;
  storageSet(sessionStorage, TOKEN_KEY, null);
  showLogin('The server no longer accepts this page\'s token: sign in again.');
}

$('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  let t = $('login-token').value.trim();
  const m = /[#&]token=([^&\s]+)/.exec(t); // the whole address pasted
  if (m) t = m[1];
  if (!t) return;
  state.token = t;
  storageSet(sessionStorage, TOKEN_KEY, t);
  $('login-token').value = '';
  if (await login()) enter();
});

function enter() {
  show($('login'), false);
  show($('app'), true);
  loadList();
  openDashboard();
  route();
}
