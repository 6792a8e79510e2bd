// SPDX-License-Identifier: MIT
// conv-tools.js: a run's tool activity as one line per item (command,
// file change, tool call, search, reasoning, sub-agent, approval), each
// opening onto its output; what a sub-agent did is marked as its own.

import { el, shortPath } from './util.js';
import { state } from './state.js';
import { act } from './fold.js';
import { fillAsks } from './conv-ask.js';

// A run's box outlives a render (state.boxes), so an opened item stays
// open when the transcript is drawn again.
export function toolBox(run) {
  let box = state.boxes.get(run);
  if (!box) {
    box = el('div', 'tools');
    box.dataset.run = run;
    state.boxes.set(run, box);
  }
  fillTools(box, run);
  return box;
}

export function fillTools(box, run) {
  const a = act(run);
  const cwd = state.detail ? state.detail.conversation.cwd : '';
  for (const key of a.order) {
    const it = a.items.get(key);
    let node = box.querySelector(`:scope > [data-key="${CSS.escape(key)}"]`);
    if (!node) {
      node = el('details', 'tool');
      node.dataset.key = key;
      const sum = el('summary');
      sum.append(el('span', 'kind'), el('span', 'what'), el('span', 'status'));
      node.append(sum, el('pre', 'out'));
      node.addEventListener('toggle', () => fillOutput(node, it));
      box.append(node);
    }
    const [kindEl, whatEl, statusEl] = node.firstChild.children;
    const line = toolLine(it, cwd);
    kindEl.textContent = line.kind;
    whatEl.textContent = line.what;
    whatEl.title = line.what;
    node.dataset.status = line.status;
    node.dataset.kind = it.kind;
    statusEl.replaceChildren();
    if (line.status === 'in_progress') statusEl.append(el('span', 'spinner'));
    else statusEl.textContent = line.label;
    node._item = it;
    if (node.open) fillOutput(node, it);
  }
  fillAsks(box, run);
  box.hidden = !a.order.length;
}

// a command as the coder's shell wrapper runs it, without the wrapper
function unwrapShell(cmd) {
  const m = /^(?:\/usr)?\/bin\/(?:ba|z)?sh -l?c '([^']*)'$/.exec(cmd || '');
  return m ? m[1] : cmd || '';
}

function changedPaths(detail, cwd) {
  const paths = [];
  if (detail && typeof detail === 'object') {
    for (const list of [detail.changes, detail.content, detail.locations])
      if (Array.isArray(list))
        for (const c of list) if (c && typeof c.path === 'string') paths.push(shortPath(c.path, cwd));
  }
  return [...new Set(paths)];
}

function toolLine(it, cwd) {
  const status = it.status || 'in_progress';
  let label = status === 'completed' ? 'done' : status.replace('_', ' ');
  let kind = it.kind;
  let what = '';
  switch (it.kind) {
  case 'command':
    kind = '$';
    what = unwrapShell(it.command);
    if (typeof it.exit_code === 'number' && status !== 'declined') label = `exit ${it.exit_code}`;
    break;
  case 'file_change':
    kind = 'edit';
    what = changedPaths(it.detail, cwd).join(', ') || it.name || 'file change';
    break;
  case 'tool_call':
    kind = 'tool';
    what = it.name || 'tool';
    break;
  case 'web_search':
    kind = 'search';
    what = it.name || 'web search';
    break;
  case 'reasoning':
  case 'message': {
    // its first line; the whole text when opened (a message here is a
    // sub-agent's: the turn's own are its answer)
    const text = (typeof it.text === 'string' && it.text) || it.output || '';
    kind = it.kind === 'message' ? 'said' : 'thought';
    what = text.trim().split('\n', 1)[0] || (it.kind === 'message' ? 'message' : 'thinking');
    break;
  }
  case 'steer':
    // the person's own words, put into the running turn
    return { kind: 'steered', what: it.text.trim().split('\n', 1)[0] || 'steer', status: 'completed',
             label: 'taken into the turn' };
  case 'subagent':
    kind = 'agent';
    what = it.name || 'sub-agent';
    break;
  case 'approval':
    if (it.akind === 'user_input') {
      // answered by a person (approval "ask"), or by nobody during the turn
      const q = Array.isArray(it.questions) && it.questions[0];
      const answered = it.decision === 'accept';
      return { kind: 'question', what: (q && q.text) || it.summary || 'a question',
               status: answered ? 'completed' : it.decision ? 'declined' : 'in_progress',
               label: answered ? 'answered' : it.by === 'user' ? 'declined' : 'not answered' };
    }
    kind = 'ask';
    what = [it.akind, it.summary].filter(Boolean).join(': ');
    return { kind, what, status: it.decision === 'accept' ? 'completed' : it.decision ? 'declined' : 'in_progress',
             label: `${it.decision === 'accept' ? 'accepted' : 'declined'}${it.by && it.by !== 'policy' ? ` by ${it.by}` : ''}` };
  default:
    break;
  }
  // a sub-agent's own work, under the sub-agent's line
  if (it.subagent && it.kind !== 'subagent') kind = `\u21b3 ${kind}`;
  return { kind, what, status, label };
}

// A question's lines, as `baton show` prints them: header, text, options.
function questionLines(it) {
  const qs = Array.isArray(it.questions) ? it.questions : [];
  if (!qs.length) return [it.summary || ''];
  return qs.map((q) => {
    const opts = (Array.isArray(q.options) ? q.options : [])
      .filter((o) => o && typeof o.label === 'string')
      .map((o) => (o.description ? `${o.label} (${o.description})` : o.label));
    return `${q.header ? `${q.header}: ` : ''}${q.text || ''}${opts.length ? ` [${opts.join(' / ')}]` : ''}`
      + `${q.multiple ? ' (one or more)' : ''}`;
  });
}

function toolOutput(it) {
  const parts = [];
  if (it.kind === 'command') {
    if (it.cwd) parts.push(`# in ${it.cwd}`);
    if (it.command) parts.push(`$ ${it.command}`);
    const out = typeof it.text === 'string' && it.text.length >= it.output.length ? it.text : it.output;
    if (out) parts.push(out.replace(/\n$/, ''));
  } else if (it.kind === 'file_change') {
    const dt = it.detail || {};
    for (const c of Array.isArray(dt.changes) ? dt.changes : []) {
      const how = c.kind && typeof c.kind === 'object' ? c.kind.type : c.kind;
      parts.push(`--- ${c.path}${how ? ` (${how})` : ''}`);
      if (typeof c.diff === 'string') parts.push(c.diff.replace(/\n$/, ''));
    }
    for (const c of Array.isArray(dt.content) ? dt.content : []) {
      if (!c || typeof c.path !== 'string') continue;
      parts.push(`--- ${c.path}`);
      if (typeof c.newText === 'string') parts.push(c.newText.replace(/\n$/, ''));
    }
    if (!parts.length && it.detail) parts.push(JSON.stringify(it.detail, null, 2));
    if (it.text) parts.push(it.text);
  } else if (it.kind === 'steer') {
    parts.push(it.text);
  } else if (it.kind === 'approval' && it.akind === 'user_input') {
    parts.push(...questionLines(it));
    if (Array.isArray(it.answers))
      parts.push(...it.answers.map((a) => `-> ${Array.isArray(a) ? a.join(', ') : ''}`));
    parts.push(it.decision === 'accept' ? 'answered by you'
      : it.by === 'user' ? 'declined by you'
      : it.by === 'cancel' ? 'not answered: the turn was stopped'
      : it.by === 'timeout' ? 'not answered in time: declined'
      : it.decision ? 'not answered: nobody could answer during the turn; answer it with your next message'
      : 'waiting for your answer');
  } else if (it.kind === 'approval') {
    parts.push(it.summary || '');
    if (it.decision) parts.push(`decision: ${it.decision} (by ${it.by || 'policy'})`);
  } else {
    if (it.text || it.output) parts.push(it.text || it.output);
    if (it.detail) parts.push(JSON.stringify(it.detail, null, 2));
  }
  return parts.filter((p) => p !== '').join('\n');
}

// A tool's output, filled only while it is open (a long command's output
// costs nothing folded); a diff's lines coloured by their sign.
function fillOutput(node, it) {
  if (!node.open) return;
  const out = node.lastChild;
  const item = node._item || it;
  const text = toolOutput(item) || 'no output';
  if (out._shown === text) return;
  out._shown = text;
  out.classList.toggle('none', text === 'no output');
  if (item.kind !== 'file_change') {
    out.textContent = text;
    return;
  }
  out.replaceChildren();
  for (const line of text.split('\n')) {
    let cls = '';
    if (line.startsWith('--- ') || line.startsWith('+++ ')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    out.append(el('span', cls, `${line}\n`));
  }
}
