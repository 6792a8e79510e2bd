// SPDX-License-Identifier: MIT
// new.js: the form that starts a new conversation, remembering the last
// coder, directory, approval and snapshot setting in localStorage.

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
  (($('new-cwd').value ? $('new-prompt') : $('new-cwd'))).focus();
}

$('new-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = {
    coder: $('new-coder').value,
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
  if (f.coder) body.coder = f.coder;
  if (f.model) body.model = f.model;
  if (!f.snapshot) body.snapshot = false; // docs/snapshots.md: no changes recorded
  const btn = e.target.querySelector('button[type="submit"]');
  btn.disabled = true;
  try {
    const r = await api('POST', '/v1/conversations', body);
    const id = r && r.conversation && r.conversation.id;
    storageSet(localStorage, NEW_KEY,
               JSON.stringify({ coder: f.coder, cwd: f.cwd, approval: f.approval, snapshot: f.snapshot }));
    $('new-prompt').value = '';
    show($('new-error'), false);
    scheduleList(0);
    if (id && ID_RE.test(id)) {
      state.approval.set(id, f.approval);
      if (!f.snapshot) state.noSnapshot.add(id);
      navigate(`#c=${id}`, true);
    }
  } catch (err) {
    fail(`Not started: ${err.message}.`);
  } finally {
    btn.disabled = false;
  }
});
