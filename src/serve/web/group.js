// SPDX-License-Identifier: MIT
// group.js: a group of conversations started together (a fan-out) side by
// side, as `baton group show` puts them (GET /v1/groups/{id}): each
// coder's state, time, tokens, cost and what its turns changed, a link to
// its conversation and, for one with a worktree, Keep (POST .../keep with
// prune: its work into the base branch, the others' worktrees dropped).
// Redrawn while a member runs.

import { $, ID_RE, el, show } from './util.js';
import { state } from './state.js';
import { api, convPath } from './api.js';
import { closeConvStream } from './streams.js';
import { showView } from './router.js';
import { markCurrent, scheduleList } from './list.js';
import { saveDraft } from './conv.js';

const REFRESH_MS = 1000;
let timer = null;
let shown = null; // the group id on screen

function cell(text, cls) {
  return el('td', cls || '', text);
}

function row(m) {
  const tr = el('tr');
  tr.dataset.conv = m.conversation;
  tr.append(cell(m.coder));
  const link = el('a', 'mono', m.conversation.slice(0, 12));
  link.href = `#c=${m.conversation}`;
  const td = el('td');
  td.append(link);
  tr.append(td, cell(m.status, `st-${m.status}`));
  tr.append(cell(`${(m.duration_ms / 1000).toFixed(1)}s`, 'num'));
  tr.append(cell(m.tokens === null ? '-' : String(m.tokens), 'num'));
  tr.append(cell(m.cost_usd === null ? '-' : `$${m.cost_usd.toFixed(4)}`, 'num'));
  tr.append(cell(m.files === null ? '-' : String(m.files), 'num'));
  tr.append(cell(m.files === null ? '-' : `+${m.added} −${m.removed}`, 'num'));
  tr.append(cell(m.worktree ? m.worktree.branch : '-', 'mono'));
  const act = el('td');
  if (m.worktree && m.status !== 'running' && m.status !== 'waiting') {
    const b = el('button', 'small keep', 'Keep this one');
    b.type = 'button';
    b.title = 'bring its work into the base branch and drop the others\' worktrees (baton keep --prune)';
    b.dataset.conv = m.conversation;
    act.append(b);
  }
  tr.append(act);
  return tr;
}

function render(g) {
  $('group-title').textContent = g.name || '(untitled)';
  $('group-meta').textContent = `group ${g.id.slice(0, 12)} · ${g.members.length} conversation${g.members.length === 1 ? '' : 's'}`;
  document.title = `${g.name || 'group'} · baton`;
  $('group-rows').replaceChildren(...g.members.map(row));
}

async function load(id) {
  clearTimeout(timer);
  try {
    const g = await api('GET', `/v1/groups/${encodeURIComponent(id)}`);
    if (shown !== id) return;
    render(g);
    show($('group-error'), false);
    if (g.members.some((m) => m.status === 'running' || m.status === 'waiting'))
      timer = setTimeout(() => load(id), REFRESH_MS);
  } catch (err) {
    if (shown !== id) return;
    $('group-error').textContent = err.status === 404 ? 'There is no such group (any more).'
      : `Cannot show the group: ${err.message}.`;
    show($('group-error'), true);
  }
}

export function openGroup(id) {
  saveDraft();
  closeConvStream();
  state.current = null;
  state.detail = null;
  markCurrent();
  showView('group');
  shown = id;
  $('group-rows').replaceChildren();
  $('group-title').textContent = '';
  $('group-meta').textContent = '';
  show($('group-error'), false);
  show($('group-note'), false);
  load(id);
}

export function leaveGroup() {
  shown = null;
  clearTimeout(timer);
}

$('group-rows').addEventListener('click', async (e) => {
  const b = e.target.closest('button.keep');
  if (!b || !shown || !ID_RE.test(b.dataset.conv)) return;
  const id = shown;
  if (!confirm('Keep this result in the base branch, and remove the other conversations\' worktrees and branches with their work?'))
    return;
  b.disabled = true;
  try {
    const k = await api('POST', convPath(b.dataset.conv, '/keep'), { prune: true });
    if (shown !== id) return;
    show($('group-error'), false);
    $('group-note').textContent = `Kept: ${k.how === 'none' ? `${k.base} had it already` : `${k.how} of ${k.base}`} (${k.commit.slice(0, 12)})`
      + `${k.pruned_others.length ? `; removed ${k.pruned_others.length} other worktree${k.pruned_others.length === 1 ? '' : 's'}` : ''}.`
      + (k.notes.length ? ` ${k.notes.join('; ')}.` : '');
    show($('group-note'), true);
  } catch (err) {
    if (shown !== id) return;
    $('group-error').textContent = `Not kept: ${err.message}.`;
    show($('group-error'), true);
  }
  scheduleList();
  load(id);
});
