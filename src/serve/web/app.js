// SPDX-License-Identifier: MIT
// app.js: the page of `baton serve` (docs/api.md), as ES modules loaded
// from here (index.html: <script type="module">; no build step). It signs
// in with the token from the address's fragment (or a form), lists
// conversations, shows one with its tool activity, follows its events live
// and sends turns. Everything the API returns goes into the page as text
// (textContent); the one exception is a message's "html", which the server
// renders from markdown with raw HTML escaped (conv-transcript.js).
//
// This file wires what the modules cannot import without a cycle; each
// module adds its own listeners when it is loaded.

import { onSignedOut } from './api.js';
import { setViews } from './router.js';
import { start, signedOut } from './login.js';
import { openConv, closeConv } from './conv.js';
import { openNew } from './new.js';
import { openGroup, leaveGroup } from './group.js';
import './conv-actions.js';

onSignedOut(signedOut);
// a view opened leaves the group view's refresh behind
setViews({
  conv: (id) => { leaveGroup(); openConv(id); },
  group: openGroup,
  new: () => { leaveGroup(); openNew(); },
  none: () => { leaveGroup(); closeConv(); },
});
start();
