// SPDX-License-Identifier: MIT
// fold.js: a run's events folded into what the page shows of it: its
// messages' text as it streams, its tool activity as items, its status
// and usage. Only state.acts is touched here; drawing it is elsewhere.

import { state } from './state.js';

// items shown as one-line activity with expandable output
const TOOL_KINDS = new Set(['command', 'file_change', 'tool_call', 'web_search', 'reasoning', 'subagent']);

// an item shown as activity: a tool's, or anything a sub-agent did (its
// messages are its own, never the turn's answer: docs/events.md)
function isActivity(item) {
  return TOOL_KINDS.has(item.kind) || typeof item.subagent === 'string';
}

// a run's record, made at its first event
export function act(run) {
  let a = state.acts.get(run);
  if (!a) {
    a = { lastSeq: 0, items: new Map(), order: [], msgs: new Map(), loading: false,
          done: false, status: null, usage: null, asking: null, changes: null };
    state.acts.set(run, a);
  }
  return a;
}

function upsert(a, key, fields) {
  let it = a.items.get(key);
  if (!it) {
    it = { key, output: '' };
    a.items.set(key, it);
    a.order.push(key);
  }
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null) it[k] = v;
  return it;
}

// Folds one event into its run's record; false when it was seen before
// (a stream replays a turn from seq 1; two streams may cover one run).
export function applyEvent(ev) {
  if (!ev || typeof ev.run !== 'string' || typeof ev.seq !== 'number') return false;
  const a = act(ev.run);
  if (ev.seq <= a.lastSeq) return false;
  a.lastSeq = ev.seq;
  const item = ev.item && typeof ev.item === 'object' ? ev.item : null;
  switch (ev.type) {
  case 'turn.started':
    a.done = false;
    a.status = 'running';
    break;
  case 'turn.completed':
    a.done = true;
    a.status = ev.status;
    a.changes = ev.changes || null; // what the turn changed (docs/events.md), if recorded
    for (const m of a.msgs.values()) m.open = false;
    break;
  case 'usage':
    a.usage = ev;
    break;
  case 'item.started':
  case 'item.completed':
    if (!item) break;
    if (item.kind === 'message' && !item.subagent) {
      const m = a.msgs.get(item.id) || { text: '', open: true };
      if (ev.type === 'item.completed') {
        if (typeof item.text === 'string') m.text = item.text;
        m.open = false;
      }
      a.msgs.set(item.id, m);
    } else if (isActivity(item)) {
      upsert(a, `i:${item.id}`, {
        kind: item.kind, status: item.status, command: item.command, cwd: item.cwd,
        exit_code: item.exit_code, name: item.name, text: item.text, detail: item.detail,
        subagent: item.subagent,
      });
    }
    break;
  case 'item.delta':
    if (!item || typeof ev.text !== 'string') break;
    if (item.kind === 'message' && !item.subagent) {
      const m = a.msgs.get(item.id) || { text: '', open: true };
      m.text += ev.text;
      a.msgs.set(item.id, m);
    } else if (isActivity(item)) {
      upsert(a, `i:${item.id}`, { kind: item.kind, subagent: item.subagent }).output += ev.text;
    }
    break;
  case 'approval.requested':
  case 'approval.resolved': {
    // one row per request: the coder is answered before it goes on, so a
    // resolution without an item id closes the request just before it
    let key = ev.item_id ? `a:${ev.item_id}` : `a:${ev.seq}`;
    if (!ev.item_id && ev.type === 'approval.resolved' && a.asking) key = a.asking;
    a.asking = ev.type === 'approval.requested' ? key : null;
    upsert(a, key, {
      kind: 'approval', summary: ev.summary, akind: ev.kind, decision: ev.decision, by: ev.by,
      request_id: ev.request_id, // what a person's answer names (conv-ask.js)
      item_id: ev.item_id, // the tool call it is about, whose command or change the card shows
      // a question the coder asked (kind user_input): its text and options
      questions: Array.isArray(ev.questions) ? ev.questions : undefined,
      answers: Array.isArray(ev.answers) ? ev.answers : undefined, // what a person answered
    });
    break;
  }
  case 'turn.steered':
    // a message a person put into the running turn: part of this turn
    if (typeof ev.text === 'string') upsert(a, `s:${ev.seq}`, { kind: 'steer', text: ev.text });
    break;
  default:
    break;
  }
  return true;
}

export function liveText(a) {
  return [...a.msgs.values()].map((m) => m.text).filter(Boolean).join('\n\n');
}

export function liveStreaming(a) {
  return !a.done && [...a.msgs.values()].some((m) => m.open);
}
