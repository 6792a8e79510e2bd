// SPDX-License-Identifier: MIT
// sdk-codex: one turn through the official TypeScript SDK of codex
// (@openai/codex-sdk, installed by bench.sh into its npm cache), driving the
// native codex binary given, for bench-time to set beside `baton run` and
// bench-drive on the same turn. The SDK runs `codex exec --experimental-json`
// with the prompt on stdin; the options are those baton's turn has: sandbox
// workspace-write, approval never, the model, the working directory.
// usage: node sdk-codex.mjs SDK_DIR CODEX_BIN MODEL PROMPT
//   SDK_DIR: the installed package (…/node_modules/@openai/codex-sdk)
// Exit status 0 when the turn completed.
import { pathToFileURL } from 'node:url';

const [sdkDir, bin, model, prompt] = process.argv.slice(2);
const { Codex } = await import(pathToFileURL(`${sdkDir}/dist/index.js`).href);
const codex = new Codex({ codexPathOverride: bin });
const thread = codex.startThread({
  model,
  sandboxMode: 'workspace-write',
  approvalPolicy: 'never',
  workingDirectory: process.cwd(),
  skipGitRepoCheck: true,
});
const turn = await thread.run(prompt);
if (!turn.finalResponse) {
  console.error('sdk-codex: no final response');
  process.exit(1);
}
