// SPDX-License-Identifier: MIT
// conv-transcript.js: the open conversation's messages, each turn's tool
// activity above its answer and its changes below (conv-changes.js), and
// the scroll that follows the end.

import { $, el, clock, fullTime } from './util.js';
import { state } from './state.js';
import { act, liveText, liveStreaming } from './fold.js';
import { toolBox } from './conv-tools.js';
import { changesSlot } from './conv-changes.js';

export function renderTranscript() {
  const d = state.detail;
  const tr = $('transcript');
  const prevTop = tr.scrollTop;
  tr.replaceChildren();
  const answered = new Set(d.messages.filter((m) => m.role === 'assistant' && m.run).map((m) => m.run));
  const placed = new Set();
  // the last run of each turn: a turn run again shows its last run's changes
  const lastOfTurn = new Map();
  for (const r of d.runs) lastOfTurn.set(r.turn, r);
  const changes = (runId) => {
    const r = d.runs.find((x) => x.id === runId);
    if (!r || lastOfTurn.get(r.turn) !== r || r.state === 'running' || r.state === 'waiting') return;
    tr.append(changesSlot(d.conversation.id, r));
  };
  const place = (run) => {
    if (!run || placed.has(run)) return;
    placed.add(run);
    tr.append(toolBox(run));
  };
  for (const m of d.messages) {
    if (m.state === 'queued') continue; // under the composer, with its take-back button
    if (m.role === 'user') {
      if (tr.childElementCount) tr.append(el('hr', 'turn-sep'));
      tr.append(userMsg(m));
      if (m.run && !answered.has(m.run)) place(m.run);
    } else {
      place(m.run);
      const node = el('div', 'msg assistant');
      if (d.running && d.running.id === m.run) {
        node.dataset.live = '1'; // its deltas redraw it
        node._msg = m;
      }
      fillAssistant(node, m, m.run);
      tr.append(node);
      changes(m.run);
    }
  }
  // runs with no answer of their own: a turn just started, one that
  // failed before the coder said anything
  for (const r of d.runs) {
    if (answered.has(r.id)) continue;
    place(r.id);
    const running = d.running && d.running.id === r.id;
    if (running) {
      const node = el('div', 'msg assistant');
      node.dataset.live = '1';
      fillAssistant(node, null, r.id);
      tr.append(node);
    } else if (r.state !== 'completed') {
      tr.append(runFailure(r));
      changes(r.id);
    }
  }
  if (!tr.childElementCount) tr.append(el('p', 'empty', 'No message yet.'));
  if (state.stick) tr.scrollTop = tr.scrollHeight;
  else tr.scrollTop = prevTop;
}

function msgHead(who, iso) {
  const h = el('div', 'msg-head');
  h.append(el('span', 'who', who));
  const t = el('span', 'when', clock(iso));
  t.title = fullTime(iso);
  h.append(t);
  return h;
}

function userMsg(m) {
  const node = el('div', 'msg user');
  node.append(msgHead('you', m.created), el('div', 'body', m.text));
  return node;
}

// An assistant answer: the server's rendered markdown once it is whole,
// the streamed text (as text) while it comes.
export function fillAssistant(node, m, run) {
  const d = state.detail;
  const a = run ? act(run) : null;
  const running = !!(d && d.running && d.running.id === run && !(a && a.done));
  const live = a ? liveText(a) : '';
  const stored = m ? m.text || '' : '';
  node.dataset.run = run || '';
  node.replaceChildren(msgHead(d ? d.conversation.coder : 'coder', m ? m.created : d && d.running && d.running.started));
  const body = el('div', 'body');
  const streaming = running && a && (liveStreaming(a) || live.length > stored.length);
  if (!streaming && m && typeof m.html === 'string' && m.text) {
    body.classList.add('md');
    body.innerHTML = m.html; // rendered and escaped by the server: the one markup inserted
    for (const link of body.querySelectorAll('a[href]')) {
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
    }
  } else {
    body.classList.add('plain');
    body.textContent = streaming ? live : stored || live;
  }
  node.append(body);
  node.classList.toggle('streaming', running);
  if (m && m.state !== 'complete' && m.state !== 'streaming') {
    const f = el('div', m.state === 'cancelled' ? 'fail cancelled' : 'fail');
    if (m.error_kind) f.append(el('span', 'kind', m.error_kind), ': ');
    f.append(m.error || m.state);
    node.append(f);
  }
}

function runFailure(r) {
  const node = el('div', 'msg assistant');
  node.append(msgHead(r.coder, r.ended || r.started));
  const f = el('div', r.state === 'cancelled' ? 'fail cancelled' : 'fail');
  if (r.error_kind) f.append(el('span', 'kind', r.error_kind), ': ');
  f.append(r.error || `the turn ended ${r.state}`);
  node.append(f);
  return node;
}

export function stickToEnd() {
  const tr = $('transcript');
  if (state.stick) tr.scrollTop = tr.scrollHeight;
}
$('transcript').addEventListener('scroll', () => {
  const tr = $('transcript');
  state.stick = tr.scrollHeight - tr.scrollTop - tr.clientHeight < 40;
});
