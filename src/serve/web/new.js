// SPDX-License-Identifier: MIT
// new.js: the form that starts a new conversation (in a worktree of its
// own, or one per coder picked: a fan-out, shown as its group), remembering
// the last coder, directory, approval, snapshot, worktree and fan-out
// settings in localStorage.

import { $, ID_RE, el, show, storageGet, storageSet, enterSends } from './util.js';
import { state } from './state.js';
import { api } from './api.js';
import { closeConvStream } from './streams.js';
import { navigate, showView } from './router.js';
import { scheduleList, markCurrent } from './list.js';
import { saveDraft } from './conv.js';

const NEW_KEY = 'baton.new';

enterSends($('new-prompt'), $('new-form'));

export async function openNew() {
  saveDraft();
  closeConvStream();
  state.current = null;
  state.detail = null;
  markCurrent();
  showView('new');
  document.title = 'new conversation · baton';
  show($('new-error'), false);
  const saved = (() => {
    try {
      return JSON.parse(storageGet(localStorage, NEW_KEY) || '{}') || {};
    } catch {
      return {};
    }
  })();
  if (!$('new-cwd').value && saved.cwd) $('new-cwd').value = saved.cwd;
  if (saved.approval) $('new-approval').value = saved.approval;
  $('new-snapshot').checked = saved.snapshot !== false;
  $('new-worktree').checked = saved.worktree === true;
  $('new-fan').checked = saved.fan === true;
  if (!state.coders) {
    try {
      const d = await api('GET', '/v1/coders');
      state.coders = Array.isArray(d.coders) ? d.coders : [];
    } catch (e) {
      $('new-error').textContent = `Cannot list the coders: ${e.message}.`;
      show($('new-error'), true);
      return;
    }
  }
  const sel = $('new-coder');
  const keep = sel.value || saved.coder;
  sel.replaceChildren();
  for (const c of state.coders) {
    const o = el('option', '', c.installed ? `${c.coder}${c.version ? ` ${c.version}` : ''}`
                                             : `${c.coder} (not installed)`);
    o.value = c.coder;
    o.disabled = !c.installed;
    sel.append(o);
  }
  const usable = state.coders.filter((c) => c.installed).map((c) => c.coder);
  sel.value = usable.includes(keep) ? keep : usable[0] || '';
  fanMode();
  (($('new-cwd').value ? $('new-prompt') : $('new-cwd'))).focus();
}

// "several coders": the coder list takes several (a fan-out, one
// conversation each, in a group)
function fanMode() {
  const sel = $('new-coder');
  const fan = $('new-fan').checked;
  sel.multiple = fan;
  sel.size = fan ? Math.min(6, Math.max(2, sel.options.length)) : 1;
  if (!fan && sel.selectedOptions.length > 1) sel.value = sel.selectedOptions[0].value;
}
$('new-fan').addEventListener('change', fanMode);

$('new-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const fan = $('new-fan').checked;
  const f = {
    coder: $('new-coder').value,
    coders: [...$('new-coder').selectedOptions].map((o) => o.value),
    worktree: $('new-worktree').checked,
    model: $('new-model').value.trim(),
    cwd: $('new-cwd').value.trim(),
    approval: $('new-approval').value,
    snapshot: $('new-snapshot').checked,
    prompt: $('new-prompt').value,
  };
  const fail = (msg) => {
    $('new-error').textContent = msg;
    show($('new-error'), true);
  };
  if (!f.cwd.startsWith('/')) return fail('The directory is an absolute path (it starts with /).');
  if (!f.prompt.trim()) return fail('Say what the coder should do.');
  const body = { cwd: f.cwd, prompt: f.prompt, approval: f.approval };
  if (fan) {
    if (!f.coders.length) return fail('Pick the coders (Ctrl or Shift to pick several).');
    body.coders = f.coders;
  } else if (f.coder) {
    body.coder = f.coder;
  }
  if (f.worktree) body.worktree = true;
  if (f.model) body.model = f.model;
  if (!f.snapshot) body.snapshot = false; // docs/snapshots.md: no changes recorded
  const btn = e.target.querySelector('button[type="submit"]');
  btn.disabled = true;
  try {
    const r = await api('POST', '/v1/conversations', body);
    const id = r && r.conversation && r.conversation.id;
    const group = r && r.group && r.group.id;
    storageSet(localStorage, NEW_KEY,
               JSON.stringify({ coder: f.coder, cwd: f.cwd, approval: f.approval, snapshot: f.snapshot,
                                worktree: f.worktree, fan }));
    $('new-prompt').value = '';
    show($('new-error'), false);
    scheduleList(0);
    if (id && ID_RE.test(id)) {
      state.approval.set(id, f.approval);
      if (!f.snapshot) state.noSnapshot.add(id);
      navigate(`#c=${id}`, true);
    } else if (group && ID_RE.test(group)) {
      for (const m of r.conversations || []) {
        if (!m.conversation) continue;
        state.approval.set(m.conversation, f.approval);
        if (!f.snapshot) state.noSnapshot.add(m.conversation);
      }
      navigate(`#g=${group}`, true);
    }
  } catch (err) {
    fail(`Not started: ${err.message}.`);
  } finally {
    btn.disabled = false;
  }
});
