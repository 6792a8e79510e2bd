// SPDX-License-Identifier: MIT
// conv-ask.js: what the running turn's coder waits on under approval
// "ask": each approval request with its command or file change and
// Allow / Always / Deny, each question with its choices (or a text box)
// and Answer / Decline. A click is POST /v1/conversations/{id}/requests/{n};
// the card goes when approval.resolved comes (by "user", or "timeout" when
// nobody answered within the idle timeout, or "cancel" on a stop).

import { el } from './util.js';
import { state } from './state.js';
import { api, convPath } from './api.js';
import { act } from './fold.js';

// What the request is about, from the tool call it names: a command's
// line, a file change's paths and diffs (codex names the item first).
function changeOf(run, it) {
  const tool = it.item_id ? act(run).items.get(`i:${it.item_id}`) : null;
  if (!tool) return [];
  if (tool.kind === 'command' && tool.command && tool.command !== it.summary) return [`$ ${tool.command}`];
  if (tool.kind !== 'file_change' || !tool.detail) return [];
  const lines = [];
  for (const c of Array.isArray(tool.detail.changes) ? tool.detail.changes : []) {
    if (!c || typeof c.path !== 'string') continue;
    lines.push(`--- ${c.path}`);
    if (typeof c.diff === 'string') lines.push(c.diff.replace(/\n$/, ''));
  }
  return lines;
}

// The requests of run that wait: approvals without a decision, in order.
function waiting(run) {
  const a = act(run);
  return a.order.map((k) => a.items.get(k))
    .filter((it) => it.kind === 'approval' && !it.decision && typeof it.request_id === 'string');
}

async function decide(card, body) {
  const id = state.current;
  for (const b of card.querySelectorAll('button')) b.disabled = true;
  const note = card.querySelector('.ask-note');
  try {
    await api('POST', convPath(id, `/requests/${encodeURIComponent(card.dataset.request)}`), body);
    note.textContent = 'sent to the coder\u2026';
  } catch (err) {
    note.textContent = err.status === 409 ? `Too late: ${err.message}.` : `Not sent: ${err.message}.`;
    for (const b of card.querySelectorAll('button')) b.disabled = err.status === 409;
  }
}

function button(text, cls, onClick) {
  const b = el('button', `small ${cls}`, text);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

// One question: its options as radios (checkboxes when several may be
// chosen) and a text box for words of one's own.
function questionField(q, i) {
  const box = el('fieldset', 'ask-q');
  box.append(el('legend', '', `${q.header ? `${q.header}: ` : ''}${q.text || ''}`));
  const opts = Array.isArray(q.options) ? q.options.filter((o) => o && typeof o.label === 'string') : [];
  for (const o of opts) {
    const label = el('label', 'ask-opt');
    const input = el('input');
    input.type = q.multiple ? 'checkbox' : 'radio';
    input.name = `q${i}`;
    input.value = o.label;
    label.append(input, ` ${o.label}${o.description ? ` \u2014 ${o.description}` : ''}`);
    box.append(label);
  }
  const text = el('input', 'ask-text');
  text.type = 'text';
  text.placeholder = opts.length ? 'or your own answer' : 'your answer';
  text.setAttribute('aria-label', q.text || 'answer');
  box.append(text);
  return box;
}

// The answers typed and chosen: per question the words, else the options.
function answersOf(card) {
  return [...card.querySelectorAll('fieldset.ask-q')].map((f) => {
    const words = f.querySelector('.ask-text').value.trim();
    if (words) return [words];
    return [...f.querySelectorAll('input:checked')].map((x) => x.value);
  });
}

function makeCard(run, it) {
  const card = el('div', 'ask');
  card.dataset.request = it.request_id;
  const question = it.akind === 'user_input';
  card.append(el('div', 'ask-head', question ? 'The coder asks you' : `The coder asks to: ${it.akind || 'act'}`));
  if (question) {
    const qs = Array.isArray(it.questions) && it.questions.length ? it.questions : [{ text: it.summary }];
    qs.forEach((q, i) => card.append(questionField(q, i)));
  } else {
    card.append(el('pre', 'ask-what', [it.summary || '', ...changeOf(run, it)].join('\n')));
  }
  const row = el('div', 'ask-buttons');
  if (question) {
    row.append(button('Answer', 'primary', () => {
      const answers = answersOf(card);
      if (answers.some((a) => !a.length)) {
        card.querySelector('.ask-note').textContent = 'Answer every question (or Decline).';
        return;
      }
      decide(card, { decision: 'allow', answers });
    }), button('Decline', 'danger', () => decide(card, { decision: 'deny' })));
  } else {
    row.append(button('Allow', 'primary', () => decide(card, { decision: 'allow' })),
               button('Always', '', () => decide(card, { decision: 'always' })),
               button('Deny', 'danger', () => decide(card, { decision: 'deny' })));
  }
  row.append(el('span', 'ask-note muted'));
  card.append(row);
  return card;
}

// The cards of run's waiting requests at the end of its tool box: kept
// while they wait (what was typed stays), gone once resolved or when the
// run no longer runs.
export function fillAsks(box, run) {
  let asks = box.querySelector(':scope > .asks');
  if (!asks) {
    asks = el('div', 'asks');
    box.append(asks);
  } else if (asks !== box.lastElementChild) {
    box.append(asks); // after the items added since
  }
  const running = state.detail && state.detail.running && state.detail.running.id === run;
  const want = running ? waiting(run) : [];
  const ids = new Set(want.map((it) => it.request_id));
  for (const card of [...asks.children]) if (!ids.has(card.dataset.request)) card.remove();
  for (const it of want) {
    if (!asks.querySelector(`:scope > [data-request="${CSS.escape(it.request_id)}"]`))
      asks.append(makeCard(run, it));
  }
  asks.hidden = !want.length;
}
