// SPDX-License-Identifier: MIT
// readlines-node: the throughput benchmark's Node reference reader, timed as
// a whole process by bench-time beside `baton run` on the same recorded
// stream (bench.sh): readline over a file stream, JSON.parse of every line,
// as a Node client of a coder's JSON-lines stdout reads it.
// usage: node readlines-node.js FILE
'use strict';
const fs = require('fs');
const readline = require('readline');

let lines = 0;
const rl = readline.createInterface({ input: fs.createReadStream(process.argv[2]), crlfDelay: Infinity });
rl.on('line', (line) => {
  JSON.parse(line);
  lines++;
});
rl.on('close', () => console.error(`readlines-node: ${lines} lines`));
