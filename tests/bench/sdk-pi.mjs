// SPDX-License-Identifier: MIT
// sdk-pi: one turn through pi's own RPC client (RpcClient, exported by
// @mariozechner/pi-coding-agent, the package pi itself is), for bench-time to
// set beside `baton run -c pi` and bench-drive on the same turn: start (pi
// --mode rpc on a new session file), getState, promptAndWait (until
// agent_end), stop. The package is imported through its main entry, as an
// application using RpcClient would import it.
// usage: node sdk-pi.mjs PI_PACKAGE_DIR PROVIDER MODEL SESSION_DIR PROMPT
// Exit status 0 when the turn ended with agent_end.
import { pathToFileURL } from 'node:url';

const [pkg, provider, model, sessionDir, prompt] = process.argv.slice(2);
const { RpcClient } = await import(pathToFileURL(`${pkg}/dist/index.js`).href);
const session = `${sessionDir}/sdk-${process.hrtime.bigint()}-${process.pid}.jsonl`;
const client = new RpcClient({
  cliPath: `${pkg}/dist/cli.js`,
  cwd: process.cwd(),
  provider,
  model,
  args: ['--session', session],
});
await client.start();
await client.getState();
const events = await client.promptAndWait(prompt);
await client.stop();
if (!events.some((e) => e.type === 'agent_end')) {
  console.error('sdk-pi: no agent_end');
  process.exit(1);
}
