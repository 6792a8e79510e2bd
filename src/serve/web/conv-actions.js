// SPDX-License-Identifier: MIT
// conv-actions.js: what the open conversation's buttons do: send or
// queue, steer, take back, cancel, retry, handoff (and copying its
// command), delete.

import { $, show, enterSends } from './util.js';
import { state } from './state.js';
import { api, convPath } from './api.js';
import { navigate } from './router.js';
import { scheduleList, renderList } from './list.js';
import { scheduleDetail, showConvError } from './conv.js';
import { renderQueue, renderComposer } from './conv-composer.js';

$('queue').addEventListener('click', async (e) => {
  const b = e.target.closest('button[data-n]');
  if (!b || !state.current) return;
  const n = Number(b.dataset.n);
  const q = state.detail.queued.find((x) => x.n === n);
  b.disabled = true;
  try {
    await api('DELETE', convPath(state.current, `/queue/${n}`));
    if (q && !$('prompt').value.trim()) $('prompt').value = q.text; // back where it came from
    showConvError('');
  } catch (err) {
    showConvError(err.status === 404 ? 'That message was already sent.' : `Cannot take it back: ${err.message}.`);
  }
  scheduleDetail(0);
});

enterSends($('prompt'), $('composer'));

$('composer').addEventListener('submit', async (e) => {
  e.preventDefault();
  const id = state.current;
  const prompt = $('prompt').value;
  if (!id || !prompt.trim() || $('send-btn').disabled) return;
  const body = { prompt, approval: $('send-approval').value };
  if (state.noSnapshot.has(id)) body.snapshot = false; // as it was started
  $('send-btn').disabled = true;
  try {
    let res;
    try {
      res = await api('POST', convPath(id, '/messages'), body);
    } catch (err) {
      const handedOff = state.detail && state.detail.conversation.status === 'transferred';
      if (!(err.status === 409 && handedOff)) throw err;
      if (!confirm(`${err.message}\n\nThis conversation was handed off to the coder's own terminal UI. Send the message from here anyway?`))
        return;
      res = await api('POST', convPath(id, '/messages'), { ...body, force: true });
    }
    state.drafts.delete(id);
    if (state.current === id) {
      $('prompt').value = '';
      showConvError('');
      state.stick = true;
      if (res && res.state === 'queued' && state.detail) {
        state.detail.queued.push({ n: res.n, text: prompt, created: new Date().toISOString() });
        renderQueue();
      }
    }
    scheduleDetail(0);
    scheduleList();
  } catch (err) {
    if (state.current === id) showConvError(`Not sent: ${err.message}.`);
  } finally {
    $('send-btn').disabled = false;
  }
});

// Steer: the message into the running turn (POST .../steer). The server
// says at once when it was queued instead (no turn runs any more, or the
// coder cannot steer); else the turn.steered event shows it in the turn.
$('steer-btn').addEventListener('click', async () => {
  const id = state.current;
  const prompt = $('prompt').value;
  if (!id || !prompt.trim() || $('steer-btn').disabled) return;
  $('steer-btn').disabled = true;
  try {
    const res = await api('POST', convPath(id, '/steer'), { prompt, approval: $('send-approval').value });
    state.drafts.delete(id);
    if (state.current === id) {
      $('prompt').value = '';
      state.stick = true;
      if (res && res.state === 'queued') {
        showConvError(`Not steered (${res.reason}): queued as #${res.queue_no} for the next turn.`);
        if (state.detail && !state.detail.queued.some((q) => q.n === res.queue_no)) {
          state.detail.queued.push({ n: res.queue_no, text: prompt, created: new Date().toISOString() });
          renderQueue();
        }
      } else {
        showConvError('');
      }
    }
    scheduleDetail(0);
  } catch (err) {
    if (state.current === id) showConvError(`Not steered: ${err.message}.`);
  } finally {
    $('steer-btn').disabled = false;
  }
});

$('cancel-btn').addEventListener('click', async () => {
  const id = state.current;
  const d = state.detail;
  if (!d || !d.running) return;
  state.cancelling = d.running.id; // until that run's turn.completed
  renderComposer();
  try {
    await api('POST', convPath(id, '/cancel'));
  } catch (err) {
    state.cancelling = null;
    if (state.current === id) showConvError(`Cannot cancel: ${err.message}.`);
    scheduleDetail(0);
  }
});

$('retry-btn').addEventListener('click', async () => {
  const id = state.current;
  $('retry-btn').disabled = true;
  try {
    await api('POST', convPath(id, '/retry'), state.noSnapshot.has(id) ? { snapshot: false } : undefined);
    showConvError('');
    state.stick = true;
  } catch (err) {
    if (state.current === id) showConvError(`Cannot retry: ${err.message}.`);
  } finally {
    $('retry-btn').disabled = false;
  }
  scheduleDetail(0);
  scheduleList();
});

function shellWord(s) {
  return /^[A-Za-z0-9_.:@%+=,/-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

async function handoff(tmux) {
  const id = state.current;
  try {
    const r = await api('POST', convPath(id, '/handoff'), { tmux });
    if (state.current !== id) return;
    if (r.tmux) {
      $('handoff-cmd').textContent = `tmux attach -t ${shellWord(r.tmux)}`;
      $('handoff-note').textContent = `Started in the tmux session ${r.tmux}.`;
    } else {
      $('handoff-cmd').textContent = r.command;
      $('handoff-note').textContent = 'Run it in a terminal: the coder\'s own UI goes on with this session.';
    }
    $('handoff-copy').textContent = 'Copy';
    show($('handoff-box'), true);
    showConvError('');
    scheduleDetail(0);
    scheduleList();
  } catch (err) {
    if (state.current === id) showConvError(`Cannot hand off: ${err.message}.`);
  }
}

$('handoff-btn').addEventListener('click', () => handoff(false));
$('handoff-tmux').addEventListener('click', () => handoff(true));
$('handoff-close').addEventListener('click', () => show($('handoff-box'), false));

$('handoff-copy').addEventListener('click', async () => {
  const text = $('handoff-cmd').textContent;
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents($('handoff-cmd'));
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    ok = document.execCommand('copy');
  }
  $('handoff-copy').textContent = ok ? 'Copied' : 'Select and copy';
  setTimeout(() => { $('handoff-copy').textContent = 'Copy'; }, 2000);
});

$('delete-btn').addEventListener('click', async () => {
  const id = state.current;
  const d = state.detail;
  const title = d ? d.conversation.title || id : id;
  if (!confirm(`Delete "${title}"?\n\nIts transcript and the coder's own session files go; this cannot be undone.`))
    return;
  try {
    await api('DELETE', convPath(id));
    state.convs = state.convs.filter((c) => c.id !== id);
    renderList();
    navigate('', true);
    scheduleList();
  } catch (err) {
    if (state.current === id) showConvError(`Not deleted: ${err.message}.`);
  }
});

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !$('handoff-box').hidden) show($('handoff-box'), false);
});
