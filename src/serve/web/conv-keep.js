// SPDX-License-Identifier: MIT
// conv-keep.js: Keep, for a conversation with a worktree of its own
// (`baton keep`, POST .../keep): its work committed on its branch and
// brought into the branch it started from; then, asked, pruned (the
// worktree and branch removed, in a group the others' too). What baton
// did is said in the box under the header, as text.

import { $, show } from './util.js';
import { state } from './state.js';
import { api, convPath } from './api.js';
import { scheduleList } from './list.js';

// The Keep button of conversation c: there only with a worktree, off
// while a turn runs (the server refuses it then).
export function renderKeep(c) {
  show($('keep-btn'), !!c.worktree);
  $('keep-btn').disabled = !!(state.detail && state.detail.running);
}

function said(k) {
  const lines = [];
  if (k.committed) lines.push(`committed the worktree's changes on ${k.branch}`);
  if (k.how === 'none') lines.push(`${k.base} has everything of ${k.branch} already (${k.commit.slice(0, 12)})`);
  else if (k.how === 'fast-forward') lines.push(`fast-forwarded ${k.base} to ${k.branch} (${k.commit.slice(0, 12)})`);
  else lines.push(`merged ${k.branch} into ${k.base} (${k.commit.slice(0, 12)})`);
  if (k.checkout) lines.push(`updated the files of ${k.checkout}`);
  else if (k.how !== 'none') lines.push(`${k.base} is checked out nowhere: only the branch moved`);
  if (k.pruned) lines.push(`removed the worktree and branch ${k.branch}`);
  for (const o of k.pruned_others) lines.push(`removed the worktree of ${o.slice(0, 12)}`);
  for (const n of k.notes) lines.push(n);
  return lines.join('\n');
}

async function keep(prune) {
  const id = state.current;
  const box = $('keep-box');
  try {
    const k = await api('POST', convPath(id, '/keep'), prune ? { prune: true } : {});
    if (state.current !== id) return;
    $('keep-said').textContent = said(k);
    show($('keep-prune'), !k.pruned);
    show(box, true);
    scheduleList();
  } catch (err) {
    if (state.current !== id) return;
    $('keep-said').textContent = `Not kept: ${err.message}.`;
    show($('keep-prune'), false);
    show(box, true);
  }
}

$('keep-btn').addEventListener('click', () => keep(false));
$('keep-prune').addEventListener('click', () => {
  if (confirm('Remove this conversation\'s worktree and branch (their work is in the base branch now), and in a group the other conversations\' worktrees with their work?'))
    keep(true);
});
$('keep-close').addEventListener('click', () => show($('keep-box'), false));
