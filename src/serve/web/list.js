// SPDX-License-Identifier: MIT
// list.js: the list of conversations and its search, kept fresh by the
// dashboard's event stream (/v1/events).

import { $, ID_RE, el, show, relTime, fullTime, baseName, meter } from './util.js';
import { state } from './state.js';
import { api } from './api.js';
import { watchStream, onEvents, updateConn } from './streams.js';
import { navigate } from './router.js';

export async function loadList() {
  const seq = ++state.listSeq;
  const q = state.q.trim();
  const path = `/v1/conversations${q ? `?q=${encodeURIComponent(q)}` : ''}`;
  try {
    const d = await api('GET', path);
    if (seq !== state.listSeq) return;
    state.convs = Array.isArray(d.conversations) ? d.conversations : [];
    renderList();
  } catch (e) {
    if (seq !== state.listSeq) return;
    $('list-empty').textContent = `Cannot list conversations: ${e.message}.`;
    show($('list-empty'), true);
  }
}

let listTimer = null;
export function scheduleList(ms = 300) {
  clearTimeout(listTimer);
  listTimer = setTimeout(loadList, ms);
}

function convState(c) {
  if (c.last_run_state === 'running' || c.last_run_state === 'waiting') return c.last_run_state;
  if (c.status === 'transferred') return 'transferred';
  return c.last_run_state || 'none';
}

export function renderList() {
  const ul = $('conv-list');
  ul.replaceChildren();
  for (const c of state.convs) {
    if (!c || !ID_RE.test(c.id)) continue;
    const li = el('li', 'conv-item');
    li.dataset.id = c.id;
    li.tabIndex = 0;
    li.setAttribute('role', 'link');
    if (c.id === state.current) li.setAttribute('aria-current', 'true');
    const st = el('span', 'st');
    st.dataset.state = convState(c);
    st.title = c.status === 'transferred' ? `handed off; last turn ${c.last_run_state || 'none'}`
                                          : c.last_run_state === 'waiting' ? 'waiting for a turn slot'
                                          : (c.last_run_state || 'no turn yet');
    const time = el('span', 'time', relTime(c.updated));
    time.dataset.ts = c.updated;
    time.title = fullTime(c.updated);
    const meta = el('span', 'meta',
                    [c.coder, c.model, baseName(c.cwd)].filter(Boolean).join(' · '));
    meta.title = c.cwd || '';
    li.append(st, el('span', 'title', c.title || '(untitled)'), time, meta);
    if (c.context && typeof c.context.percent === 'number') {
      const ctx = el('span', 'ctx');
      ctx.append(meter(c.context));
      li.append(ctx);
    }
    if (c.snippet) li.append(el('span', 'snip', c.snippet));
    ul.append(li);
  }
  const none = !ul.childElementCount;
  $('list-empty').textContent = state.q.trim() ? 'No conversation matches.'
                                               : 'No conversation yet: start one with New.';
  show($('list-empty'), none);
}

export function markCurrent() {
  for (const li of $('conv-list').children)
    if (li.dataset.id === state.current) li.setAttribute('aria-current', 'true');
    else li.removeAttribute('aria-current');
}

$('conv-list').addEventListener('click', (e) => {
  const li = e.target.closest('.conv-item');
  if (li) navigate(`#c=${li.dataset.id}`);
});
$('conv-list').addEventListener('keydown', (e) => {
  const li = e.target.closest('.conv-item');
  if (li && (e.key === 'Enter' || e.key === ' ')) {
    e.preventDefault();
    navigate(`#c=${li.dataset.id}`);
  }
});

let searchTimer = null;
$('search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.q = $('search').value;
    loadList();
  }, 250);
});

$('new-btn').addEventListener('click', () => navigate('#new'));

// "now", "5m": kept true while the page stays open
setInterval(() => {
  for (const t of document.querySelectorAll('.conv-item .time')) t.textContent = relTime(t.dataset.ts);
}, 30000);

// /v1/events: a turn started or ended anywhere (here, or from the CLI)
// changes the list
export function openDashboard() {
  if (state.dash) state.dash.close();
  const es = new EventSource('/v1/events');
  state.dash = es;
  watchStream(es, () => {
    if (state.dash === es) openDashboard();
  });
  onEvents(es, (ev) => {
    if (ev.type === 'turn.started' || ev.type === 'turn.completed' || ev.type === 'session.started')
      scheduleList(400);
  });
  updateConn();
}
