// SPDX-License-Identifier: MIT
// state.js: what the page knows, shared by its modules. One object, so a
// module reads what another changed (state.current, state.detail, ...).

export const state = {
  token: null,
  coders: null,
  convs: [],
  q: '',
  listSeq: 0,
  current: null, // id of the open conversation
  detail: null, // its GET /v1/conversations/{id}?html=1
  detailSeq: 0,
  acts: new Map(), // run id -> what its events said (act())
  boxes: new Map(), // run id -> its .tools element, kept across renders
  es: null, // the open conversation's event stream
  dash: null, // /v1/events, to keep the list fresh
  cancelling: null, // the run a cancel was asked for
  stick: true, // the transcript follows its end
  dirty: new Set(), // runs to redraw on the next frame
  approval: new Map(), // conversation id -> approval it was started with
  noSnapshot: new Set(), // conversation ids started without snapshots (this page's)
  drafts: new Map(), // conversation id -> unsent composer text
};
