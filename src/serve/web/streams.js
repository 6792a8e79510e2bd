// SPDX-License-Identifier: MIT
// streams.js: the EventSources (the dashboard's and the open
// conversation's), the connection dot they share, and the events of one
// finished run read with fetch.

import { $ } from './util.js';
import { state } from './state.js';
import { api, authHeaders, convPath } from './api.js';

export function updateConn() {
  const streams = [state.dash, state.es].filter(Boolean);
  let s = 'live';
  if (!streams.length || streams.some((x) => x.readyState === EventSource.CLOSED)) s = 'off';
  else if (streams.some((x) => x.readyState === EventSource.CONNECTING)) s = 'connecting';
  $('conn').dataset.state = s;
  $('conn-text').textContent = { live: 'live', connecting: 'reconnecting', off: 'offline' }[s];
}

// Each event of an EventSource's data (an --json event) to fn; data that
// is not JSON is passed over.
export function onEvents(es, fn) {
  es.onmessage = (m) => {
    let ev;
    try {
      ev = JSON.parse(m.data);
    } catch {
      return;
    }
    fn(ev);
  };
}

// An EventSource gives up only when the server refuses it (401, 404, 503):
// see whether the token still holds, then open it again after a pause.
export function watchStream(es, reopen) {
  es.addEventListener('open', updateConn);
  es.addEventListener('error', () => {
    updateConn();
    if (es.readyState !== EventSource.CLOSED) return;
    setTimeout(async () => {
      try {
        await api('GET', '/v1/coders');
      } catch (e) {
        if (e.status === 401) return;
      }
      reopen();
    }, 3000);
  });
}

export function closeConvStream() {
  if (state.es) state.es.close();
  state.es = null;
  updateConn();
}

export function closeStreams() {
  closeConvStream();
  if (state.dash) state.dash.close();
  state.dash = null;
  updateConn();
}

// The events of one finished run (no follow: the stream ends after its
// turn.completed), read with fetch so it is not reopened when it ends.
export async function fetchRun(convId, runId, onEvent) {
  const ctl = new AbortController();
  let timer = setTimeout(() => ctl.abort(), 15000);
  try {
    const res = await fetch(convPath(convId, `/events?run=${encodeURIComponent(runId)}`),
                            { headers: authHeaders(), signal: ctl.signal, cache: 'no-store' });
    if (!res.ok || !res.body) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let data = [];
    let named = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      clearTimeout(timer);
      timer = setTimeout(() => ctl.abort(), 15000);
      buf += value;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length && !named) {
            let ev = null;
            try {
              ev = JSON.parse(data.join('\n'));
            } catch {
              ev = null;
            }
            if (ev) onEvent(ev);
            if (ev && ev.type === 'turn.completed') {
              ctl.abort();
              return;
            }
          }
          data = [];
          named = false;
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        } else if (line.startsWith('event:')) {
          named = true; // ping frames: not an event of the run
        }
      }
    }
  } catch {
    /* aborted or cut off: the transcript is whole without it */
  } finally {
    clearTimeout(timer);
  }
}
