// SPDX-License-Identifier: MIT
// conv-composer.js: what the composer shows: the queued messages, Send or
// Queue, the working timer, Cancel and Retry as the last turn allows.

import { $, el, show } from './util.js';
import { state } from './state.js';

export function renderQueue() {
  const d = state.detail;
  const ul = $('queue');
  ul.replaceChildren();
  for (const q of d.queued) {
    const li = el('li');
    li.append(el('span', 'qn', `queued #${q.n}`), el('span', 'qtext', q.text));
    li.lastChild.title = q.text;
    const b = el('button', 'small', 'Take back');
    b.type = 'button';
    b.dataset.n = String(q.n);
    li.append(b);
    ul.append(li);
  }
  show(ul, d.queued.length > 0);
}

// the server's running turn, until its turn.completed comes on the stream
function isRunning() {
  const d = state.detail;
  if (!d || !d.running) return false;
  const a = state.acts.get(d.running.id);
  return !(a && a.done);
}

export function renderComposer() {
  const d = state.detail;
  if (!d) return;
  const running = isRunning();
  const last = d.runs.length ? d.runs[d.runs.length - 1] : null;
  const lastState = last ? (state.acts.get(last.id) || {}).status || last.state : null;
  show($('working'), running);
  show($('cancel-btn'), running);
  $('cancel-btn').disabled = !!(d.running && (d.running.cancel_requested || state.cancelling === d.running.id));
  show($('retry-btn'), !running && ['failed', 'cancelled', 'interrupted'].includes(lastState));
  // while a turn runs, a message is either put into it (Steer) or waits
  // for the next turn (Queue)
  $('send-btn').textContent = running ? 'Queue' : 'Send';
  show($('steer-btn'), running);
  $('turn-state').textContent = !running && last && lastState !== 'completed' && lastState !== 'running'
    ? `last turn ${lastState}` : '';
  $('handoff-btn').disabled = running;
  $('delete-btn').disabled = running;
  tickWorking();
}

function tickWorking() {
  const d = state.detail;
  if (!d || !d.running || !isRunning()) return;
  const t = Date.parse(d.running.started);
  const s = Number.isNaN(t) ? 0 : Math.max(0, Math.round((Date.now() - t) / 1000));
  const cancelling = d.running.cancel_requested || state.cancelling === d.running.id;
  // waiting for a turn slot (BATON_MAX_TURNS) until its first event comes
  const a = state.acts.get(d.running.id);
  const waiting = d.running.state === 'waiting' && !(a && a.lastSeq);
  const doing = cancelling ? 'cancelling' : waiting ? 'waiting for a turn slot' : 'working';
  $('working-text').textContent = `${doing} · ${s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`}`;
}
setInterval(tickWorking, 1000);
