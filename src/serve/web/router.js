// SPDX-License-Identifier: MIT
// router.js: the address's fragment chooses the view: #c=ID, #g=ID, #new, or the
// list, and which of them shows. The views are given by app.js (setViews):
// they navigate, so this module cannot import them.

import { $, ID_RE, show } from './util.js';

const views = { conv: null, group: null, new: null, none: null };

// conv(id) opens a conversation, group(id) a group side by side, new() the
// form, none() the list alone
export function setViews(v) {
  Object.assign(views, v);
}

export function navigate(hash, replace) {
  const url = location.pathname + location.search + hash;
  if (replace) history.replaceState(null, '', url);
  else if (location.hash !== hash) history.pushState({ baton: 1 }, '', url);
  route();
}

function back() {
  if (history.state && history.state.baton) history.back();
  else navigate('', true);
}

export function route() {
  if ($('app').hidden) return; // signed out: the login form stays
  const params = new URLSearchParams(location.hash.slice(1));
  const c = params.get('c');
  const g = params.get('g');
  if (c !== null && ID_RE.test(c)) views.conv(c);
  else if (g !== null && ID_RE.test(g)) views.group(g);
  else if (location.hash === '#new') views.new();
  else views.none();
}

window.addEventListener('popstate', route);
window.addEventListener('hashchange', route); // an address typed or linked (route is idempotent)
for (const b of document.querySelectorAll('.back')) b.addEventListener('click', back);

export function showView(name) {
  show($('empty-view'), name === 'empty');
  show($('new-view'), name === 'new');
  show($('conv-view'), name === 'conv');
  show($('group-view'), name === 'group');
  document.body.classList.toggle('detail', name !== 'empty');
}
