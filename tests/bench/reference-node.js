// SPDX-License-Identifier: MIT
// reference-node: the same read path as a Node client of pi would write it
// (split on LF, JSON.parse every line, take the text deltas), on the same
// recorded stream, for bench.sh to print beside baton's figure.
// usage: node reference-node.js <stream.jsonl.gz>
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const data = zlib.gunzipSync(fs.readFileSync(process.argv[2]));
let best = 0;
for (let round = 0; round < 3; round++) {
  const t0 = process.hrtime.bigint();
  const text = data.toString('utf8');
  let answer = '';
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    const msg = JSON.parse(text.slice(start, nl));
    const e = msg.assistantMessageEvent;
    if (e && e.type === 'text_delta') answer += e.delta;
    start = nl + 1;
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  best = Math.max(best, data.length / 1e6 / secs);
  if (round === 0 && answer.length < 200000) throw new Error('answer too short');
}
console.log(`  reference: Node ${process.version} split + JSON.parse: ${best.toFixed(1)} MB/s`);
