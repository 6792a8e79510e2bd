// SPDX-License-Identifier: MIT
// conv.js: one conversation open: loading it (and its earlier turns'
// activity), its header, and following its event stream live.

import { $, el, show, kTokens } from './util.js';
import { state } from './state.js';
import { api, convPath } from './api.js';
import { watchStream, onEvents, updateConn, closeConvStream, fetchRun } from './streams.js';
import { navigate, showView } from './router.js';
import { scheduleList, markCurrent } from './list.js';
import { act, applyEvent } from './fold.js';
import { fillTools } from './conv-tools.js';
import { renderTranscript, fillAssistant, stickToEnd } from './conv-transcript.js';
import { renderQueue, renderComposer } from './conv-composer.js';
import { forgetChanges, refreshChanges } from './conv-changes.js';
import { renderKeep } from './conv-keep.js';

const HISTORY_RUNS = 40; // older turns whose tool activity is fetched

// follow=1: the last turn from its start, then what comes
function openConvStream() {
  closeConvStream();
  const id = state.current;
  const es = new EventSource(convPath(id, '/events?follow=1'));
  state.es = es;
  watchStream(es, async () => {
    // refused: gone (404), or the server restarted; reopen if it is there
    if (state.es === es && (await loadDetail()) && state.es === es) openConvStream();
  });
  onEvents(es, (ev) => {
    if (state.es === es && ev.conversation === state.current) liveEvent(ev);
  });
  updateConn();
}

// One event of the followed stream: folded in, its run drawn on the next
// frame; the conversation fetched again when a turn starts or ends or an
// answer is whole.
function liveEvent(ev) {
  if (!applyEvent(ev)) return;
  const d = state.detail;
  const known = d && d.runs.some((r) => r.id === ev.run);
  const running = d && d.running && d.running.id === ev.run;
  if (ev.type === 'turn.started' && !known) scheduleDetail();
  else if (ev.type === 'turn.completed' && (running || !known)) {
    scheduleDetail();
    scheduleList();
  } else if (ev.type === 'item.completed' && ev.item && ev.item.kind === 'message' && !ev.item.subagent &&
             running) {
    scheduleDetail();
  } else if (ev.type === 'usage') {
    const u = ev;
    if (typeof u.context_tokens === 'number' && typeof u.context_window === 'number' && u.context_window > 0)
      renderContext({ tokens: u.context_tokens, window: u.context_window,
                      percent: (100 * u.context_tokens) / u.context_window });
  }
  state.dirty.add(ev.run);
  requestRedraw();
}

// events come in bursts: their runs are drawn again once a frame
let redrawQueued = false;
function requestRedraw() {
  if (redrawQueued) return;
  redrawQueued = true;
  requestAnimationFrame(() => {
    redrawQueued = false;
    for (const run of state.dirty) {
      const box = state.boxes.get(run);
      if (box) fillTools(box, run);
      const live = document.querySelector(`.msg[data-run="${CSS.escape(run)}"][data-live]`);
      if (live) fillAssistant(live, live._msg || null, run);
      refreshChanges(run);
    }
    state.dirty.clear();
    renderComposer();
    stickToEnd();
  });
}

// what was typed in a conversation's composer, kept while another is open
export function saveDraft() {
  if (state.current) state.drafts.set(state.current, $('prompt').value);
}

export function closeConv() {
  saveDraft();
  closeConvStream();
  state.current = null;
  state.detail = null;
  state.boxes = new Map();
  markCurrent();
  showView('empty');
  document.title = 'baton';
  // (a gone conversation's note stays until the next one opens)
}

export function openConv(id) {
  showView('conv');
  if (state.current === id) return;
  $('empty-view').firstElementChild.textContent = 'Pick a conversation, or start a new one.';
  saveDraft();
  $('prompt').value = state.drafts.get(id) || '';
  closeConvStream();
  state.current = id;
  state.detail = null;
  state.boxes = new Map();
  forgetChanges();
  state.stick = true;
  markCurrent();
  $('conv-title').textContent = '';
  $('conv-meta').textContent = '';
  show($('conv-context'), false);
  show($('handoff-box'), false);
  show($('keep-box'), false);
  showConvError('');
  $('transcript').replaceChildren(el('p', 'empty', 'Loading…'));
  $('queue').replaceChildren();
  $('send-approval').value = state.approval.get(id) || 'deny';
  loadDetail().then(() => {
    if (state.current === id && state.detail) openConvStream();
  });
}

async function loadDetail() {
  const id = state.current;
  // a load scheduled by the stream of a conversation left since (New, the
  // list): there is nothing to load, and no conversation to call gone
  if (!id) return false;
  const seq = ++state.detailSeq;
  try {
    const d = await api('GET', convPath(id, '?html=1'));
    if (id !== state.current || seq !== state.detailSeq) return false;
    for (const k of ['messages', 'runs', 'queued']) if (!Array.isArray(d[k])) d[k] = [];
    if (typeof d.running === 'string') // a run's id where the contract has the run
      d.running = d.runs.find((r) => r.id === d.running) || { id: d.running };
    state.detail = d;
    renderConv();
    loadHistory(id, d);
    return true;
  } catch (e) {
    if (id !== state.current || seq !== state.detailSeq) return false;
    if (e.status === 404) {
      // removed (here or elsewhere): back to the list, which drops it
      closeConvStream();
      navigate('', true);
      $('empty-view').firstElementChild.textContent = 'That conversation is gone.';
      scheduleList(0);
    } else {
      showConvError(`Cannot load the conversation: ${e.message}.`);
      return true; // there, but not now: try again
    }
    return false;
  }
}

let detailTimer = null;
export function scheduleDetail(ms = 120) {
  clearTimeout(detailTimer);
  detailTimer = setTimeout(loadDetail, ms);
}

// The tool activity of earlier turns, newest first, one at a time; the
// running (else the last) turn comes with the followed stream.
async function loadHistory(convId, d) {
  const runs = d.runs.slice(0, -1).reverse().slice(0, HISTORY_RUNS);
  for (const r of runs) {
    if (state.current !== convId) return;
    const a = act(r.id);
    if (a.lastSeq || a.loading || (d.running && d.running.id === r.id)) continue;
    a.loading = true;
    await fetchRun(convId, r.id, applyEvent);
    a.loading = false;
    const box = state.boxes.get(r.id);
    if (state.current === convId) refreshChanges(r.id);
    if (box && state.current === convId) {
      fillTools(box, r.id);
      stickToEnd();
    }
  }
}

export function showConvError(message) {
  $('conv-error').textContent = message;
  show($('conv-error'), !!message);
}

function renderContext(ctx) {
  const box = $('conv-context');
  if (!ctx || typeof ctx.percent !== 'number') {
    show(box, false);
    return;
  }
  const m = $('conv-meter');
  m.value = Math.min(100, ctx.percent);
  m.title = `context: ${ctx.tokens} of ${ctx.window} tokens`;
  $('conv-context-text').textContent = `${ctx.percent.toFixed(0)}% of ${kTokens(ctx.window)}`;
  show(box, true);
}

function renderConv() {
  const d = state.detail;
  const c = d.conversation;
  $('conv-title').textContent = c.title || '(untitled)';
  $('conv-title').title = c.title || '';
  document.title = `${c.title || 'conversation'} · baton`;
  const meta = $('conv-meta');
  meta.replaceChildren();
  meta.append(el('span', '', c.coder));
  if (c.model) meta.append(' · ', el('span', '', c.model));
  // before the directory, which the line's end may cut
  if (c.worktree) {
    const wt = el('span', 'mono', c.worktree.branch);
    wt.title = `its own worktree ${c.worktree.path}, from ${c.worktree.base}`;
    meta.append(' · ', wt);
  }
  if (c.group) {
    const g = el('a', 'group-link', 'group');
    g.href = `#g=${c.group}`;
    g.title = 'the conversations started with this one, side by side';
    meta.append(' · ', g);
  }
  const cwd = el('span', 'mono', c.cwd);
  cwd.title = c.cwd;
  meta.append(' · ', cwd);
  if (c.status !== 'active') meta.append(' · ', el('span', '', c.status === 'transferred' ? 'handed off' : c.status));
  renderKeep(c);
  renderContext(d.context);
  renderTranscript();
  renderQueue();
  renderComposer();
}
