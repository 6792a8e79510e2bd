// SPDX-License-Identifier: MIT
// conv-changes.js: what each turn changed (GET .../turns/{n}/diff), under
// the turn's answer: a fold that, opened, lists the files with their
// counts and shows the patch. Both are user data: they go in as text,
// each line of the patch its own element so added and removed lines are
// coloured by class, never by markup from the server. What was fetched
// is kept per turn and its last snapshot, so redrawing the transcript
// neither fetches again nor closes an open fold.

import { el } from './util.js';
import { state } from './state.js';
import { api, convPath } from './api.js';

const STATUS = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', typechange: 'T' };

// conversation:turn -> { open, doc | error }, for the conversation open
const kept = new Map();
// run id -> { slot, conv, r, done }: where the last render put a run's fold
const slots = new Map();

export function forgetChanges() {
  kept.clear();
  slots.clear();
}

function filesList(changes) {
  const ul = el('ul', 'files');
  for (const f of changes.files) {
    const li = el('li');
    li.append(el('span', `fst fst-${f.status}`, STATUS[f.status] || '?'), ' ');
    li.append(el('span', 'mono path', f.old_path ? `${f.old_path} → ${f.path}` : f.path), ' ');
    li.append(el('span', 'counts', f.binary ? 'binary' : `+${f.added} −${f.removed}`));
    ul.append(li);
  }
  return ul;
}

function patchView(patch) {
  const pre = el('pre', 'patch');
  const lines = patch.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop(); // the last line's end
  for (const line of lines) {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'file'
      : line.startsWith('+') ? 'add'
      : line.startsWith('-') ? 'del'
      : line.startsWith('@@') ? 'hunk'
      : line.startsWith('diff ') ? 'file' : '';
    pre.append(el('span', cls, `${line}\n`));
  }
  return pre;
}

function fill(body, k) {
  body.replaceChildren();
  if (k.error) {
    body.append(el('p', 'muted', k.error));
    return;
  }
  const d = k.doc;
  if (!d.changes.files.length) {
    body.append(el('p', 'muted', 'No changes in this turn.'));
    return;
  }
  if (d.shared_dir)
    body.append(el('p', 'muted', `These are the changes in ${d.shared_dir} during the turn: `
                                 + 'they may include edits made there meanwhile.'));
  body.append(filesList(d.changes));
  if (d.patch_truncated) body.append(el('p', 'muted', 'The patch is too large to show here (baton diff shows it).'));
  else body.append(patchView(d.patch));
}

async function load(conv, turn, key, body) {
  const k = kept.get(key);
  try {
    k.doc = await api('GET', convPath(conv, `/turns/${turn}/diff`));
  } catch (err) {
    k.error = err.status === 409 ? err.message : `Cannot show the changes: ${err.message}.`;
  }
  if (state.current === conv) fill(body, k);
}

// The summary's words: the files and lines when turn.completed said them.
function summary(turn, c) {
  if (!c || !Array.isArray(c.files)) return `Changes of turn ${turn}`;
  const n = c.files.length;
  return `Changes of turn ${turn}: ${n} file${n === 1 ? '' : 's'} +${c.added} −${c.removed}`;
}

// The fold of run r's turn (r the last run of its turn, ended); c its
// turn.completed's changes when the page has them.
function changesBox(conv, r, c) {
  const key = `${conv}:${r.turn}:${r.id}`;
  const box = el('details', 'changes');
  box.dataset.turn = String(r.turn);
  box.append(el('summary', '', summary(r.turn, c)));
  const body = el('div', 'changes-body');
  box.append(body);
  const k = kept.get(key);
  if (k && k.open) {
    box.open = true;
    if (k.doc || k.error) fill(body, k);
  }
  box.addEventListener('toggle', () => {
    const now = kept.get(key) || {};
    now.open = box.open;
    kept.set(key, now);
    if (!box.open || now.doc || now.error || now.loading) return;
    now.loading = true;
    body.replaceChildren(el('p', 'muted', 'Loading…'));
    load(conv, r.turn, key, body).finally(() => { now.loading = false; });
  });
  return box;
}

// What the slot shows: the fold, unless the run's turn.completed (when the
// page has it) says nothing was recorded or nothing changed.
function fillSlot(e) {
  const a = state.acts.get(e.r.id);
  e.done = !!(a && a.done);
  const c = e.done ? a.changes : undefined;
  if (c === null || (c && !c.unknown && Array.isArray(c.files) && !c.files.length)) e.slot.replaceChildren();
  else e.slot.replaceChildren(changesBox(e.conv, e.r, c));
}

// The place of run r's changes in the transcript (r the last run of its
// turn, ended), filled now and again when its turn.completed comes.
export function changesSlot(conv, r) {
  const e = { slot: el('div', 'changes-slot'), conv, r, done: false };
  slots.set(r.id, e);
  fillSlot(e);
  return e.slot;
}

// The run's turn.completed may come after the transcript drew its place
// (the stream, or an earlier turn's fetch, is slower than the detail):
// its summary and whether it shows follow once it does.
export function refreshChanges(run) {
  const e = slots.get(run);
  const a = state.acts.get(run);
  if (e && e.slot.isConnected && e.done !== !!(a && a.done)) fillSlot(e);
}
