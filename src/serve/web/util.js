// SPDX-License-Identifier: MIT
// util.js: the page's small helpers: DOM nodes made with text only,
// storage that may be off, times, token counts and paths as shown.

export const ID_RE = /^[0-9a-z]{22}$/;

export const $ = (id) => document.getElementById(id);

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

export function show(node, on) {
  node.hidden = !on;
}

export function storageGet(store, key) {
  try {
    return store.getItem(key);
  } catch {
    return null;
  }
}

export function storageSet(store, key, value) {
  try {
    if (value === null) store.removeItem(key);
    else store.setItem(key, value);
  } catch {
    /* storage off: the page still works for this visit */
  }
}

export function relTime(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 45) return 'now';
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  if (s < 86400 * 30) return `${Math.round(s / 86400)}d`;
  return new Date(t).toLocaleDateString();
}

export function fullTime(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '' : new Date(t).toLocaleString();
}

export function clock(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function kTokens(n) {
  return n >= 1000 ? `${Math.round(n / 100) / 10}k` : String(n);
}

// a path under the conversation's directory, shown relative to it
export function shortPath(p, cwd) {
  if (typeof p !== 'string') return '';
  if (cwd && p.startsWith(cwd.endsWith('/') ? cwd : cwd + '/'))
    return p.slice(cwd.length + (cwd.endsWith('/') ? 0 : 1));
  return p;
}

export function baseName(p) {
  const parts = String(p || '').split('/').filter(Boolean);
  return parts.length ? parts[parts.length - 1] : '/';
}

export function meter(ctx) {
  const m = el('meter');
  m.min = 0;
  m.max = 100;
  m.low = 60;
  m.high = 85;
  m.optimum = 0;
  m.value = Math.min(100, ctx.percent);
  m.title = `context: ${ctx.tokens} of ${ctx.window} tokens (${ctx.percent.toFixed(1)}%)`;
  return m;
}

// Enter submits the form; Shift+Enter (or Alt+Enter) is a new line, and
// an input method's Enter only picks its word
export function enterSends(textarea, form) {
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !e.altKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
}
