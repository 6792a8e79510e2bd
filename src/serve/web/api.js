// SPDX-License-Identifier: MIT
// api.js: requests to /v1 with the token as a bearer, and the ApiError
// they reject with.

import { state } from './state.js';

// What a refused token does (login.js's signedOut, set by app.js): signing
// in is built on this module, so it cannot be imported here.
let signedOut = () => {};

export function onSignedOut(fn) {
  signedOut = fn;
}

class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

export function authHeaders() {
  return state.token ? { Authorization: `Bearer ${state.token}` } : {};
}

// One JSON request; resolves to the parsed answer (null for 204), rejects
// with an ApiError carrying the server's kind and sentence.
export async function api(method, path, body, opts = {}) {
  const init = { method, headers: authHeaders(), credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'the server cannot be reached');
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const err = (data && data.error) || {};
    const e = new ApiError(res.status, err.kind || `http_${res.status}`,
                           err.message || `the server answered ${res.status}`);
    if (res.status === 401 && !opts.quiet) signedOut();
    throw e;
  }
  return data;
}

export const convPath = (id, rest = '') => `/v1/conversations/${encodeURIComponent(id)}${rest}`;
